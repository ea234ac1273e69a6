//! `dumpsys package PKG`: the package's block under `Packages:` (not an older copy under
//! `Hidden system packages:`), and its launcher activity from the Activity Resolver Table.

/// What `adb-app info` reports of a package.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageDump {
    pub package: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_code: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_sdk: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_sdk: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_install_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
    /// The folder of the APKs (`codePath`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_path: Option<String>,
    /// The APK files (base and splits), from the `Dexopt state` section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apk_paths: Vec<String>,
    pub system: bool,
    /// A system app with an update installed over it.
    pub updated_system_app: bool,
    /// User 0's state: `default`, `enabled`, `disabled`, `disabled-user`, `disabled-until-used`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<String>,
    /// User 0: force-stopped and not launched since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<bool>,
    /// `package/activity` with the MAIN action and LAUNCHER category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launcher_activity: Option<String>,
    pub requested_permissions: usize,
    /// Install and runtime permissions marked `granted=true`.
    pub granted_permissions: usize,
}

/// None when the dump holds no `Package [PKG]` block: the package is not installed.
pub fn parse_package_dump(text: &str, package: &str) -> Option<PackageDump> {
    let header = format!("Package [{package}]");
    let mut dump = PackageDump {
        package: package.to_string(),
        ..Default::default()
    };
    let mut section = "";
    let mut in_block = false;
    let mut found = false;
    let mut permission_list = "";
    for line in text.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') && trimmed.ends_with(':') {
            section = trimmed;
            in_block = false;
            continue;
        }
        if section == "Packages:" && line.starts_with("  Package [") {
            in_block = line.trim_start().starts_with(&header) && !found;
            found |= in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        if trimmed.ends_with("permissions:") {
            permission_list = trimmed;
            continue;
        }
        for field in trimmed.split_whitespace() {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            match key {
                "versionCode" => dump.version_code = value.parse().ok(),
                "minSdk" => dump.min_sdk = value.parse().ok(),
                "targetSdk" => dump.target_sdk = value.parse().ok(),
                "codePath" => dump.code_path = Some(value.to_string()),
                "stopped" if trimmed.starts_with("User 0:") => dump.stopped = Some(value == "true"),
                "enabled" if trimmed.starts_with("User 0:") => dump.enabled = Some(enabled_state(value)),
                _ => {}
            }
        }
        if let Some(v) = trimmed.strip_prefix("versionName=") {
            dump.version_name = Some(v.to_string());
        } else if let Some(v) = trimmed.strip_prefix("firstInstallTime=") {
            dump.first_install_time = Some(v.to_string());
        } else if let Some(v) = trimmed.strip_prefix("lastUpdateTime=") {
            dump.last_update_time = Some(v.to_string());
        } else if let Some(flags) = trimmed.strip_prefix("pkgFlags=") {
            dump.system = flags.split_whitespace().any(|f| f == "SYSTEM");
            dump.updated_system_app = flags.split_whitespace().any(|f| f == "UPDATED_SYSTEM_APP");
        } else if permission_list == "requested permissions:" && looks_like_permission(trimmed) {
            dump.requested_permissions += 1;
        } else if permission_list.ends_with("permissions:") && trimmed.contains("granted=true") {
            dump.granted_permissions += 1;
        }
    }
    if !found {
        return None;
    }
    dump.launcher_activity = launcher_activity(text, package);
    dump.apk_paths = apk_paths(text, package);
    Some(dump)
}

fn looks_like_permission(line: &str) -> bool {
    !line.contains(' ') && line.contains('.') && !line.contains('=')
}

/// `path:` lines under `Dexopt state:` → `[PKG]`.
fn apk_paths(text: &str, package: &str) -> Vec<String> {
    let header = format!("[{package}]");
    let mut section = false;
    let mut ours = false;
    let mut paths = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') {
            section = trimmed == "Dexopt state:";
            continue;
        }
        if section && trimmed.starts_with('[') {
            ours = trimmed == header;
        } else if section
            && ours
            && let Some(path) = trimmed.strip_prefix("path: ")
        {
            paths.push(path.to_string());
        }
    }
    paths
}

/// PackageManager's COMPONENT_ENABLED_STATE_* codes.
fn enabled_state(code: &str) -> String {
    match code {
        "0" => "default",
        "1" => "enabled",
        "2" => "disabled",
        "3" => "disabled-user",
        "4" => "disabled-until-used",
        other => other,
    }
    .to_string()
}

/// In the Activity Resolver Table, the component of an entry whose filter has the
/// `android.intent.action.MAIN` action and the `android.intent.category.LAUNCHER` category.
fn launcher_activity(text: &str, package: &str) -> Option<String> {
    let mut in_table = false;
    let mut candidate: Option<&str> = None;
    let mut is_main = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') {
            in_table = trimmed == "Activity Resolver Table:";
            continue;
        }
        if !in_table {
            continue;
        }
        if let Some(component) = trimmed
            .split_whitespace()
            .nth(1)
            .filter(|c| c.starts_with(&format!("{package}/")) && trimmed.contains(" filter "))
        {
            candidate = Some(component);
            is_main = false;
        } else if trimmed == "Action: \"android.intent.action.MAIN\"" {
            is_main = true;
        } else if trimmed == "Category: \"android.intent.category.LAUNCHER\"" && is_main {
            return candidate.map(str::to_string);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_package_gives_none() {
        assert_eq!(
            parse_package_dump("Dexopt state:\n  Unable to find package: com.x\n", "com.x"),
            None
        );
    }
}
