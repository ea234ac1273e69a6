//! `assertVisible` (after a command, that step's expectation; before any, a step of its own) and
//! `assertNotVisible` (a wait until it is gone).

use super::super::compat::Status;
use super::super::fields::{COMMAND_SELECTOR, MAESTRO_KEYS};
use super::super::read::Reader;
use super::super::selectors::command_selector;
use super::super::template::holds_one;
use super::{Given, Spec};
use crate::{Action, Expect, Selector, Step, same_block};

pub(in crate::maestro) const ASSERT_VISIBLE: Spec = Spec {
    name: "assertVisible",
    status: Status::Replayed,
    note: "any selector, or point",
    own: &[],
    aimed: &[COMMAND_SELECTOR, MAESTRO_KEYS],
    read: Some(read),
    with_the_flow: false,
};

pub(in crate::maestro) const ASSERT_NOT_VISIBLE: Spec = Spec {
    name: "assertNotVisible",
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Wait {
            selector: command_selector(given.needed()?)?,
            gone: true,
            timeout_ms: None,
        }))
    }),
    ..ASSERT_VISIBLE
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let node = given.needed()?;
    // What a step expects is looked for as it ends: a template, rendered then.
    let shown = match holds_one(node) {
        true => Selector::Rendered(Box::new(reader.rendered_selector(node, || command_selector(node))?)),
        false => command_selector(node)?,
    };
    match steps.last_mut() {
        // An assertion after an optional step is not optional; one after a conditional block is
        // not conditional.
        Some(last)
            if !given.optional
                && !last.optional
                && same_block(&last.when, &reader.when)
                && !matches!(last.action, Action::Block { .. }) =>
        {
            last.expect.visible.push(shown)
        }
        _ => {
            let mut step = reader.step(Action::Check, given.optional);
            step.expect = Expect {
                activity: None,
                visible: vec![shown],
            };
            steps.push(step);
        }
    }
    Ok(None)
}
