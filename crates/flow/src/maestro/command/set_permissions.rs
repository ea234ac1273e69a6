//! `setPermissions {appId, permissions}` (and `launchApp {permissions}`): each name granted or
//! revoked, as Maestro does on Android.

use android::text::quote;
use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::write::quoted;
use super::super::yaml::{at, field, only_keys, scalar, string, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, quoted as lit};

pub(in crate::maestro) const SET_PERMISSIONS: Spec = Spec {
    name: "setPermissions",
    status: Status::Replayed,
    note: "as launchApp's permissions",
    own: &["appId", "permissions", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let map = given.needed()?;
        only_keys(map, SET_PERMISSIONS.own)?;
        permissions(map, &given.package(field(map, "appId"))?)?
            .map(Some)
            .ok_or_else(|| at(map, "setPermissions takes permissions"))
    }),
    with_the_flow: false,
};

/// `launchApp {permissions}`, `setPermissions {appId, permissions}`: each name `allow` (grant)
/// or `deny` / `unset` (revoke), as Maestro does on Android.
pub(super) fn permissions(map: &MarkedYamlOwned, package: &str) -> Result<Option<Action>, String> {
    let Some(node) = field(map, "permissions") else {
        return Ok(None);
    };
    let Some(entries) = node.data.as_mapping() else {
        return Err(at(node, "permissions is a mapping: NAME: allow | deny | unset"));
    };
    let mut set = Vec::new();
    for (name, value) in entries {
        let name = string(name, "a permission")?;
        let allow = typed(value, true, || match scalar(value).as_deref() {
            Some("allow") => Ok(true),
            Some("deny" | "unset") => Ok(false),
            _ => Err(at(value, &format!("{name} is allow, deny or unset"))),
        })?;
        set.push((name, allow));
    }
    Ok(Some(Action::Command(Command::Permissions(Permissions {
        package: package.to_string(),
        set,
    }))))
}

/// `launchApp {permissions}` and `setPermissions`: each name (Maestro's short names spelt out,
/// `all` for every permission the app requests) granted (`pm grant`) or revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permissions {
    pub(crate) package: String,
    pub(crate) set: Vec<(String, bool)>,
}

impl Run for Permissions {
    fn describe(&self) -> String {
        let each: Vec<String> = self
            .set
            .iter()
            .map(|(name, allow)| format!("{name} {}", if *allow { "allowed" } else { "denied" }))
            .collect();
        format!("permissions of {}: {}", self.package, each.join(", "))
    }

    /// `permissions` (below), each name spelt out and quoted for the device's shell.
    fn body(&self, _: &Aim) -> Vec<String> {
        let package = &self.package;
        let each: Vec<String> = self
            .set
            .iter()
            .map(|(name, allow)| {
                let names: Vec<String> = match name.as_str() {
                    "all" => vec!["null".into()],
                    _ => permission_names(name).iter().map(|p| lit(&quote(p))).collect(),
                };
                format!("[[{}], {allow}]", names.join(", "))
            })
            .collect();
        vec![format!(
            "await permissions({}, {}, [{}], w);",
            lit(package),
            lit(&quote(package)),
            each.join(", ")
        )]
    }

    fn write(&self) -> String {
        let each: String = self
            .set
            .iter()
            .map(|(name, allow)| format!("        {}: {}\n", quoted(name), if *allow { "allow" } else { "deny" }))
            .collect();
        format!(
            "- setPermissions:\n    appId: {}\n    permissions:\n{each}",
            quoted(&self.package)
        )
    }
}

/// Maestro's short permission names on Android (its AndroidDriver, 1.39), spelt out; any other
/// name is a permission's own.
fn permission_names(name: &str) -> Vec<String> {
    let list: &[&str] = match name {
        "location" => &["ACCESS_FINE_LOCATION", "ACCESS_COARSE_LOCATION"],
        "camera" => &["CAMERA"],
        "contacts" => &["READ_CONTACTS", "WRITE_CONTACTS"],
        "phone" => &["CALL_PHONE", "ANSWER_PHONE_CALLS"],
        "microphone" => &["RECORD_AUDIO"],
        "bluetooth" => &["BLUETOOTH_CONNECT", "BLUETOOTH_SCAN"],
        "storage" => &["WRITE_EXTERNAL_STORAGE", "READ_EXTERNAL_STORAGE"],
        "notifications" => &["POST_NOTIFICATIONS"],
        "medialibrary" => &[
            "WRITE_EXTERNAL_STORAGE",
            "READ_EXTERNAL_STORAGE",
            "READ_MEDIA_AUDIO",
            "READ_MEDIA_IMAGES",
            "READ_MEDIA_VIDEO",
        ],
        "calendar" => &["WRITE_CALENDAR", "READ_CALENDAR"],
        "sms" => &["READ_SMS", "RECEIVE_SMS", "SEND_SMS"],
        other => return vec![other.to_string()],
    };
    list.iter().map(|p| format!("android.permission.{p}")).collect()
}

/// The run: grants (pm grant) or revokes each permission; `null` is every permission the app
/// requests. What the device refuses (a permission the app does not request, one not granted at
/// run time) is a warning, as Maestro goes on past it.
pub(super) const RUN: &str = r#"
async function permissions(pkg, quotedPkg, set, warnings) {
  const refused = [];
  for (const [names, allow] of set) {
    let list = names;
    if (names[0] === null) {
      const dump = (await shell.run({ command: `dumpsys package ${quotedPkg}` })).stdout;
      const requested = dump.split("requested permissions:")[1] || "";
      list = requested.split("\n").slice(1).map((l) => l.trim()).filter((l) => /^[A-Za-z0-9_.]+$/.test(l))
        .map((p) => `'${p}'`);
    }
    for (const p of list) {
      const done = await shell.run({ command: `pm ${allow ? "grant" : "revoke"} ${quotedPkg} ${p}` });
      if (done.exitCode !== 0) refused.push(p.replace(/'/g, ""));
    }
  }
  if (refused.length) warnings.push(`the device did not change ${refused.join(", ")}`);
}
"#;
