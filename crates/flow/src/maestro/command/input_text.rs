//! `inputText`: typed into the focused field.

use super::super::args::scalar_or_field;
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::template::{escape, marked};
use super::super::yaml::string;
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const INPUT_TEXT: Spec = Spec {
    name: "inputText",
    status: Status::Replayed,
    note: "into the focused field",
    own: &["text", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let node = scalar_or_field(given.needed()?, given.name)?;
    let text = string(node, given.name)?;
    Ok(Some(Action::Type {
        target: None,
        // A step's text keeps a `${` as `\${` (its `${NAME}` is a secret's).
        text: match marked(node) {
            true => text,
            false => escape(&text),
        },
        clear: false,
        submit: false,
    }))
}
