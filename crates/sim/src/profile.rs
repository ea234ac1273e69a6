//! Fixture profiles: a folder with `profile.toml`, `getprop.txt`, `packages.tsv`, `logcat.txt`
//! and `screens/*.xml`. The format is documented in `fixtures/README.md`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;

use android::{
    getprop::parse_getprop,
    uiautomator::{UiTree, parse_ui_dump},
};

use super::Faults;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileToml {
    pub name: String,
    /// The screen shown at boot and after HOME.
    pub home: String,
    pub display: Display,
    #[serde(default)]
    pub battery: Battery,
    #[serde(default, rename = "screen")]
    pub screens: Vec<ScreenSpec>,
    #[serde(default, rename = "transition")]
    pub transitions: Vec<Transition>,
    /// "Show password" toggles: a tap on `toggle` shows or hides the text of `field`.
    #[serde(default, rename = "reveal")]
    pub reveals: Vec<Reveal>,
    #[serde(default)]
    pub faults: Faults,
    /// Processes running at boot, package → pid (so the log's pids match `pidof`).
    #[serde(default)]
    pub processes: BTreeMap<String, u32>,
    /// adbd features in the CNXN banner. Without `shell_v2` the device is an Android 6 or older
    /// one: hosts fall back to shell v1 (no exit code, stderr mixed into stdout).
    #[serde(default = "modern_features")]
    pub features: Vec<String>,
    /// The phone's state at boot: asleep, locked, a screen that never goes idle (sim/phone).
    #[serde(default)]
    pub phone: crate::phone::PhoneSpec,
    /// What each device program costs (sim/costs); none when absent.
    #[serde(default)]
    pub costs: crate::costs::Costs,
    /// The kernel's input devices (sim/touch): which public `getevent -lp` capture it plays.
    #[serde(default)]
    pub input: InputSpec,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// A capture's name (`fixtures/getevent/NAME.txt`); none: `getevent` lists nothing.
    pub capture: Option<String>,
}

fn modern_features() -> Vec<String> {
    ["shell_v2", "cmd", "stat_v2", "ls_v2"].map(String::from).to_vec()
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Display {
    pub width: u32,
    pub height: u32,
    pub density: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Battery {
    pub level: u32,
    /// `ac`, `usb`, `wireless` or `none`.
    pub powered: String,
    pub voltage_mv: u32,
    pub temperature_tenths_c: u32,
}

impl Default for Battery {
    fn default() -> Self {
        Battery {
            level: 100,
            powered: "ac".into(),
            voltage_mv: 5000,
            temperature_tenths_c: 250,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenSpec {
    pub name: String,
    /// Path of the uiautomator XML, relative to the profile folder.
    pub xml: String,
    /// `package/activity`, as `dumpsys window` shows it (`.Short` names allowed).
    pub activity: String,
}

/// A rule that moves from one screen to another. Exactly one of `tap`, `key`, `swipe` is set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transition {
    /// Screen name, or `*` for any screen.
    pub from: String,
    pub to: String,
    /// `text=…`, `id=…` (resource-id) or `desc=…` (content-desc) of the tapped element.
    pub tap: Option<String>,
    /// A key name without `KEYCODE_`, e.g. `BACK`, `ENTER`.
    pub key: Option<String>,
    /// `up`, `down`, `left` or `right`: the direction the finger moves.
    pub swipe: Option<String>,
}

/// A toggle that shows or hides a password field's text on one screen (an eye icon, a "Show
/// password" checkbox): a tap on the element `toggle` names flips the field's `password` flag.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reveal {
    pub screen: String,
    /// `text=…`, `id=…` or `desc=…`, as a transition's `tap`.
    pub toggle: String,
    /// The field it reveals, named the same way.
    pub field: String,
}

/// One row of `packages.tsv`.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageSpec {
    pub name: String,
    pub path: String,
    pub uid: u32,
    pub system: bool,
    pub version_name: String,
    pub version_code: u64,
    /// Fully qualified launcher activity, if the app has one.
    pub launcher: Option<String>,
    pub label: String,
    pub first_install: String,
    pub last_update: String,
    pub min_sdk: u32,
    pub target_sdk: u32,
    pub permissions: Vec<String>,
    /// The runtime permissions among them, granted or not (`pm grant` / `pm revoke` change
    /// them; the rest are granted at install).
    pub runtime: BTreeMap<String, bool>,
}

/// Android's runtime ("dangerous") permissions, from AOSP's core/res/AndroidManifest.xml
/// (protectionLevel dangerous, Android 14): the only ones `pm grant` and `pm revoke` change.
pub const RUNTIME_PERMISSIONS: [&str; 33] = [
    "ACCEPT_HANDOVER",
    "ACCESS_BACKGROUND_LOCATION",
    "ACCESS_COARSE_LOCATION",
    "ACCESS_FINE_LOCATION",
    "ACCESS_MEDIA_LOCATION",
    "ACTIVITY_RECOGNITION",
    "ADD_VOICEMAIL",
    "ANSWER_PHONE_CALLS",
    "BLUETOOTH_ADVERTISE",
    "BLUETOOTH_CONNECT",
    "BLUETOOTH_SCAN",
    "BODY_SENSORS",
    "CALL_PHONE",
    "CAMERA",
    "GET_ACCOUNTS",
    "NEARBY_WIFI_DEVICES",
    "POST_NOTIFICATIONS",
    "READ_CALENDAR",
    "READ_CALL_LOG",
    "READ_CONTACTS",
    "READ_EXTERNAL_STORAGE",
    "READ_MEDIA_AUDIO",
    "READ_MEDIA_IMAGES",
    "READ_MEDIA_VIDEO",
    "READ_PHONE_NUMBERS",
    "READ_PHONE_STATE",
    "READ_SMS",
    "RECEIVE_MMS",
    "RECEIVE_SMS",
    "RECORD_AUDIO",
    "SEND_SMS",
    "WRITE_CALENDAR",
    "WRITE_CONTACTS",
];

/// Whether `permission` (`android.permission.CAMERA`) is granted at run time.
pub fn is_runtime(permission: &str) -> bool {
    permission
        .strip_prefix("android.permission.")
        .is_some_and(|p| RUNTIME_PERMISSIONS.contains(&p))
}

/// The runtime permissions among `requested`, all `granted` (a system app's are granted by
/// default; a user app's once it is installed with `-g`, or granted).
pub fn runtime_grants(requested: &[String], granted: bool) -> BTreeMap<String, bool> {
    requested
        .iter()
        .filter(|p| is_runtime(p))
        .map(|p| (p.clone(), granted))
        .collect()
}

pub struct Profile {
    pub toml: ProfileToml,
    pub faults: Faults,
    pub props: BTreeMap<String, String>,
    pub packages: Vec<PackageSpec>,
    pub logcat: String,
    pub screens: Vec<(ScreenSpec, UiTree)>,
}

/// The default profile, built into the binary so `--sim` works from any folder and after
/// `cargo install`.
static BUILTIN: include_dir::Dir = include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../fixtures/pixel-emulator");

/// The name `--sim` and `sim --profile` take for the built-in profile.
pub const BUILTIN_NAME: &str = "pixel-emulator";

impl Profile {
    /// Loads a profile folder.
    pub fn load(dir: &Path) -> anyhow::Result<Profile> {
        Profile::read(&dir.display().to_string(), |name| {
            std::fs::read_to_string(dir.join(name)).map_err(anyhow::Error::from)
        })
    }

    /// The profile built into the binary (`fixtures/pixel-emulator` when it was built).
    pub fn builtin() -> anyhow::Result<Profile> {
        Profile::read("built-in pixel-emulator", |name| {
            let file = BUILTIN.get_file(name).context("no such file")?;
            file.contents_utf8().map(str::to_string).context("not UTF-8")
        })
    }

    /// Builds a profile from its files, read by name (`profile.toml`, `screens/x.xml`, …).
    fn read(label: &str, read_file: impl Fn(&str) -> anyhow::Result<String>) -> anyhow::Result<Profile> {
        let read = |name: &str| read_file(name).with_context(|| format!("reading {name} in profile {label}"));
        let toml: ProfileToml =
            toml::from_str(&read("profile.toml")?).with_context(|| format!("parsing {label}/profile.toml"))?;
        let props = parse_getprop(&read("getprop.txt")?);
        let packages = parse_packages_tsv(&read("packages.tsv")?).context("parsing packages.tsv")?;
        let logcat = read("logcat.txt")?;
        let mut screens = Vec::new();
        for spec in &toml.screens {
            let tree = parse_ui_dump(&read(&spec.xml)?).with_context(|| format!("parsing {}", spec.xml))?;
            screens.push((spec.clone(), tree));
        }
        validate(&toml, &packages)?;
        Ok(Profile {
            faults: toml.faults.clone(),
            toml,
            props,
            packages,
            logcat,
            screens,
        })
    }
}

fn validate(toml: &ProfileToml, packages: &[PackageSpec]) -> anyhow::Result<()> {
    crate::phone::Phone::from_spec(&toml.phone).map_err(|e| anyhow::anyhow!("[phone]: {e}"))?;
    if let Some(name) = &toml.input.capture {
        crate::touch::Touch::named(name).map_err(|e| anyhow::anyhow!("[input]: {e}"))?;
    }
    let known = |name: &str| toml.screens.iter().any(|s| s.name == name);
    if !known(&toml.home) {
        bail!("home screen {:?} is not among the [[screen]] entries", toml.home);
    }
    for t in &toml.transitions {
        if (t.from != "*" && !known(&t.from)) || !known(&t.to) {
            bail!("transition {} -> {} names an unknown screen", t.from, t.to);
        }
        let triggers = [&t.tap, &t.key, &t.swipe].iter().filter(|x| x.is_some()).count();
        if triggers != 1 {
            bail!("transition {} -> {} needs exactly one of tap, key, swipe", t.from, t.to);
        }
    }
    for r in &toml.reveals {
        if !known(&r.screen) {
            bail!("reveal on {:?} names an unknown screen", r.screen);
        }
        for selector in [&r.toggle, &r.field] {
            if !matches!(selector.split_once('='), Some(("text" | "id" | "desc", _))) {
                bail!("reveal on {:?}: {selector:?} is not text=…, id=… or desc=…", r.screen);
            }
        }
    }
    for s in &toml.screens {
        let pkg = s.activity.split('/').next().unwrap_or("");
        if !packages.iter().any(|p| p.name == pkg) {
            bail!(
                "screen {} belongs to package {pkg}, which packages.tsv does not list",
                s.name
            );
        }
    }
    Ok(())
}

/// Parses `packages.tsv`: a header row naming the columns, then one package per row.
/// `#` lines are comments; `-` means empty; `permissions` is comma-separated.
pub fn parse_packages_tsv(text: &str) -> anyhow::Result<Vec<PackageSpec>> {
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header: Vec<&str> = lines.next().context("packages.tsv is empty")?.split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .with_context(|| format!("missing column {name}"))
    };
    let idx = [
        col("name")?,
        col("path")?,
        col("uid")?,
        col("kind")?,
        col("versionName")?,
        col("versionCode")?,
        col("launcher")?,
        col("label")?,
        col("firstInstall")?,
        col("lastUpdate")?,
        col("minSdk")?,
        col("targetSdk")?,
        col("permissions")?,
    ];
    let mut out = Vec::new();
    for (n, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split('\t').collect();
        let cell = |i: usize| -> anyhow::Result<&str> {
            let v = cells
                .get(idx[i])
                .with_context(|| format!("row {}: too few columns", n + 1))?;
            Ok(if *v == "-" { "" } else { v })
        };
        let kind = cell(3)?;
        if kind != "system" && kind != "user" {
            bail!("row {}: kind must be system or user, not {kind:?}", n + 1);
        }
        let permissions: Vec<String> = cell(12)?
            .split(',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        out.push(PackageSpec {
            runtime: runtime_grants(&permissions, kind == "system"),
            permissions,
            name: cell(0)?.to_string(),
            path: cell(1)?.to_string(),
            uid: cell(2)?.parse().with_context(|| format!("row {}: uid", n + 1))?,
            system: kind == "system",
            version_name: cell(4)?.to_string(),
            version_code: cell(5)?
                .parse()
                .with_context(|| format!("row {}: versionCode", n + 1))?,
            launcher: Some(cell(6)?.to_string()).filter(|s| !s.is_empty()),
            label: cell(7)?.to_string(),
            first_install: cell(8)?.to_string(),
            last_update: cell(9)?.to_string(),
            min_sdk: cell(10)?.parse().with_context(|| format!("row {}: minSdk", n + 1))?,
            target_sdk: cell(11)?.parse().with_context(|| format!("row {}: targetSdk", n + 1))?,
        });
    }
    Ok(out)
}
