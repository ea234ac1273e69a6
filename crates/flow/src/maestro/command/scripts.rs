//! The flow's JavaScript: `runScript` (its file read and compiled with the flow), `evalScript`,
//! `assertTrue`; run in the replay's sandbox (`runtime.js`).

use super::super::compat::Status;
use super::super::read::Reader;
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const RUN_SCRIPT: Spec = Spec {
    name: "runScript",
    status: Status::Replayed,
    note: "file (read and compiled with the flow), env, when; in the replay's sandbox",
    own: &["file", "env", "when", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: true,
};

pub(in crate::maestro) const EVAL_SCRIPT: Spec = Spec {
    name: "evalScript",
    note: "its ${…} evaluated as the step runs",
    own: &["script", "optional"],
    ..RUN_SCRIPT
};

pub(in crate::maestro) const ASSERT_TRUE: Spec = Spec {
    name: "assertTrue",
    note: "its ${…} true as the step runs (not blank, false, undefined, null, 0)",
    own: &["condition", "optional"],
    ..RUN_SCRIPT
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    reader.script(given.name, given.needed()?, given.optional, steps)?;
    Ok(None)
}
