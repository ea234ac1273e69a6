//! Maestro's device commands that a recording never makes (scrolling until an element shows
//! with Maestro's options, screenshots and recordings, taps with their options, app
//! permissions, a launch with arguments, links), as steps: what each says in a report, and the
//! script lines that replay it through the tools an assistant uses (`ui`, `adb-app`,
//! `adb-shell`). Every value that reaches a device shell is quoted here with
//! `android::text::quote`, as the script is written; values read from the device at replay are
//! used only when they have the grammar of what they name.

use android::text::quote;

use super::{Selector, Target, quoted as lit};

/// The host file a `takeScreenshot` or a recording is pulled to, and the device file it is
/// made in first; the replay pulls each (`src/replay/files.rs`) after the run.
pub const FILES_FILE: &str = "flow-files.json";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Maestro's `scrollUntilVisible`: looks for the element, and swipes from the screen's
    /// centre against `direction` (the content moves that way) until it shows, at most
    /// `timeout_ms`; each swipe lasts what `speed` (0 to 100) makes of it, as Maestro computes.
    /// `center`: then swipes it towards the middle, at most 4 times.
    ScrollUntil {
        selector: Selector,
        direction: String,
        timeout_ms: u64,
        speed: u32,
        center: bool,
    },
    /// Maestro's `takeScreenshot`: the screen as `NAME.png`, beside the report.
    Screenshot { name: String },
    /// Maestro's `startRecording`: the device's screenrecord runs beside the next steps (at most
    /// its own 180 s) into `NAME.mp4`, which the replay pulls beside the report.
    StartRecording { name: String },
    /// `stopRecording`: interrupts screenrecord (it finishes its file on SIGINT).
    StopRecording,
    /// `tapOn` / `doubleTapOn` / `longPressOn` with Maestro's options: `repeat` presses `delay_ms`
    /// apart (the first checked as a plain tap is, the rest at its point, as Maestro repeats a
    /// tap), once more when `retry` and the screen did not change, then a wait of at most
    /// `settle_ms` for the screen to settle.
    Tap {
        target: Target,
        long: bool,
        repeat: u32,
        delay_ms: u32,
        retry: bool,
        settle_ms: Option<u64>,
    },
    /// `launchApp {permissions}` and `setPermissions`: each name (Maestro's short names spelt
    /// out, `all` for every permission the app requests) granted (`pm grant`) or revoked.
    Permissions { package: String, set: Vec<(String, bool)> },
    /// `launchApp {arguments}`: the launcher activity started with the arguments as intent
    /// extras, typed as the flow wrote them.
    LaunchWith {
        package: String,
        arguments: Vec<(String, Extra)>,
    },
    /// `copyTextFrom`: the element's text (else its hint, else its content-desc, Maestro's order)
    /// into the script's `maestro.copiedText`.
    CopyText { selector: Selector },
    /// `pasteText`: types `maestro.copiedText` (nothing when none was copied, as Maestro).
    Paste,
    /// `setClipboard`: `maestro.copiedText`, which `pasteText` types.
    SetClipboard { text: String },
    /// `killApp`: `am kill`, the death of its process the system causes (Maestro's).
    Kill { package: String },
    /// A command with nothing to do on Android (`clearKeychain`), said in its step line.
    Nothing { said: String },
    /// `setAirplaneMode` (Some) or `toggleAirplaneMode` (None): `cmd connectivity airplane-mode`.
    Airplane { on: Option<bool> },
    /// `travel`: the emulator console's `geo fix` at each point in turn, waiting between two the
    /// time the distance takes at `speed` m/s.
    Travel {
        points: Vec<(String, String)>,
        speed: String,
    },
    /// `addMedia`: each file (a path inside `folder`, the flow's, as the flow wrote it) in the
    /// device's shared Pictures (or Movies) folder, pushed before the run (`src/replay/files.rs`)
    /// through the one door, and made known to the media store here, as Maestro does on Android
    /// (a media scan of the file).
    AddMedia { folder: String, files: Vec<String> },
    /// `setOrientation`: auto-rotate off, then the display turned a quarter `turns` times (0
    /// portrait, 1 landscape left, 2 upside down, 3 landscape right), as Maestro sets it.
    Orientation { turns: u8 },
    /// `openLink`: `am start -a android.intent.action.VIEW -d LINK`, in `package` when
    /// `autoVerify` names the app, in the browser when `browser`.
    OpenLink {
        link: String,
        package: Option<String>,
        browser: bool,
    },
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

/// Maestro's short permission names on Android (its AndroidDriver, 1.39), spelt out; any other
/// name is a permission's own.
pub fn permission_names(name: &str) -> Vec<String> {
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

impl Command {
    pub fn describe(&self) -> String {
        match self {
            Command::ScrollUntil {
                selector,
                direction,
                timeout_ms,
                center,
                ..
            } => format!(
                "scroll {direction} until {} shows{}, at most {timeout_ms} ms",
                selector.describe(),
                if *center { " centred" } else { "" }
            ),
            Command::Screenshot { name } => format!("screenshot {name}.png"),
            Command::StartRecording { name } => format!("start recording {name}.mp4"),
            Command::StopRecording => "stop recording".into(),
            Command::Tap {
                target,
                long,
                repeat,
                retry,
                ..
            } => {
                let verb = match (long, repeat) {
                    (true, _) => "long-press".to_string(),
                    (false, 1) => "tap".to_string(),
                    (false, 2) => "double-tap".to_string(),
                    (false, n) => format!("tap {n} times"),
                };
                let again = if *retry { ", again if nothing changed" } else { "" };
                format!("{verb} {}{again}", target.selector.describe())
            }
            Command::Permissions { package, set } => {
                let each: Vec<String> = set
                    .iter()
                    .map(|(name, allow)| format!("{name} {}", if *allow { "allowed" } else { "denied" }))
                    .collect();
                format!("permissions of {package}: {}", each.join(", "))
            }
            Command::LaunchWith { package, arguments } => {
                let keys: Vec<&str> = arguments.iter().map(|(k, _)| k.as_str()).collect();
                format!("launch {package} with arguments {}", keys.join(", "))
            }
            Command::AddMedia { files, .. } => {
                let names: Vec<String> = files.iter().map(|f| media_path(f)).collect();
                format!("add media {}", names.join(", "))
            }
            Command::Orientation { turns } => format!("orientation {}", ORIENTATIONS[usize::from(*turns % 4)]),
            Command::CopyText { selector } => format!("copy the text of {}", selector.describe()),
            Command::Paste => "paste the copied text".into(),
            Command::SetClipboard { text } => format!("copy {text:?}"),
            Command::Kill { package } => format!("kill {package} (am kill)"),
            Command::Nothing { said } => said.clone(),
            Command::Airplane { on: Some(true) } => "airplane mode on".into(),
            Command::Airplane { on: Some(false) } => "airplane mode off".into(),
            Command::Airplane { on: None } => "airplane mode toggled".into(),
            Command::Travel { points, speed } => {
                format!("travel through {} points at {speed} m/s", points.len())
            }
            Command::OpenLink { link, package, browser } => match (package, browser) {
                (Some(p), _) => format!("open link {link:?} in {p}"),
                (None, true) => format!("open link {link:?} in the browser"),
                (None, false) => format!("open link {link:?}"),
            },
        }
    }

    pub fn fragile(&self) -> bool {
        match self {
            Command::Tap { target, .. } => target.selector.fragile(),
            _ => false,
        }
    }

    /// The script lines that replay it (`js::render` puts them in the step's body), given how
    /// `js` writes a selector and what a target recorded.
    pub fn body(&self, selector: impl Fn(&Selector) -> String, recorded: impl Fn(&Target) -> String) -> Vec<String> {
        match self {
            Command::ScrollUntil {
                selector: s,
                direction,
                timeout_ms,
                speed,
                center,
            } => crate::maestro::command::scroll_until_visible::run(
                (s, direction, *timeout_ms, *speed, *center),
                selector,
            ),
            Command::Screenshot { name } => vec![format!(
                "await pullLater({}, {}, \"screencap -p \");",
                lit(&device_file(name, "png")),
                lit(&format!("{name}.png"))
            )],
            Command::StartRecording { name } => vec![format!(
                "await startRecording({}, {});",
                lit(&device_file(name, "mp4")),
                lit(&format!("{name}.mp4"))
            )],
            Command::StopRecording => vec!["await stopRecording();".into()],
            Command::Tap {
                target,
                long,
                repeat,
                delay_ms,
                retry,
                settle_ms,
            } => crate::maestro::command::tap_on::run(
                (target, *long, *repeat, *delay_ms, *retry, *settle_ms),
                selector,
                recorded,
            ),
            Command::Permissions { package, set } => {
                let each: Vec<String> = set
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
            Command::LaunchWith { package, arguments } => {
                let extras: Vec<String> = arguments.iter().map(|(k, v)| v.am(k)).collect();
                vec![format!(
                    "await launchWith({}, {});",
                    lit(package),
                    lit(&extras.join(" "))
                )]
            }
            Command::AddMedia { files, .. } => files
                .iter()
                .map(|f| {
                    let scan = format!(
                        "am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE -d {}",
                        quote(&format!("file://{}", media_path(f)))
                    );
                    format!("await shellChecked({});", lit(&scan))
                })
                .collect(),
            Command::Orientation { turns } => vec![
                "await shellChecked(\"settings put system accelerometer_rotation 0\");".into(),
                format!(
                    "await shellChecked(\"settings put system user_rotation {}\");",
                    turns % 4
                ),
            ],
            Command::CopyText { selector: s } => vec![format!("await copyTextFrom({});", selector(s))],
            Command::Paste => {
                vec!["if (maestro.copiedText != null) await ui.type({ text: String(maestro.copiedText) });".into()]
            }
            Command::SetClipboard { text } => vec![format!("maestro.copiedText = {};", lit(text))],
            Command::Kill { package } => vec![format!(
                "await shellChecked({});",
                lit(&format!("am kill {}", quote(package)))
            )],
            Command::Nothing { .. } => Vec::new(),
            Command::Airplane { on } => vec![format!(
                "await airplane({});",
                on.map_or("null".into(), |on| on.to_string())
            )],
            Command::Travel { points, speed } => {
                let each: Vec<String> = points.iter().map(|(lat, lon)| format!("[{lat}, {lon}]")).collect();
                vec![format!("await travel([{}], {speed});", each.join(", "))]
            }
            Command::OpenLink { link, package, browser } => {
                let mut command = format!("am start -a android.intent.action.VIEW -d {}", quote(link));
                if *browser {
                    command.push_str(" -c android.intent.category.BROWSABLE");
                }
                if let Some(p) = package {
                    command.push_str(&format!(" -p {}", quote(p)));
                }
                vec![format!("await shellChecked({});", lit(&command))]
            }
        }
    }
}

/// Maestro's orientations by the quarter turns Android's `user_rotation` counts.
pub const ORIENTATIONS: [&str; 4] = ["PORTRAIT", "LANDSCAPE_LEFT", "UPSIDE_DOWN", "LANDSCAPE_RIGHT"];

/// Where `addMedia` puts a host file on the device: a video in the shared Movies folder, anything
/// else in Pictures, under its own file name.
pub fn media_path(host: &str) -> String {
    let name = std::path::Path::new(host)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let video = [".mp4", ".mov", ".3gp", ".webm", ".mkv"]
        .iter()
        .any(|e| name.to_ascii_lowercase().ends_with(e));
    format!("/sdcard/{}/{name}", if video { "Movies" } else { "Pictures" })
}

/// A host file `addMedia` pushes: the flow's folder, the file's path inside it, and where it
/// goes on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    pub folder: String,
    pub file: String,
    pub device: String,
}

/// The host files a flow's `addMedia` steps push, and where each goes on the device.
pub fn media(steps: &[super::Step]) -> Vec<Media> {
    steps
        .iter()
        .filter_map(|s| match &s.action {
            super::Action::Command(Command::AddMedia { folder, files }) => Some((folder, files)),
            _ => None,
        })
        .flat_map(|(folder, files)| {
            files.iter().map(|f| Media {
                folder: folder.clone(),
                file: f.clone(),
                device: media_path(f),
            })
        })
        .collect()
}

/// Checks by its first bytes that the media file `given` is what its name says: an image (PNG,
/// JPEG, GIF, WebP) for a picture, a video (an ISO `ftyp` box: MP4, MOV, 3GP; EBML: WebM, MKV)
/// for a `.mp4`, `.mov`, `.3gp`, `.webm` or `.mkv`. The content is never echoed (it may be a
/// secret a link led to).
pub fn check_media(given: &str, file: &mut impl std::io::Read) -> Result<(), String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    file.take(16)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read {given}: {e}"))?;
    let image = head.starts_with(b"\x89PNG\r\n\x1a\n")
        || head.starts_with(&[0xff, 0xd8, 0xff])
        || head.starts_with(b"GIF87a")
        || head.starts_with(b"GIF89a")
        || (head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP".as_slice()));
    let video = head.get(4..8) == Some(b"ftyp".as_slice()) || head.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]);
    let wants_video = media_path(given).starts_with("/sdcard/Movies/");
    match (wants_video, image, video) {
        (false, true, _) | (true, _, true) => Ok(()),
        (false, ..) => Err(format!(
            "{given} is no image by its content (a PNG, JPEG, GIF or WebP starts with its own bytes)"
        )),
        (true, ..) => Err(format!(
            "{given} is no video by its content (an MP4, MOV or 3GP has an ftyp box; a WebM or MKV starts with EBML)"
        )),
    }
}

/// Where a file is made on the device before the replay pulls it: the name flattened, in the
/// folder every app and adb may write.
pub fn device_file(name: &str, extension: &str) -> String {
    let flat: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("/data/local/tmp/droidmcp-{flat}.{extension}")
}

/// The script's helpers these commands share (`commands.js`); each command's own is in its file
/// (`maestro::command::prelude` puts them together, after `js`'s own prelude).
pub(crate) const SHARED: &str = include_str!("commands.js");

/// Generated commands, for the formats' round trips (`flow::tests`), from the selectors and
/// targets those tests generate.
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn generated(
    selector: proptest::strategy::BoxedStrategy<Selector>,
    target: proptest::strategy::BoxedStrategy<Target>,
) -> proptest::strategy::BoxedStrategy<Command> {
    use proptest::prelude::*;
    let text = super::tests::text;
    let direction = || prop_oneof![Just("up"), Just("down"), Just("left"), Just("right")].prop_map(str::to_string);
    let extra = prop_oneof![
        text().prop_map(Extra::Text),
        any::<bool>().prop_map(Extra::Flag),
        any::<i64>().prop_map(Extra::Int),
        (-1000.0f64..1000.0).prop_map(Extra::Float),
    ];
    prop_oneof![
        (selector.clone(), direction(), 0u64..600_000, 0u32..=1000, any::<bool>()).prop_map(
            |(selector, direction, timeout_ms, speed, center)| Command::ScrollUntil {
                selector,
                direction,
                timeout_ms,
                speed,
                center
            }
        ),
        (
            target,
            any::<bool>(),
            1u32..=100,
            0u32..=10_000,
            any::<bool>(),
            proptest::option::of(0u64..=30_000)
        )
            .prop_map(|(target, long, repeat, delay_ms, retry, settle_ms)| Command::Tap {
                target,
                long,
                repeat: if long { 1 } else { repeat },
                delay_ms,
                retry,
                settle_ms
            }),
        (text(), proptest::collection::btree_map(text(), any::<bool>(), 1..4)).prop_map(|(package, set)| {
            Command::Permissions {
                package,
                set: set.into_iter().collect(),
            }
        }),
        (text(), proptest::collection::btree_map(text(), extra, 1..4)).prop_map(|(package, arguments)| {
            Command::LaunchWith {
                package,
                arguments: arguments.into_iter().collect(),
            }
        }),
        selector.clone().prop_map(|selector| Command::CopyText { selector }),
        Just(Command::Paste),
        (0u8..4).prop_map(|turns| Command::Orientation { turns }),
        Just(Command::StopRecording),
        "[a-z0-9_]{1,12}".prop_map(|name| Command::StartRecording { name }),
        text().prop_map(|text| Command::SetClipboard { text }),
        text().prop_map(|package| Command::Kill { package }),
        Just(Command::Nothing {
            said: "clearKeychain: nothing to do on Android (the keychain is iOS's)".into()
        }),
        proptest::option::of(any::<bool>()).prop_map(|on| Command::Airplane { on }),
        (
            proptest::collection::vec((-90.0f64..=90.0, -180.0f64..=180.0), 2..5),
            0.5f64..1000.0
        )
            .prop_map(|(points, speed)| Command::Travel {
                points: points.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                speed: speed.to_string(),
            }),
        (text(), any::<bool>()).prop_map(|(link, browser)| Command::OpenLink {
            link,
            package: None,
            browser
        }),
    ]
    .boxed()
}
