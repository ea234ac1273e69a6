//! The device panel, an MCP App (docs/panel.md): declared and linked only for a client that
//! offers `io.modelcontextprotocol/ui` (any other client sees exactly what it saw before), its
//! frames as resources outside the model's answers, the take-over pause; and the panel itself in
//! headless Chromium, inside a host page of our own connected to `droidmcp serve --http --sim`.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::common::chromium::Browser;
use crate::common::*;

const EXTENSION: &str = "io.modelcontextprotocol/ui";
const MIME: &str = "text/html;profile=mcp-app";
const PANEL: &str = "ui://droidmcp/device";
const SCREEN: &str = "droidmcp://device/-/screen";

/// A client that offers MCP Apps, as Claude Desktop does.
#[derive(Clone, Default)]
pub struct AppsClient;

impl rmcp::ClientHandler for AppsClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(
            EXTENSION.into(),
            serde_json::from_value(json!({"mimeTypes": [MIME]})).unwrap(),
        );
        info.capabilities.extensions = Some(extensions);
        info
    }
}

fn declares(capabilities: &rmcp::model::ServerCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION))
}

/// tools/list as JSON, each tool's `_meta` taken out.
fn without_meta(tools: &[rmcp::model::Tool]) -> Value {
    let mut value = serde_json::to_value(tools).unwrap();
    for tool in value.as_array_mut().unwrap() {
        tool.as_object_mut().unwrap().remove("_meta");
    }
    value
}

#[tokio::test]
async fn the_panel_is_declared_and_linked_only_for_a_client_that_offers_mcp_apps() {
    let home = tempfile::tempdir().unwrap();
    let plain = mcp_server(&["--sim"], &[], home.path()).await;
    let apps = mcp_server_with(AppsClient, &["--sim"], &[], home.path()).await;

    // Without the extension: nothing declared, linked or listed; tools/list as before.
    assert!(!declares(&plain.peer_info().unwrap().capabilities));
    let before = plain.list_all_tools().await.unwrap();
    assert!(before.iter().all(|t| t.meta.is_none()), "a tool has _meta");
    assert!(before.iter().all(|t| t.name != "device-panel"));
    let resources = plain.list_all_resources().await.unwrap();
    assert!(resources.iter().all(|r| !r.uri.starts_with("ui://")));
    assert_eq!(plain.list_all_resource_templates().await.unwrap().len(), 1);

    // With it: declared; `ui` and `flow` link the panel; the panel's own tool is for the app only.
    assert!(declares(&apps.peer_info().unwrap().capabilities));
    let tools = apps.list_all_tools().await.unwrap();
    let mut linked: Vec<&str> = tools
        .iter()
        .filter(|t| t.meta.as_ref().is_some_and(|m| m.0["ui"]["resourceUri"] == PANEL))
        .map(|t| t.name.as_ref())
        .collect();
    linked.sort();
    assert_eq!(linked, ["device-panel", "flow", "ui"]);
    let own = tools.iter().find(|t| t.name == "device-panel").unwrap();
    assert_eq!(own.meta.as_ref().unwrap().0["ui"]["visibility"], json!(["app"]));
    // Beyond `_meta` and the app-only tool, the same list.
    let same: Vec<_> = tools.iter().filter(|t| t.name != "device-panel").cloned().collect();
    assert_eq!(without_meta(&same), without_meta(&before));
    let chars = |v: &Value| v.to_string().chars().count();
    println!(
        "tools/list: {} chars without the extension, {} with it ({} of them the app-only tool)",
        chars(&serde_json::to_value(&before).unwrap()),
        chars(&serde_json::to_value(&tools).unwrap()),
        chars(&serde_json::to_value(own).unwrap())
    );
    let listed = apps.list_all_resources().await.unwrap();
    let panel = listed
        .iter()
        .find(|r| r.uri == PANEL)
        .expect("the panel in resources/list");
    assert_eq!(panel.mime_type.as_deref(), Some(MIME));
    let templates = apps.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "droidmcp://device/{serial}/screen")
    );

    // The page: one self-contained HTML document, nothing loaded from elsewhere.
    let read = apps.read_resource(ReadResourceRequestParams::new(PANEL)).await.unwrap();
    let ResourceContents::TextResourceContents { text, mime_type, .. } = &read.contents[0] else {
        panic!("the panel is text")
    };
    assert_eq!(mime_type.as_deref(), Some(MIME));
    assert!(text.starts_with("<!doctype html>") && text.contains("ui/initialize"));
    for outside in ["<script src", "<link", "http://", "https://", "@import"] {
        assert!(!text.contains(outside), "the panel loads from outside: {outside}");
    }
    println!("the panel's HTML: {} chars", text.chars().count());
    plain.cancel().await.unwrap();
    apps.cancel().await.unwrap();
}

/// The official Python SDK 2.x client, a client we did not write, sees the extension declared
/// and the panel linked only when it offers the extension (tests/clients/python_apps.py).
#[tokio::test]
async fn the_python_sdk_client_sees_the_panel_only_when_it_offers_mcp_apps() {
    let has_sdk = std::process::Command::new("python3")
        .args([
            "-c",
            "from mcp import Client; from mcp.client.extension import ClientExtension",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        skip_or_fail("the MCP Python SDK 2.x is not installed (pip install 'mcp>=2,<3')");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new("python3")
        .arg(repo_dir().join("tests/clients/python_apps.py"))
        .arg(env!("CARGO_BIN_EXE_droidmcp"))
        .env("HOME", home.path())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    println!("Python SDK: {seen}");
    assert_eq!(
        seen["plain"],
        json!({"protocol": "2026-07-28", "declared": false, "linked": [], "panelListed": false})
    );
    assert_eq!(
        seen["apps"],
        json!({"protocol": "2026-07-28", "declared": true, "linked": ["device-panel", "flow", "ui"], "panelListed": true})
    );
}

/// The contents of the screen resource: the JSON, and the JPEG (base64).
async fn screen<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
) -> (Value, String) {
    let read = client
        .read_resource(ReadResourceRequestParams::new(SCREEN))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, mime_type, .. } = &read.contents[0] else {
        panic!("the screen's first content is its JSON")
    };
    assert_eq!(mime_type.as_deref(), Some("application/json"));
    let ResourceContents::BlobResourceContents { blob, mime_type, .. } = &read.contents[1] else {
        panic!("the screen's second content is its frame")
    };
    assert_eq!(mime_type.as_deref(), Some("image/jpeg"));
    (serde_json::from_str(text).unwrap(), blob.clone())
}

#[tokio::test]
async fn the_screen_resource_holds_refs_boxes_and_a_jpeg_and_the_answers_do_not_grow() {
    use base64::Engine;
    let home = tempfile::tempdir().unwrap();
    let apps = mcp_server_with(AppsClient, &["--sim"], &[], home.path()).await;
    let (view, blob) = screen(&apps).await;
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&blob).unwrap();
    assert_eq!(&jpeg[..3], &[0xFF, 0xD8, 0xFF], "a JPEG");
    assert_eq!(view["screen"], json!([1080, 2400]));
    assert!(view["focused"]["package"].as_str().unwrap().contains("launcher"));
    let settings = view["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == "Settings")
        .unwrap_or_else(|| panic!("no Settings in {view}"));
    assert_eq!(settings["box"], json!([32, 1260, 286, 1560]));
    assert_eq!(view["held"], false);
    assert_eq!(view["state"], Value::Null, "a phone simply ready names no state");
    println!(
        "a frame: {} elements, JSON {} chars, JPEG {} bytes ({}×{})",
        view["elements"].as_array().unwrap().len(),
        view.to_string().chars().count(),
        jpeg.len(),
        view["image"][0],
        view["image"][1]
    );

    // The panel's refs are the dump's: a tap by the panel's ref lands on Settings, is recorded,
    // and its answer carries no frame.
    let reference = settings["ref"].as_str().unwrap();
    let tapped = call(&apps, "ui", json!({"operation": "tap", "ref": reference})).await;
    assert!(
        tapped
            .content
            .iter()
            .all(|c| c.as_image().is_none() && c.as_resource().is_none())
    );
    assert_eq!(ok(&tapped)["target"]["label"], "Settings");
    let (view, _) = screen(&apps).await;
    assert_eq!(view["focused"]["package"], "com.android.settings");
    let steps = view["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{view}");
    assert_eq!(steps[0]["step"], "tap text \"Settings\"");
    assert!(steps[0]["saw"].as_str().unwrap().contains("Settings"), "{view}");

    // The phone's state is shown with the way forward: asleep once the screen goes off.
    ok(&call(
        &apps,
        "adb-shell",
        json!({"operation": "run", "command": "input keyevent 223"}),
    )
    .await);
    let (view, _) = screen(&apps).await;
    assert_eq!(view["state"]["name"], "asleep", "{view}");
    assert!(view["state"]["next"].as_str().unwrap().contains("wake"), "{view}");
    ok(&call(&apps, "adb-device", json!({"operation": "wake"})).await);

    // A serial is percent-encoded; one no device has is an error that names it.
    let serial = view["device"].as_str().unwrap().replace(':', "%3A");
    let by_serial = apps
        .read_resource(ReadResourceRequestParams::new(format!(
            "droidmcp://device/{serial}/screen"
        )))
        .await
        .unwrap();
    assert_eq!(by_serial.contents.len(), 2);
    let missing = apps
        .read_resource(ReadResourceRequestParams::new("droidmcp://device/nope%3A1/screen"))
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nope:1"), "{missing}");
    apps.cancel().await.unwrap();
}

/// Issue 42: the panel reads the screen through the one identity and the recording's secrets. A
/// password an eye icon revealed shows as dots in the panel's frame (its elements, its last
/// steps), and the panel's ref of the field taps that very field.
#[tokio::test]
async fn the_panels_frame_shows_a_revealed_password_as_dots_and_its_refs_tap_by_identity() {
    let home = tempfile::tempdir().unwrap();
    let profile = login_with_eye();
    let apps = mcp_server_with(AppsClient, &["--sim", profile.arg()], &[], home.path()).await;
    let secret = "Hunter2-secret!";
    ok(&call(
        &apps,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    for args in [
        json!({"operation": "tap", "resourceId": "org.droidmcp.demo.login:id/password"}),
        json!({"operation": "type", "text": secret}),
        json!({"operation": "tap", "contentDesc": "Show password"}),
    ] {
        ok(&call(&apps, "ui", args).await);
    }
    let (view, _) = screen(&apps).await;
    println!("{view}");
    assert!(
        !view.to_string().contains(secret),
        "the frame shows the password: {view}"
    );
    let field = view["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "EditText" && e["label"].as_str().unwrap().starts_with('•'))
        .unwrap_or_else(|| panic!("no password field in {view}"));
    assert_eq!(field["label"], "•".repeat(secret.len()));
    assert!(view["steps"].to_string().contains("${PASSWORD}"), "{view}");
    let tapped = ok(&panel_call(&apps, "ui", json!({"operation": "tap", "ref": field["ref"]})).await);
    assert_eq!(tapped["target"]["id"], "password", "{tapped}");
    apps.cancel().await.unwrap();
}

/// A tool call that carries the panel's marker in `_meta`, as the panel sends it.
pub async fn panel_call<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    tool: &str,
    args: Value,
) -> rmcp::model::CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"droidmcp/panel": true})).unwrap());
    client.call_tool(params).await.unwrap()
}

#[tokio::test]
async fn a_person_holding_the_device_pauses_the_assistants_acting_calls_but_not_the_panels() {
    let home = tempfile::tempdir().unwrap();
    let apps = mcp_server_with(AppsClient, &["--sim"], &[], home.path()).await;
    let held = ok(&panel_call(&apps, "device-panel", json!({"operation": "hold"})).await);
    assert_eq!(held["held"], true);

    // The assistant's acting calls are refused, and nothing is done.
    for (tool, args) in [
        ("ui", json!({"operation": "tap", "text": "Settings"})),
        ("ui", json!({"operation": "key", "name": "HOME"})),
        (
            "adb-app",
            json!({"operation": "launch", "package": "com.android.settings"}),
        ),
        ("adb-shell", json!({"operation": "run", "command": "input keyevent 4"})),
    ] {
        let refused = err(&call(&apps, tool, args.clone()).await);
        assert!(refused.contains("a person has taken over"), "{tool} {args}: {refused}");
    }
    let script = ok(&call(
        &apps,
        "script",
        json!({"operation": "run", "code": "try { await ui.tap({text: 'Settings'}); console.log('tapped') } catch (e) { console.log(String(e)) }"}),
    )
    .await);
    assert!(script.to_string().contains("a person has taken over"), "{script}");
    let (view, _) = screen(&apps).await;
    assert!(
        view["focused"]["package"].as_str().unwrap().contains("launcher"),
        "{view}"
    );
    assert_eq!(view["held"], true);
    // Reading goes on.
    ok(&call(&apps, "ui", json!({"operation": "dump", "limit": 1})).await);

    // The panel's own calls go through while it holds the device.
    ok(&panel_call(&apps, "ui", json!({"operation": "tap", "text": "Settings"})).await);
    let (view, _) = screen(&apps).await;
    assert_eq!(view["focused"]["package"], "com.android.settings");

    // Released: the assistant acts again.
    ok(&panel_call(&apps, "device-panel", json!({"operation": "release"})).await);
    ok(&call(&apps, "ui", json!({"operation": "key", "name": "BACK"})).await);
    let bad = err(&panel_call(&apps, "device-panel", json!({"operation": "grab"})).await);
    assert!(bad.contains("\"hold\" or \"release\""), "{bad}");
    apps.cancel().await.unwrap();
}

/// The panel's own tool passes the guard every call passes: an error quoting a 5,000-char field
/// is cut to the guard's 1,000 chars, as any tool's is (it was answered before the guard, whole).
#[tokio::test]
async fn the_panels_own_tool_answers_through_the_guard() {
    let home = tempfile::tempdir().unwrap();
    let apps = mcp_server_with(AppsClient, &["--sim"], &[], home.path()).await;
    let long = "x".repeat(5_000);
    for tool in ["device-panel", "ui"] {
        let mut args = json!({"operation": "hold"});
        args[&long] = json!(1);
        let said = err(&panel_call(&apps, tool, args).await);
        println!(
            "{tool}: {} chars: {}",
            said.chars().count(),
            &said[..said.len().min(200)]
        );
        assert!(said.chars().count() <= 1_000, "{tool}: {} chars", said.chars().count());
    }
    ok(&panel_call(&apps, "device-panel", json!({"operation": "release"})).await);
    apps.cancel().await.unwrap();
}

/// The host's backend: serves the host page and passes its MCP requests to droidmcp (a real host
/// holds the MCP connection the same way; the page then needs no cross-origin access).
async fn host_backend(mcp_url: String) -> String {
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;
    let page = std::fs::read_to_string(repo_dir().join("tests/panel/host.html")).unwrap();
    let forward = move |headers: HeaderMap, body: axum::body::Bytes| {
        let url = mcp_url.clone();
        async move {
            let mut request = http_client().post(url).body(body.to_vec());
            for name in [
                "authorization",
                "content-type",
                "accept",
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
            ] {
                if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) {
                    request = request.header(name, value);
                }
            }
            let answer = request.send().await.expect("droidmcp answers");
            let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
            let kind = answer
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json")
                .to_string();
            let body = answer.bytes().await.unwrap_or_default().to_vec();
            (status, [(header::CONTENT_TYPE, kind)], body).into_response()
        }
    };
    let router = axum::Router::new()
        .route(
            "/",
            axum::routing::get(move || async move { ([(header::CONTENT_TYPE, "text/html")], page) }),
        )
        .route("/mcp", axum::routing::post(forward));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// Waits for a file the browser downloads (complete: no `.crdownload` beside it).
async fn downloaded(folder: &Path, name: &str) -> String {
    let path = folder.join(name);
    for _ in 0..200 {
        if path.exists() && !folder.join(format!("{name}.crdownload")).exists() {
            return std::fs::read_to_string(&path).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} was not downloaded into {}", folder.display());
}

const WAIT: Duration = Duration::from_secs(20);
/// The panel's ref boxes, and the one whose label is `label`.
const BOXES: &str = "document.querySelectorAll('#boxes .ref').length";

#[tokio::test]
async fn the_panel_in_chromium_shows_the_launcher_taps_settings_exports_a_flow_and_takes_over() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let token = "panel-test-token-0123456789";
    let token_arg = format!("assistant={token}");
    let server = HttpServer::start(&["--sim", "--token", &token_arg], &[], home.path()).await;
    let host = host_backend(server.url.clone()).await;
    let downloads = tempfile::tempdir().unwrap();
    browser.download_to(downloads.path()).await;
    let page = browser.open(&format!("{host}/?token={token}")).await;

    // The launcher, with one box per element the screen resource names.
    let shown = browser
        .until(
            &page,
            true,
            &format!("{BOXES} > 0 && document.getElementById('frame').naturalWidth > 0 && {BOXES}"),
            WAIT,
        )
        .await;
    let expected = browser
        .eval(
            &page,
            false,
            &format!("mcp('resources/read', {{uri: '{SCREEN}'}}).then(r => JSON.parse(r.contents[0].text).elements.filter(e => e.box[2] > e.box[0] && e.box[3] > e.box[1]).length)"),
        )
        .await
        .unwrap();
    assert_eq!(shown, expected, "one box per element with an area");
    println!("the panel shows the launcher with {shown} ref boxes");
    let focused = browser
        .eval(&page, true, "document.getElementById('focused').textContent")
        .await
        .unwrap();
    assert!(focused.as_str().unwrap().contains("launcher"), "{focused}");
    assert_eq!(
        browser.eval(&page, false, "window.hostError").await.unwrap(),
        Value::Null
    );

    // A person clicks Settings: the device opens Settings, and the panel follows.
    browser.click_in_frame(&page, "#boxes .ref[title*=' Settings ']").await;
    browser
        .until(
            &page,
            true,
            "document.getElementById('focused').textContent.includes('com.android.settings')",
            WAIT,
        )
        .await;
    let dumped = browser
        .eval(
            &page,
            false,
            "assistant('ui', {operation: 'dump', limit: 3}).then(r => r.structuredContent.focused.package)",
        )
        .await
        .unwrap();
    assert_eq!(dumped, "com.android.settings", "the device itself moved");
    let steps = browser
        .until(&page, true, "document.getElementById('steps').textContent.includes('Settings') && document.getElementById('steps').textContent", WAIT)
        .await;
    assert!(steps.as_str().unwrap().contains("tap text \"Settings\""), "{steps}");
    let shot = browser.screenshot(&page).await;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(repo_dir().join("target"), Into::into);
    std::fs::write(target.join("panel.png"), &shot).unwrap();
    if std::env::var_os("UPDATE_PANEL_SCREENSHOT").is_some() {
        std::fs::write(repo_dir().join("docs/panel.png"), &shot).unwrap();
    }
    println!(
        "a screenshot of the panel: {} bytes, in {}",
        shot.len(),
        target.join("panel.png").display()
    );

    // Follow live: the assistant goes BACK; the panel shows the launcher again without a click.
    browser.click_in_frame(&page, "#follow").await;
    let back = browser
        .eval(
            &page,
            false,
            "assistant('ui', {operation: 'key', name: 'BACK'}).then(r => !r.isError)",
        )
        .await
        .unwrap();
    assert_eq!(back, true);
    browser
        .until(
            &page,
            true,
            "document.getElementById('focused').textContent.includes('launcher')",
            WAIT,
        )
        .await;
    // Out of view (the host scrolls it away) it reads no frames; back in view, it reads again.
    let reads = "window.hostLog.filter(m => m === 'resources/read').length";
    let place = |margin: &str| format!("document.getElementById('app').style.marginTop = '{margin}'");
    browser.eval(&page, false, &place("4000px")).await.unwrap();
    // A read already asked may still come; then none for three follow periods.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let hidden = browser.eval(&page, false, reads).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        browser.eval(&page, false, reads).await.unwrap(),
        hidden,
        "frames out of view"
    );
    browser.eval(&page, false, &place("0px")).await.unwrap();
    let more = format!("{reads} > {hidden}");
    browser.until(&page, false, &more, WAIT).await;
    browser.click_in_frame(&page, "#follow").await;
    browser.click_in_frame(&page, "#boxes .ref[title*=' Settings ']").await;
    browser
        .until(
            &page,
            true,
            "document.getElementById('focused').textContent.includes('com.android.settings')",
            WAIT,
        )
        .await;

    // Export as a Maestro flow: the download replays on a fresh simulator.
    browser.click_in_frame(&page, "#export-maestro").await;
    let flow = downloaded(downloads.path(), "panel.yaml").await;
    println!("the exported flow ({} chars):\n{flow}", flow.chars().count());
    assert!(flow.contains("tapOn"), "{flow}");
    let replayed = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(downloads.path().join("panel.yaml"))
        .arg("--sim")
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replayed.stdout);
    println!("replay: {said}{}", String::from_utf8_lossy(&replayed.stderr));
    assert!(replayed.status.success() && said.contains("0 failed"), "{said}");

    // Type into the focused field: open Login Demo, click its user field, type in the panel.
    browser.click_in_frame(&page, "#home").await;
    browser
        .until(
            &page,
            true,
            "document.querySelector(\"#boxes .ref[title*=' Login Demo ']\")",
            WAIT,
        )
        .await;
    browser
        .click_in_frame(&page, "#boxes .ref[title*=' Login Demo ']")
        .await;
    let field = "#boxes .ref[title*='(EditText)']";
    browser
        .until(&page, true, &format!("document.querySelector(\"{field}\")"), WAIT)
        .await;
    let reference = browser
        .eval(&page, true, &format!("document.querySelector(\"{field}\").dataset.ref"))
        .await
        .unwrap();
    browser.click_in_frame(&page, field).await;
    let tapped = format!(
        "document.getElementById('status').textContent === 'tap {}: done'",
        reference.as_str().unwrap()
    );
    browser.until(&page, true, &tapped, WAIT).await;
    browser.click_in_frame(&page, "#text").await;
    browser.type_text(&page, "alice").await;
    browser.click_in_frame(&page, "#type").await;
    let said = "(s => s.startsWith('type') && !s.endsWith('…') && s)(document.getElementById('status').textContent)";
    assert_eq!(browser.until(&page, true, said, WAIT).await, "type: done");
    let typed = browser
        .until(
            &page,
            false,
            "assistant('ui', {operation: 'dump', filter: 'alice'}).then(r => r.structuredContent.totalCount)",
            WAIT,
        )
        .await;
    assert_eq!(typed, 1, "the field holds what the person typed");

    // Take over: the assistant's tap answers that a person holds the device; the panel's own
    // BACK still works; released, the assistant acts again.
    browser.click_in_frame(&page, "#take-over").await;
    browser
        .until(
            &page,
            true,
            "document.getElementById('held').textContent.includes('you hold')",
            WAIT,
        )
        .await;
    let refused = browser
        .eval(
            &page,
            false,
            "assistant('ui', {operation: 'tap', text: 'Network'}).then(r => r.isError && r.content[0].text)",
        )
        .await
        .unwrap();
    assert!(
        refused.as_str().unwrap_or_default().contains("a person has taken over"),
        "{refused}"
    );
    browser.click_in_frame(&page, "#back").await;
    browser
        .until(
            &page,
            true,
            "document.getElementById('status').textContent === 'BACK: done'",
            WAIT,
        )
        .await;
    browser.click_in_frame(&page, "#take-over").await;
    browser
        .until(&page, true, "document.getElementById('held').textContent === ''", WAIT)
        .await;
    let tapped = browser
        .eval(
            &page,
            false,
            "assistant('ui', {operation: 'key', name: 'HOME'}).then(r => !r.isError)",
        )
        .await
        .unwrap();
    assert_eq!(tapped, true);
    server.terminate().await;
}
