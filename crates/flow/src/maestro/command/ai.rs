//! The commands an AI model runs (`assertWithAI`, `assertNoDefectsWithAI`,
//! `extractTextWithAI`): a replay has no such model, so each step fails as Maestro's does without
//! its AI key (`Orchestra.kt` 1.39.10 line 359: `AINotAvailable`), and is optional unless it says
//! `optional: false`, as Maestro's are (`YamlAssertWithAI.optional = true`): a warning, then the
//! flow goes on.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, only_keys, string};
use super::{Given, Spec};
use crate::control::Js;
use crate::{Action, Step};

const NOTE: &str = "read; its step fails as Maestro's does without an AI key (no AI model in a replay), a warning unless optional: false, as Maestro's are optional";

pub(in crate::maestro) const ASSERT_WITH_AI: Spec = Spec {
    name: "assertWithAI",
    status: Status::Replayed,
    note: NOTE,
    own: &["assertion", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: true,
};

pub(in crate::maestro) const ASSERT_NO_DEFECTS_WITH_AI: Spec = Spec {
    name: "assertNoDefectsWithAI",
    own: &["optional"],
    ..ASSERT_WITH_AI
};

pub(in crate::maestro) const EXTRACT_TEXT_WITH_AI: Spec = Spec {
    name: "extractTextWithAI",
    note: "read; its step fails as Maestro's does without an AI key (no AI model in a replay: outputVariable is not set), a warning unless optional: false, as Maestro's are optional",
    own: &["query", "outputVariable", "optional"],
    ..ASSERT_WITH_AI
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let spec = super::find(given.name).expect("registered");
    let arg = given.arg.filter(|a| !a.data.is_null());
    // Checked as Maestro reads them: a mapping of its fields, or its one text.
    match arg {
        Some(map) if map.data.as_mapping().is_some() => only_keys(map, spec.own)?,
        Some(value) if spec.own.len() > 1 => {
            string(value, given.name)?;
        }
        Some(value) => return Err(at(value, &format!("{} takes no value", given.name))),
        None if spec.own.len() > 1 => return Err(at(given.item, &format!("{} needs an argument", given.name))),
        None => {}
    }
    let optional = match arg.and_then(|a| super::super::yaml::field(a, "optional")) {
        Some(_) => given.optional,
        None => true,
    };
    let why = format!(
        "{}: no AI model in a replay (Maestro without its AI key fails it too: AINotAvailable)",
        given.name
    );
    let code = format!("throw new Error({});", serde_json::Value::String(why));
    let action = Action::Script(Js::Run {
        file: given.name.to_string(),
        code,
        env: Vec::new(),
    });
    steps.push(reader.step(action, optional));
    Ok(None)
}
