//! Outside attacks on two promises: the simulator never dies of what it is told, and a hostile
//! web page cannot make a tap on one element press another (nor change what droidmcp lists).
//! Tests that found a bug are `#[ignore = "bug: …"]`; run them with `--ignored`.

use std::time::Duration;

use crate::common::*;
use crate::web::{Chromium, page_eval, page_loaded};
use droidmcp::adb::{Adb, Route};
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// The simulator

/// A fresh client straight over TCP gets an answer (the simulator is alive and answering).
async fn still_answers(sim: &SimProcess) -> Result<(), String> {
    let direct = Adb::new(Route::Direct(sim.addr), Duration::from_secs(10));
    match direct.shell(&sim.serial(), "echo alive").await {
        Ok(out) if out.stdout_text() == "alive\n" => Ok(()),
        Ok(out) => Err(format!("answered {:?}", out.stdout_text())),
        Err(e) => Err(e.to_string()),
    }
}

/// `printf` with a huge field width (a shell line any client may send; toybox streams the padding
/// and exits 0) makes the simulator try to allocate ~100 TB at once: the allocation fails and
/// the whole simulator process aborts ("memory allocation of 99999999999998 bytes failed"), so
/// every client loses the device.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_printf_width_does_not_kill_the_simulator() {
    let sim = SimProcess::start(&[]);
    let adb = Adb::new(Route::Direct(sim.addr), Duration::from_secs(20));
    // The answer itself does not matter (an error or toybox's padding cut short is fine).
    let _ = adb
        .shell(&sim.serial(), "printf '%99999999999999d' 1 | head -c 10")
        .await;
    // The abort prints a backtrace first: give it time to die.
    tokio::time::sleep(Duration::from_secs(5)).await;
    still_answers(&sim).await.expect("the simulator died of a printf width");
}

/// `printf '%.99999f' 1` is valid (toybox prints 100,001 chars and exits 0). The simulator's
/// task panics ("Formatting argument out of range": Rust's format precision is a u16): the whole
/// command line ends with no output, the rest of the line never runs, and the exit code is 0,
/// as if all went well. Same for `%.99999e` and `%.99999g`.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_printf_precision_answers_as_toybox_does() {
    let sim = SimProcess::start_logged(&[]);
    let adb = Adb::new(Route::Direct(sim.addr), Duration::from_secs(20));
    for conv in ["f", "e", "g"] {
        let line = format!("printf '%.99999{conv}' 1 | wc -c; echo after:$?");
        let out = adb.shell(&sim.serial(), &line).await;
        let text = out.as_ref().map(|o| o.stdout_text()).unwrap_or_default();
        let log = sim.log();
        assert!(
            text.contains("after:0") && !log.contains("panicked"),
            "{line}: the answer {:?}; the simulator's log: {:.300}",
            out.map(|o| (o.stdout_text(), o.exit_code)),
            log.split("panicked").nth(1).unwrap_or_default()
        );
    }
    still_answers(&sim).await.unwrap();
}

/// Clients that vanish mid-command (an endless `yes`, a `sleep`, a `screenrecord` left running, a
/// `logcat` follow, a dump then a sleep) and twenty clients at once tapping, dumping and listing:
/// the simulator answers each, and a new client after.
#[test]
fn clients_vanishing_mid_command_and_many_at_once_leave_it_answering() {
    let Some((adb, sim, serial)) = connected_logged_sim() else {
        return;
    };
    for line in [
        "yes",
        "sleep 30",
        "screenrecord /sdcard/left.mp4",
        "logcat",
        "uiautomator dump /dev/tty; sleep 30",
    ] {
        let mut child = adb
            .command()
            .args(["-s", &serial, "shell", line])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let threads: Vec<_> = (0..20)
        .map(|_| {
            let mut cmd = adb.command();
            cmd.args([
                "-s",
                &serial,
                "shell",
                "input tap 159 1410; uiautomator dump /dev/tty | grep -c hierarchy; input keyevent HOME; pm list packages | grep -c package:",
            ]);
            std::thread::spawn(move || cmd.output().unwrap())
        })
        .collect();
    for t in threads {
        let out = t.join().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let counts: Vec<&str> = text.lines().collect();
        assert!(
            out.status.success() && counts.len() == 2 && counts[0] == "1" && counts[1].parse::<u32>().unwrap_or(0) > 10,
            "{text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (out, _, code) = adb.shell(&serial, &["echo", "alive"]);
    assert_eq!((out.as_str(), code), ("alive\n", 0));
    assert!(!sim.log().contains("panicked"), "{}", sim.log());
}

/// A private adb server connected to a fresh simulator whose log is kept.
fn connected_logged_sim() -> Option<(AdbServer, SimProcess, String)> {
    let adb = AdbServer::start()?;
    let sim = SimProcess::start_logged(&[]);
    let serial = adb.connect(&sim);
    Some((adb, sim, serial))
}

/// Files pushed under names with spaces, a newline, emoji, a colon, `..` and 300 chars are
/// listed and read back byte for byte.
#[test]
fn files_with_odd_names_push_and_read_back() {
    let Some((adb, sim, serial)) = connected_logged_sim() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("f.txt");
    std::fs::write(&local, "hello 🚀\n").unwrap();
    let long = format!("/sdcard/{}", "a".repeat(300));
    for name in [
        "/sdcard/a b.txt",
        "/sdcard/new\nline.txt",
        "/sdcard/ü🚀.txt",
        "/sdcard/a:b",
        long.as_str(),
    ] {
        let out = adb.run(&["-s", &serial, "push", local.to_str().unwrap(), name]);
        assert!(
            out.status.success(),
            "{name:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (back, _, code) = adb.shell(&serial, &[&format!("cat {}", droidmcp::android::text::quote(name))]);
        assert_eq!((back.as_str(), code), ("hello 🚀\n", 0), "{name:?}");
    }
    assert!(!sim.log().contains("panicked"));
}

// ---------------------------------------------------------------------------------------------
// Hostile web pages

struct Rig {
    _chromium: Chromium,
    sim: SimProcess,
    _home: tempfile::TempDir,
    client: McpClient,
}

async fn open_page(page: &str) -> Option<Rig> {
    let chromium = Chromium::start(page)?;
    let sim = SimProcess::start(&["--webview-devtools", &chromium.addr()]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let client = mcp_server(&["--adb", target.as_str()], &[], home.path()).await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.netflix.mediaclient"}),
    )
    .await);
    page_loaded(&sim).await;
    Some(Rig {
        _chromium: chromium,
        sim,
        _home: home,
        client,
    })
}

fn find<'a>(elements: &'a [serde_json::Value], kind: &str, label: &str) -> &'a serde_json::Value {
    elements
        .iter()
        .find(|e| e["type"] == kind && e["label"] == label)
        .unwrap_or_else(|| panic!("no {kind} {label:?} among {elements:#?}"))
}

async fn dump(client: &McpClient) -> Vec<serde_json::Value> {
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    dump["elements"].as_array().unwrap().clone()
}

/// Taps `label`'s ref; the tap must press `label`'s element (title `clicked WANT`) or be refused
/// with nothing pressed.
async fn tap_presses_only(rig: &Rig, element: &serde_json::Value, want: &str) {
    let result = call(&rig.client, "ui", json!({"operation": "tap", "ref": element["ref"]})).await;
    let title = page_eval(&rig.sim, "document.title").await;
    let refused = result.is_error == Some(true);
    assert!(
        title == format!("clicked {want}").as_str()
            || (refused && !title.as_str().unwrap_or_default().starts_with("clicked")),
        "a tap on {} ({}) pressed something else: the page's title is {title}; the tap answered {}",
        element["label"],
        element["ref"],
        serde_json::to_string(&result.content).unwrap()
    );
}

/// Taps `element`'s ref; the tap must be done (not refused) and press exactly it.
async fn tap_presses(rig: &Rig, element: &serde_json::Value, want: &str) {
    let result = call(&rig.client, "ui", json!({"operation": "tap", "ref": element["ref"]})).await;
    let title = page_eval(&rig.sim, "document.title").await;
    assert!(
        result.is_error != Some(true) && title == format!("clicked {want}").as_str(),
        "a tap on {} ({}): the page's title is {title}; the tap answered {}",
        element["label"],
        element["ref"],
        serde_json::to_string(&result.content).unwrap()
    );
}

/// Two buttons share an id (invalid but common HTML). droidmcp's selector for the second is the
/// id, which finds the first: a tap on "Cancel" presses "Delete account", and the answer says it
/// tapped Cancel.
#[tokio::test(flavor = "multi_thread")]
async fn a_duplicate_id_does_not_redirect_a_tap() {
    let Some(rig) = open_page("attack_dup_ids.html").await else {
        return;
    };
    let elements = dump(&rig.client).await;
    let cancel = find(&elements, "web:button", "Cancel");
    find(&elements, "web:button", "Delete account");
    tap_presses(&rig, cancel, "cancel").await;
}

/// Cancel's own `<label for=cancel>` lies over Cancel and holds a nearly transparent "Delete
/// account" button. The cover check accepts whatever sits inside a label of the element, so the
/// tap on Cancel is not refused and the browser clicks Delete account.
#[tokio::test(flavor = "multi_thread")]
async fn a_button_inside_the_elements_own_label_does_not_take_its_tap() {
    let Some(rig) = open_page("attack_label_wraps.html").await else {
        return;
    };
    let elements = dump(&rig.client).await;
    let cancel = find(&elements, "web:button", "Cancel");
    tap_presses_only(&rig, cancel, "cancel").await;
    // Refused, naming what is on top: the page's title stays its own.
    let result = call(&rig.client, "ui", json!({"operation": "tap", "ref": cancel["ref"]})).await;
    let said = serde_json::to_string(&result.content).unwrap();
    assert!(
        result.is_error == Some(true) && said.contains("Delete account"),
        "{said}"
    );
    assert_eq!(page_eval(&rig.sim, "document.title").await, "Account");
}

/// A same-origin iframe with `padding-top: 50px` (plain CSS). Frame offsets are taken as its
/// border box plus its border, not its content box: the listed box of "Keep data" is 50 CSS px too
/// high, and a tap on it lands 50 px higher in the frame, on "Erase data"; the cover check
/// makes the same mistake both ways, so it sees Keep data there and lets the tap through.
#[tokio::test(flavor = "multi_thread")]
async fn an_iframes_padding_does_not_shift_a_tap_onto_another_button() {
    let Some(rig) = open_page("attack_iframe_padding.html").await else {
        return;
    };
    let frame_loaded = "new Promise(r => { const f = document.getElementById('frame'); const done = () => f.contentDocument && f.contentDocument.getElementById('keep'); if (done()) r(true); else f.onload = () => r(!!done()); })";
    assert_eq!(page_eval(&rig.sim, frame_loaded).await, true);
    let elements = dump(&rig.client).await;
    let keep = find(&elements, "web:button", "Keep data");
    tap_presses(&rig, keep, "keep").await;
}

/// The page reorders two id-less buttons after droidmcp read it (what a re-render or an A/B
/// reorder does): a tap on Cancel's ref must still press Cancel, or be refused, never press
/// Delete account, which now sits where Cancel's structural selector points.
#[tokio::test(flavor = "multi_thread")]
async fn elements_swapping_places_after_the_read_do_not_redirect_a_tap() {
    let Some(rig) = open_page("attack_swap.html").await else {
        return;
    };
    let elements = dump(&rig.client).await;
    let cancel = find(&elements, "web:button", "Cancel");
    let order = crate::web::page_eval_in_its_own_world(&rig.sim, "swap()").await;
    assert!(order.as_str().unwrap().starts_with("Delete account"), "{order}");
    tap_presses_only(&rig, cancel, "cancel").await;
}

/// A button in a web component's open shadow root (Lit, Stencil, Shoelace, Ionic…) is on the
/// screen and a person can press it, but droidmcp's listing never descends into shadow roots, so
/// the page hides it from the assistant.
#[tokio::test(flavor = "multi_thread")]
async fn a_button_in_a_shadow_root_is_listed_and_tapped() {
    let Some(rig) = open_page("attack_shadow.html").await else {
        return;
    };
    let elements = dump(&rig.client).await;
    let buy = elements
        .iter()
        .find(|e| e["label"] == "Buy now")
        .unwrap_or_else(|| {
            panic!(
                "Buy now is not listed: {:#?}",
                elements.iter().map(|e| &e["label"]).collect::<Vec<_>>()
            )
        })
        .clone();
    tap_presses(&rig, &buy, "buy").await;
}
