//! `adb-app`: paged, filtered package lists, package details, and the app lifecycle (launch,
//! stop, clear data, install from a local APK, uninstall).

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{State, error};
use crate::adb::AdbError;
use crate::android::activity::Focus;
use crate::android::dumpsys_package::{PackageDump, parse_package_dump};
use crate::android::packages::{is_valid_package_name, parse_package_list};
use crate::android::text::quote;
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};

pub const DEFAULT_LIMIT: u64 = 20;
pub const MAX_LIMIT: u64 = 100;
mod command;
mod install;
pub use command::{AppAction, AppCommand, Install};
use install::install;

/// Largest APK `install` accepts.
const MAX_APK_BYTES: u64 = 4 << 30;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AppArgs {
    pub operation: AppOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub package: Option<String>,
    /// list: 1-100, default 20.
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub kind: Option<PackageKind>,
    #[serde(default)]
    pub refresh: Option<bool>,
    /// launch: default launcher.
    #[serde(default)]
    pub activity: Option<String>,
    #[serde(default)]
    pub keep_data: Option<bool>,
    /// install: a local APK's absolute path.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub replace: Option<bool>,
    #[serde(default)]
    pub grant_permissions: Option<bool>,
    #[serde(default)]
    pub downgrade: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AppOperation {
    List,
    Info,
    Launch,
    Stop,
    ClearData,
    Install,
    Uninstall,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PackageKind {
    #[default]
    All,
    // Third-party apps (`pm list packages -3`); system is `-s`.
    User,
    System,
}

impl PackageKind {
    fn flag(self) -> &'static str {
        match self {
            PackageKind::All => "",
            PackageKind::User => " -3",
            PackageKind::System => " -s",
        }
    }

    fn name(self) -> &'static str {
        match self {
            PackageKind::All => "all",
            PackageKind::User => "user",
            PackageKind::System => "system",
        }
    }
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppOutput {
    pub operation: String,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// list: the page, sorted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packages: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// list: packages matching the filter and kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// list: the whole matching list; info: the whole dumpsys output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    /// list: served from a list read earlier (refresh: true reads it again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<PackageDump>,
    /// launch: the component started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
    /// launch: whether the app reached the foreground.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreground: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<Focus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_code: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for AppOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "package",
        "count",
        "totalCount",
        "hasMore",
        "nextOffset",
        "cacheId",
        "foreground",
        "versionName",
        "versionCode",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["packages"];
    const KIND: Kind = Kind::Output;
}

/// A failure with the message the model should read.
type Outcome = Result<AppOutput, String>;

pub async fn apply(state: &State, command: AppCommand, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let serial = match state.device(command.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let action = &command.action;
    let outcome = match action {
        AppAction::List {
            limit,
            offset,
            filter,
            kind,
            refresh,
        } => list(state, &serial, *limit, *offset, filter.as_deref(), *kind, *refresh).await,
        AppAction::Install(what) => install(state, &serial, what, &ctx).await,
        AppAction::Info { package } => info(state, &serial, package).await,
        AppAction::Launch { package, activity } => launch(state, &serial, package, activity.as_deref()).await,
        AppAction::Stop { package } => stop(state, &serial, package).await,
        AppAction::ClearData { package } => clear_data(state, &serial, package).await,
        AppAction::Uninstall { package, keep_data } => uninstall(state, &serial, package, *keep_data).await,
    };
    if outcome.is_ok()
        && let Some(step) = flow_step(action)
    {
        let shared = super::handles::recording_in(state, &serial).await;
        state.flows.record(&serial, step);
        super::handles::recording_out(state, &serial, shared).await;
    }
    match outcome {
        Ok(output) => {
            let about = format!("adb-app {} on {serial}", output.operation);
            respond(&output, state.budget, &state.cache, &about)
        }
        Err(message) => error(message),
    }
}

/// The step a recorded flow keeps of a call that worked: launch, stop, clear-data and install.
fn flow_step(action: &AppAction) -> Option<crate::flow::Action> {
    use crate::flow::Action;
    Some(match action {
        AppAction::Launch { package, .. } => Action::Launch {
            package: package.clone(),
        },
        AppAction::Stop { package } => Action::Stop {
            package: package.clone(),
        },
        AppAction::ClearData { package } => Action::ClearData {
            package: package.clone(),
        },
        AppAction::Install(what) => Action::Install {
            path: what.path.clone(),
        },
        _ => return None,
    })
}

fn adb_error(e: AdbError) -> String {
    e.to_string()
}

fn output(operation: &str, serial: &str) -> AppOutput {
    AppOutput {
        operation: operation.into(),
        device: serial.into(),
        ..Default::default()
    }
}

/// The sorted names of one kind of package, from the cache unless asked to refresh.
async fn package_names(
    state: &State,
    serial: &str,
    kind: PackageKind,
    refresh: bool,
) -> Result<(Vec<String>, String, bool), String> {
    let key = (serial.to_string(), kind.name().to_string());
    if !refresh
        && let Some(id) = state
            .package_lists
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
        && let Ok(entry) = state.cache.get(&id)
        && let Data::List(items) = &entry.data
    {
        let names = items.iter().filter_map(Value::as_str).map(str::to_string).collect();
        return Ok((names, id, true));
    }
    let out = state
        .adb
        .shell(serial, &format!("pm list packages{}", kind.flag()))
        .await
        .map_err(adb_error)?;
    if out.exit_code.is_some_and(|c| c != 0) {
        return Err(format!(
            "pm list packages failed on {serial}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut names: Vec<String> = parse_package_list(&out.stdout_text())
        .into_iter()
        .map(|p| p.name)
        .collect();
    names.sort();
    names.dedup();
    let entry = state.cache.put(
        Kind::Packages,
        format!("{} packages on {serial}", kind.name()),
        Data::List(names.iter().cloned().map(Value::String).collect()),
    );
    state
        .package_lists
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, entry.id.clone());
    Ok((names, entry.id.clone(), false))
}

async fn list(
    state: &State,
    serial: &str,
    limit: usize,
    offset: usize,
    filter: Option<&str>,
    kind: PackageKind,
    refresh: bool,
) -> Outcome {
    let (names, full_id, cached) = package_names(state, serial, kind, refresh).await?;
    let (matching, cache_id) = match filter {
        None => (names, full_id),
        Some(f) => {
            let needle = f.to_lowercase();
            let matching: Vec<String> = names
                .into_iter()
                .filter(|n| n.to_lowercase().contains(&needle))
                .collect();
            let entry = state.cache.put(
                Kind::Packages,
                format!("{} packages matching {f:?} on {serial}", kind.name()),
                Data::List(matching.iter().cloned().map(Value::String).collect()),
            );
            (matching, entry.id.clone())
        }
    };
    let total = matching.len();
    if offset > 0 && offset >= total {
        return Err(format!(
            "offset {offset} is past the end: {total} packages match. Use an offset below {total}"
        ));
    }
    let page: Vec<String> = matching.into_iter().skip(offset).take(limit).collect();
    let end = offset + page.len();
    let hint = if total == 0 {
        Some(match (filter, kind) {
            (Some(f), PackageKind::All) => format!("no package name contains {f:?}"),
            (Some(f), _) => format!(
                "no {} package name contains {f:?}; kind: all looks at every package",
                kind.name()
            ),
            (None, _) => "no packages of this kind".to_string(),
        })
    } else {
        (end < total).then(|| format!("{} more: offset {end}, or cache get on cacheId", total - end))
    };
    Ok(AppOutput {
        count: Some(page.len()),
        packages: Some(page),
        total_count: Some(total),
        has_more: Some(end < total),
        next_offset: (end < total).then_some(end),
        cache_id: Some(cache_id),
        cached: Some(cached),
        hint,
        ..output("list", serial)
    })
}

/// Fails with a message that says the package is not there and how to look for it.
async fn ensure_installed(state: &State, serial: &str, package: &str) -> Result<(), String> {
    let out = state
        .adb
        .shell(serial, &format!("pm path {}", quote(package)))
        .await
        .map_err(adb_error)?;
    if out.stdout_text().lines().any(|l| l.starts_with("package:")) {
        return Ok(());
    }
    let last = package.rsplit('.').next().unwrap_or(package);
    Err(format!(
        "package `{package}` is not installed on {serial}. adb-app list {{filter: \"{last}\"}} looks for similar names"
    ))
}

async fn info(state: &State, serial: &str, package: &str) -> Outcome {
    let out = state
        .adb
        .shell(serial, &format!("dumpsys package {}", quote(package)))
        .await
        .map_err(adb_error)?;
    let text = out.stdout_text();
    let Some(dump) = parse_package_dump(&text, package) else {
        ensure_installed(state, serial, package).await?;
        return Err(format!("dumpsys package on {serial} printed nothing about `{package}`"));
    };
    let entry = state.cache.put(
        Kind::Package,
        format!("dumpsys package {package} on {serial}"),
        Data::Text(text),
    );
    Ok(AppOutput {
        package: Some(package.into()),
        info: Some(dump),
        cache_id: Some(entry.id.clone()),
        hint: Some("cache get {id, filter} greps the whole dumpsys output".into()),
        ..output("info", serial)
    })
}

async fn launch(state: &State, serial: &str, package: &str, activity: Option<&str>) -> Outcome {
    ensure_installed(state, serial, package).await?;
    let component = match activity {
        Some(a) => format!("{package}/{a}"),
        None => {
            let out = state
                .adb
                .shell(
                    serial,
                    &format!(
                        "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {}",
                        quote(package)
                    ),
                )
                .await
                .map_err(adb_error)?;
            out.stdout_text()
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.starts_with(&format!("{package}/")))
                .map(str::to_string)
                .ok_or_else(|| format!("`{package}` has no launcher activity; pass `activity` to start another one"))?
        }
    };
    let out = state
        .adb
        .shell(serial, &format!("am start -n {}", quote(&component)))
        .await
        .map_err(adb_error)?;
    let said = format!("{}{}", out.stdout_text(), String::from_utf8_lossy(&out.stderr));
    if said.contains("Error") || out.exit_code.is_some_and(|c| c != 0) {
        return Err(format!(
            "am start -n {component} failed: {}",
            said.lines()
                .filter(|l| l.contains("Error"))
                .collect::<Vec<_>>()
                .join(" ")
                .trim()
        ));
    }
    // The activity manager answers before the app is drawn: look a few times.
    let mut focused = None;
    for attempt in 0..10 {
        focused = state.focused_app(serial, None).await.map_err(adb_error)?;
        if focused.as_ref().is_some_and(|f| f.package == package) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100 * (attempt + 1))).await;
    }
    Ok(AppOutput {
        package: Some(package.into()),
        activity: Some(component),
        foreground: Some(focused.as_ref().is_some_and(|f| f.package == package)),
        focused,
        ..output("launch", serial)
    })
}

async fn stop(state: &State, serial: &str, package: &str) -> Outcome {
    ensure_installed(state, serial, package).await?;
    let out = state
        .adb
        .shell(serial, &format!("am force-stop {}", quote(package)))
        .await
        .map_err(adb_error)?;
    if out.exit_code.is_some_and(|c| c != 0) {
        return Err(format!(
            "am force-stop failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(AppOutput {
        package: Some(package.into()),
        ..output("stop", serial)
    })
}

/// `pm` subcommands answer `Success` or `Failure [REASON]`.
fn pm_result(command: &str, out: &crate::adb::ShellOutput) -> Result<(), String> {
    let text = out.stdout_text();
    if text.lines().any(|l| l.trim() == "Success") {
        return Ok(());
    }
    let said = format!("{} {}", text.trim(), String::from_utf8_lossy(&out.stderr).trim());
    Err(format!("{command} failed: {}", said.trim()))
}

async fn clear_data(state: &State, serial: &str, package: &str) -> Outcome {
    ensure_installed(state, serial, package).await?;
    let out = state
        .adb
        .shell(serial, &format!("pm clear {}", quote(package)))
        .await
        .map_err(adb_error)?;
    pm_result("pm clear", &out)?;
    Ok(AppOutput {
        package: Some(package.into()),
        ..output("clear-data", serial)
    })
}

async fn uninstall(state: &State, serial: &str, package: &str, keep_data: bool) -> Outcome {
    ensure_installed(state, serial, package).await?;
    let flag = if keep_data { "-k " } else { "" };
    let out = state
        .adb
        .shell(serial, &format!("pm uninstall {flag}{}", quote(package)))
        .await
        .map_err(adb_error)?;
    pm_result("pm uninstall", &out).map_err(|e| format!("{e} (system apps cannot be uninstalled)"))?;
    state.forget_package_lists(serial);
    Ok(AppOutput {
        package: Some(package.into()),
        ..output("uninstall", serial)
    })
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn activity_names_are_checked_before_they_reach_a_shell() {
        assert!(command::valid_activity(".MainActivity"));
        assert!(command::valid_activity("com.example.ui.Main$Inner"));
        for bad in ["", ".", "a b", "Main;reboot", "$(id)", "..Main", "com..Main"] {
            assert!(!command::valid_activity(bad), "{bad}");
        }
    }
}
