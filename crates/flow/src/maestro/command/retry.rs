//! `retry`: its steps again after a failure, at most `maxRetries` more times (1 by default, 3 at
//! most); a file or commands, env, optional.

use super::super::compat::Status;
use super::super::read::Reader;
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const RETRY: Spec = Spec {
    name: "retry",
    status: Status::Replayed,
    note: "maxRetries (1 by default, 3 at most), file or commands, env, optional",
    own: &["maxRetries", "file", "commands", "env", "optional"],
    aimed: &[],
    read: Some(|reader: &mut Reader, given: &Given, steps: &mut Vec<Step>| {
        reader.retry_block(given.needed()?, given.item, given.app, given.optional, steps)?;
        Ok(None::<Action>)
    }),
    with_the_flow: true,
};
