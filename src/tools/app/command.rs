//! `adb-app`'s typed command: what each operation takes, checked (a package name in Android's
//! grammar, an activity class name, a limit in range) before anything reaches a device.

use super::{
    AppArgs, AppOperation, CallToolResult, DEFAULT_LIMIT, JsonObject, MAX_LIMIT, PackageKind, State,
    is_valid_package_name,
};
use crate::tools::command::{self, Command, Deadline, Range};
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use std::sync::Arc;

/// One valid adb-app call, built from `AppArgs` by `AppCommand::parse`: the device it names
/// (if any) and what to do there.
#[derive(Debug)]
pub struct AppCommand {
    pub device: Option<String>,
    pub action: AppAction,
}

#[derive(Debug)]
pub enum AppAction {
    List {
        limit: usize,
        offset: usize,
        /// Not empty.
        filter: Option<String>,
        kind: PackageKind,
        refresh: bool,
    },
    /// A package name in Android's grammar, checked before it gets near a device.
    Info {
        package: String,
    },
    Launch {
        package: String,
        activity: Option<String>,
    },
    Stop {
        package: String,
    },
    ClearData {
        package: String,
    },
    Install(Install),
    Uninstall {
        package: String,
        keep_data: bool,
    },
}

/// What `install` takes: a local APK and `pm install`'s flags.
#[derive(Debug)]
pub struct Install {
    pub path: String,
    pub replace: bool,
    pub grant_permissions: bool,
    pub downgrade: bool,
}

const LIMIT: Range = Range::new("limit", 1, MAX_LIMIT).instead(". Page on with offset");

impl Command for AppCommand {
    fn parse(args: JsonObject) -> Result<AppCommand, String> {
        let args = command::parse("adb-app", args, |a: &AppArgs| match a.operation {
            AppOperation::List => &["limit", "offset", "filter", "kind", "refresh"],
            AppOperation::Launch => &["package", "activity"],
            AppOperation::Install => &["path", "replace", "grantPermissions", "downgrade"],
            AppOperation::Uninstall => &["package", "keepData"],
            AppOperation::Info | AppOperation::Stop | AppOperation::ClearData => &["package"],
        })?;
        let package = || valid_package(args.package.as_deref()).map(str::to_string);
        let action = match args.operation {
            AppOperation::List => AppAction::List {
                limit: LIMIT.check_count(args.limit, DEFAULT_LIMIT)?,
                offset: command::OFFSET.check_count(args.offset, 0)?,
                filter: args.filter.clone().filter(|f| !f.is_empty()),
                kind: args.kind.unwrap_or_default(),
                refresh: args.refresh.unwrap_or(false),
            },
            AppOperation::Info => AppAction::Info { package: package()? },
            AppOperation::Launch => {
                let package = package()?;
                if let Some(a) = args.activity.as_deref()
                    && !valid_activity(a)
                {
                    return Err(format!(
                        "`{}` is not an activity class name: e.g. .MainActivity or com.example.MainActivity",
                        a.chars().take(80).collect::<String>()
                    ));
                }
                AppAction::Launch {
                    package,
                    activity: args.activity.clone(),
                }
            }
            AppOperation::Stop => AppAction::Stop { package: package()? },
            AppOperation::ClearData => AppAction::ClearData { package: package()? },
            AppOperation::Install => AppAction::Install(Install {
                path: args
                    .path
                    .clone()
                    .ok_or("install needs `path`: the absolute path of an APK on this computer")?,
                replace: args.replace.unwrap_or(true),
                grant_permissions: args.grant_permissions.unwrap_or(false),
                downgrade: args.downgrade.unwrap_or(false),
            }),
            AppOperation::Uninstall => AppAction::Uninstall {
                package: package()?,
                keep_data: args.keep_data.unwrap_or(false),
            },
        };
        Ok(AppCommand {
            device: args.device,
            action,
        })
    }

    /// An install bounds itself by the APK's size.
    fn deadline(&self) -> Deadline {
        match self.action {
            AppAction::Install(_) => Deadline::Own,
            _ => Deadline::SERVER,
        }
    }

    fn runs_long(&self) -> bool {
        matches!(self.action, AppAction::Install(_))
    }

    fn acts(&self) -> bool {
        match self.action {
            AppAction::List { .. } | AppAction::Info { .. } => false,
            AppAction::Launch { .. }
            | AppAction::Stop { .. }
            | AppAction::ClearData { .. }
            | AppAction::Install(_)
            | AppAction::Uninstall { .. } => true,
        }
    }

    fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    async fn apply(self, state: Arc<State>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        super::apply(&state, self, ctx).await
    }
}

/// A package name must follow Android's grammar before it gets anywhere near a device.
pub(super) fn valid_package(package: Option<&str>) -> Result<&str, String> {
    let package = package.ok_or("this operation needs `package`, e.g. com.android.settings")?;
    if is_valid_package_name(package) {
        Ok(package)
    } else {
        Err(format!(
            "`{}` is not a package name: segments of letters, digits and _, starting with a letter, joined by dots (e.g. com.example.app)",
            crate::android::text::echoed(package)
        ))
    }
}

/// A class name for `launch`: `.Main` or `com.example.Main` (`$` for inner classes).
pub(super) fn valid_activity(activity: &str) -> bool {
    let body = activity.strip_prefix('.').unwrap_or(activity);
    !body.is_empty()
        && body.len() <= 255
        && body.split('.').all(|s| {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
}
