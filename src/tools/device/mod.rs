//! `adb-device`: which devices there are, which one the session uses, what it is (an 8-field
//! summary with the full property map behind a cacheId), waiting for boot, a health check, and
//! an emulator's console (`emulator.rs`), and leases (`lease.rs`).

mod emulator;
mod lease;
mod screen;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};

use super::command::{self, Command, Deadline, Range};
use super::poll::{Look, Pace, Polled, poll};
use super::{State, error};
use crate::adb::{AdbError, DeviceEntry, Listing, SourceStatus};
use crate::android::device_state::{Battery, parse_battery, parse_wm_size};
use crate::android::getprop::{PropertySummary, parse_getprop, summarize};
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeviceArgs {
    pub operation: DeviceOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    // emulator: a console line (`help` lists them).
    #[serde(default)]
    pub command: Option<String>,
    // unlock: the name of the environment variable that holds the PIN (its name says enough:
    // tools/list stays near 6,000 chars).
    #[serde(default)]
    pub pin_env: Option<String>,
    // lease: seconds it lasts after its last use (`LEASE_TTL`).
    #[serde(default)]
    pub ttl_secs: Option<u64>,
    // lease: a device by what it is, not its serial (`lease::Match`; the docs list its fields,
    // an unknown one is refused naming them: tools/list stays near 6,000 chars).
    #[serde(default, rename = "match")]
    #[schemars(with = "Option<serde_json::Value>", extend("type" = "object"))]
    pub matching: Option<lease::Match>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceOperation {
    List,
    Select,
    Properties,
    Wait,
    Health,
    Emulator,
    Wake,
    Unlock,
    Lease,
    Release,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceOutput {
    pub operation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<Listed>>,
    /// With several `--adb` sources: each one, and its error if it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<SourceStatus>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<PropertySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_count: Option<usize>,
    /// The full property map: cache get pages it, `prefix: "ro.build."` narrows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_completed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// emulator: the console's address and its reply (`OK` when it printed nothing else).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// wake, unlock: the screen is on; the keyguard shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awake: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    /// lease: the caller's lease on `device`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<lease::LeaseView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A row of `list`: the device, and its lease if someone holds one.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Listed {
    #[serde(flatten)]
    pub entry: DeviceEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<lease::LeaseView>,
}

impl Budgeted for DeviceOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "propertyCount",
        "cacheId",
        "bootCompleted",
        "health",
        "console",
        "lease",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["devices", "sources"];
    const KIND: Kind = Kind::Output;
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    pub adb_reachable: bool,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_completed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<Battery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<Screen>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Screen {
    pub width: u32,
    pub height: u32,
}

/// One valid adb-device call, built from `DeviceArgs` by `DeviceCommand::parse`.
#[derive(Debug)]
pub enum DeviceCommand {
    List,
    Select {
        device: Option<String>,
    },
    Properties {
        device: Option<String>,
    },
    Wait {
        device: Option<String>,
        timeout: Duration,
    },
    Health {
        device: Option<String>,
    },
    Emulator {
        device: Option<String>,
        command: Option<String>,
    },
    Wake {
        device: Option<String>,
    },
    Unlock {
        device: Option<String>,
        pin_env: Option<String>,
    },
    Lease {
        device: Option<String>,
        matching: Option<lease::Match>,
        ttl: Duration,
    },
    Release {
        device: Option<String>,
    },
}

/// Only wait takes timeoutMs; the others run within the server's --timeout-ms.
const WAIT_TIMEOUT: Range = Range::new("timeoutMs", 1, 600_000);
const DEFAULT_WAIT_MS: u64 = 60_000;

impl Command for DeviceCommand {
    fn parse(args: JsonObject) -> Result<DeviceCommand, String> {
        let args = command::parse("adb-device", args, |a: &DeviceArgs| match a.operation {
            DeviceOperation::Wait => &["timeoutMs"],
            DeviceOperation::Emulator => &["command"],
            DeviceOperation::Unlock => &["pinEnv"],
            DeviceOperation::Lease => &["ttlSecs", "match"],
            _ => &[],
        })?;
        let device = args.device;
        Ok(match args.operation {
            DeviceOperation::List if device.is_some() => {
                return Err("`device` does not apply to adb-device list: it lists every device".into());
            }
            DeviceOperation::List => DeviceCommand::List,
            DeviceOperation::Select => DeviceCommand::Select { device },
            DeviceOperation::Properties => DeviceCommand::Properties { device },
            DeviceOperation::Wait => DeviceCommand::Wait {
                device,
                timeout: WAIT_TIMEOUT.check_ms(args.timeout_ms, DEFAULT_WAIT_MS)?,
            },
            DeviceOperation::Health => DeviceCommand::Health { device },
            DeviceOperation::Emulator => DeviceCommand::Emulator {
                device,
                command: args.command,
            },
            DeviceOperation::Wake => DeviceCommand::Wake { device },
            DeviceOperation::Unlock => DeviceCommand::Unlock {
                device,
                pin_env: args.pin_env,
            },
            DeviceOperation::Lease if device.is_some() && args.matching.is_some() => {
                return Err(
                    "adb-device lease takes `device` or `match`, not both: name the device, or say what it must be"
                        .into(),
                );
            }
            DeviceOperation::Lease => DeviceCommand::Lease {
                device,
                matching: args.matching.map(lease::Match::checked).transpose()?,
                ttl: Duration::from_secs(lease::LEASE_TTL.check(args.ttl_secs, lease::DEFAULT_TTL_SECS)?),
            },
            DeviceOperation::Release => DeviceCommand::Release { device },
        })
    }

    fn deadline(&self) -> Deadline {
        match self {
            DeviceCommand::Wait { .. } => Deadline::Own,
            _ => Deadline::SERVER,
        }
    }

    fn runs_long(&self) -> bool {
        matches!(self, DeviceCommand::Wait { .. })
    }

    /// Waking and unlocking change the phone under a person's hands; an emulator line acts
    /// when it sets something (the same test a recording keeps it by), not when it only
    /// reads (`help`, `power display`). Selecting changes the session's default, not a device;
    /// leasing a named device and releasing one pass the lease's door as acting calls do (the
    /// device must be free or the caller's); a lease by `match` picks among free devices.
    fn acts(&self) -> bool {
        match self {
            DeviceCommand::Wake { .. } | DeviceCommand::Unlock { .. } | DeviceCommand::Release { .. } => true,
            DeviceCommand::Lease { matching, .. } => matching.is_none(),
            DeviceCommand::Emulator { command, .. } => command.as_deref().is_some_and(emulator::changes_the_device),
            DeviceCommand::List
            | DeviceCommand::Select { .. }
            | DeviceCommand::Properties { .. }
            | DeviceCommand::Wait { .. }
            | DeviceCommand::Health { .. } => false,
        }
    }

    fn device(&self) -> Option<&str> {
        match self {
            DeviceCommand::List => None,
            DeviceCommand::Select { device }
            | DeviceCommand::Properties { device }
            | DeviceCommand::Wait { device, .. }
            | DeviceCommand::Health { device }
            | DeviceCommand::Emulator { device, .. }
            | DeviceCommand::Wake { device }
            | DeviceCommand::Unlock { device, .. }
            | DeviceCommand::Lease { device, .. }
            | DeviceCommand::Release { device } => device.as_deref(),
        }
    }

    async fn apply(self, state: Arc<State>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        apply(&state, self, ctx).await
    }
}

pub async fn apply(state: &State, command: DeviceCommand, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let result = match command {
        DeviceCommand::List => list(state).await,
        DeviceCommand::Select { device } => select(state, device.as_deref()).await,
        DeviceCommand::Properties { device } => properties(state, device.as_deref()).await,
        DeviceCommand::Wait { device, timeout } => wait(state, device.as_deref(), timeout, ctx).await,
        DeviceCommand::Health { device } => Ok(health(state, device.as_deref()).await),
        DeviceCommand::Emulator { device, command } => {
            match emulator::run(state, device.as_deref(), command.as_deref()).await {
                Ok((output, step)) => {
                    if let (Some(step), Some(serial)) = (step, output.device.as_deref()) {
                        let shared = super::handles::recording_in(state, serial).await;
                        state.flows.record(serial, step);
                        super::handles::recording_out(state, serial, shared).await;
                    }
                    Ok(output)
                }
                Err(e) => return error(e),
            }
        }
        DeviceCommand::Wake { device } => match screen::wake(state, device.as_deref()).await {
            Ok(output) => Ok(output),
            Err(e) => return error(e),
        },
        DeviceCommand::Lease { device, matching, ttl } => {
            match lease::take(state, device.as_deref(), matching.as_ref(), ttl).await {
                Ok(output) => Ok(output),
                Err(e) => return error(e),
            }
        }
        DeviceCommand::Release { device } => match lease::release(state, device.as_deref()).await {
            Ok(output) => Ok(output),
            Err(e) => return error(e),
        },
        DeviceCommand::Unlock { device, pin_env } => {
            match screen::unlock(state, device.as_deref(), pin_env.as_deref()).await {
                Ok(output) => Ok(output),
                Err(e) => return error(e),
            }
        }
    };
    match result {
        Ok(output) => {
            let about = format!("adb-device {}", output.operation);
            respond(&output, state.budget, &state.cache, &about)
        }
        Err(e) => error(e.to_string()),
    }
}

async fn list(state: &State) -> Result<DeviceOutput, AdbError> {
    let Listing { devices, sources } = state.adb.devices().await?;
    let silent: Vec<&str> = sources
        .iter()
        .filter(|s| s.error.is_some())
        .map(|s| s.source.as_str())
        .collect();
    let hint = match devices.iter().filter(|d| d.state == "device").count() {
        _ if !silent.is_empty() => Some(format!(
            "not answering: {} (see sources); the others' devices are listed",
            silent.join(", ")
        )),
        0 => Some("no device online: connect one, or start droidmcp with --sim".to_string()),
        1 => None,
        _ if state.selected().is_none() => Some("several devices: pass `device`, or pick one with select".into()),
        _ => None,
    };
    let devices = lease::rows(state, devices).await;
    Ok(DeviceOutput {
        operation: "list".into(),
        device: state.selected(),
        devices: Some(devices),
        sources: (!sources.is_empty()).then_some(sources),
        hint,
        ..Default::default()
    })
}

async fn select(state: &State, device: Option<&str>) -> Result<DeviceOutput, AdbError> {
    let Some(device) = device else {
        // Without a device, select clears the choice back to "the only one online".
        state.select(None);
        return Ok(DeviceOutput {
            operation: "select".into(),
            hint: Some("cleared: calls now use the only device online".into()),
            ..Default::default()
        });
    };
    let serial = state.adb.resolve(Some(device)).await?;
    state.select(Some(serial.clone()));
    Ok(DeviceOutput {
        operation: "select".into(),
        device: Some(serial),
        ..Default::default()
    })
}

async fn properties(state: &State, device: Option<&str>) -> Result<DeviceOutput, AdbError> {
    let serial = state.device(device).await?;
    let out = state.adb.shell(&serial, "getprop").await?;
    let props = parse_getprop(&out.stdout_text());
    if props.is_empty() {
        return Err(AdbError::Protocol(format!(
            "getprop on {serial} printed no properties (exit {:?}): {}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let entry = state
        .cache
        .put(Kind::Props, format!("getprop of {serial}"), Data::Map(props.clone()));
    Ok(properties_output(&serial, &props, &entry.id))
}

/// The `properties` answer for a parsed property map; pure, so the captures test it.
pub fn properties_output(serial: &str, props: &BTreeMap<String, String>, cache_id: &str) -> DeviceOutput {
    DeviceOutput {
        operation: "properties".into(),
        device: Some(serial.to_string()),
        summary: Some(summarize(props)),
        property_count: Some(props.len()),
        cache_id: Some(cache_id.to_string()),
        hint: Some("cache get {id, prefix: \"ro.build.\"} or {id, filter} reads the rest".into()),
        ..Default::default()
    }
}

async fn wait(
    state: &State,
    device: Option<&str>,
    timeout: Duration,
    ctx: RequestContext<RoleServer>,
) -> Result<DeviceOutput, AdbError> {
    let started = Instant::now();
    let pace = Pace {
        timeout,
        floor: Duration::from_millis(200),
        pause: |check| Duration::from_millis((200 * u64::from(check)).min(2000)),
        look_name: "check",
    };
    let polled = poll(&ctx, state.budget, pace, move |_, bound| async move {
        let resolved = match tokio::time::timeout(bound, state.device(device)).await {
            Ok(resolved) => resolved,
            Err(_) => Err(AdbError::Timeout {
                what: "finding the device".into(),
                after: bound,
            }),
        };
        let serial = match resolved {
            Ok(serial) => serial,
            Err(e) => return Look::NotYet(e.to_string()),
        };
        let probe = state
            .adb
            .shell_with_timeout(&serial, "getprop sys.boot_completed", bound.min(Duration::from_secs(5)))
            .await;
        match probe {
            Ok(out) if out.stdout_text().trim() == "1" => Look::Found(serial),
            Ok(_) => Look::NotYet("online, still booting".to_string()),
            Err(e) => Look::<_, AdbError>::NotYet(e.to_string()),
        }
    })
    .await;
    match polled {
        Polled::Found(serial) => Ok(DeviceOutput {
            operation: "wait".into(),
            device: Some(serial),
            boot_completed: Some(true),
            waited_ms: Some(started.elapsed().as_millis() as u64),
            ..Default::default()
        }),
        Polled::Failed(e) => Err(e),
        Polled::TimedOut { looks, last } => Err(AdbError::WaitedOut {
            what: format!("waiting for the device to boot ({looks} checks; last: {last})"),
            after: started.elapsed(),
        }),
        Polled::Cancelled => Err(AdbError::WaitedOut {
            what: "wait cancelled by the client".into(),
            after: started.elapsed(),
        }),
    }
}

/// One shell round trip gathers boot state, screen size and battery.
const HEALTH_COMMAND: &str =
    "getprop sys.boot_completed; echo '--droidmcp--'; wm size; echo '--droidmcp--'; dumpsys battery";

async fn health(state: &State, device: Option<&str>) -> DeviceOutput {
    let mut health = Health::default();
    let serial = match state.device(device).await {
        Ok(serial) => serial,
        Err(e) => {
            health.adb_reachable = !matches!(
                e,
                AdbError::ServerUnreachable { .. }
                    | AdbError::DeviceUnreachable { .. }
                    | AdbError::Disconnected { .. }
                    | AdbError::ServerDropped { .. }
                    | AdbError::Timeout { .. }
            );
            health.state = match &e {
                AdbError::Unauthorized(_) => "unauthorized",
                AdbError::Offline(_) => "offline",
                _ => "unavailable",
            }
            .into();
            health.problems.push(e.to_string());
            return DeviceOutput {
                operation: "health".into(),
                device: device.map(crate::android::text::echoed),
                health: Some(health),
                ..Default::default()
            };
        }
    };
    health.adb_reachable = true;
    health.state = "device".into();
    match state.adb.shell(&serial, HEALTH_COMMAND).await {
        Ok(out) => {
            let text = out.stdout_text();
            let mut parts = text.split("--droidmcp--\n");
            let boot = parts.next().unwrap_or("").trim() == "1";
            health.boot_completed = Some(boot);
            if !boot {
                health
                    .problems
                    .push("still booting: adb-device wait blocks until it is done".into());
            }
            health.screen = parse_wm_size(parts.next().unwrap_or("")).map(|(width, height)| Screen { width, height });
            let battery = parse_battery(parts.next().unwrap_or(""));
            if battery.level.is_some() {
                health.battery = Some(battery);
            }
        }
        Err(e) => health.problems.push(e.to_string()),
    }
    DeviceOutput {
        operation: "health".into(),
        device: Some(serial),
        health: Some(health),
        ..Default::default()
    }
}
