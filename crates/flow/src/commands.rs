//! Maestro's device commands that a recording never makes (scrolling until an element shows
//! with Maestro's options, screenshots and recordings, taps with their options, app
//! permissions, a launch with arguments, links), as steps. Each is a struct in its command's
//! file (`maestro/command/`: its reading, what it says in a report, the script lines that replay
//! it through the tools an assistant uses, its Maestro YAML); `Command` only names them and
//! dispatches. Every value that reaches a device shell is quoted with `android::text::quote`, as
//! the script is written; values read from the device at replay are used only when they have the
//! grammar of what they name.

use super::{Selector, Target};
use crate::maestro::command::{
    AddMedia, Airplane, CopyText, Kill, LaunchWith, Nothing, OpenLink, Orientation, Paste, Permissions, Screenshot,
    ScrollUntil, SetClipboard, StartRecording, StopRecording, Travel,
};
pub use crate::maestro::command::{Media, Tap, check_media, media};

/// The host file a `takeScreenshot` or a recording is pulled to, and the device file it is
/// made in first; the replay pulls each (`src/replay/files.rs`) after the run.
pub const FILES_FILE: &str = "flow-files.json";

/// A device command: one variant per command's struct (`maestro/command/`, in its file), and
/// its line in `run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    ScrollUntil(ScrollUntil),
    Screenshot(Screenshot),
    StartRecording(StartRecording),
    StopRecording(StopRecording),
    Tap(Tap),
    Permissions(Permissions),
    LaunchWith(LaunchWith),
    CopyText(CopyText),
    Paste(Paste),
    SetClipboard(SetClipboard),
    Kill(Kill),
    Nothing(Nothing),
    Airplane(Airplane),
    Travel(Travel),
    AddMedia(AddMedia),
    Orientation(Orientation),
    OpenLink(OpenLink),
}

/// What a device command's file gives it, besides its reading (`maestro/command/`).
pub(crate) trait Run {
    /// What its step says in a report and in `--check`.
    fn describe(&self) -> String;

    /// Whether its target is found by coordinates only (a command aimed at nothing is not).
    fn fragile(&self) -> bool {
        false
    }

    /// The script lines that replay it (`js::render` puts them in the step's body).
    fn body(&self, aim: &Aim) -> Vec<String>;

    /// As a Maestro flow writes it (`maestro::write`), each line ending in a newline.
    fn write(&self) -> String;
}

/// How `js` writes a selector, and what a target recorded, for a command's script lines.
pub(crate) struct Aim<'a> {
    pub selector: &'a dyn Fn(&Selector) -> String,
    pub recorded: &'a dyn Fn(&Target) -> String,
}

impl Command {
    /// The command's own struct, which does the work.
    fn run(&self) -> &dyn Run {
        match self {
            Command::ScrollUntil(c) => c,
            Command::Screenshot(c) => c,
            Command::StartRecording(c) => c,
            Command::StopRecording(c) => c,
            Command::Tap(c) => c,
            Command::Permissions(c) => c,
            Command::LaunchWith(c) => c,
            Command::CopyText(c) => c,
            Command::Paste(c) => c,
            Command::SetClipboard(c) => c,
            Command::Kill(c) => c,
            Command::Nothing(c) => c,
            Command::Airplane(c) => c,
            Command::Travel(c) => c,
            Command::AddMedia(c) => c,
            Command::Orientation(c) => c,
            Command::OpenLink(c) => c,
        }
    }

    /// What its step says in a report and in `--check`.
    pub fn describe(&self) -> String {
        self.run().describe()
    }

    /// Whether its target is found by coordinates only.
    pub fn fragile(&self) -> bool {
        self.run().fragile()
    }

    /// The script lines that replay it (`js::render` puts them in the step's body), given how
    /// `js` writes a selector and what a target recorded.
    pub fn body(&self, selector: impl Fn(&Selector) -> String, recorded: impl Fn(&Target) -> String) -> Vec<String> {
        self.run().body(&Aim {
            selector: &selector,
            recorded: &recorded,
        })
    }

    /// As a Maestro flow writes it (`maestro::write`).
    pub(crate) fn write(&self) -> String {
        self.run().write()
    }
}

/// Where a file is made on the device before the replay pulls it: the name flattened, in the
/// folder every app and adb may write. A name flattening changed (`shots/a`, `shots_a`, or any
/// two non-ASCII names of one length) or cut (past 64 characters) gets its own digest after it,
/// so two names never share a file: files are pulled after the run, and a second screenshot
/// written over the first would be pulled as both.
pub fn device_file(name: &str, extension: &str) -> String {
    use sha2::Digest;
    const KEPT: usize = 64;
    let flat: String = name
        .chars()
        .take(KEPT)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if flat == name {
        return format!("/data/local/tmp/droidmcp-{flat}.{extension}");
    }
    let digest = sha2::Sha256::digest(name.as_bytes());
    let tag: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    // After a `.`, which no flattened name holds: never a plain name's file.
    format!("/data/local/tmp/droidmcp-{flat}.{tag}.{extension}")
}

/// The script's helpers these commands share (`commands.js`); each command's own is in its file
/// (`maestro::command::prelude` puts them together, after `js`'s own prelude).
pub(crate) const SHARED: &str = include_str!("commands.js");

/// Maestro's element-relative points: percentages, or pixels from the element's top-left.
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn relative_point() -> impl proptest::strategy::Strategy<Value = android::relative_point::RelativePoint> {
    use android::relative_point::RelativePoint;
    use proptest::prelude::*;
    prop_oneof![
        (0i32..=100, 0i32..=100).prop_map(|(x, y)| RelativePoint::Percent([x, y])),
        (0i32..5000, 0i32..5000).prop_map(|(x, y)| RelativePoint::Pixels([x, y])),
    ]
}

/// Generated commands, for the formats' round trips (`flow::tests`), from the selectors and
/// targets those tests generate.
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn generated(
    selector: proptest::strategy::BoxedStrategy<Selector>,
    target: proptest::strategy::BoxedStrategy<Target>,
) -> proptest::strategy::BoxedStrategy<Command> {
    use crate::maestro::command::Extra;
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
            |(selector, direction, timeout_ms, speed, center)| Command::ScrollUntil(ScrollUntil {
                selector,
                direction,
                timeout_ms,
                speed,
                center
            })
        ),
        (
            (target, proptest::option::of(relative_point())),
            any::<bool>(),
            1u32..=100,
            0u32..=10_000,
            any::<bool>(),
            proptest::option::of(0u64..=30_000)
        )
            .prop_map(
                |((target, within), long, repeat, delay_ms, retry, settle_ms)| Command::Tap(Tap {
                    // Within an element: a point target is itself the place.
                    within: within.filter(|_| !target.selector.fragile()),
                    target,
                    long,
                    repeat: if long { 1 } else { repeat },
                    delay_ms,
                    retry,
                    settle_ms
                })
            ),
        (text(), proptest::collection::btree_map(text(), any::<bool>(), 1..4)).prop_map(|(package, set)| {
            Command::Permissions(Permissions {
                package,
                set: set.into_iter().collect(),
            })
        }),
        (text(), proptest::collection::btree_map(text(), extra, 1..4)).prop_map(|(package, arguments)| {
            Command::LaunchWith(LaunchWith {
                package,
                arguments: arguments.into_iter().collect(),
            })
        }),
        selector
            .clone()
            .prop_map(|selector| Command::CopyText(CopyText { selector })),
        Just(Command::Paste(Paste)),
        (0u8..4).prop_map(|turns| Command::Orientation(Orientation { turns })),
        Just(Command::StopRecording(StopRecording)),
        "[a-z0-9_]{1,12}".prop_map(|name| Command::StartRecording(StartRecording { name })),
        text().prop_map(|text| Command::SetClipboard(SetClipboard { text })),
        text().prop_map(|package| Command::Kill(Kill { package })),
        Just(Command::Nothing(Nothing {
            said: "clearKeychain: nothing to do on Android (the keychain is iOS's)".into()
        })),
        proptest::option::of(any::<bool>()).prop_map(|on| Command::Airplane(Airplane { on })),
        (
            proptest::collection::vec((-90.0f64..=90.0, -180.0f64..=180.0), 2..5),
            0.5f64..1000.0
        )
            .prop_map(|(points, speed)| Command::Travel(Travel {
                points: points.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                speed: speed.to_string(),
            })),
        (text(), any::<bool>()).prop_map(|(link, browser)| Command::OpenLink(OpenLink {
            link,
            package: None,
            browser
        })),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::device_file;

    #[test]
    fn names_flattened_alike_or_cut_alike_get_files_of_their_own() {
        assert_eq!(
            device_file("settings_home", "png"),
            "/data/local/tmp/droidmcp-settings_home.png"
        );
        let long_a = format!("{}a", "x".repeat(200));
        let long_b = format!("{}b", "x".repeat(200));
        let names = [
            "shots/a",
            "shots_a",
            "shots a",
            "ログイン",
            "設定画面",
            "café",
            "caf_",
            "a.b",
            "a_b",
            &long_a,
            &long_b,
        ];
        let files: std::collections::BTreeSet<String> = names.iter().map(|n| device_file(n, "png")).collect();
        assert_eq!(files.len(), names.len(), "{files:?}");
        for file in &files {
            let base = file.rsplit('/').next().unwrap();
            assert!(base.len() <= 100, "{file}");
            assert!(
                base.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "{file}"
            );
        }
    }
}
