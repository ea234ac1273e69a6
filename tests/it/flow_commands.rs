//! Maestro's Android commands and their options (issue 35), each replayed by `droidmcp replay`
//! on a simulated device: scrollUntilVisible with Maestro's options, takeScreenshot beside the
//! report, a swipe from an element, every Maestro key name, launchApp's permissions and
//! arguments, a tap's options, openLink. What a command sets on the device is read back from
//! the same simulator (`droidmcp call adb-shell`), and a value holding a shell quote runs
//! nothing.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

/// `droidmcp replay FLOW ARGS`, against `device` (a running simulator) or a fresh one (`--sim`),
/// with each device command logged (`RUST_LOG=droidmcp=debug`, on stderr).
pub(crate) fn replay(flow: &Path, device: Option<&SimProcess>, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_droidmcp"));
    command.arg("replay").arg(flow).args(args);
    match device {
        Some(sim) => command.arg("--adb").arg(format!("tcp:{}", sim.addr)),
        None => command.arg("--sim"),
    };
    let out = command
        .env("HOME", home.path())
        .env("RUST_LOG", "droidmcp=debug")
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    println!(
        "replay {}: {}\n{}",
        flow.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// A shell command's stdout on the simulator, as an assistant runs it.
fn shell(sim: &SimProcess, command: &str) -> String {
    shell_by_call(sim, command)
}

pub(crate) fn flow(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The shell commands the replay sent to the device, from its debug log.
pub(crate) fn sent(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("droidmcp::adb::source: shell"))
        .filter_map(|l| l.split_once("command=\""))
        .map(|(_, c)| c.trim_end_matches('"').replace("\\\"", "\"").replace("\\\\", "\\"))
        .collect()
}

/// scrollUntilVisible with Maestro's options (timeout, speed, visibilityPercentage,
/// centerElement) swipes until the element shows, each swipe as long as Maestro makes it for the
/// speed; one that never shows fails when its timeout is up, naming the swipes.
#[test]
fn scroll_until_visible_swipes_with_maestros_options_until_the_element_shows() {
    let dir = tempfile::tempdir().unwrap();
    let found = flow(
        dir.path(),
        "scroll.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- scrollUntilVisible:\n    element: \"Zhang Wei\"\n    direction: DOWN\n    timeout: 8000\n    speed: 60\n    visibilityPercentage: 50\n    centerElement: true\n- tapOn: \"Zhang Wei\"\n",
    );
    let out = replay(&found, None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("scroll down until text \"Zhang Wei\" shows centred, at most 8000 ms"),
        "{said}"
    );
    // Speed 60: 1000 × 40 / 100 + 1 = 401 ms, the finger moving up from the screen's middle.
    let swipes: Vec<String> = sent(&out)
        .into_iter()
        .filter(|c| c.starts_with("input swipe"))
        .collect();
    assert_eq!(
        swipes.first().map(String::as_str),
        Some("input swipe 540 1200 540 240 401"),
        "{swipes:?}"
    );

    let never = flow(
        dir.path(),
        "never.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- scrollUntilVisible:\n    element: \"Nobody Here\"\n    timeout: 1500\n",
    );
    let out = replay(&never, None, &["--step-timeout-ms", "1500"]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("did not show after") && said.contains("(1500 ms)"),
        "{said}"
    );
}

/// takeScreenshot: NAME.png lands beside the JUnit report (in its own folder when NAME has one;
/// `.png` appended as Maestro appends it, whatever NAME ends with),
/// a PNG of the whole screen, and the device keeps no copy; an absolute NAME is refused at its
/// line (it would land anywhere).
#[test]
fn take_screenshot_writes_the_png_beside_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let shots = flow(
        dir.path(),
        "shots.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- takeScreenshot: settings_home\n- takeScreenshot:\n    path: shots/settings again.png\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    // Maestro appends `.png` to the path as written (`Orchestra.takeScreenshotCommand`): a
    // path that ends with `.png` is `NAME.png.png`.
    for name in ["out/settings_home.png", "out/shots/settings again.png.png"] {
        let png = std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let image = image::load_from_memory(&png).expect("a PNG");
        assert_eq!((image.width(), image.height()), (1080, 2400), "{name}");
    }
    assert!(
        !shell(&sim, "ls /data/local/tmp").contains("droidmcp-"),
        "left on the device"
    );
    let absolute = flow(
        dir.path(),
        "absolute.yaml",
        &format!(
            "appId: com.android.settings\n---\n- takeScreenshot: {}\n",
            dir.path().join("absolute/home").display()
        ),
    );
    let out = replay(&absolute, Some(&sim), &[]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("absolute") && said.contains("line 3"), "{said}");
    assert!(!dir.path().join("absolute").exists());
}

/// Two screenshots whose names the device's file name flattens alike (`shot/1` and `shot 1`,
/// and two Japanese names of one length) are two files: each PNG is the screen its step saw.
/// Files are pulled after the run, so one device file for both names pulled the last screen as
/// every one of them.
#[test]
fn screenshots_named_alike_on_the_device_keep_their_own_screens() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let shots = flow(
        dir.path(),
        "alike.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- takeScreenshot: \"shot/1\"\n- takeScreenshot: \"ログイン\"\n- tapOn: \"Network & internet\"\n- takeScreenshot: \"shot 1\"\n- takeScreenshot: \"設定画面\"\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&shots, Some(&sim), &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let pixels = |name: &str| {
        let png = std::fs::read(dir.path().join("out").join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        image::load_from_memory(&png).expect("a PNG").to_rgba8().into_raw()
    };
    let (home, home_ja) = (pixels("shot/1.png"), pixels("ログイン.png"));
    let (network, network_ja) = (pixels("shot 1.png"), pixels("設定画面.png"));
    assert_eq!(home, home_ja, "both taken on the home screen");
    assert_eq!(network, network_ja, "both taken after the tap");
    assert_ne!(home, network, "the tap changed the screen, and each name kept its own");
}

/// swipe {from, direction}: the finger starts on the element and goes a tenth of the screen
/// from the edge; the contacts list moves to its second page.
#[test]
fn a_swipe_from_an_element_starts_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let swipe = flow(
        dir.path(),
        "swipe.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- swipe:\n    from:\n      text: \"Alan Turing\"\n    direction: UP\n    duration: 300\n- assertVisible: \"Zhang Wei\"\n",
    );
    let out = replay(&swipe, None, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let swipes: Vec<String> = sent(&out)
        .into_iter()
        .filter(|c| c.starts_with("input swipe"))
        .collect();
    let [only] = swipes.as_slice() else {
        panic!("{swipes:?}")
    };
    let words: Vec<&str> = only.split_whitespace().collect();
    assert_eq!(
        &words[5..],
        ["240", "300"],
        "up to a tenth of the height, 300 ms: {only}"
    );
    assert_eq!(words[2], words[4], "straight up: {only}");
}

/// A flow shaped like a public suite's (issue 44): `action: back`, Maestro's older spelling of
/// `- back`, and `hide keyboard`, of `hideKeyboard`; `optional: true` on the element a scrollUntilVisible or an extendedWaitUntil looks
/// for, which makes the command optional as Maestro takes it; YAML 1.1's `yes`, `no` and
/// `1_000` where Maestro types a field; the AI commands, which fail as Maestro's do without its AI
/// key and are optional as Maestro's are. It replays: the missing element and each AI command is
/// a warning, BACK reaches the device. Before, each was refused at its line.
#[test]
fn a_flow_shaped_like_a_public_suite_replays() {
    let dir = tempfile::tempdir().unwrap();
    let public = flow(
        dir.path(),
        "public.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- extendedWaitUntil:\n    notVisible:\n      id: pageLoadingIndicator\n    timeout: 1_000\n    optional: yes\n- scrollUntilVisible:\n    element:\n      text: \"Nobody Here\"\n      optional: true\n    timeout: 1500\n- tapOn:\n    text: \"Ken Thompson\"\n    retryTapIfNoChange: no\n- action: back\n- assertVisible: \"Ada Lovelace\"\n- assertWithAI: The list shows contacts\n- assertNoDefectsWithAI\n- extractTextWithAI:\n    query: The first name\n    outputVariable: first\n- hide keyboard\n",
    );
    let out = replay(&public, None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.lines().any(|l| l.contains("scroll") && l.contains("warning")),
        "{said}"
    );
    let keys: Vec<String> = sent(&out)
        .into_iter()
        .filter(|c| c.starts_with("input keyevent"))
        .collect();
    // `action: back`, then `hide keyboard` (Maestro's other spelling, BACK on Android).
    assert_eq!(keys, ["input keyevent 4", "input keyevent 4"], "{said}");
}

/// Every key name Maestro documents reaches the device as its Android key code.
#[test]
fn every_maestro_key_name_is_sent_as_its_key_code() {
    let keys = [
        ("Enter", 66),
        ("Backspace", 67),
        ("Back", 4),
        ("Home", 3),
        ("Lock", 26),
        ("Volume Up", 24),
        ("Volume Down", 25),
        ("Remote Dpad Up", 19),
        ("Remote Dpad Down", 20),
        ("Remote Dpad Left", 21),
        ("Remote Dpad Right", 22),
        ("Remote Dpad Center", 23),
        ("Remote Media Play Pause", 85),
        ("Remote Media Stop", 86),
        ("Remote Media Next", 87),
        ("Remote Media Previous", 88),
        ("Remote Media Rewind", 89),
        ("Remote Media Fast Forward", 90),
        ("Escape", 111),
        ("Power", 26),
        ("Tab", 61),
        ("Remote System Navigation Up", 280),
        ("Remote System Navigation Down", 281),
        ("Remote Button A", 96),
        ("Remote Button B", 97),
        ("Remote Menu", 82),
        ("TV Input", 178),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("appId: com.android.settings\n---\n");
    for (name, _) in keys {
        // Maestro matches the names ignoring case.
        text.push_str(&format!("- pressKey: {}\n", name.to_lowercase()));
    }
    let out = replay(&flow(dir.path(), "keys.yaml", &text), None, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let codes: Vec<String> = sent(&out)
        .into_iter()
        .filter_map(|c| c.strip_prefix("input keyevent ").map(str::to_string))
        .collect();
    let expected: Vec<String> = keys.iter().map(|(_, code)| code.to_string()).collect();
    assert_eq!(codes, expected);
}

/// launchApp's permissions are granted and revoked as Maestro names them, and its arguments
/// reach the launch as typed intent extras; a quote in an argument runs nothing.
#[test]
fn launch_app_permissions_and_arguments_reach_the_device_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let granted = |perm: &str| {
        let dump = shell(&sim, "dumpsys package org.wikipedia");
        dump.lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("android.permission.{perm}: granted="))
            })
            .map(|l| l.contains("granted=true"))
    };
    assert_eq!(granted("CAMERA"), Some(false), "a user app starts without it");
    let launch = flow(
        dir.path(),
        "launch.yaml",
        "appId: org.wikipedia\n---\n- launchApp:\n    clearState: true\n    permissions:\n      camera: allow\n      notifications: allow\n      contacts: deny\n    arguments:\n      isE2E: true\n      retries: 3\n      user: \"ada'; touch /data/local/tmp/pwned #\"\n- assertVisible: \"Wikipedia\"\n",
    );
    let out = replay(&launch, Some(&sim), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("permissions of org.wikipedia: camera allowed, notifications allowed, contacts denied"),
        "{said}"
    );
    assert_eq!(granted("CAMERA"), Some(true));
    assert_eq!(granted("POST_NOTIFICATIONS"), Some(true));
    assert_eq!(granted("READ_CONTACTS"), Some(false));
    // WRITE_CONTACTS (contacts is both) is not requested by the app: a warning, not a failure.
    assert!(
        said.contains("the device did not change android.permission.WRITE_CONTACTS"),
        "{said}"
    );
    let started = sent(&out)
        .into_iter()
        .find(|c| c.starts_with("am start -n"))
        .expect("am start");
    assert!(
        started.ends_with(r#"--ez 'isE2E' true --ei 'retries' 3 --es 'user' 'ada'\''; touch /data/local/tmp/pwned #'"#),
        "{started}"
    );
    assert!(
        !shell(&sim, "ls /data/local/tmp").contains("pwned"),
        "a quote ran a command"
    );

    let all = flow(
        dir.path(),
        "all.yaml",
        "appId: org.wikipedia\n---\n- setPermissions:\n    permissions:\n      all: deny\n",
    );
    assert!(replay(&all, Some(&sim), &[]).status.success());
    assert_eq!(granted("CAMERA"), Some(false));
    assert_eq!(granted("POST_NOTIFICATIONS"), Some(false));
}

/// A tap's options: doubleTapOn and repeat press N times at the element's point, delay apart;
/// retryTapIfNoChange: true taps once more only when the screen did not change.
#[test]
fn tap_options_repeat_and_retry_as_maestro_does() {
    let dir = tempfile::tempdir().unwrap();
    let taps = flow(
        dir.path(),
        "taps.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- doubleTapOn: \"Ada Lovelace\"\n- tapOn:\n    text: \"Alan Turing\"\n    repeat: 3\n    delay: 50\n    waitToSettleTimeoutMs: 500\n- tapOn:\n    text: \"Anita Borg\"\n    retryTapIfNoChange: true\n",
    );
    let out = replay(&taps, None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    // Presses per point: each element's taps land on its centre.
    let mut per_point = std::collections::BTreeMap::new();
    for tap in sent(&out).into_iter().filter(|c| c.starts_with("input tap")) {
        *per_point.entry(tap).or_insert(0) += 1;
    }
    let mut counts: Vec<i32> = per_point.values().copied().collect();
    counts.sort();
    // Ada twice; Alan 3 times; Anita Borg's tap changes nothing on this list: tapped again.
    assert_eq!(counts, [2, 2, 3], "{per_point:?}");
    assert!(
        said.contains("tap text \"Anita Borg\", again if nothing changed")
            && said.contains("tapped again: the screen did not change"),
        "{said}"
    );
    assert!(
        said.contains("double-tap text \"Ada Lovelace\"") && said.contains("tap 3 times text \"Alan Turing\""),
        "{said}"
    );
}

/// A `point` beside a selector lands inside that element, as Maestro 2 places it (its
/// `calculateElementRelativePoint`): a share of a wide list's bounds, or pixels from its
/// top-left; a template there rendered as the step runs. The shape of public flows (`tapOn: {id: …, point: "90%,50%"}` to hit a row's switch):
/// on the simulator's network settings, the list's centre is the VPN row (nothing to toggle), its
/// 25% the Airplane mode row, and 972,1500 from its top-left the Adaptive connectivity switch;
/// what the device registered is read back from it after the replay.
#[test]
fn a_point_beside_a_selector_taps_there_inside_the_element() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let within = flow(
        dir.path(),
        "within.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Network & internet\"\n- assertVisible:\n    id: \"android:id/switch_widget\"\n    checked: true\n- evalScript: ${output.row = '50%,25%'}\n- tapOn:\n    id: \"com.android.settings:id/recycler_view\"\n    point: ${output.row}\n- tapOn:\n    id: \"recycler_view\"\n    point: \"972, 1500\"\n- assertVisible:\n    checked: true\n    containsDescendants:\n      - \"Airplane mode\"\n- assertNotVisible:\n    id: \"android:id/switch_widget\"\n    checked: true\n",
    );
    let out = replay(&within, Some(&sim), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("tapOn id: com.android.settings:id/recycler_view, point: ${output.row}")
            && said.contains("tap id \"recycler_view\" at 972,1500 within it"),
        "{said}"
    );
    // The list is [0,400][1080,2400]: 50% of 1080 is 540, 400 + 25% of 2000 is 900; 0 + 972 and
    // 400 + 1500. One reading per tap: the element resolved once, the point placed on it.
    let taps: Vec<String> = sent(&out).into_iter().filter(|c| c.starts_with("input tap")).collect();
    assert_eq!(taps[1..], ["input tap 540 900", "input tap 972 1900"], "{taps:?}");
    // What the device registered, read back from it: the Airplane mode row checked, the
    // switch (not its row) turned off; the switches' centres are at x 959.
    let home = tempfile::tempdir().unwrap();
    let found = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["call", "ui", r#"{"operation":"find","selector":{"checked":true}}"#])
        .args(["--adb", &format!("tcp:{}", sim.addr)])
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp call runs");
    let found: serde_json::Value = serde_json::from_slice(&found.stdout).expect("one JSON line");
    let mut checked: Vec<String> = found["matches"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .iter()
        .map(|m| format!("{} at {}", m["label"], m["at"]))
        .collect();
    checked.sort();
    assert_eq!(
        checked,
        [
            "\"Adaptive connectivity\" at [540,1890]",
            "\"Airplane mode\" at [540,910]"
        ],
        "{found}"
    );
}

/// openLink opens the browser with a VIEW intent (autoVerify: the flow's app); a quote in the
/// link runs nothing.
#[test]
fn open_link_sends_a_view_intent_and_a_quote_in_it_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let link = flow(
        dir.path(),
        "link.yaml",
        "appId: org.wikipedia\n---\n- openLink: \"https://example.com/'; touch /data/local/tmp/pwned #\"\n- assertVisible: \"Chrome\"\n- openLink:\n    link: \"https://en.wikipedia.org/wiki/Ada\"\n    autoVerify: true\n- assertVisible: \"Wikipedia\"\n",
    );
    let out = replay(&link, Some(&sim), &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        !shell(&sim, "ls /data/local/tmp").contains("pwned"),
        "a quote ran a command"
    );
    let log = shell(&sim, "logcat -d -b system -s ActivityTaskManager");
    assert!(
        log.contains("START u0 {act=android.intent.action.VIEW dat=https://example.com/... flg=0x10000000}")
            && log.contains("dat=https://en.wikipedia.org/... flg=0x10000000 pkg=org.wikipedia}"),
        "{log}"
    );
}

/// A Maestro flow as the script `droidmcp replay` runs for it, with `checks` (JavaScript reading
/// the device back) after its steps: replayed on a fresh simulator, whose state ends with it.
pub(crate) fn replay_checked(dir: &Path, yaml: &str, checks: &str) -> Output {
    let flow = flow(dir, "flow.yaml", yaml);
    let steps = droidmcp::flow::maestro::parse(yaml).expect("the flow reads");
    let mut script = droidmcp::flow::js::render(&steps, &[format!("from {}", flow.display())]);
    script.push_str(checks);
    let js = dir.join("flow.js");
    std::fs::write(&js, script).unwrap();
    replay(&js, None, &[])
}

/// copyTextFrom puts the element's whole text in `maestro.copiedText`, pasteText types it into
/// the focused field; setClipboard sets what pasteText types.
#[test]
fn copy_text_from_and_paste_text_type_what_was_copied() {
    let check = |yaml: &str, pasted: &str| {
        let dir = tempfile::tempdir().unwrap();
        let checks = format!(
            "if (maestro.copiedText !== {pasted:?}) throw new Error('copied ' + maestro.copiedText);\nconst dump = await shell.run({{ command: 'uiautomator dump /dev/tty' }});\nif (!dump.stdout.includes({:?})) throw new Error('not pasted: ' + dump.stdout);\n",
            format!("text=\"{pasted}\" resource-id=\"org.droidmcp.demo.login:id/username\"")
        );
        let out = replay_checked(dir.path(), yaml, &checks);
        let said = stdout(&out);
        assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
        said
    };
    let tap_field = "- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n";
    let said = check(
        &format!(
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- copyTextFrom:\n    id: \"org.droidmcp.demo.login:id/forgot\"\n{tap_field}- pasteText\n"
        ),
        "Forgot password?",
    );
    assert!(
        said.contains("copy the text of resourceId \"org.droidmcp.demo.login:id/forgot\""),
        "{said}"
    );
    check(
        &format!(
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- setClipboard: \"clipboard-0123456789\"\n{tap_field}- pasteText\n"
        ),
        "clipboard-0123456789",
    );
}

/// Airplane mode set and toggled through `cmd connectivity`, killApp's `am kill` (after Home: a
/// phone kills only a background app, as Maestro's own check presses Home first), travel's
/// points through the emulator console, clearKeychain said to do nothing: each read back.
#[test]
fn airplane_mode_kill_app_and_travel_change_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay_checked(
        dir.path(),
        "appId: com.google.android.contacts\n---\n- launchApp\n- setAirplaneMode: enabled\n- clearKeychain\n- pressKey: Home\n- killApp\n- travel:\n    points:\n      - \"52.36, 4.88\"\n      - \"52.3601, 4.8801\"\n    speed: 50\n",
        r#"
const on = (await shell.run({ command: "settings get global airplane_mode_on" })).stdout.trim();
if (on !== "1") throw new Error("airplane mode " + on);
await step("toggle", async (w) => { await airplane(null); });
const off = (await shell.run({ command: "cmd connectivity airplane-mode" })).stdout.trim();
if (off !== "disabled") throw new Error("toggled to " + off);
const pid = (await shell.run({ command: "pidof com.google.android.contacts" })).stdout.trim();
if (pid !== "") throw new Error("still running as " + pid);
const where = (await shell.run({ command: "dumpsys location" })).stdout;
if (!where.includes("52.360100,4.880100")) throw new Error("location " + where);
"#,
    );
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("ok      3 clearKeychain: nothing to do on Android (the keychain is iOS's)"),
        "{said}"
    );
    assert!(
        said.contains("airplane mode on") && said.contains("kill com.google.android.contacts (am kill)"),
        "{said}"
    );
    let killed: Vec<String> = sent(&out).into_iter().filter(|c| c.starts_with("am kill")).collect();
    assert_eq!(killed, ["am kill 'com.google.android.contacts'"]);
}

/// addMedia pushes each file beside the flow to the device's Pictures folder before the run and
/// scans it into the media store; a quote in a file's name runs nothing.
#[test]
fn add_media_pushes_the_files_and_scans_them() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(64, 48, image::Rgba([200, 40, 90, 255]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let odd = "it's; touch pwned #.png";
    std::fs::write(dir.path().join("cat.png"), &png).unwrap();
    std::fs::write(dir.path().join(odd), &png).unwrap();
    let media = flow(
        dir.path(),
        "media.yaml",
        &format!("appId: com.android.settings\n---\n- addMedia:\n    - cat.png\n    - \"{odd}\"\n"),
    );
    let out = replay(&media, Some(&sim), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("add media /sdcard/Pictures/cat.png, /sdcard/Pictures/it's; touch pwned #.png"),
        "{said}"
    );
    for name in ["cat.png", odd] {
        let size = shell(
            &sim,
            &format!("wc -c < '/sdcard/Pictures/{}'", name.replace('\'', "'\\''")),
        );
        assert_eq!(size.trim(), png.len().to_string(), "{name}");
    }
    let scans: Vec<String> = sent(&out)
        .into_iter()
        .filter(|c| c.contains("MEDIA_SCANNER_SCAN_FILE"))
        .collect();
    assert_eq!(scans.len(), 2, "{scans:?}");
    assert!(
        scans[1].ends_with(r#"-d 'file:///sdcard/Pictures/it'\''s; touch pwned #.png'"#),
        "{scans:?}"
    );
    assert!(
        !shell(&sim, "ls / /sdcard /sdcard/Pictures").contains("pwned\n"),
        "a quote ran a command"
    );

    let missing = flow(
        dir.path(),
        "missing.yaml",
        "appId: com.android.settings\n---\n- addMedia:\n    - nowhere.png\n",
    );
    let out = replay(&missing, Some(&sim), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 4: addMedia cannot read nowhere.png"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// addMedia checks a file by its content, not only its name: text named `.png`, or an image
/// named `.mp4`, is refused at its line by `--check`, and the content is not echoed.
#[test]
fn add_media_takes_only_what_its_content_says_is_an_image_or_a_video() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.png"), "password=hunter2\n").unwrap();
    std::fs::write(dir.path().join("still.mp4"), b"\x89PNG\r\n\x1a\n0000").unwrap();
    for (name, said) in [
        ("notes.png", "is no image by its content"),
        ("still.mp4", "is no video by its content"),
    ] {
        let f = flow(
            dir.path(),
            "media.yaml",
            &format!("appId: com.android.settings\n---\n- addMedia:\n    - {name}\n"),
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["replay", "--check"])
            .arg(&f)
            .output()
            .unwrap();
        let err = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(&format!("line 4: addMedia: {name} {said}")), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

/// startRecording runs the device's screenrecord beside the next steps; stopRecording interrupts
/// it and its file lands beside the report (the simulator's: an MP4 box of the first and last
/// screens); stopRecording with none running fails saying so.
#[test]
fn a_recording_runs_beside_the_steps_and_lands_beside_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = flow(
        dir.path(),
        "recorded.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- startRecording: clips/network\n- tapOn: \"Network & internet\"\n- stopRecording\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&recorded, None, &["--junit", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let mp4 = std::fs::read(dir.path().join("out/clips/network.mp4")).expect("pulled beside the report");
    assert_eq!(&mp4[4..8], b"ftyp");
    let frames = mp4.windows(8).filter(|w| *w == b"\x89PNG\r\n\x1a\n").count();
    assert_eq!(frames, 2, "the first and the last screen");
    assert!(sent(&out).contains(&"pkill -INT screenrecord".to_string()));

    let unstarted = flow(
        dir.path(),
        "unstarted.yaml",
        "appId: com.android.settings\n---\n- stopRecording\n",
    );
    let out = replay(&unstarted, None, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("no recording is running: startRecording first"),
        "{}",
        stdout(&out)
    );
}

/// setOrientation turns auto-rotate off and the display to the orientation named (Maestro's
/// names, case and `_` ignored); the screen's dump says its rotation.
#[test]
fn set_orientation_turns_the_display() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay_checked(
        dir.path(),
        "appId: com.android.settings\n---\n- launchApp\n- setOrientation: landscapeLeft\n",
        r#"
const turned = (await shell.run({ command: "uiautomator dump /dev/tty" })).stdout;
if (!turned.includes('<hierarchy rotation="1">')) throw new Error("not turned: " + turned.slice(0, 200));
const auto = (await shell.run({ command: "settings get system accelerometer_rotation" })).stdout.trim();
if (auto !== "0") throw new Error("auto-rotate " + auto);
"#,
    );
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("orientation LANDSCAPE_LEFT"), "{said}");
}

/// The committed flow of Maestro's device commands passes on the simulator, its screenshot
/// beside the report.
#[test]
fn the_committed_device_commands_flow_passes() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    let flow = repo_dir().join("tests/flows/maestro/contacts-device.yaml");
    let out = replay(&flow, None, &["--junit", report.to_str().unwrap()]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("Contacts on the device: 15 steps, 15 passed, 0 failed"),
        "{said}"
    );
    assert!(dir.path().join("contacts-end.png").exists(), "{said}");
}

/// longPressOn presses 3 s, as Maestro's on Android (`input swipe x y x y 3000`).
#[test]
fn a_long_press_lasts_three_seconds_as_maestros() {
    let dir = tempfile::tempdir().unwrap();
    let press = flow(
        dir.path(),
        "press.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- longPressOn: \"Network & internet\"\n",
    );
    let out = replay(&press, None, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let swipes: Vec<String> = sent(&out)
        .into_iter()
        .filter(|c| c.starts_with("input swipe"))
        .collect();
    let [only] = swipes.as_slice() else {
        panic!("{swipes:?}")
    };
    let words: Vec<&str> = only.split_whitespace().collect();
    assert_eq!((words[2], words[3], words[6]), (words[4], words[5], "3000"), "{only}");
}

/// A takeScreenshot path with a `${…}` is made as the step runs and held to the one door's rule
/// as a written one is: a value that climbs out (`../..`) stays at the report folder's top, and
/// one that is no plain name (`.hidden`) fails its step, naming it, and writes nothing.
#[test]
fn a_screenshot_path_from_a_variable_is_made_as_the_step_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shots = flow(
        dir.path(),
        "themed.yaml",
        "appId: com.android.settings\nenv:\n  THEME: dark\n---\n- launchApp\n- takeScreenshot: \"shots/${THEME}_home\"\n- takeScreenshot: \"${PLACE}/escaped\"\n- takeScreenshot: \"${HIDDEN}/x\"\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(
        &shots,
        None,
        &[
            "--junit",
            report.to_str().unwrap(),
            "--env",
            "PLACE=../..",
            "--env",
            "HIDDEN=.hidden",
        ],
    );
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(dir.path().join("out/shots/dark_home.png").exists(), "{said}");
    assert!(dir.path().join("out/escaped.png").exists(), "{said}");
    assert!(
        said.contains("FAILED  4 screenshot ${HIDDEN}/x.png") && said.contains("is not a path inside the folder"),
        "{said}"
    );
    assert!(!dir.path().join("escaped.png").exists() && !dir.path().parent().unwrap().join("escaped.png").exists());
    assert!(!dir.path().join("out/.hidden").exists());
}

/// `launchApp {clearState: true}` is `pm clear`: the app's state goes, so the text typed into
/// its field before is gone when it starts again, as on a phone.
#[test]
fn clear_state_empties_what_was_typed() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "cleared.yaml",
        "appId: org.droidmcp.demo.login\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: adalovelace\n- assertVisible: adalovelace\n- launchApp:\n    clearState: true\n- assertNotVisible: adalovelace\n",
    );
    let out = replay(&file, None, &["--step-timeout-ms", "1500"]);
    let said = stdout(&out);
    assert!(out.status.success(), "the typed text outlived pm clear: {said}");
    assert!(said.contains("ok      3 type"), "{said}");
}

/// A replayed `tapOn` reads the screen at most once per attempt: its tap resolves, checks and
/// acts on one reading (the device's log of what it was asked, `uiautomator dump`, counted
/// against a flow that only launches). Before, a wait read the screen to find the element, then
/// the tap read it again to check it; now the launch's own reading, taken after it with nothing
/// acting since and younger than 5 s, aims the tap (`ui/resolve.rs`'s `aim_reading`): none.
#[test]
fn a_replayed_tap_on_reads_the_screen_once_per_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let reads = |commands: &[String]| commands.iter().filter(|c| c.starts_with("uiautomator dump")).count();
    let launch = flow(
        dir.path(),
        "launch.yaml",
        "appId: com.android.settings\n---\n- launchApp\n",
    );
    let out = replay(&launch, None, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let launched = reads(&sent(&out));
    let tap = flow(
        dir.path(),
        "tap.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Network & internet\"\n",
    );
    let out = replay(&tap, None, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let commands = sent(&out);
    let tapped = commands
        .iter()
        .position(|c| c.starts_with("input tap"))
        .unwrap_or_else(|| panic!("no tap in {commands:?}"));
    let attempt = reads(&commands[..tapped]) - launched;
    println!("screen readings before the tap: {attempt} (the launch's own: {launched})");
    assert_eq!(attempt, 0, "{commands:#?}");
}

/// A replayed tapOn taps again only when the element was not on the screen (the tool's error
/// `code: "not_found"`): a tap whose device command failed (here `input` stalls until the call's
/// timeout) may have landed, so it fails the step and is never sent twice.
#[test]
fn a_tap_whose_device_command_failed_is_not_tapped_again() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&["--stall-on", "input"]);
    let taps = flow(
        dir.path(),
        "tap.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- tapOn: \"Ada Lovelace\"\n",
    );
    let out = replay(&taps, Some(&sim), &["--timeout-ms", "2000"]);
    let said = stdout(&out);
    assert!(!out.status.success(), "the stalled tap fails the flow: {said}");
    assert!(said.contains("FAILED"), "{said}");
    let taps: Vec<String> = sent(&out).into_iter().filter(|c| c.starts_with("input tap")).collect();
    assert_eq!(taps.len(), 1, "one tap sent, never retried: {taps:?}\n{said}");
}
