//! An outside attacker's cases on two small features (attack5). Each trap is a test that fails
//! on main as this file was written, its doc comment saying what a user would hit; each guard
//! held and stays.
//!
//! 1. The files a Maestro flow's replay makes on the device and pulls beside its report
//!    (`flow::commands::device_file`, `commands.js`'s `pullLater`, `replay::files::pull`,
//!    `replay::output::Outputs::name_made_file`): every name a flow uses gets its own device
//!    file and its own file beside the report, and the device keeps no copy.
//! 2. The link's measure and its re-probe (`adb::link`, `tools::ui::capture::frame_path`): one
//!    probe per device, never one that costs a screenshot its answer.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use serde_json::json;

use crate::common::*;
use crate::flow_commands::{flow, replay, stdout};
use crate::suite::{droidmcp, said};

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut walk = vec![dir.to_path_buf()];
    while let Some(at) = walk.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

/// A PNG's pixels (a screenshot beside the report).
fn pixels(path: &Path) -> Vec<u8> {
    let png = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    image::load_from_memory(&png)
        .unwrap_or_else(|e| panic!("{} is no PNG: {e}", path.display()))
        .to_rgba8()
        .into_raw()
}

/// The `file` lines a replay printed: the host paths it wrote.
fn file_lines(out: &Output) -> Vec<String> {
    stdout(out)
        .lines()
        .filter_map(|l| l.strip_prefix("file    "))
        .map(str::to_string)
        .collect()
}

/// What the device holds of droidmcp's own files (`/data/local/tmp/droidmcp-*`).
fn left_on_device(sim: &SimProcess) -> Vec<String> {
    shell_by_call(sim, "ls /data/local/tmp")
        .lines()
        .filter(|l| l.contains("droidmcp-"))
        .map(str::to_string)
        .collect()
}

/// A workspace of `flows` (file, header, commands) replayed on the simulator from a folder of its
/// own: the run, what it said, and that folder (where its files land).
fn replay_workspace(flows: &[(&str, &str, &str)]) -> (Output, String, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for (file, header, commands) in flows {
        crate::suite::flow(ws.path(), file, header, commands);
    }
    let out = droidmcp(&[ws.path().to_str().unwrap(), "--sim"], home.path())
        .current_dir(here.path())
        .output()
        .unwrap();
    let text = said(&out);
    (out, text, here)
}

/// The PNGs under `dir`, as paths inside it.
fn pngs_under(dir: &Path) -> Vec<String> {
    files_under(dir).into_iter().filter(|f| f.ends_with(".png")).collect()
}

/// Was a trap (fixed: `take_screenshot::file_name` appends the extension as Maestro does, whatever the path ends with). `takeScreenshot: shot` and, later, `takeScreenshot: shot.png` are two names: Maestro
/// appends `.png` to the path as written (`Orchestra.takeScreenshotCommand`: `command.path +
/// ".png"`, 1.39.10), so it keeps `shot.png` and `shot.png.png`. Public suites write the `.png`
/// themselves (diabetactic/diabetify `maestro/tests/auth/01-login-flow.mock.yaml`:
/// `takeScreenshot: "maestro/screenshots/mock-auth-01-initial.png"`); a flow that mixes both
/// spellings loses its first screen here: the replay strips the `.png`, both land on one device
/// file and one host file, and not even a note says the first was replaced.
#[test]
fn a_screenshot_named_with_and_without_png_keeps_both_screens() {
    let dir = tempfile::tempdir().unwrap();
    let shots = flow(
        dir.path(),
        "png.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- takeScreenshot: shot\n- tapOn: \"Network & internet\"\n- takeScreenshot: shot.png\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, None, &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let out_dir = dir.path().join("out");
    let screens: Vec<(String, Vec<u8>)> = files_under(&out_dir)
        .into_iter()
        .filter(|f| f.ends_with(".png"))
        .map(|f| (f.clone(), pixels(&out_dir.join(&f))))
        .collect();
    let names: Vec<&str> = screens.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        screens.len(),
        2,
        "two names (Maestro: shot.png and shot.png.png), two screens; kept: {names:?}\n{}",
        stdout(&out)
    );
    assert_ne!(
        screens[0].1, screens[1].1,
        "the home screen and the network screen: {names:?}"
    );
}

/// Was a trap (fixed: `Outputs::name_made_file`: a rename lands on no name claimed this run). A flow whose own screenshot name is the name another flow's file was renamed to loses
/// one of its two screens. Flow `login` takes `home`; flow `settings` takes `home-settings`,
/// then `home` on another screen: its `home` is renamed `home-settings.png`
/// (`NAME-FLOW.png`, `name_made_file`), which its own `home-settings` already is (a flow's own
/// name "keeps its name"), so one is written over the other and the run prints the same `file`
/// line twice. Maestro's docs name screenshots so (`takeScreenshot: MainScreen`; a suite's flows
/// prefix theirs by flow, diabetify's `heroku-auth-01-initial`).
#[test]
fn a_flows_own_name_that_is_another_flows_renamed_file_keeps_both() {
    let (out, text, here) = replay_workspace(&[
        ("a.yaml", "name: login\n", "- launchApp\n- takeScreenshot: home\n"),
        (
            "b.yaml",
            "name: settings\n",
            "- launchApp\n- takeScreenshot: home-settings\n- tapOn: \"Network & internet\"\n- takeScreenshot: home\n",
        ),
    ]);
    assert!(out.status.success(), "{text}");
    let written = file_lines(&out);
    let distinct: std::collections::BTreeSet<&String> = written.iter().collect();
    assert_eq!(
        (written.len(), distinct.len()),
        (3, 3),
        "three screenshots, three files: {written:?}"
    );
    let pngs = pngs_under(here.path());
    assert_eq!(pngs.len(), 3, "{pngs:?}\n{text}");
}

/// Was a trap (fixed: `name_made_file` cuts a rename to fit). Two flows of one suite take the same screenshot name (each documents the same login
/// screen), and their header `name:` is a sentence, as Maestro's flow reference writes it
/// (`name: Human-Readable Flow Name`). The second file is
/// renamed `NAME-FLOW.png`, past the 100 chars a name may have, so it is not written: the flow
/// whose every step passed fails (`files the flow made were not pulled: … is over 100 chars`).
/// The door cuts the names droidmcp makes (`plain_file`); this one is not cut.
#[test]
fn a_renamed_screenshot_of_a_long_flow_name_is_still_written() {
    let body = "- launchApp\n- takeScreenshot: \"01_login_screen_after_entering_valid_credentials\"\n";
    let (out, text, here) = replay_workspace(&[
        (
            "a.yaml",
            "name: Login with valid credentials and verify the home screen\n",
            body,
        ),
        (
            "b.yaml",
            "name: Second login check with valid credentials on the home screen\n",
            body,
        ),
    ]);
    assert!(
        out.status.success(),
        "both flows pass and keep their screenshot: {text}"
    );
    let pngs = pngs_under(here.path());
    assert_eq!(pngs.len(), 2, "{pngs:?}");
}

/// Was a trap (fixed: claims are folded to lower case). Two flows take `Home` and `home`. On a Mac's disk (APFS, case-blind by default) they
/// are one file, so the second flow's screenshot silently replaces the first: no rename, no
/// note. droidmcp gives its own names once a run "whatever its case" (`Outputs::fresh`, for a
/// `Login` beside a `login` on a case-blind disk), but not the flows' files.
#[test]
fn screenshot_names_two_flows_spell_in_other_cases_stay_two_files_on_a_case_blind_disk() {
    let (out, text, _here) = replay_workspace(&[
        ("a.yaml", "", "- launchApp\n- takeScreenshot: Home\n"),
        (
            "b.yaml",
            "",
            "- launchApp\n- tapOn: \"Network & internet\"\n- takeScreenshot: home\n",
        ),
    ]);
    assert!(out.status.success(), "{text}");
    let folded: std::collections::BTreeSet<String> = file_lines(&out).iter().map(|f| f.to_lowercase()).collect();
    assert_eq!(
        folded.len(),
        2,
        "two flows' screenshots, two names on a case-blind disk: {:?}",
        file_lines(&out)
    );
}

/// Was a trap (fixed: a flow that starts a recording stops one left open after its last command, `stopRecordingLeftOpen`). A flow that fails while its recording runs (or never stops it) keeps no video: the one
/// file that shows how it failed. Maestro closes a recording left open as the flow's commands end,
/// passed or failed (`Orchestra.runFlow`: "close existing screen recording, if left open"), and
/// writes NAME.mp4; the replay pulls a recording only at `stopRecording`, so nothing lands beside
/// the report; on a phone, whatever screenrecord wrote stays in /data/local/tmp, as nothing lists
/// it for removal.
#[test]
fn a_recording_running_when_the_flow_ends_lands_beside_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let failing = flow(
        dir.path(),
        "failing.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- startRecording: clips/failing\n- tapOn: \"Network & internet\"\n- assertTrue: ${1 == 2}\n- stopRecording\n",
    );
    let unstopped = flow(
        dir.path(),
        "unstopped.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- startRecording: clips/unstopped\n- tapOn: \"Network & internet\"\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&failing, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let out = replay(&unstopped, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(left_on_device(&sim).is_empty(), "{:?}", left_on_device(&sim));
    for name in ["clips/failing.mp4", "clips/unstopped.mp4"] {
        let mp4 = std::fs::read(dir.path().join("out").join(name))
            .unwrap_or_else(|e| panic!("{name}, the recording Maestro keeps, is not beside the report: {e}"));
        assert_eq!(&mp4[4..8], b"ftyp", "{name}");
    }
}

/// Was a trap (fixed: `replay::suite::devices` keeps one route a phone). One phone plugged in by USB with wireless debugging on is listed twice by adb (its USB
/// serial and `IP:5555`; here `127.0.0.1:PORT` and `localhost:PORT`), and `--shard-all 2` takes
/// the two rows for two devices: the flow runs twice at once on the one phone, both runs make
/// `/data/local/tmp/droidmcp-home.png`, and the run that ends first pulls and removes it under
/// the other's feet (`cat: …: No such file or directory`, the flow failed). Either the one phone
/// is refused as two shards, or each run keeps its own screenshots.
#[test]
fn one_phone_listed_twice_does_not_share_a_device_file_between_shards() {
    let Some(lab) = AdbServer::start() else { return };
    let sim = SimProcess::start(&[]);
    let usb = lab.connect(&sim);
    let wifi = format!("localhost:{}", sim.addr.port());
    assert!(lab.connect_only(&wifi).contains("connected"), "adb connect {wifi}");
    assert!(lab.wait_for(&wifi), "{wifi} online");
    let ws = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The wait keeps both runs' screenshots before either run ends and pulls.
    crate::suite::flow(
        ws.path(),
        "one.yaml",
        "",
        "- launchApp\n- takeScreenshot: home\n- extendedWaitUntil:\n    visible: \"Nothing shows this\"\n    timeout: 3000\n    optional: true\n",
    );
    let server = format!("lab=server:127.0.0.1:{}", lab.port);
    let out = droidmcp(
        &[ws.path().to_str().unwrap(), "--adb", &server, "--shard-all", "2"],
        home.path(),
    )
    .current_dir(here.path())
    .output()
    .unwrap();
    let text = said(&out);
    let pngs: Vec<String> = files_under(here.path())
        .into_iter()
        .filter(|f| f.ends_with(".png"))
        .collect();
    let refused = !out.status.success() && !text.contains("ok      1") && text.contains(&usb) && text.contains(&wifi);
    let both_kept = out.status.success() && pngs.len() == 2;
    assert!(
        refused || both_kept,
        "one phone as two shards: refused naming {usb} and {wifi}, or two screenshots kept; got {pngs:?}\n{text}"
    );
}

/// Was a trap (fixed: `confine::plain_name` names the byte limit). A Japanese screenshot name of 70 chars (214 bytes as a file name: any disk takes it,
/// and Maestro writes it) is refused "over 100 chars". The limit it passed is the 200 bytes a
/// name may have here; the error names the wrong one, so the user shortens it by the wrong rule.
#[test]
fn a_long_japanese_name_is_refused_for_what_it_is_over() {
    let dir = tempfile::tempdir().unwrap();
    let name = "設定".repeat(35);
    let shots = flow(
        dir.path(),
        "ja.yaml",
        &format!("appId: com.android.settings\n---\n- launchApp\n- takeScreenshot: \"{name}\"\n"),
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, None, &["--junit", report.to_str().unwrap()]);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    println!("a {}-char, {}-byte name", name.chars().count() + 4, name.len() + 4);
    if out.status.success() {
        assert!(dir.path().join("out").join(format!("{name}.png")).exists(), "{said}");
    } else {
        assert!(
            said.contains("line 4") && !said.contains("over 100 chars"),
            "a 74-char name is refused as over 100 chars: {}",
            said.lines().find(|l| l.contains("plain name")).unwrap_or(&said)
        );
    }
}

/// Names the device's file name would flatten alike (`a/b`, `a b`, `a_b`, `a.b`; four non-ASCII
/// letters of any script; names alike in their first 64 chars; a name that is another's
/// flattened form), each taken on the screen the one before it was not: each file holds its own
/// step's screen, and the device keeps none.
const ALIKE: &[&str] = &[
    "a/b",
    "a b",
    "a_b",
    "a.b",
    "a-b",
    "a..b",
    "ログイン",
    "設定画面",
    "café",
    "שלום",
    "Ωμέγα",
    "____",
    "_____",
    "shots/a",
    "shots_a",
    "shots/a/b",
    "a_b.0123456789abcdef",
];

/// Guard. Every name of `ALIKE`, and long names alike in their first 64 chars, keep their own
/// screen (generated from the table: a case per name).
#[test]
fn names_that_flatten_alike_each_keep_their_own_screen() {
    let long: Vec<String> = ["", "1", "2", "12"]
        .iter()
        .map(|tail| format!("{}{tail}", "x".repeat(64)))
        .collect();
    let names: Vec<&str> = ALIKE.iter().copied().chain(long.iter().map(String::as_str)).collect();
    let mut yaml = String::from("appId: com.android.settings\n---\n- launchApp\n");
    for (i, name) in names.iter().enumerate() {
        match i % 2 {
            0 => yaml.push_str(&format!("- takeScreenshot: \"{name}\"\n")),
            _ => yaml.push_str(&format!(
                "- tapOn: \"Network & internet\"\n- takeScreenshot: \"{name}\"\n- back\n"
            )),
        }
    }
    yaml.push_str("- takeScreenshot: ref-home\n- tapOn: \"Network & internet\"\n- takeScreenshot: ref-network\n");
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let shots = flow(dir.path(), "alike.yaml", &yaml);
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let out_dir = dir.path().join("out");
    let (home, network) = (
        pixels(&out_dir.join("ref-home.png")),
        pixels(&out_dir.join("ref-network.png")),
    );
    assert_ne!(home, network);
    for (i, name) in names.iter().enumerate() {
        let seen = pixels(&out_dir.join(format!("{name}.png")));
        let want = if i % 2 == 0 { &home } else { &network };
        assert!(&seen == want, "{name}.png holds another step's screen");
    }
    assert!(left_on_device(&sim).is_empty(), "{:?}", left_on_device(&sim));
    println!("{} names that flatten alike, each its own file and screen", names.len());
}

/// Guard. A flow shaped as public suites write theirs (a counter in `repeat`, a sub-flow run
/// twice with `env`, as diabetactic/diabetify runs `maestro/flows/add-glucose-reading.yaml` once
/// per `READING_TYPE`)
/// that then fails: every screenshot taken before the failure is pulled, each under its own
/// name, and the device keeps none.
#[test]
fn a_failing_flows_earlier_screenshots_are_pulled_and_the_device_keeps_none() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    flow(
        dir.path(),
        "reading.yaml",
        "appId: com.android.settings\n---\n- takeScreenshot: \"reading_${READING_TYPE}\"\n",
    );
    let shots = flow(
        dir.path(),
        "loop.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- evalScript: ${output.i = 0}\n- repeat:\n    times: 3\n    commands:\n      - evalScript: ${output.i = output.i + 1}\n      - takeScreenshot: \"loop/shot_${output.i}\"\n- runFlow:\n    file: reading.yaml\n    env:\n      READING_TYPE: DESAYUNO\n- runFlow:\n    file: reading.yaml\n    env:\n      READING_TYPE: ALMUERZO\n- takeScreenshot: before-fail\n- assertTrue: ${1 == 2}\n- takeScreenshot: after-fail\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let pngs: Vec<String> = files_under(&dir.path().join("out"))
        .into_iter()
        .filter(|f| f.ends_with(".png"))
        .collect();
    assert_eq!(
        pngs,
        [
            "before-fail.png",
            "loop/shot_1.png",
            "loop/shot_2.png",
            "loop/shot_3.png",
            "reading_ALMUERZO.png",
            "reading_DESAYUNO.png"
        ],
        "{}",
        stdout(&out)
    );
    assert!(left_on_device(&sim).is_empty(), "{:?}", left_on_device(&sim));
}

/// Guard. `onFlowStart: startRecording` and `onFlowComplete: stopRecording`, the hook pattern
/// for a whole-flow video: a flow that fails in between still gets its recording beside the
/// report.
#[test]
fn a_recording_stopped_by_on_flow_complete_is_pulled_from_a_failed_flow() {
    let dir = tempfile::tempdir().unwrap();
    let hooked = flow(
        dir.path(),
        "hooked.yaml",
        "appId: com.android.settings\nonFlowStart:\n  - startRecording: whole-run\nonFlowComplete:\n  - stopRecording\n---\n- launchApp\n- tapOn: \"Network & internet\"\n- assertTrue: ${1 == 2}\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&hooked, None, &["--junit", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let mp4 = std::fs::read(dir.path().join("out/whole-run.mp4")).expect("the recording, pulled");
    assert_eq!(&mp4[4..8], b"ftyp");
}

/// Values a `${…}` in a screenshot name renders to that are no name, or climb, or would run on
/// the device's shell; and names of every script that are names.
const RENDERED: &[(&str, &str)] = &[
    ("DOTDOT", ".."),
    ("CLIMB", "../../../etc/passwd"),
    ("SLASH", "/"),
    ("EMPTY", ""),
    ("NEWLINE", "a\nb"),
    ("TAB", "a\tb"),
    ("QUOTES", "it's \"q\""),
    ("SUBSHELL", "$(reboot)"),
    ("BACKTICK", "`reboot`"),
    ("SEMICOLON", "a;reboot"),
    ("TEMPLATE", "${X}"),
    ("BACKSLASH", "C:\\shots\\x"),
    ("PERCENT", "%2e%2e"),
    ("NFC", "caf\u{e9}"),
    ("NFD", "cafe\u{301}"),
    ("EMOJI", "home \u{1F4F1}"),
    ("RTL_OVERRIDE", "\u{202E}gnp.exe"),
    ("LRM", "abc\u{200E}"),
    ("ZWJ", "a\u{200D}b"),
    ("HEBREW", "\u{5e9}\u{5dc}\u{5d5}\u{5dd}"),
    ("CJK", "\u{8a2d}\u{5b9a}"),
    ("LONG", "LONGLONGLONG"),
];

/// Guard. Each `RENDERED` value in `takeScreenshot: shots/${NAME}` (an optional step each):
/// refused at its line as no path inside the folder, or written inside the report's folder;
/// nothing is written anywhere else, nothing runs on the device, the device keeps no file.
#[test]
fn hostile_rendered_screenshot_names_stay_inside_and_leave_the_device_clean() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("flows");
    std::fs::create_dir(&dir).unwrap();
    let sim = SimProcess::start(&[]);
    let long = "x".repeat(1000);
    let mut yaml = String::from("appId: com.android.settings\n---\n- launchApp\n");
    let mut args: Vec<String> = Vec::new();
    for (key, value) in RENDERED {
        yaml.push_str(&format!(
            "- takeScreenshot:\n    path: \"shots/${{{key}}}\"\n    optional: true\n"
        ));
        let value = if *key == "LONG" { long.as_str() } else { value };
        args.extend(["--env".to_string(), format!("{key}={value}")]);
    }
    let shots = flow(&dir, "rendered.yaml", &yaml);
    let report = dir.join("out/report.xml");
    args.extend(["--junit".to_string(), report.to_str().unwrap().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = replay(&shots, Some(&sim), &args);
    let text = stdout(&out);
    assert!(out.status.success(), "optional steps: {text}");
    let mut outcome: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (key, _)) in RENDERED.iter().enumerate() {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("ok      {} ", i + 2)))
            .unwrap_or_else(|| panic!("{key}'s step: {text}"));
        let refused = line.contains(&format!("line {}", 5 + 3 * i)) && line.contains("is not a path inside the folder");
        assert!(refused || !line.contains("warning"), "{key}: {line}");
        *outcome
            .entry(if refused { "refused at its line" } else { "written" })
            .or_default() += 1;
    }
    let outside: Vec<String> = files_under(root.path())
        .into_iter()
        .filter(|f| !f.starts_with("flows/out/") && f != "flows/rendered.yaml")
        .collect();
    assert!(outside.is_empty(), "written outside the report's folder: {outside:?}");
    assert!(left_on_device(&sim).is_empty(), "{:?}", left_on_device(&sim));
    assert_eq!(shell_by_call(&sim, "echo alive").trim(), "alive");
    println!(
        "{} rendered names: {outcome:?}; written: {:?}",
        RENDERED.len(),
        files_under(&dir.join("out"))
    );
}

/// The server's log lines (stderr, read as it comes) once `needle` shows `count` times.
async fn log_with(log: &Log, needle: &str, count: usize) -> String {
    for _ in 0..200 {
        if log.lock().unwrap().matches(needle).count() >= count {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    log.lock().unwrap().clone()
}

/// The log's 1 MiB link probes (`adb::link::PROBES`'s first) on `serial`.
fn probes_on(log: &str, serial: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("head -c 1048576 /dev/zero") && l.contains(serial))
        .count()
}

const LINK_LOG: &str = "warn,droidmcp::tools::ui::capture=info,droidmcp::adb::source=debug";

/// Guard. Eight screenshots at once on a fresh device (an assistant's parallel calls, the
/// panel's first frames) run one probe between them, and the next four none.
#[tokio::test]
async fn screenshots_at_once_on_a_fresh_device_run_one_probe() {
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let (client, log) = mcp_server_logged(&["--adb", &target], &[("RUST_LOG", LINK_LOG)], home.path()).await;
    let shots = (0..8).map(|_| call(&client, "ui", json!({"operation": "screenshot"})));
    let answers = futures::future::join_all(shots).await;
    let frames: Vec<String> = answers.iter().map(|a| ok(a)["frame"].to_string()).collect();
    for _ in 0..4 {
        ok(&call(&client, "ui", json!({"operation": "screenshot"})).await);
    }
    let log = log_with(&log, "frame=", 12).await;
    println!("8 at once: frames {frames:?}");
    assert_eq!(probes_on(&log, &sim.serial()), 1, "one probe for 12 screenshots");
    client.cancel().await.unwrap();
}

/// Guard. Two phones on one server, one on USB 3 and one on Wi-Fi (the `phone` profile's
/// links), screenshots alternating: each is probed once and keeps its own measure; the Wi-Fi
/// phone never takes a raw frame (10 MB over 5 MB/s), whatever the USB one measured.
#[tokio::test]
async fn two_phones_keep_their_own_link_measure() {
    let profile = repo_dir().join("fixtures/phone");
    let (usb, wifi) = (
        SimProcess::start_profile(&profile, &[]),
        SimProcess::start_profile(&profile, &[]),
    );
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (format!("tcp:{}", usb.addr), format!("tcp:{}", wifi.addr));
    let (client, log) = mcp_server_logged(&["--adb", &a, "--adb", &b], &[("RUST_LOG", LINK_LOG)], home.path()).await;
    let switched = shell_on(&client, Some(&wifi.serial()), "sim-state link wifi").await;
    assert!(
        ok(&switched)["stdout"].as_str().unwrap().contains("link=wifi"),
        "{switched:?}"
    );
    let mut frames: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for _ in 0..3 {
        for phone in [&usb, &wifi] {
            let shot = call(
                &client,
                "ui",
                json!({"operation": "screenshot", "device": phone.serial()}),
            )
            .await;
            frames
                .entry(phone.serial())
                .or_default()
                .push(ok(&shot)["frame"].as_str().unwrap().to_string());
        }
    }
    let log = log_with(&log, "frame=", 6).await;
    let speed = |serial: &str| -> f64 {
        log.lines()
            .filter(|l| l.contains("frame=") && l.contains(serial))
            .find_map(|l| l.split("link ").nth(1)?.split(" MB/s").next()?.parse().ok())
            .unwrap_or_else(|| panic!("{serial}'s choice logged with its speed: {log}"))
    };
    let (usb_speed, wifi_speed) = (speed(&usb.serial()), speed(&wifi.serial()));
    println!("frames {frames:?}; usb {usb_speed} MB/s, wifi {wifi_speed} MB/s");
    assert_eq!(frames[&wifi.serial()], ["png"; 3], "Wi-Fi keeps PNG");
    assert!(
        usb_speed > 2.0 * wifi_speed,
        "each its own measure: {usb_speed} vs {wifi_speed}"
    );
    for phone in [&usb, &wifi] {
        assert_eq!(probes_on(&log, &phone.serial()), 1, "{} probed once", phone.serial());
    }
    client.cancel().await.unwrap();
}

/// A screenshot on a fresh device through a server bounding each call by 3 s, and a second.
async fn first_two_screenshots(sim: &SimProcess) -> (rmcp::model::CallToolResult, rmcp::model::CallToolResult) {
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let client = mcp_server(&["--adb", &target, "--timeout-ms", "3000"], &[], home.path()).await;
    let first = call(&client, "ui", json!({"operation": "screenshot"})).await;
    let second = call(&client, "ui", json!({"operation": "screenshot"})).await;
    client.cancel().await.unwrap();
    (first, second)
}

/// Was a trap (fixed: `link::PROBE_LIMIT`). A device whose link probe does not finish (its `head` stalls; on a phone, a wedged
/// stream) fails the first screenshot: the probe waits the whole device-call timeout before the
/// screenshot even starts, and the call runs past its bound ("the device answers slowly or not
/// at all"), though `screencap` answers at once, as the second screenshot shows. A probe must
/// not cost a screenshot its answer.
#[tokio::test]
async fn a_probe_that_stalls_does_not_fail_the_first_screenshot() {
    let sim = SimProcess::start(&["--stall-on", "head"]);
    let (first, second) = first_two_screenshots(&sim).await;
    ok(&second);
    assert_ne!(
        first.is_error,
        Some(true),
        "the first screenshot failed on the probe: {:?}",
        first.content.first().and_then(|c| c.as_text()).map(|t| &t.text)
    );
}

/// Was a trap (fixed: `link::PROBE_LIMIT`). A phone on a slow link (0.25 MB/s: a phone reached through a VPN or a remote farm's
/// tunnel) fails its first screenshot: the 1 MiB probe needs 4 s, the call has 3 s, and the
/// PNG alone (0.6 s) fits, as the second screenshot, which probes no more, shows. On the
/// default 20 s timeout the same happens below 0.05 MB/s.
#[tokio::test]
async fn a_slow_links_probe_does_not_fail_the_first_screenshot() {
    let slow = Profile::new();
    slow.append("profile.toml", "\n[costs]\nlink_mb_per_s = 0.25\n");
    let sim = SimProcess::start_profile(slow.path(), &[]);
    let (first, second) = first_two_screenshots(&sim).await;
    assert_eq!(ok(&second)["frame"], "png");
    assert_ne!(
        first.is_error,
        Some(true),
        "the first screenshot failed on the probe: {:?}",
        first.content.first().and_then(|c| c.as_text()).map(|t| &t.text)
    );
}
