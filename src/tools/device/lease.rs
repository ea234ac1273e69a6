//! `adb-device lease` and `release`, and each listed device's lease: the device is the caller's
//! alone until the lease ends (`tools::leases` refuses others' acting calls and renews it on the
//! holder's). A lease names a device, or says what it must be (`match`) and takes the one the
//! caller holds already that is, else the first free one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{DeviceOutput, Listed};
use crate::adb::DeviceEntry;
use crate::state::{Lease, Taken};
use crate::tools::command::Range;
use crate::tools::{State, leases};

/// How long a lease lasts after its last use: a second to a day.
pub const LEASE_TTL: Range = Range::new("ttlSecs", 1, 86_400)
    .instead(". A lease lasts from its last acting call: renew it by using the device, or lease again");
pub const DEFAULT_TTL_SECS: u64 = 600;

/// What a leased device must be; every field given must hold.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Part of `ro.product.model`, any case.
    #[serde(default)]
    pub model: Option<String>,
    /// `ro.build.version.sdk`, exactly.
    #[serde(default)]
    pub sdk: Option<u32>,
    /// The `--adb` source that reaches it.
    #[serde(default)]
    pub source: Option<String>,
}

impl Match {
    /// Refuses a match that says nothing.
    pub fn checked(self) -> Result<Match, String> {
        match (&self.model, self.sdk, &self.source) {
            (None, None, None) => Err(
                "`match` is empty: give model (part of the model name), sdk (the API level) or source (an --adb source), or name the device"
                    .into(),
            ),
            _ => Ok(self),
        }
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(model) = &self.model {
            parts.push(format!("model {:?}", crate::android::text::echoed(model)));
        }
        if let Some(sdk) = self.sdk {
            parts.push(format!("sdk {sdk}"));
        }
        if let Some(source) = &self.source {
            parts.push(format!("source {:?}", crate::android::text::echoed(source)));
        }
        parts.join(", ")
    }
}

/// A lease as answers show it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeaseView {
    pub holder: String,
    /// UTC.
    pub until: String,
    pub ttl_secs: u64,
}

fn view(lease: &Lease) -> LeaseView {
    LeaseView {
        holder: leases::who(lease),
        until: leases::until(lease),
        ttl_secs: lease.ttl_ms / 1000,
    }
}

/// `list`'s rows, each with its lease (found by the phone's identity: an online device's is read
/// once, an offline one shows the one read before, if any).
pub async fn rows(state: &State, devices: Vec<DeviceEntry>) -> Vec<Listed> {
    let held = state.leases.list().await.unwrap_or_default();
    if held.is_empty() {
        return devices.into_iter().map(|entry| Listed { entry, lease: None }).collect();
    }
    let keys = futures::future::join_all(devices.iter().map(async |entry| match entry.state.as_str() {
        "device" => leases::key(state, &entry.serial).await.ok(),
        _ => state.adb.known_identity(&entry.serial),
    }))
    .await;
    devices
        .into_iter()
        .zip(keys)
        .map(|(entry, key)| {
            let lease = key.and_then(|key| held.iter().find(|l| l.device == key)).map(view);
            Listed { entry, lease }
        })
        .collect()
}

/// `lease`: the named (or default) device, or the first free one that matches.
pub async fn take(
    state: &State,
    device: Option<&str>,
    matching: Option<&Match>,
    ttl: Duration,
) -> Result<DeviceOutput, String> {
    let me = leases::holder(state, false);
    let ttl_ms = ttl.as_millis() as u64;
    let candidates = match matching {
        None => {
            let serial = state.device(device).await.map_err(|e| e.to_string())?;
            let key = leases::key(state, &serial)
                .await
                .map_err(|e| format!("{e}; nothing was leased"))?;
            vec![(serial, key)]
        }
        Some(matching) => {
            // One the caller holds already comes first: a repeated lease renews it, not a second.
            // A match skips a device that cannot say which phone it is.
            let held = state.leases.list().await.unwrap_or_default();
            let mut found = Vec::new();
            for serial in matches(state, matching).await? {
                if let Ok(key) = leases::key(state, &serial).await {
                    found.push((serial, key));
                }
            }
            found.sort_by_key(|(_, key)| !held.iter().any(|l| l.device == *key && l.holder == me));
            found
        }
    };
    let mut theirs = Vec::new();
    for (serial, key) in candidates {
        match state
            .leases
            .take(&key, &me, ttl_ms)
            .await
            .map_err(|e| format!("could not reach the device leases ({e}); nothing was leased"))?
        {
            Taken::Yours(lease) => {
                let hint = format!(
                    "{serial} is yours alone until {} (others' acting calls are refused); each of your acting calls renews it for {} s; adb-device release ends it. Pass device: {serial:?} (or select it)",
                    leases::until(&lease),
                    ttl.as_secs()
                );
                return Ok(DeviceOutput {
                    operation: "lease".into(),
                    device: Some(serial),
                    lease: Some(view(&lease)),
                    hint: Some(hint),
                    ..Default::default()
                });
            }
            Taken::Theirs(lease) => theirs.push((serial, lease)),
        }
    }
    match (matching, theirs.as_slice()) {
        (None, [(serial, lease)]) => Err(leases::refused(serial, lease, &me)),
        (Some(matching), held) => Err(format!(
            "every device that matches {} is leased: {}. Wait, ask a holder to release it, or match more devices",
            matching.describe(),
            held.iter()
                .map(|(serial, lease)| format!("{serial} to {} until {}", leases::who(lease), leases::until(lease)))
                .collect::<Vec<_>>()
                .join("; ")
        )),
        (None, _) => Err("no device to lease".into()),
    }
}

/// The online devices that match, in listing order; an error naming what there is when none does.
async fn matches(state: &State, matching: &Match) -> Result<Vec<String>, String> {
    let listing = state.adb.devices().await.map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    let mut seen = Vec::new();
    for entry in listing.devices.iter().filter(|d| d.state == "device") {
        let route = state.adb.route_name(&entry.serial);
        let source = route.rsplit_once('/').map_or("", |(label, _)| label);
        let (model, sdk) = match (&matching.model, matching.sdk) {
            (None, None) => (String::new(), None),
            _ => {
                let out = state
                    .adb
                    .shell(&entry.serial, "getprop ro.product.model; getprop ro.build.version.sdk")
                    .await
                    .map_err(|e| e.to_string())?;
                let text = out.stdout_text();
                let mut lines = text.lines();
                let model = lines.next().unwrap_or_default().trim().to_string();
                (model, lines.next().and_then(|s| s.trim().parse::<u32>().ok()))
            }
        };
        let fits = matching
            .model
            .as_ref()
            .is_none_or(|m| model.to_lowercase().contains(&m.to_lowercase()))
            && matching.sdk.is_none_or(|want| sdk == Some(want))
            && matching.source.as_ref().is_none_or(|s| s == source);
        if fits {
            found.push(entry.serial.clone());
        }
        seen.push(format!(
            "{} (source {source}{}{})",
            entry.serial,
            if model.is_empty() {
                String::new()
            } else {
                format!(", model {model:?}")
            },
            sdk.map_or(String::new(), |s| format!(", sdk {s}"))
        ));
    }
    if found.is_empty() {
        return Err(format!(
            "no online device matches {}: {}. Change the match, or see adb-device list",
            matching.describe(),
            match seen.is_empty() {
                true => "no device is online".to_string(),
                false => format!("there are {}", seen.join("; ")),
            }
        ));
    }
    Ok(found)
}

/// `release`: ends the caller's lease on the device.
pub async fn release(state: &State, device: Option<&str>) -> Result<DeviceOutput, String> {
    let serial = state.device(device).await.map_err(|e| e.to_string())?;
    let me = leases::holder(state, false);
    let key = leases::key(state, &serial)
        .await
        .map_err(|e| format!("{e}; nothing was released"))?;
    let hint = match state.leases.release(&key, &me).await {
        Ok(Some(Taken::Yours(_))) => "released: anyone may act on it, or lease it",
        Ok(None) => "it was not leased: nothing to release",
        Ok(Some(Taken::Theirs(lease))) => return Err(leases::refused(&serial, &lease, &me)),
        Err(e) => return Err(format!("could not reach the device leases ({e}); nothing was released")),
    };
    Ok(DeviceOutput {
        operation: "release".into(),
        device: Some(serial),
        hint: Some(hint.into()),
        ..Default::default()
    })
}
