//! `scroll`: one scroll down, as `ui scroll` makes it.

use super::super::args::no_argument;
use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const SCROLL: Spec = Spec {
    name: "scroll",
    status: Status::Replayed,
    note: "",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Scroll {
            direction: "down".into(),
            until: None,
        }))
    }),
    with_the_flow: false,
};
