//! `setPermissions {appId, permissions}` (and `launchApp {permissions}`): each name granted or
//! revoked, as Maestro does on Android.

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, field, only_keys, scalar, string, typed};
use super::{Given, Spec};
use crate::commands::Command;
use crate::{Action, Step};

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
    Ok(Some(Action::Command(Command::Permissions {
        package: package.to_string(),
        set,
    })))
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
