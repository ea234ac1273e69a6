//! Web content in the simulator: its WebView's DevTools socket is forwarded to a real headless
//! Chromium the test starts (Debian's `chromium`), serving pages from tests/it/web_pages. A missing
//! chromium skips locally and fails under CI.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::common::chromium::Headless;
use crate::common::*;
use droidmcp::adb::{Adb, Route, devtools};
use droidmcp::android::unix_sockets::{DevtoolsOwner, devtools_sockets};
use serde_json::json;

/// A headless Chromium showing one page of tests/it/web_pages, its DevTools port on loopback.
pub struct Chromium(Headless);

impl Chromium {
    /// `None` when chromium is missing (a skip locally, a failure under CI).
    pub fn start(page: &str) -> Option<Chromium> {
        let url = format!("file://{}", page_path(page).display());
        Headless::start(&["--window-size=412,870"], &url).map(Chromium)
    }

    pub fn addr(&self) -> String {
        self.0.addr()
    }

    /// Waits until its page has loaded, asking its DevTools port straight (no device involved).
    pub async fn loaded(&self) {
        let connect = || async {
            let socket = tokio::net::TcpStream::connect(self.addr()).await.unwrap();
            Box::new(socket) as droidmcp::adb::Pipe
        };
        let targets = devtools::targets(connect().await, Duration::from_secs(10))
            .await
            .unwrap();
        let page = targets.iter().find(|t| t.kind == "page").expect("a page");
        let ws = page.web_socket_debugger_url.as_deref().unwrap();
        let mut session = devtools::Session::open(connect().await, ws, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(session.evaluate(LOADED).await.unwrap(), true);
    }
}

/// A page's load, as a promise.
const LOADED: &str =
    "new Promise(r => document.readyState === 'complete' ? r(true) : addEventListener('load', () => r(true)))";

pub fn page_path(name: &str) -> PathBuf {
    repo_dir().join("tests/it/web_pages").join(name)
}

/// A page in the simulator's WebView: a headless Chromium serving it, the simulator in front of
/// it, a server on the simulator's direct route (with `extra` arguments), and the app that shows
/// the page launched, the page loaded. `None` where Chromium is missing (a skip; CI fails).
struct Rig {
    _chromium: Chromium,
    sim: SimProcess,
    home: tempfile::TempDir,
    client: McpClient,
}

async fn open_page(page: &str, extra: &[&str]) -> Option<Rig> {
    let chromium = Chromium::start(page)?;
    let sim = SimProcess::start(&["--webview-devtools", &chromium.addr()]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let mut args = vec!["--adb", target.as_str()];
    args.extend_from_slice(extra);
    let client = mcp_server(&args, &[], home.path()).await;
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
        home,
        client,
    })
}

/// The simulator's WebView socket, found as droidmcp finds one, reached over both routes (our
/// own adbd connection, and Debian's adb server): `/json/list` names the page, and its
/// WebSocket evaluates in it. Before the app runs there is no socket, and opening one is refused.
#[tokio::test(flavor = "multi_thread")]
async fn devtools_over_our_own_adb_streams_on_both_routes() {
    let Some(chromium) = Chromium::start("login.html") else {
        return;
    };
    let Some((_server, sim, serial)) = connected_sim(&["--webview-devtools", &chromium.addr()]) else {
        return;
    };
    let direct = Adb::new(Route::Direct(sim.addr), Duration::from_secs(10));
    let port: u16 = _server.port;
    let through_server = Adb::new(Route::Server(([127, 0, 0, 1], port).into()), Duration::from_secs(10));
    for (adb, name) in [(&direct, sim.serial()), (&through_server, serial)] {
        let unix = adb.shell(&name, "cat /proc/net/unix").await.unwrap().stdout_text();
        assert!(
            devtools_sockets(&unix).is_empty(),
            "no app with a WebView runs yet:\n{unix}"
        );
        let refused = adb.local_abstract(&name, "webview_devtools_remote_1").await;
        assert!(refused.is_err(), "no such socket: the open is refused");
        adb.shell(
            &name,
            "monkey -p com.netflix.mediaclient -c android.intent.category.LAUNCHER 1",
        )
        .await
        .unwrap();
        page_loaded(&sim).await;
        let unix = adb.shell(&name, "cat /proc/net/unix").await.unwrap().stdout_text();
        let sockets = devtools_sockets(&unix);
        let pid: u32 = adb
            .shell(&name, "pidof com.netflix.mediaclient")
            .await
            .unwrap()
            .stdout_text()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(sockets.len(), 1, "{unix}");
        assert_eq!(sockets[0].owner, DevtoolsOwner::WebView { pid });
        // Chromium lists a loaded page's title a moment after `load` on a busy host: ask again
        // (each time over a new stream) until it shows, at most 50 times.
        let mut targets = Vec::new();
        for _ in 0..50 {
            targets = devtools::targets(
                adb.local_abstract(&name, &sockets[0].name).await.unwrap(),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
            if targets.iter().any(|t| t.kind == "page" && !t.title.is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = targets.iter().find(|t| t.kind == "page").expect("a page target");
        assert_eq!(page.title, "Sign in", "{targets:?}");
        let socket = adb.local_abstract(&name, &sockets[0].name).await.unwrap();
        let ws = page.web_socket_debugger_url.as_deref().unwrap();
        let mut session = devtools::Session::open(socket, ws, Duration::from_secs(10))
            .await
            .unwrap();
        let fields = session
            .evaluate("[...document.querySelectorAll('input')].map(i => i.name).join(',')")
            .await
            .unwrap();
        assert_eq!(fields, "user,pass");
        adb.shell(&name, "am force-stop com.netflix.mediaclient").await.unwrap();
    }
}

/// Evaluates `expression` in the simulator's WebView page, through DevTools over our own adb
/// stream: how the tests read the page back, apart from droidmcp's tools.
pub async fn page_eval(sim: &SimProcess, expression: &str) -> serde_json::Value {
    page_session(sim).await.evaluate(expression).await.unwrap()
}

/// Evaluates `expression` in the page's own JavaScript world, where its scripts run (droidmcp
/// never does): what the page makes of itself.
pub async fn page_eval_in_its_own_world(sim: &SimProcess, expression: &str) -> serde_json::Value {
    let result = page_session(sim)
        .await
        .call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )
        .await
        .unwrap();
    result["result"]["value"].clone()
}

/// A DevTools session on the simulator's WebView page, over our own adb stream.
async fn page_session(sim: &SimProcess) -> devtools::Session {
    let adb = Adb::new(Route::Direct(sim.addr), Duration::from_secs(10));
    let serial = sim.serial();
    let unix = adb.shell(&serial, "cat /proc/net/unix").await.unwrap().stdout_text();
    let socket = devtools_sockets(&unix).pop().expect("a DevTools socket").name;
    let targets = devtools::targets(
        adb.local_abstract(&serial, &socket).await.unwrap(),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    let page = targets.iter().find(|t| t.kind == "page").expect("a page");
    let pipe = adb.local_abstract(&serial, &socket).await.unwrap();
    let ws = page.web_socket_debugger_url.as_deref().unwrap();
    devtools::Session::open(pipe, ws, Duration::from_secs(10))
        .await
        .unwrap()
}

/// Waits until the page has loaded (Chromium names its DevTools port before that).
pub async fn page_loaded(sim: &SimProcess) {
    assert_eq!(page_eval(sim, LOADED).await, true);
}

/// The web element of `elements` with this type and label.
fn web_element<'a>(elements: &'a [serde_json::Value], kind: &str, label: &str) -> &'a serde_json::Value {
    elements
        .iter()
        .find(|e| e["type"] == kind && e["label"] == label)
        .unwrap_or_else(|| panic!("no {kind} {label:?} among {elements:#?}"))
}

/// The login journey over MCP: the dump lists the page's fields by name beside the native
/// toolbar, inside the WebView's bounds; Chinese and emoji typed by ref land in the field (read
/// back through DevTools); tapping Submit by ref changes the page; `wait` sees the web text.
#[tokio::test(flavor = "multi_thread")]
async fn a_web_login_journey_over_mcp() {
    let Some(rig) = open_page("login.html", &[]).await else {
        return;
    };
    let (sim, client) = (&rig.sim, &rig.client);
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    assert_eq!(dump["web"]["title"], "Sign in", "{dump:#}");
    let elements = dump["elements"].as_array().unwrap();
    assert!(
        elements.iter().any(|e| e["label"] == "Netflix"),
        "the native toolbar is listed too"
    );
    let user = web_element(elements, "web:textbox", "User name");
    let pass = web_element(elements, "web:textbox", "Password");
    assert!(
        pass["flags"].as_array().unwrap().iter().any(|f| f == "password"),
        "{pass}"
    );
    let submit = web_element(elements, "web:button", "Submit");
    web_element(elements, "web:link", "Forgot password?");
    for e in [user, pass, submit] {
        let [x, y] = [e["at"][0].as_i64().unwrap(), e["at"][1].as_i64().unwrap()];
        assert!(
            (0..1080).contains(&x) && (220..2400).contains(&y),
            "inside the WebView: {e}"
        );
    }
    let typed = "李雷 🚀 Ünïcödé";
    let user_ref = user["ref"].as_str().unwrap();
    ok(&call(
        client,
        "ui",
        json!({"operation": "type", "ref": user_ref, "text": typed}),
    )
    .await);
    assert_eq!(page_eval(sim, "document.getElementById('user').value").await, typed);
    // The field now shows what was typed and keeps its ref: its name, not its text, is its identity.
    let again = ok(&call(client, "ui", json!({"operation": "dump", "filter": "李雷"})).await);
    assert_eq!(again["elements"][0]["ref"], user_ref, "{again}");
    assert_eq!(again["elements"][0]["label"], typed, "{again}");
    let submit_ref = submit["ref"].as_str().unwrap();
    let tapped = ok(&call(
        client,
        "ui",
        json!({"operation": "tap", "ref": submit_ref, "observe": true}),
    )
    .await);
    assert_eq!(tapped["target"]["label"], "Submit");
    // `observe` reports the page's change: the form went, the greeting came.
    let observed = &tapped["observed"];
    assert_eq!(observed["changed"], true, "{tapped}");
    assert!(
        observed["disappeared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "Submit"),
        "{tapped}"
    );
    assert!(
        observed["appeared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("Welcome")),
        "{tapped}"
    );
    let welcome = format!("Welcome, {typed}");
    assert_eq!(
        page_eval(sim, "document.querySelector('h1').innerText").await,
        welcome.as_str()
    );
    let waited = ok(&call(
        client,
        "ui",
        json!({"operation": "wait", "text": "Welcome", "timeoutMs": 5000}),
    )
    .await);
    assert_eq!(waited["operation"], "wait");
}

/// A WebView without a DevTools socket (not debuggable): the dump says so, and lists what
/// uiautomator shows.
#[tokio::test(flavor = "multi_thread")]
async fn a_webview_that_is_not_debuggable_is_said_as_such() {
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let client = mcp_server(&["--adb", &target], &[], home.path()).await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.netflix.mediaclient"}),
    )
    .await);
    let dump = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let note = dump["web"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("not debuggable") && note.contains("setWebContentsDebuggingEnabled"),
        "{dump:#}"
    );
    assert_eq!(dump["web"]["elements"], 0);
}

/// A 2,000-row page: each dump page answers within the budget with a cacheId, paging reaches
/// every row once, and a row far below the fold is tapped by ref (scrolled into view first).
#[tokio::test(flavor = "multi_thread")]
async fn a_2000_row_page_is_paged_within_the_budget_and_its_last_rows_tapped() {
    let Some(rig) = open_page("long_list.html", &[]).await else {
        return;
    };
    let (sim, client) = (&rig.sim, &rig.client);
    let mut seen = std::collections::BTreeMap::new();
    let (mut offset, mut pages, mut largest) = (0, 0, 0);
    loop {
        let result = call(client, "ui", json!({"operation": "dump", "offset": offset})).await;
        largest = largest.max(response_chars(&result));
        assert!(
            response_chars(&result) <= 4000,
            "over the default budget: {}",
            response_chars(&result)
        );
        let page = ok(&result);
        assert!(page["cacheId"].as_str().is_some_and(|id| !id.is_empty()), "{page}");
        pages += 1;
        for e in page["elements"].as_array().unwrap() {
            if e["type"] == "web:listitem" {
                *seen.entry(e["label"].as_str().unwrap().to_string()).or_insert(0) += 1;
                if e["label"] == "Item 1999" {
                    let tapped = ok(&call(client, "ui", json!({"operation": "tap", "ref": e["ref"]})).await);
                    assert_eq!(tapped["target"]["label"], "Item 1999");
                }
            }
        }
        match page["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    eprintln!("2000 rows: {pages} dump pages, the largest {largest} chars");
    assert_eq!(seen.len(), 2000, "every row once");
    assert!(seen.values().all(|n| *n == 1));
    assert_eq!(page_eval(sim, "document.title").await, "tapped Item 1999");
}

/// The page's console errors, uncaught exceptions and failed requests are summarised in the dump
/// (counts, the first three) with a cacheId that `cache get` serves with all of them.
#[tokio::test(flavor = "multi_thread")]
async fn a_pages_console_errors_and_failed_requests_are_reported() {
    let Some(rig) = open_page("errors.html", &[]).await else {
        return;
    };
    let (sim, client) = (&rig.sim, &rig.client);
    // The image's request fails and the timer throws as the page loads: wait for both.
    let loaded = "new Promise(r => setTimeout(() => r(document.images[0].complete), 500))";
    assert_eq!(page_eval(sim, loaded).await, true);
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    let console = &dump["web"]["console"];
    eprintln!("console: {console}");
    assert_eq!(
        console["errors"], 5,
        "4 console.error calls and one uncaught exception: {console}"
    );
    assert_eq!(console["failedRequests"], 1, "{console}");
    let first = console["first"].as_array().unwrap();
    assert_eq!(first.len(), 3);
    assert_eq!(first[0], "console.error: analytics failed 1");
    let id = console["cacheId"].as_str().expect("a cacheId for the rest");
    let all = ok(&call(client, "cache", json!({"operation": "get", "id": id, "limit": 20})).await);
    let text = all.to_string();
    assert!(text.contains("uncaught: Error: boom in a timer"), "{text}");
    assert!(text.contains("request failed: http://127.0.0.1:9/logo.png"), "{text}");
    assert!(!text.contains("not an error"), "{text}");
}

/// A web login recorded over MCP exports with selectors by accessible name (never a ref), and
/// both exports replay with `droidmcp replay` on a fresh device and a freshly loaded page: the
/// Chinese and emoji name lands in the field and Submit changes the page.
#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_web_flow_exports_and_replays_in_both_formats() {
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let Some(rig) = open_page("login.html", &["--workspace", ws]).await else {
        return;
    };
    let client = &rig.client;
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    let elements = dump["elements"].as_array().unwrap();
    let user = web_element(elements, "web:textbox", "User name")["ref"].clone();
    let pass = web_element(elements, "web:textbox", "Password")["ref"].clone();
    let typed = "王芳 🌸";
    ok(&call(client, "ui", json!({"operation": "type", "ref": user, "text": typed})).await);
    // A web password field is a password like a native one: never written (issue 33's secrets).
    let secret = "hunter2-密码";
    // Submitted with ENTER: Maestro writes it as `pressKey: Enter`, which must reach the page.
    ok(&call(
        client,
        "ui",
        json!({"operation": "type", "ref": pass, "text": secret, "submit": true}),
    )
    .await);
    let mut files = Vec::new();
    let mut placeholder = String::new();
    for format in ["js", "maestro"] {
        let export = ok(&call(
            client,
            "flow",
            json!({"operation": "export", "format": format, "name": "web"}),
        )
        .await);
        let path = PathBuf::from(export["path"].as_str().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("User name") && text.contains("Password") && text.contains(typed),
            "{text}"
        );
        assert!(
            !text.contains(&format!("\"{}\"", user.as_str().unwrap())),
            "a ref is not a selector: {text}"
        );
        assert!(!text.contains(secret), "the web password was written: {text}");
        let name = text
            .split("${")
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap_or_else(|| panic!("no ${{NAME}} for the password: {text}"));
        placeholder = name.to_string();
        files.push(path);
    }
    // The recording's server and page end here; each replay gets a fresh page and device.
    let Rig { home, client, .. } = rig;
    drop(client);
    for file in files {
        // A fresh page and a fresh device: the selectors must find the elements again.
        let Some(chromium) = Chromium::start("login.html") else {
            return;
        };
        let sim = SimProcess::start(&["--webview-devtools", &chromium.addr()]);
        chromium.loaded().await;
        let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .arg("replay")
            .arg(&file)
            .args(["--adb", &format!("tcp:{}", sim.addr)])
            .args(["--env", &format!("{placeholder}={secret}")])
            .env("HOME", home.path())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("replay {}:\n{said}", file.display());
        assert!(out.status.success(), "{said}");
        let welcome = format!("Welcome, {typed}");
        assert_eq!(
            page_eval(&sim, "document.querySelector('h1').innerText").await,
            welcome.as_str()
        );
    }
}

/// A form in a (same-origin) iframe: its fields are listed with their names, inside the frame's
/// box on the screen; typing by ref and tapping by ref act inside the frame.
#[tokio::test(flavor = "multi_thread")]
async fn a_form_in_an_iframe_is_read_and_acted_on() {
    let Some(rig) = open_page("iframe_form.html", &[]).await else {
        return;
    };
    let (sim, client) = (&rig.sim, &rig.client);
    // The frame's document loads on its own: wait for it before the dump.
    let frame_loaded = "new Promise(r => { const f = document.getElementById('pay'); const done = () => f.contentDocument && f.contentDocument.getElementById('card'); if (done()) r(true); else f.onload = () => r(!!done()); })";
    assert_eq!(page_eval(sim, frame_loaded).await, true);
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    let elements = dump["elements"].as_array().unwrap();
    let card = web_element(elements, "web:textbox", "Card holder");
    let pay = web_element(elements, "web:button", "Pay");
    // Below the heading and the 300 px spacer: the frame's offset is in the mapping.
    let heading_y = web_element(elements, "web:heading", "Checkout")["at"][1]
        .as_i64()
        .unwrap();
    assert!(
        card["at"][1].as_i64().unwrap() > heading_y + 300,
        "{card} vs heading at {heading_y}"
    );
    // A page scrolls and a frame reloads under its elements: the refs name the same elements
    // still (a web element is where its selector says, not where its box was).
    let reloaded = "new Promise(r => { const f = document.getElementById('pay'); f.onload = () => r(!!f.contentDocument.getElementById('card')); f.contentWindow.location.reload(); })";
    assert_eq!(page_eval(sim, reloaded).await, true);
    assert_eq!(page_eval(sim, "(scrollBy(0, 40), scrollY)").await, 40);
    ok(&call(
        client,
        "ui",
        json!({"operation": "type", "ref": card["ref"], "text": "Zoë 张"}),
    )
    .await);
    ok(&call(client, "ui", json!({"operation": "tap", "ref": pay["ref"]})).await);
    assert_eq!(page_eval(sim, "document.title").await, "paid by Zoë 张");
}

/// A page that lies in its own JavaScript world (web_pages/lying_page.html): it overrides
/// getBoundingClientRect, querySelector(All), innerText, an input's labels and getComputedStyle
/// so that, read there, Cancel and Delete account answer as each other (and, in a same-origin
/// frame with lies of its own, Keep data and Erase data), the email field is "Password" and
/// Report abuse is hidden. droidmcp reads and acts in an isolated world of its own: the listing
/// names what is there, and a tap on Cancel's ref presses Cancel (the page writes which button
/// got the trusted click). A button under a transparent element is refused, not clicked through.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_lies_in_its_own_world_is_read_and_tapped_as_it_is() {
    let Some(rig) = open_page("lying_page.html", &[]).await else {
        return;
    };
    let (sim, client) = (&rig.sim, &rig.client);
    let frame_loaded = "new Promise(r => { const f = document.getElementById('frame'); const done = () => f.contentDocument && f.contentDocument.getElementById('erase'); if (done()) r(true); else f.onload = () => r(!!done()); })";
    assert_eq!(page_eval(sim, frame_loaded).await, true);
    // The trap is armed: in the page's own world, what finds Cancel finds Delete account.
    assert_eq!(
        page_eval_in_its_own_world(sim, "document.querySelector('#cancel').id").await,
        "delete"
    );
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    let elements = dump["elements"].as_array().unwrap();
    web_element(elements, "web:textbox", "Email");
    web_element(elements, "web:button", "Report abuse");
    let y = |e: &serde_json::Value| e["at"][1].as_i64().unwrap();
    let cancel = web_element(elements, "web:button", "Cancel");
    let delete = web_element(elements, "web:button", "Delete account");
    assert!(
        y(cancel) < y(delete),
        "Cancel is above Delete account: {cancel} {delete}"
    );
    let keep = web_element(elements, "web:button", "Keep data");
    let erase = web_element(elements, "web:button", "Erase data");
    assert!(y(keep) < y(erase), "Keep data is above Erase data: {keep} {erase}");

    let tapped = ok(&call(client, "ui", json!({"operation": "tap", "ref": cancel["ref"]})).await);
    assert_eq!(tapped["target"]["label"], "Cancel");
    assert_eq!(page_eval(sim, "document.title").await, "clicked cancel");
    ok(&call(client, "ui", json!({"operation": "tap", "ref": keep["ref"]})).await);
    assert_eq!(page_eval(sim, "document.title").await, "clicked keep");

    let stay = web_element(elements, "web:button", "Stay subscribed");
    let refused = err(&call(client, "ui", json!({"operation": "tap", "ref": stay["ref"]})).await);
    assert!(
        refused.contains("covered") && refused.contains("nothing was tapped"),
        "{refused}"
    );
    assert_eq!(
        page_eval(sim, "document.title").await,
        "clicked keep",
        "the covering element got no click"
    );
}
