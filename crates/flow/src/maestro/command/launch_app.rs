//! `launchApp`: the app (the header's, or `appId`) launched; with `clearState`, `stopApp`,
//! `permissions` and `arguments`, the steps Maestro takes, in its order.

use android::text::quote;
use saphyr::MarkedYamlOwned;

use super::super::args::flag;
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::write::quoted;
use super::super::yaml::{Plain, at, field, only_keys, string, untyped};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, quoted as lit};

pub(in crate::maestro) const LAUNCH_APP: Spec = Spec {
    name: "launchApp",
    status: Status::Replayed,
    note: "appId (or url, its other name), clearState, stopApp (when given), clearKeychain; permissions (pm grant / revoke, Maestro's short names spelt out, all: every permission the app requests; what the device refuses is a warning); arguments as intent extras of their YAML type (am start -n the launcher activity --es / --ez / --ei / --ef)",
    own: &[
        "appId",
        "url",
        "optional",
        "clearState",
        "stopApp",
        "clearKeychain",
        "permissions",
        "arguments",
    ],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let Some(map) = given.arg.filter(|a| a.data.as_mapping().is_some()) else {
        return Ok(Some(Action::Launch {
            package: given.package(given.arg)?,
        }));
    };
    only_keys(map, LAUNCH_APP.own)?;
    // `url` is Maestro's other name for it (`@JsonAlias("url")`).
    let package = given.package(field(map, "appId").or_else(|| field(map, "url")))?;
    // As Maestro orders them: the data cleared, the app stopped, then launched
    // (clearKeychain is iOS's; Android has none to clear).
    // Permissions after the data is cleared, before the app stops (Maestro's order).
    let permissions = super::set_permissions::permissions(map, &package)?;
    for (option, action) in [
        (
            "clearState",
            Some(Action::ClearData {
                package: package.clone(),
            }),
        ),
        ("permissions", permissions),
        (
            "stopApp",
            Some(Action::Stop {
                package: package.clone(),
            }),
        ),
    ] {
        let wanted = match option {
            "permissions" => action.is_some(),
            _ => flag(map, option)?,
        };
        if let (true, Some(action)) = (wanted, action) {
            steps.push(reader.step(action, given.optional));
        }
    }
    flag(map, "clearKeychain")?;
    Ok(Some(match arguments(map)? {
        Some(arguments) => Action::Command(Command::LaunchWith(LaunchWith { package, arguments })),
        None => Action::Launch { package },
    }))
}

/// `launchApp {arguments}`: each value an intent extra of its YAML type (text, true/false,
/// whole number, number).
fn arguments(map: &MarkedYamlOwned) -> Result<Option<Vec<(String, Extra)>>, String> {
    let Some(node) = field(map, "arguments") else {
        return Ok(None);
    };
    let Some(entries) = node.data.as_mapping() else {
        return Err(at(node, "arguments is a mapping: NAME: VALUE"));
    };
    let mut out = Vec::new();
    for (name, value) in entries {
        // Maestro's `Map<String, Any>`: Jackson types each as YAML 1.1 resolves it.
        let extra = match untyped(value) {
            Some(Plain::Bool(b)) => Extra::Flag(b),
            Some(Plain::Int(i)) => Extra::Int(i),
            Some(Plain::Float(f)) => Extra::Float(f),
            _ => Extra::Text(string(value, "an argument")?),
        };
        out.push((string(name, "an argument's name")?, extra));
    }
    Ok(Some(out))
}

/// `launchApp {arguments}`: the launcher activity started with the arguments as intent extras,
/// typed as the flow wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchWith {
    pub(crate) package: String,
    pub(crate) arguments: Vec<(String, Extra)>,
}

/// An intent extra as `am start` takes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Extra {
    Text(String),
    Flag(bool),
    Int(i64),
    Float(f64),
}

impl Eq for Extra {}

impl Extra {
    /// `--es KEY 'VALUE'`, quoted.
    fn am(&self, key: &str) -> String {
        match self {
            Extra::Text(v) => format!("--es {} {}", quote(key), quote(v)),
            Extra::Flag(v) => format!("--ez {} {v}", quote(key)),
            Extra::Int(v) => format!("--ei {} {v}", quote(key)),
            Extra::Float(v) => format!("--ef {} {v}", quote(key)),
        }
    }
}

impl Run for LaunchWith {
    fn describe(&self) -> String {
        let keys: Vec<&str> = self.arguments.iter().map(|(k, _)| k.as_str()).collect();
        format!("launch {} with arguments {}", self.package, keys.join(", "))
    }

    /// `launchWith` (below), the extras quoted for the device's shell.
    fn body(&self, _: &Aim) -> Vec<String> {
        let extras: Vec<String> = self.arguments.iter().map(|(k, v)| v.am(k)).collect();
        vec![format!(
            "await launchWith({}, {});",
            lit(&self.package),
            lit(&extras.join(" "))
        )]
    }

    fn write(&self) -> String {
        let each: String = self
            .arguments
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Extra::Text(t) => quoted(t),
                    Extra::Flag(b) => b.to_string(),
                    Extra::Int(i) => i.to_string(),
                    Extra::Float(f) => format!("{f:?}"),
                };
                format!("        {}: {value}\n", quoted(k))
            })
            .collect();
        format!(
            "- launchApp:\n    appId: {}\n    arguments:\n{each}",
            quoted(&self.package)
        )
    }
}

/// The run of a launch with arguments: the app's launcher activity started with them as intent
/// extras.
pub(super) const RUN: &str = r#"
// The app's launcher activity started with the flow's arguments as intent extras.
async function launchWith(pkg, extras) {
  const activity = (await app.info({ package: pkg })).info.launcherActivity;
  if (!activity || !/^[A-Za-z0-9_.$]+\/[A-Za-z0-9_.$]+$/.test(activity)) {
    throw new Error(`${pkg} has no launcher activity to start with arguments`);
  }
  await shellChecked(`am start -n '${activity}' ${extras}`);
  await settle();
}
"#;
