//! `runFlow`: a file, or commands; its `env` for its steps (over the subflow's own); under
//! `when`; optional.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::template::literal;
use super::super::yaml::{field, only_keys, scalar, written};
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const RUN_FLOW: Spec = Spec {
    name: "runFlow",
    status: Status::Replayed,
    note: "file or commands; env (for its steps, over the subflow's own); when visible, notVisible, platform, true; optional",
    own: &["file", "commands", "env", "when", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: true,
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let arg = given.needed()?;
    if let Some(file) = scalar(arg) {
        written(arg, "runFlow", "a subflow read with the flow")?;
        reader.run_file(&literal(&file), given.item, steps)?;
        return Ok(None);
    }
    only_keys(arg, RUN_FLOW.own)?;
    let mut inner = Vec::new();
    match field(arg, "when") {
        Some(when) => reader.conditional(when, arg, given.item, given.app, &mut inner)?,
        None => reader.block(arg, given.item, given.app, &mut inner)?,
    };
    // Its env holds for its steps only (over the subflow's own header env).
    let inner = reader.with_env(arg, true, inner)?;
    steps.extend(reader.optionally(given.optional, inner));
    Ok(None)
}
