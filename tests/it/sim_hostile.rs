//! The simulator never dies of what it is told. Hostile labels and names (markup, quotes, `]]>`,
//! control characters, unicode, very long, shell metacharacters) go through every `sim-state`
//! command and through an installed app's label, with Debian's adb; each screen is read back
//! with `uiautomator dump`, and must show the label as a phone's uiautomator does. `am kill`
//! kills what a phone kills: a background process, never the app in front.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{AdbServer, connected_sim};
use droidmcp::adb::{Adb, Route};
use droidmcp::android::text::quote;
use droidmcp::android::uiautomator::{UiTree, parse_ui_dump};

/// The pieces a hostile label is made of, each named for what it tries.
const ATOMS: &[(&str, &str)] = &[
    ("an ampersand", "&"),
    ("a less-than", "<"),
    ("a greater-than", ">"),
    ("a double quote", "\""),
    ("a single quote", "'"),
    ("a CDATA end", "]]>"),
    ("a CDATA section", "<![CDATA[x]]>"),
    ("entities", "&amp;&lt;&#0;&#x1;&bogus;"),
    ("a comment", "<!-- x -->"),
    ("closing tags", "</node></hierarchy>"),
    ("an attribute", "\" text=\"Delete account"),
    ("C0 controls", "\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}[31m\u{1f}"),
    ("C1 controls", "\u{7f}\u{80}\u{85}\u{9f}"),
    ("tab, CR and LF", "a\tb\rc\nd"),
    ("noncharacters", "\u{fdd0}\u{fdef}\u{fffe}\u{ffff}"),
    ("CJK, emoji, accents", "李雷 🚀 Ünïcödé"),
    ("bidi and zero-width", "\u{202e}abc\u{200b}\u{feff}"),
    ("a combining mark", "e\u{301}"),
    ("command substitution", "$(touch /sdcard/pwned)`touch /sdcard/pwned2`"),
    ("separators", "a;b|c&&d||e&"),
    ("globs and variables", "* ? $HOME ${x} ~ $?"),
    ("backslashes", "\\'\\\"\\\\ \\n"),
    ("redirections", "> /sdcard/x < /dev/null 2>&1"),
    ("format directives", "%s %n %d %%"),
    ("the template word", "APP"),
];

/// The labels tried: each piece alone and inside words, every piece together, and all of them
/// again and again (over 10,000 chars).
fn labels() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (what, atom) in ATOMS {
        out.push((what.to_string(), atom.to_string()));
        out.push((format!("{what} inside words"), format!("Photo {atom} Editor")));
    }
    let all: String = ATOMS.iter().map(|(_, a)| *a).collect();
    out.push(("every piece".into(), all.clone()));
    out.push(("every piece, 40 times".into(), all.repeat(40)));
    out
}

/// What uiautomator's dump shows of a label: its dumper writes `.` for each character XML 1.1
/// does not allow (AOSP's `AccessibilityNodeInfoDumper.stripInvalidXMLChars`); the simulator
/// does the same for NUL, U+FFFE and U+FFFF, which XML cannot carry at all.
fn as_dumped(label: &str) -> String {
    label
        .chars()
        .map(|c| match c as u32 {
            0x0..=0x8 | 0xB..=0xC | 0xE..=0x1F | 0x7F..=0x84 | 0x86..=0x9F | 0xFDD0..=0xFDDF | 0xFFFE | 0xFFFF => '.',
            _ => c,
        })
        .collect()
}

/// A `sim-state` command with the hostile string in one of its places, and the dialog text it
/// shows (`None`: the command is refused, exit code 2, and the screen is unchanged).
struct Place {
    args: &'static [&'static str],
    shows: Option<&'static str>,
}

/// Every `sim-state` command (src/sim/phone/mod.rs), `H` where the hostile string goes.
const PLACES: &[Place] = &[
    Place {
        args: &["H"],
        shows: None,
    },
    Place {
        args: &["costs", "H"],
        shows: None,
    },
    Place {
        args: &["never-idle", "H"],
        shows: None,
    },
    Place {
        args: &["lock", "H"],
        shows: None,
    },
    Place {
        args: &["dialog", "H"],
        shows: None,
    },
    Place {
        args: &["dialog", "H", "com.android.settings"],
        shows: None,
    },
    Place {
        args: &["dialog", "anr", "H", "extra"],
        shows: None,
    },
    Place {
        args: &["dialog", "anr", "H"],
        shows: Some("{label} isn't responding"),
    },
    Place {
        args: &["dialog", "crash", "H"],
        shows: Some("{label} keeps stopping"),
    },
    Place {
        args: &["dialog", "permission", "H"],
        shows: Some("Allow {label} to send you notifications?"),
    },
];

/// `uiautomator dump /dev/tty` ends each dump with this line.
const DUMPED: &str = "UI hierchary dumped to: /dev/tty\n";

/// Each dump in `stdout`, with the exit code echoed before it (`exit:N`).
fn dumps(stdout: &str) -> Vec<(i32, UiTree)> {
    stdout
        .split(DUMPED)
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            let code = part
                .split("exit:")
                .nth(1)
                .and_then(|rest| rest.lines().next())
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or_else(|| panic!("no exit code before the dump: {part:.300}"));
            let tree = parse_ui_dump(part).unwrap_or_else(|e| panic!("the dump does not parse ({e}): {part:.300}"));
            (code, tree)
        })
        .collect()
}

fn shows(tree: &UiTree, text: &str) -> bool {
    tree.nodes.iter().any(|n| n.text() == text)
}

fn dialog_shown(tree: &UiTree) -> bool {
    tree.nodes
        .iter()
        .any(|n| n.resource_id() == "android:id/parentPanel" || n.resource_id().ends_with(":id/grant_dialog"))
}

/// The device answers a fresh client straight over TCP (not through the adb server).
async fn answers_a_new_client(addr: std::net::SocketAddr, serial: &str) {
    let direct = Adb::new(Route::Direct(addr), Duration::from_secs(10));
    let out = direct
        .shell(serial, "echo alive")
        .await
        .expect("a new client is answered");
    assert_eq!(out.stdout_text(), "alive\n");
}

/// Every `sim-state` command, every hostile string in each of its places, in one shell line per
/// string (each command followed by its exit code and a dump): the device answers every one,
/// a dialog shows the label as uiautomator shows it, a refused command leaves the screen as it
/// was, nothing in a string runs, and a new client is still answered at the end.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_strings_through_every_sim_state_command_are_shown_exactly() {
    let Some((adb, sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let labels = labels();
    let mut cases = 0;
    for (what, label) in &labels {
        let commands: Vec<String> = PLACES
            .iter()
            .map(|place| {
                let args: Vec<String> = place
                    .args
                    .iter()
                    .map(|a| if *a == "H" { quote(label) } else { a.to_string() })
                    .collect();
                format!(
                    "sim-state {}; echo exit:$?; uiautomator dump /dev/tty; sim-state dialog off",
                    args.join(" ")
                )
            })
            .collect();
        // adb's client tells its server a command's length in 4 hex digits: a line stays under 64 KiB.
        let (mut got, mut stderr) = (Vec::new(), String::new());
        let per_line = (30_000 / commands[0].len()).max(1);
        for chunk in commands.chunks(per_line) {
            let (out, err, code) = adb.shell(&serial, &[&chunk.join("; ")]);
            assert_eq!(code, 0, "{what}: the line did not finish: {err:.500}");
            got.extend(dumps(&out));
            stderr.push_str(&err);
        }
        assert_eq!(got.len(), PLACES.len(), "{what}: one dump per command");
        for (place, (exit, tree)) in PLACES.iter().zip(&got) {
            cases += 1;
            match place.shows {
                Some(template) => {
                    let want = template.replace("{label}", &as_dumped(label));
                    assert_eq!(*exit, 0, "{what} in sim-state {:?}", place.args);
                    assert!(
                        shows(tree, &want),
                        "{what} in sim-state {:?}: the dialog does not show {want:?}; it shows {:?}",
                        place.args,
                        tree.nodes
                            .iter()
                            .map(|n| n.text())
                            .filter(|t| !t.is_empty())
                            .collect::<Vec<_>>()
                    );
                }
                None => {
                    assert_eq!(*exit, 2, "{what} in sim-state {:?} is refused", place.args);
                    assert!(
                        !dialog_shown(tree),
                        "{what} in sim-state {:?} showed a dialog",
                        place.args
                    );
                }
            }
        }
        assert!(!stderr.is_empty(), "{what}: the refusals say what was wrong");
    }
    let (ls, _, code) = adb.shell(&serial, &["ls /sdcard/pwned /sdcard/pwned2 /sdcard/x"]);
    assert_ne!(code, 0, "a string ran as a command: {ls}");
    answers_a_new_client(sim.addr, &sim.serial()).await;
    let commands: std::collections::BTreeSet<&str> = PLACES.iter().map(|p| p.args[0]).filter(|a| *a != "H").collect();
    println!(
        "sim-state: {cases} cases ({} labels from {} hostile pieces × {} places in the sim-state commands {commands:?} and an unknown one), each read back with uiautomator dump",
        labels.len(),
        ATOMS.len(),
        PLACES.len(),
    );
}

/// An APK of `package` labelled `label`, its text manifest escaping what XML escapes (a control
/// character XML 1.0 cannot carry is written as it is, for the install to refuse).
fn labelled_apk(dir: &Path, package: &str, label: &str) -> PathBuf {
    let mut escaped = String::new();
    for c in label.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\t' | '\n' | '\r' => escaped.push_str(&format!("&#{};", c as u32)),
            c => escaped.push(c),
        }
    }
    let manifest = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="{package}" android:versionCode="1" android:versionName="1.0">
  <application android:label="{escaped}">
    <activity android:name=".MainActivity" android:exported="true">
      <intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter>
    </activity>
  </application>
</manifest>"#
    );
    let path = dir.join(format!("{package}.apk"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("AndroidManifest.xml", opts).unwrap();
    zip.write_all(manifest.as_bytes()).unwrap();
    zip.start_file("classes.dex", opts).unwrap();
    zip.write_all(b"dex\n035\0").unwrap();
    zip.finish().unwrap();
    path
}

/// Whether XML 1.0 can carry `label` (escaped): no control character but tab, CR and LF, and no
/// noncharacter U+FFFE or U+FFFF.
fn xml_can_carry(label: &str) -> bool {
    label
        .chars()
        .all(|c| (c >= ' ' || matches!(c, '\t' | '\n' | '\r')) && !matches!(c, '\u{fffe}' | '\u{ffff}'))
}

/// An app whose label is hostile, installed with `adb install`: its screen's title and a crash
/// dialog over it show the label exactly; a label XML cannot carry is refused at install with
/// the reason. The device answers throughout.
#[tokio::test(flavor = "multi_thread")]
async fn an_app_with_a_hostile_label_installs_and_its_label_is_shown_exactly() {
    let Some((adb, sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut shown, mut refused) = (0, 0);
    for (i, (what, label)) in labels().iter().enumerate() {
        let package = format!("org.droidmcp.hostile.app{i}");
        let apk = labelled_apk(dir.path(), &package, label);
        let out = adb.run(&["-s", &serial, "install", apk.to_str().unwrap()]);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !xml_can_carry(label) {
            assert!(
                !out.status.success()
                    && said.contains("INSTALL_PARSE_FAILED_NOT_APK")
                    && said.contains("AndroidManifest.xml"),
                "{what}: a manifest XML cannot read is refused, saying why: {said}"
            );
            refused += 1;
            continue;
        }
        assert!(out.status.success(), "{what}: {said}");
        let line = format!(
            "monkey -p {p} -c android.intent.category.LAUNCHER 1 >/dev/null; echo exit:$?; uiautomator dump /dev/tty; sim-state dialog crash {p}; echo exit:$?; uiautomator dump /dev/tty; sim-state dialog off; am force-stop {p}; pm uninstall {p} >/dev/null",
            p = quote(&package)
        );
        let (stdout, stderr, code) = adb.shell(&serial, &[&line]);
        assert_eq!(code, 0, "{what}: {stderr}");
        let got = dumps(&stdout);
        let want = as_dumped(label);
        assert_eq!(got.len(), 2, "{what}: {stdout:.500}");
        assert!(shows(&got[0].1, &want), "{what}: the app's title is not {want:?}");
        assert!(
            shows(&got[1].1, &format!("{want} keeps stopping")),
            "{what}: the crash dialog does not name {want:?}"
        );
        shown += 1;
    }
    answers_a_new_client(sim.addr, &sim.serial()).await;
    println!(
        "installs: {shown} hostile labels installed and shown exactly, {refused} refused at install (XML cannot carry them)"
    );
    assert!(shown > 0 && refused > 0);
}

fn pid(adb: &AdbServer, serial: &str, package: &str) -> String {
    adb.shell(serial, &["pidof", package]).0.trim().to_string()
}

/// `am kill` kills what a phone kills: the app in front keeps its process; once in the background,
/// its process ends, and it starts again (a new pid) when it shows again. `am force-stop` stops
/// the app in front too.
#[test]
fn am_kill_spares_the_app_in_front_and_kills_it_in_the_background() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let settings = "com.android.settings";
    let launch = ["monkey", "-p", settings, "-c", "android.intent.category.LAUNCHER", "1"];
    assert_eq!(adb.shell(&serial, &launch).2, 0);
    let first = pid(&adb, &serial, settings);
    assert!(!first.is_empty(), "Settings runs once launched");

    assert_eq!(adb.shell(&serial, &["am", "kill", settings]).2, 0);
    assert_eq!(pid(&adb, &serial, settings), first, "am kill killed the app in front");
    let focus = adb.shell(&serial, &["dumpsys", "window"]).0;
    assert!(
        focus
            .lines()
            .any(|l| l.contains("mCurrentFocus") && l.contains(settings)),
        "the app in front is still in front"
    );

    adb.shell(&serial, &["input", "keyevent", "HOME"]);
    assert_eq!(adb.shell(&serial, &["am", "kill", "--user", "0", settings]).2, 0);
    assert_eq!(pid(&adb, &serial, settings), "", "am kill spared a background process");

    assert_eq!(adb.shell(&serial, &launch).2, 0);
    let again = pid(&adb, &serial, settings);
    assert!(
        !again.is_empty() && again != first,
        "a new process: {first} then {again}"
    );
    adb.shell(&serial, &["am", "force-stop", settings]);
    assert_eq!(pid(&adb, &serial, settings), "", "force-stop stops the app in front");
}
