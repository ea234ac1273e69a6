//! The arguments several Maestro commands share (a value given alone or as a field, an option's
//! true or false, no argument, a direction), read from saphyr's nodes, each error naming its line.

use saphyr::MarkedYamlOwned;

use super::fields;
use super::yaml::{at, field, flag_value, only_keys, string, typed};

/// A command's one value, given alone (`inputText: ada`) or as its mapping's `name`
/// (`inputText: {text: ada}`; nothing else there but `label` and, where the caller reads it,
/// `optional`).
pub(super) fn scalar_or_field<'a>(arg: &'a MarkedYamlOwned, command: &str) -> Result<&'a MarkedYamlOwned, String> {
    if arg.data.as_mapping().is_none() {
        return Ok(arg);
    }
    only_keys(arg, fields::of(command))?;
    let name = fields::of(command).first().copied().unwrap_or_default();
    field(arg, name).ok_or_else(|| at(arg, &format!("takes {name}")))
}

/// A `true`/`false` option (absent: false).
pub(super) fn flag(map: &MarkedYamlOwned, name: &str) -> Result<bool, String> {
    match field(map, name) {
        None => Ok(false),
        // A template stands for `true`: the reading it samples reads all the option asks for
        // (the flow's app, for openLink's autoVerify).
        Some(value) => flag_value(value, name, true),
    }
}

/// A command that takes no argument (`- back`) may still say `optional: true`; nothing else.
pub(super) fn no_argument(arg: Option<&MarkedYamlOwned>) -> Result<(), String> {
    match arg.filter(|a| !a.data.is_null()) {
        Some(arg) => only_keys(arg, fields::NO_ARGUMENT),
        None => Ok(()),
    }
}

pub(super) fn direction(node: &MarkedYamlOwned) -> Result<String, String> {
    typed(node, "down".to_string(), || {
        let d = string(node, "direction")?.to_ascii_lowercase();
        match d.as_str() {
            "up" | "down" | "left" | "right" => Ok(d),
            _ => Err(at(node, "direction is UP, DOWN, LEFT or RIGHT")),
        }
    })
}
