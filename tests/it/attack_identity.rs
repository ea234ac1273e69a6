//! An outside attack on element identity and secrets (issue 42, items 2-3), through real parts:
//! MCP calls to a server on the simulator, screens built from what public login forms look like
//! (React Native Elements' one id for every input, anonymous fields, Material's "Toggle password
//! visibility", a RecyclerView's unlabelled checkboxes), `droidmcp replay` of what was exported.
//! A trap that fails names a place a secret reached, or an element tapped that was not the one.
//!
//! The simulator keeps what was typed per screen; a screen reached by a transition shows the
//! field as the phone would (its text written into that screen), since the device carries it.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;

const LOGIN: &str = "org.droidmcp.demo.login";
const ACTIVITY: &str = "org.droidmcp.demo.login/.LoginActivity";
/// The id React Native Elements gives every input.
const RNE: &str = "RNE__Input__text-input";

/// One node of a screen: class, resource-id, content-desc, text, and its flags and box.
#[derive(Clone, Default)]
struct N {
    class: &'static str,
    id: String,
    desc: String,
    text: String,
    hint: Option<String>,
    password: bool,
    clickable: bool,
    checkable: bool,
    checked: bool,
    bounds: [i32; 4],
    children: Vec<N>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
        .replace('\n', "&#10;")
}

impl N {
    fn xml(&self, index: usize) -> String {
        let [l, t, r, b] = self.bounds;
        let edit = self.class.ends_with("EditText");
        let hint = self
            .hint
            .as_ref()
            .map(|h| format!(r#" hint="{}""#, esc(h)))
            .unwrap_or_default();
        let children: String = self.children.iter().enumerate().map(|(i, c)| c.xml(i)).collect();
        format!(
            r#"<node index="{index}" text="{}" resource-id="{}" class="{}" package="{LOGIN}" content-desc="{}" checkable="{}" checked="{}" clickable="{}" enabled="true" focusable="{}" focused="false" scrollable="false" long-clickable="{edit}" password="{}" selected="false" bounds="[{l},{t}][{r},{b}]"{hint}>{children}</node>"#,
            esc(&self.text),
            esc(&self.id),
            self.class,
            esc(&self.desc),
            self.checkable,
            self.checked,
            self.clickable || edit,
            self.clickable || edit || self.checkable,
            self.password,
        )
    }
}

fn field(id: &str, desc: &str, text: &str, password: bool, top: i32) -> N {
    N {
        class: "android.widget.EditText",
        id: id.into(),
        desc: desc.into(),
        text: text.into(),
        password,
        bounds: [84, top, 860, top + 150],
        ..N::default()
    }
}

fn label(text: &str, top: i32) -> N {
    N {
        class: "android.widget.TextView",
        text: text.into(),
        bounds: [84, top, 996, top + 100],
        ..N::default()
    }
}

fn button(class: &'static str, text: &str, desc: &str, bounds: [i32; 4]) -> N {
    N {
        class,
        text: text.into(),
        desc: desc.into(),
        clickable: true,
        bounds,
        ..N::default()
    }
}

/// The eye next to the password field (Material's end icon: a checkable ImageButton).
fn eye(top: i32) -> N {
    N {
        class: "android.widget.ImageButton",
        desc: "Show password".into(),
        clickable: true,
        bounds: [880, top + 20, 1000, top + 130],
        ..N::default()
    }
}

fn log_in() -> N {
    button("android.widget.Button", "LOG IN", "", [84, 1240, 996, 1384])
}

/// `profile_in` on a copy of the built-in profile in a temporary folder.
fn profile_with(login: &[N], more: &[(&str, Vec<N>)], rules: &str) -> Profile {
    profile_in(Profile::new(), login, more, rules)
}

/// A whole window dump of `nodes` under one FrameLayout.
fn screen(nodes: &[N]) -> String {
    let root = N {
        class: "android.widget.FrameLayout",
        bounds: [0, 0, 1080, 2400],
        children: nodes.to_vec(),
        ..N::default()
    };
    format!(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">{}</hierarchy>",
        root.xml(0)
    )
}

/// `profile` (a copy of the built-in one) with the demo app's login screen as `login`, and `more` screens
/// (name, nodes) of the same activity, joined by `rules` (TOML `[[transition]]` / `[[reveal]]`).
fn profile_in(profile: Profile, login: &[N], more: &[(&str, Vec<N>)], rules: &str) -> Profile {
    profile.write("screens/login.xml", screen(login));
    let mut toml = String::new();
    for (name, nodes) in more {
        profile.write(&format!("screens/{name}.xml"), screen(nodes));
        toml.push_str(&format!(
            "\n[[screen]]\nname = \"{name}\"\nxml = \"screens/{name}.xml\"\nactivity = \"{ACTIVITY}\"\n"
        ));
    }
    toml.push_str(rules);
    profile.append("profile.toml", &toml);
    profile
}

/// Calls the tool, expects success, keeps the whole answer (text and structure).
async fn act(client: &McpClient, answers: &mut Vec<Value>, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args.clone()).await;
    answers.push(serde_json::to_value(&result).unwrap());
    assert_ne!(result.is_error, Some(true), "{tool} {args}: {:?}", result.content);
    ok(&result)
}

/// Every place `secret` reached through this client: an answer, each cache entry an answer
/// names (`cache get`), every cache resource, both exports, the server's stderr.
async fn leaks(client: &McpClient, answers: &[Value], log: Option<&Log>, secret: &str) -> Vec<String> {
    let mut places = Vec::new();
    let mut ids = Vec::new();
    for (n, answer) in answers.iter().enumerate() {
        let text = answer.to_string();
        if text.contains(secret) {
            places.push(format!("answer {n}: {}", android_cut(&text, 600)));
        }
        ids_in(answer, &mut ids);
        if let Some(structured) = answer.get("structuredContent") {
            ids_in(structured, &mut ids);
        }
    }
    for format in ["maestro", "js"] {
        let result = call(
            client,
            "flow",
            json!({"operation": "export", "name": format!("trap-{format}"), "format": format}),
        )
        .await;
        let answer = ok(&result);
        let path = answer["path"].as_str().unwrap();
        let file = std::fs::read_to_string(path).unwrap();
        if file.contains(secret) {
            places.push(format!("export {path}:\n{file}"));
        }
        ids_in(&answer, &mut ids);
    }
    ids.sort();
    ids.dedup();
    for id in &ids {
        let got = call(client, "cache", json!({"operation": "get", "id": id})).await;
        let text = serde_json::to_value(&got).unwrap().to_string();
        if text.contains(secret) {
            places.push(format!("cache get {id}: {}", android_cut(&text, 600)));
        }
    }
    let listed = client.list_all_resources().await.expect("resources/list");
    for resource in listed.iter().filter(|r| r.uri.starts_with("droidmcp://cache/")) {
        let read = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(resource.uri.clone()))
            .await
            .expect("resources/read");
        if format!("{read:?}").contains(secret) {
            places.push(format!("resource {}", resource.uri));
        }
    }
    if let Some(log) = log {
        let log = log.lock().unwrap().clone();
        if let Some(at) = log.find(secret) {
            places.push(format!(
                "stderr: …{}…",
                &log[at.saturating_sub(200)..(at + 100).min(log.len())]
            ));
        }
    }
    places
}

fn android_cut(text: &str, max: usize) -> String {
    droidmcp::android::text::cut(text, max)
}

/// The places, one line each (where, then the start of what was found there).
fn listed(places: &[String]) -> String {
    places
        .iter()
        .map(|p| android_cut(&p.replace('\n', " "), 160))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn server(profile: &Profile, home: &Path, workspace: &Path, rust_log: &str) -> (McpClient, Log) {
    mcp_server_logged(
        &["--sim", profile.arg(), "--workspace", workspace.to_str().unwrap()],
        &[("RUST_LOG", rust_log)],
        home,
    )
    .await
}

/// Two anonymous fields (no id, no content-desc, no hint: a hand-built form), the second a
/// password. The password is typed, the eye shows it, then the form scrolls so the first field
/// leaves the screen (the keyboard pushes it up). The revealed field is now the first of its
/// identity on the screen: its "position among same-identity siblings" changed.
#[tokio::test]
async fn a_revealed_anonymous_password_stays_secret_after_the_field_above_scrolls_away() {
    let secret = "Quokka-Sunrise-Plaza";
    let email = "ada@example.org";
    let form = |email_shown: bool, text: &str, password: bool| {
        let mut nodes = vec![label("Sign in", 300)];
        if email_shown {
            nodes.push(field("", "", email, false, 590));
        }
        nodes.push(field("", "", text, password, 870));
        nodes.push(eye(870));
        nodes.push(log_in());
        nodes
    };
    let profile = profile_with(
        &form(true, "", true),
        &[
            ("login_shown", form(true, secret, false)),
            ("login_shown_scrolled", form(false, secret, false)),
        ],
        "\n[[transition]]\nfrom = \"login\"\ntap = \"desc=Show password\"\nto = \"login_shown\"\n\
         [[transition]]\nfrom = \"login_shown\"\nswipe = \"up\"\nto = \"login_shown_scrolled\"\n",
    );
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (client, log) = server(&profile, home.path(), ws.path(), "droidmcp=debug").await;
    let mut answers = Vec::new();
    act(
        &client,
        &mut answers,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "x": 400, "y": 945}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "type", "text": secret, "observe": true}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "swipe", "direction": "up"}),
    )
    .await;
    act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let places = leaks(&client, &answers, Some(&log), secret).await;
    client.cancel().await.unwrap();
    assert!(
        places.is_empty(),
        "the password reached {} places:\n{}",
        places.len(),
        listed(&places)
    );
}

/// A React Native form (one id for both inputs, told apart by content-desc). The password is
/// typed and revealed; then LOG IN fails and the app puts the error into the field's
/// content-desc ("input-password, Wrong password"), as an accessibility label that says the
/// error does. The field is the same field; its text is still the password.
#[tokio::test]
async fn a_revealed_password_stays_secret_when_its_content_desc_changes() {
    let secret = "Wombat-Lantern-Quiet";
    let form = |text: &str, password: bool, desc: &str| {
        vec![
            label("Sign in", 300),
            field(RNE, "input-email", "ada@example.org", false, 590),
            field(RNE, desc, text, password, 870),
            eye(870),
            log_in(),
        ]
    };
    let profile = profile_with(
        &form("", true, "input-password"),
        &[
            ("login_shown", form(secret, false, "input-password")),
            (
                "login_shown_error",
                form(secret, false, "input-password, Wrong password"),
            ),
        ],
        "\n[[transition]]\nfrom = \"login\"\ntap = \"desc=Show password\"\nto = \"login_shown\"\n\
         [[transition]]\nfrom = \"login_shown\"\ntap = \"text=LOG IN\"\nto = \"login_shown_error\"\n",
    );
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (client, log) = server(&profile, home.path(), ws.path(), "droidmcp=debug").await;
    let mut answers = Vec::new();
    act(
        &client,
        &mut answers,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "contentDesc": "input-password", "match": "exact"}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "type", "text": secret, "observe": true}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "text": "LOG IN", "match": "exact", "observe": true}),
    )
    .await;
    act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let places = leaks(&client, &answers, Some(&log), secret).await;
    client.cancel().await.unwrap();
    assert!(
        places.is_empty(),
        "the password reached {} places:\n{}",
        places.len(),
        listed(&places)
    );
}

/// The app remembers "show password": its field (id `password`, a "Password" label above it) is
/// revealed from the first frame, before droidmcp has read the screen. The field is tapped and
/// typed into as a model does from a screenshot (by point).
#[tokio::test]
async fn a_password_field_revealed_before_the_first_reading_keeps_what_is_typed_secret() {
    let secret = "Pangolin-Velvet-Harbor";
    let profile = login_with_eye();
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (client, log) = server(&profile, home.path(), ws.path(), "droidmcp=debug").await;
    let mut answers = Vec::new();
    act(
        &client,
        &mut answers,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    // The eye, then the field, by point.
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "x": 930, "y": 945}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "x": 400, "y": 945}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "type", "text": secret}),
    )
    .await;
    act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let places = leaks(&client, &answers, Some(&log), secret).await;
    client.cancel().await.unwrap();
    assert!(
        places.is_empty(),
        "the password reached {} places:\n{}",
        places.len(),
        listed(&places)
    );
}

/// Two principals (two HTTP tokens) on one device. Alice types her password and reveals it with
/// the eye; Bob, who never saw the field as a password, reads the screen, and asks for every
/// cache id Alice's answers named.
#[tokio::test]
async fn a_second_principal_never_reads_the_first_ones_revealed_password() {
    use rmcp::ClientServiceExt;
    const ALICE: &str = "alice-0123456789abcdef";
    const BOB: &str = "bob-0123456789abcdef0";
    let secret = "Narwhal-Copper-Meadow";
    let profile = login_with_eye();
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let http = HttpServer::start(
        &["--sim", profile.arg(), "--token", &a, "--token", &b],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(http.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(http.transport(Some(BOB)), modern()).await.unwrap();
    let mut theirs = Vec::new();
    act_http(
        &alice,
        &mut theirs,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    act_http(
        &alice,
        &mut theirs,
        "ui",
        json!({"operation": "tap", "resourceId": "org.droidmcp.demo.login:id/password"}),
    )
    .await;
    act_http(
        &alice,
        &mut theirs,
        "ui",
        json!({"operation": "type", "text": secret, "observe": true}),
    )
    .await;
    act_http(
        &alice,
        &mut theirs,
        "ui",
        json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
    )
    .await;
    act_http(&alice, &mut theirs, "ui", json!({"operation": "dump"})).await;
    let alice_saw = theirs.iter().any(|a| a.to_string().contains(secret));

    let mut places = Vec::new();
    let mut ids = Vec::new();
    for answer in &theirs {
        ids_in(answer, &mut ids);
    }
    for id in &ids {
        let got = serde_json::to_value(call(&bob, "cache", json!({"operation": "get", "id": id})).await).unwrap();
        if got.to_string().contains(secret) {
            places.push(format!("Bob's cache get {id}"));
        }
    }
    for (tool, args) in [
        ("ui", json!({"operation": "dump"})),
        (
            "ui",
            json!({"operation": "find", "resourceId": "org.droidmcp.demo.login:id/password", "match": "exact"}),
        ),
        ("flow", json!({"operation": "export", "name": "bob"})),
    ] {
        let got = serde_json::to_value(call(&bob, tool, args.clone()).await).unwrap();
        if got.to_string().contains(secret) {
            places.push(format!("Bob's {tool} {args}: {}", android_cut(&got.to_string(), 600)));
        }
    }
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    http.terminate().await;
    assert!(!alice_saw, "Alice's own answers show her password");
    assert!(
        places.is_empty(),
        "Alice's password reached {} places:\n{}",
        places.len(),
        listed(&places)
    );
}

async fn act_http<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    answers: &mut Vec<Value>,
    tool: &str,
    args: Value,
) -> Value {
    let result = call(client, tool, args.clone()).await;
    answers.push(serde_json::to_value(&result).unwrap());
    ok(&result)
}

/// A row of a list: its title, and an unlabelled CheckBox with the id every row shares (a
/// RecyclerView's rows all come from one layout).
fn row(title: &str, top: i32) -> Vec<N> {
    vec![
        N {
            class: "android.widget.TextView",
            id: format!("{LOGIN}:id/title"),
            text: title.into(),
            bounds: [84, top + 40, 700, top + 160],
            ..N::default()
        },
        N {
            class: "android.widget.CheckBox",
            id: format!("{LOGIN}:id/select"),
            checkable: true,
            clickable: true,
            bounds: [880, top + 40, 1000, top + 160],
            ..N::default()
        },
    ]
}

fn rows(titles: &[&str]) -> Vec<N> {
    titles
        .iter()
        .enumerate()
        .flat_map(|(i, t)| row(t, 400 + 200 * i as i32))
        .collect()
}

/// The row whose title sits level with the element at `at`, on a reading's elements.
fn row_at(elements: &Value, y: i64) -> String {
    elements
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "TextView" && (e["at"][1].as_i64().unwrap() - y).abs() < 10)
        .map(|e| e["label"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// A list of four rows, each with an unlabelled checkbox. The model takes the ref of Row B's
/// checkbox; then the list refreshes (pull down) and Row A is gone, so Row C's checkbox sits
/// where Row B's was: same class, same id, same (empty) label, same box. A tap by the ref must
/// check Row B's, or be refused: never Row C's.
#[tokio::test]
async fn a_ref_to_a_rows_checkbox_never_taps_the_look_alike_that_took_its_place() {
    let profile = profile_with(
        &rows(&["Row A", "Row B", "Row C", "Row D"]),
        &[("login_refreshed", rows(&["Row B", "Row C", "Row D"]))],
        "\n[[transition]]\nfrom = \"login\"\nswipe = \"down\"\nto = \"login_refreshed\"\n",
    );
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (client, _log) = server(&profile, home.path(), ws.path(), "warn").await;
    let mut answers = Vec::new();
    act(
        &client,
        &mut answers,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    let dump = act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let boxes: Vec<&Value> = dump["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "CheckBox")
        .collect();
    let b = boxes
        .iter()
        .find(|e| row_at(&dump["elements"], e["at"][1].as_i64().unwrap()) == "Row B")
        .expect("Row B's checkbox");
    let reference = b["ref"].as_str().unwrap().to_string();
    println!("Row B's checkbox: {b}");
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "swipe", "direction": "down"}),
    )
    .await;
    let tapped = call(&client, "ui", json!({"operation": "tap", "ref": reference})).await;
    let after = act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let checked: Vec<String> = after["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "CheckBox" && e["flags"].to_string().contains("checked"))
        .map(|e| row_at(&after["elements"], e["at"][1].as_i64().unwrap()))
        .collect();
    println!("tap {reference}: error {:?}; checked now: {checked:?}", tapped.is_error);
    client.cancel().await.unwrap();
    assert!(
        tapped.is_error == Some(true) || checked == ["Row B"],
        "the tap by Row B's ref ({reference}) checked {checked:?}: {:?}",
        tapped.content
    );
}

/// A Settings-style row: a clickable row holding a title and a summary.
fn setting(title: &str, summary: &str, top: i32) -> N {
    N {
        class: "android.widget.LinearLayout",
        clickable: true,
        bounds: [0, top, 1080, top + 220],
        children: vec![label(title, top + 20), label(summary, top + 120)],
        ..N::default()
    }
}

/// Look-alikes at one place: the ref of a row is taken, then the screen shows another row with
/// the same title and another summary there, or the same row cut differently past the 60
/// characters a listing shows. Each tap by the old ref is refused, and the device is not
/// touched (the screen stays). Generated from a table of (before, after) pairs.
#[tokio::test]
async fn a_ref_is_refused_when_a_look_alike_row_stands_in_its_place() {
    let long = "x".repeat(70);
    let pairs: Vec<((String, String), (String, String))> = vec![
        (
            ("Storage".into(), "45% used".into()),
            ("Storage".into(), "62% used".into()),
        ),
        (
            ("Delete".into(), "older than one hour".into()),
            ("Delete".into(), "older than one year".into()),
        ),
        (
            ("Wi-Fi".into(), format!("{long}A")),
            ("Wi-Fi".into(), format!("{long}B")),
        ),
        (("Sync".into(), "On".into()), ("Sync".into(), "Off".into())),
        (("Backup".into(), "".into()), ("Backup ".into(), "·".into())),
    ];
    let mut refused = 0;
    for (n, ((t1, s1), (t2, s2))) in pairs.iter().enumerate() {
        let profile = profile_with(
            &[setting(t1, s1, 600), setting("Other", "stays", 1000)],
            &[
                (
                    "login_after",
                    vec![setting(t2, s2, 600), setting("Other", "stays", 1000)],
                ),
                ("login_tapped", vec![label("the look-alike was opened", 600)]),
            ],
            &format!(
                "\n[[transition]]\nfrom = \"login\"\nswipe = \"down\"\nto = \"login_after\"\n\
                 [[transition]]\nfrom = \"login_after\"\ntap = \"text={t2}\"\nto = \"login_tapped\"\n"
            ),
        );
        let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (client, _log) = server(&profile, home.path(), ws.path(), "warn").await;
        let mut answers = Vec::new();
        act(
            &client,
            &mut answers,
            "adb-app",
            json!({"operation": "launch", "package": LOGIN}),
        )
        .await;
        let dump = act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
        let first = &dump["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["label"].as_str().unwrap_or_default().starts_with(t1.trim()))
            .expect("the row")["ref"];
        act(
            &client,
            &mut answers,
            "ui",
            json!({"operation": "swipe", "direction": "down"}),
        )
        .await;
        let tapped = call(&client, "ui", json!({"operation": "tap", "ref": first})).await;
        let after = act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
        client.cancel().await.unwrap();
        let opened = after.to_string().contains("the look-alike was opened");
        println!(
            "case {n}: {t1:?}/{s1:?} → {t2:?}/{s2:?}: error {:?}, opened {opened}",
            tapped.is_error
        );
        assert!(
            tapped.is_error == Some(true) && !opened,
            "case {n}: the ref of {t1:?}/{s1:?} tapped {t2:?}/{s2:?}: {:?}",
            tapped.content
        );
        refused += 1;
    }
    println!("{refused} look-alike pairs, each refused");
}

/// The demo's own password field (flagged a password all along, never revealed), typed into by
/// resourceId, with the server's log at `RUST_LOG=debug`: what an operator sets to see why a
/// call failed. The log is stderr, and stderr is one of the places a password never reaches.
#[tokio::test]
async fn a_password_never_reaches_the_servers_stderr_at_debug() {
    let secret = "Axolotl-Granite-Fjord";
    let profile = Profile::new();
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (client, log) = server(&profile, home.path(), ws.path(), "debug").await;
    let mut answers = Vec::new();
    act(
        &client,
        &mut answers,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "tap", "resourceId": "org.droidmcp.demo.login:id/password"}),
    )
    .await;
    act(
        &client,
        &mut answers,
        "ui",
        json!({"operation": "type", "text": secret}),
    )
    .await;
    act(&client, &mut answers, "ui", json!({"operation": "dump"})).await;
    let places = leaks(&client, &answers, Some(&log), secret).await;
    client.cancel().await.unwrap();
    assert!(
        places.is_empty(),
        "the password reached {} places:\n{}",
        places.len(),
        listed(&places)
    );
}

/// A React Native form: the email and the password share one id and are told apart by
/// content-desc; an eye shows the password.
fn rn_profile(profile: Profile) -> Profile {
    let form = vec![
        label("Sign in", 300),
        field(RNE, "Email input", "", false, 590),
        field(RNE, "Password input", "", true, 870),
        eye(870),
        log_in(),
    ];
    profile_in(
        profile,
        &form,
        &[],
        "\n[[reveal]]\nscreen = \"login\"\ntoggle = \"desc=Show password\"\nfield = \"desc=Password input\"\n",
    )
}

/// The `${NAME}`s a Maestro flow types (not an escaped `\${`), or a script's `env("NAME")`s.
fn names_in(path: &str, text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let (open, close) = if path.ends_with(".js") {
        ("env(\"", "\")")
    } else {
        ("${", "}")
    };
    let mut from = 0;
    while let Some(at) = text[from..].find(open).map(|a| a + from) {
        from = at + open.len();
        if !path.ends_with(".js") && text[..at].ends_with('\\') {
            continue;
        }
        let name: String = text[from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && text[from + name.len()..].starts_with(close) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Generated (email, password) pairs with what YAML, JavaScript, a shell and Maestro's templates
/// treat specially (quotes, backslashes, `${…}`, `#`, `: `, `&`, `*`, `|`), the password equal
/// to the email, or to a label on the screen, are typed into the React Native form, exported in
/// both formats and replayed with `droidmcp replay --env` on a fresh simulator: the export holds
/// no password and one placeholder, and each value lands in its own field, byte for byte.
#[tokio::test]
async fn generated_hostile_values_are_replayed_each_into_its_own_field() {
    use proptest::strategy::{Strategy, ValueTree};
    let text = "[A-Za-z0-9'\"\\\\${}#:&*|!?=@-]{1,4}( [A-Za-z0-9'\"\\\\${}#:&*|!?=@-]{1,5}){0,3}";
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut cases: Vec<(String, String)> = vec![
        ("${PASSWORD_INPUT}".into(), "x${EMAIL}y".into()),
        ("ada@example.org".into(), "ada@example.org".into()),
        ("it's \"quoted\" \\ ok".into(), "LOG IN".into()),
        ("# not a comment".into(), "a: b - c".into()),
    ];
    while cases.len() < 10 {
        let email = text.new_tree(&mut runner).unwrap().current();
        let secret = text.new_tree(&mut runner).unwrap().current();
        if !email.contains("%s") && !secret.contains("%s") {
            cases.push((email, format!("Zq{secret}")));
        }
    }
    let folder = tempfile::tempdir().unwrap();
    rn_profile(Profile::at(folder.path()));
    let Some(adb) = AdbServer::start() else { return };
    let (mut replays, mut failures) = (0, Vec::new());
    for (n, (email, secret)) in cases.iter().enumerate() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let sim = SimProcess::start_profile(folder.path(), &[]);
        let target = format!("tcp:{}", sim.addr);
        let client = mcp_server(
            &["--adb", &target, "--workspace", ws.path().to_str().unwrap()],
            &[],
            home.path(),
        )
        .await;
        let mut answers = Vec::new();
        act(
            &client,
            &mut answers,
            "adb-app",
            json!({"operation": "launch", "package": LOGIN}),
        )
        .await;
        act(
            &client,
            &mut answers,
            "ui",
            json!({"operation": "tap", "contentDesc": "Email input", "match": "exact"}),
        )
        .await;
        act(&client, &mut answers, "ui", json!({"operation": "type", "text": email})).await;
        act(
            &client,
            &mut answers,
            "ui",
            json!({"operation": "tap", "contentDesc": "Password input", "match": "exact"}),
        )
        .await;
        act(
            &client,
            &mut answers,
            "ui",
            json!({"operation": "type", "text": secret, "observe": true}),
        )
        .await;
        let mut exports = Vec::new();
        for format in ["maestro", "js"] {
            let answer = act(
                &client,
                &mut answers,
                "flow",
                json!({"operation": "export", "name": format!("case{n}"), "format": format}),
            )
            .await;
            let path = answer["path"].as_str().unwrap().to_string();
            exports.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
        client.cancel().await.unwrap();
        drop(sim);
        for (path, text) in &exports {
            let names = names_in(path, text);
            if secret != email && text.contains(secret.as_str()) {
                failures.push(format!("case {n}: {path} holds the password {secret:?}"));
            }
            if names.len() != 1 {
                failures.push(format!(
                    "case {n}: {path} types {names:?}, not one placeholder:\n{text}"
                ));
                continue;
            }
            let sim = SimProcess::start_profile(folder.path(), &[]);
            let target = format!("tcp:{}", sim.addr);
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
                .arg("replay")
                .arg(path)
                .args(["--adb", &target, "--env", &format!("{}={secret}", names[0])])
                .env("HOME", home.path())
                .output()
                .expect("droidmcp replay runs");
            replays += 1;
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if !out.status.success() {
                failures.push(format!("case {n}: replay of {path} failed: {said}\n{text}"));
                continue;
            }
            if secret != email && said.contains(secret.as_str()) {
                failures.push(format!("case {n}: the replay's report holds the password"));
            }
            // The eye first, then what each field shows, as the device says it.
            let serial = adb.connect(&sim);
            adb.shell(&serial, &["input", "tap", "940", "945"]);
            let got_email = adb.text_of(&serial, "Email input");
            let got_secret = adb.text_of(&serial, "Password input");
            adb.run(&["disconnect", &serial]);
            if got_email != *email || got_secret != *secret {
                failures.push(format!(
                    "case {n}: {path} replayed email {got_email:?} (typed {email:?}), password {got_secret:?} (typed {secret:?})"
                ));
            }
        }
    }
    println!(
        "{} generated (email, password) pairs, {replays} replays, {} failures",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
