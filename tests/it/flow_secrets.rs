//! Secrets never written: what is typed into a password field (decided when it is typed, from the
//! field that has focus then) reaches neither exported flow nor any cache entry; exports are
//! files of mode 0600 in a folder private to the principal (0700), never written through a
//! symbolic link; two tokens export to folders of their own. Driven over MCP on the simulator's
//! login demo; the generated test taps by ref, text, resourceId and point, and types.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rmcp::ClientServiceExt;
use serde_json::{Value, json};

use crate::common::*;

const LOGIN: &str = "org.droidmcp.demo.login";
const USERNAME: &str = "org.droidmcp.demo.login:id/username";
const PASSWORD: &str = "org.droidmcp.demo.login:id/password";

/// The whole text of every cache entry the client's principal holds (resources/read of each
/// `droidmcp://cache/…` resource), with its uri.
async fn cached<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
) -> Vec<(String, String)> {
    let listed = client.list_all_resources().await.expect("resources/list");
    let mut entries = Vec::new();
    for resource in listed.iter().filter(|r| r.uri.starts_with("droidmcp://cache/")) {
        let read = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(resource.uri.clone()))
            .await
            .expect("resources/read");
        for content in read.contents {
            if let rmcp::model::ResourceContents::TextResourceContents { text, .. } = content {
                entries.push((resource.uri.clone(), text));
            }
        }
    }
    entries
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// Exports the recording in both formats under `name`: each file's path and text, and each
/// answer (which holds the cacheId of the file).
async fn export_both<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    name: &str,
) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for format in ["js", "maestro"] {
        let answer = ok(&call(
            client,
            "flow",
            json!({"operation": "export", "name": name, "format": format}),
        )
        .await);
        let path = answer["path"].as_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        out.push((path, text, answer));
    }
    out
}

/// The story of the issue: a tap on the password field by resourceId, then `type {text}` with no
/// ref. The decision was made from the screen remembered before the tap, so the secret went in
/// clear into both exports (mode 0644, in a shared temp folder).
#[tokio::test]
async fn a_password_typed_after_a_tap_by_resource_id_is_in_no_export_and_no_cache_entry() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let secret = "Hunter2-secret!";

    ok(&call(&client, "adb-app", json!({"operation": "launch", "package": LOGIN})).await);
    ok(&call(&client, "ui", json!({"operation": "tap", "resourceId": USERNAME})).await);
    ok(&call(&client, "ui", json!({"operation": "type", "text": "ada@example.com"})).await);
    ok(&call(&client, "ui", json!({"operation": "tap", "resourceId": PASSWORD})).await);
    let typed = call(
        &client,
        "ui",
        json!({"operation": "type", "text": secret, "observe": true}),
    )
    .await;
    assert!(!format!("{typed:?}").contains(secret), "the answer: {typed:?}");
    ok(&typed);
    ok(&call(&client, "ui", json!({"operation": "dump"})).await);

    let exports = export_both(&client, "login").await;
    for (path, text, answer) in &exports {
        println!("{path}: {} chars\n{text}", text.len());
        assert!(!text.contains(secret), "{path} holds the password:\n{text}");
        // What was typed into the user name is kept, the password is a placeholder.
        assert!(text.contains("ada@example.com"), "{text}");
        assert!(
            text.contains("${PASSWORD}") || text.contains(r#"env("PASSWORD")"#),
            "{text}"
        );
        assert!(!answer.to_string().contains(secret), "{answer}");
        // Written 0600, in the principal's folder, made 0700.
        let path = Path::new(path);
        assert_eq!(path.parent().unwrap(), workspace.path().join("flows/local"), "{path:?}");
        assert_eq!(mode(path), 0o600, "{path:?}");
        assert_eq!(mode(path.parent().unwrap()), 0o700, "{path:?}");
    }
    let entries = cached(&client).await;
    assert!(
        entries.len() >= 3,
        "the dump and both exports are cached: {}",
        entries.len()
    );
    for (uri, text) in &entries {
        assert!(!text.contains(secret), "{uri} holds the password: {text}");
    }
    // The export's own cache entry is the file.
    for (_, text, answer) in &exports {
        let id = answer["cacheId"].as_str().unwrap();
        let entry = entries
            .iter()
            .find(|(uri, _)| uri.ends_with(id))
            .expect("the export's entry");
        assert_eq!(&entry.1, text);
    }
    client.cancel().await.unwrap();
}

/// A symbolic link where the export would go is refused, and what it points at is untouched;
/// a link in place of the principal's folder is refused too.
#[tokio::test]
async fn an_export_never_writes_through_a_symbolic_link() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    ok(&call(&client, "adb-app", json!({"operation": "launch", "package": LOGIN})).await);
    // The first export makes the folder.
    let first = ok(&call(&client, "flow", json!({"operation": "export", "name": "first"})).await);
    let folder = Path::new(first["path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();

    let victim = elsewhere.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, folder.join("trap.js")).unwrap();
    let refused = err(&call(&client, "flow", json!({"operation": "export", "name": "trap"})).await);
    println!("{refused}");
    assert!(refused.contains("symbolic link"), "{refused}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(
        std::fs::symlink_metadata(folder.join("trap.js"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // The principal's folder itself replaced by a link to a folder elsewhere.
    std::fs::rename(&folder, workspace.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), &folder).unwrap();
    let refused = err(&call(&client, "flow", json!({"operation": "export", "name": "second"})).await);
    println!("{refused}");
    assert!(refused.contains("symbolic link"), "{refused}");
    assert!(!elsewhere.path().join("second.js").exists());
    client.cancel().await.unwrap();
}

/// Two tokens export under the same (default) name: each file is in its principal's folder,
/// holds only that principal's steps, and neither export touches the other's. Without
/// `--workspace` the folders are under the system's temp folder (TMPDIR here), in a folder
/// private to the user.
#[tokio::test]
async fn two_tokens_export_flows_to_folders_of_their_own() {
    const ALICE: &str = "alice-0123456789abcdef";
    const BOB: &str = "bob-0123456789abcdef0";
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--sim", "--token", &a, "--token", &b],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();

    ok(&call(
        &alice,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    let theirs = ok(&call(&alice, "flow", json!({"operation": "export"})).await);
    let alice_path = Path::new(theirs["path"].as_str().unwrap()).to_path_buf();
    let alice_text = std::fs::read_to_string(&alice_path).unwrap();

    ok(&call(&bob, "adb-app", json!({"operation": "launch", "package": LOGIN})).await);
    let mine = ok(&call(&bob, "flow", json!({"operation": "export"})).await);
    let bob_path = Path::new(mine["path"].as_str().unwrap()).to_path_buf();
    let bob_text = std::fs::read_to_string(&bob_path).unwrap();
    println!("alice: {}\nbob: {}", alice_path.display(), bob_path.display());

    assert_ne!(alice_path.parent(), bob_path.parent(), "one folder per principal");
    assert_eq!(alice_path.file_name(), bob_path.file_name(), "the same default name");
    assert!(alice_path.starts_with(tmp.path()) && bob_path.starts_with(tmp.path()));
    assert!(alice_text.contains("launch com.android.settings") && !alice_text.contains(LOGIN));
    assert!(bob_text.contains(LOGIN) && !bob_text.contains("launch com.android.settings"));
    // Bob's export left Alice's file as it was.
    assert_eq!(std::fs::read_to_string(&alice_path).unwrap(), alice_text);
    for path in [&alice_path, &bob_path] {
        assert_eq!(mode(path), 0o600, "{path:?}");
        // The principal's folder and the one above it are private to the user.
        assert_eq!(mode(path.parent().unwrap()), 0o700, "{path:?}");
        assert_eq!(mode(path.parent().unwrap().parent().unwrap()), 0o700, "{path:?}");
    }
    // Neither reads the other's export through its cacheId.
    let asked = err(&call(&bob, "cache", json!({"operation": "get", "id": theirs["cacheId"]})).await);
    assert!(!asked.contains("launch com.android.settings"), "{asked}");
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.terminate().await;
}

/// One generated action on the login demo.
#[derive(Debug, Clone)]
enum Op {
    /// A tap on a field (true: the password) by resourceId, by ref, or by point.
    TapId(bool),
    TapRef(bool),
    TapPoint(bool),
    /// A tap on a label by its text (focus stays where it is).
    TapText(&'static str),
    /// A tap on the eye icon that shows or hides the password (focus stays where it is).
    Reveal,
    /// Typing (tapping the field of a ref first, when given), observed or not.
    Type {
        into_ref: Option<bool>,
        observe: bool,
        text: String,
    },
    Dump,
}

fn ops() -> impl proptest::strategy::Strategy<Value = Vec<Op>> {
    use proptest::prelude::*;
    let op = prop_oneof![
        1 => any::<bool>().prop_map(Op::TapId),
        1 => any::<bool>().prop_map(Op::TapRef),
        1 => any::<bool>().prop_map(Op::TapPoint),
        1 => prop_oneof![Just("Sign in"), Just("User name"), Just("Remember me")].prop_map(Op::TapText),
        // Typing weighs as much as tapping: most sequences type several times.
        4 => (
            proptest::option::of(any::<bool>()),
            any::<bool>(),
            // Twelve characters at least: a shorter one can stand in an export or a cacheId by
            // chance ("text", "01M8"), which would fail the check with nothing leaked.
            "[A-Za-z0-9!#@_+=.,-]{12,16}"
        )
            .prop_map(|(into_ref, observe, text)| Op::Type { into_ref, observe, text }),
        1 => Just(Op::Dump),
        1 => Just(Op::Reveal),
    ];
    proptest::collection::vec(op, 1..10)
}

/// Generated sequences of taps (by ref, text, resourceId, point), types and the eye icon that
/// reveals the password, on the login demo: whatever was typed while the password field had
/// focus (the model: the last field tapped) is in neither export nor in any cache entry nor in
/// any answer, revealed or not; what was typed into the user name is in the exports, and so is
/// the password's placeholder.
#[tokio::test]
async fn generated_taps_and_types_never_write_a_password() {
    use proptest::strategy::{Strategy, ValueTree};
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let profile = login_with_eye();
    let client = mcp_server(&["--sim", profile.arg(), "--workspace", ws], &[], home.path()).await;
    let mut runner = proptest::test_runner::TestRunner::default();
    let cases = 32;
    let mut secrets: Vec<String> = Vec::new();
    let (mut typed_secrets, mut typed_public, mut reveals) = (0, 0, 0);
    for case in 0..cases {
        let sequence = ops().new_tree(&mut runner).unwrap().current();
        let mut said: Vec<String> = Vec::new();
        ok(&call(&client, "flow", json!({"operation": "reset"})).await);
        ok(&call(&client, "adb-app", json!({"operation": "launch", "package": LOGIN})).await);
        // A known start: the user name has focus.
        ok(&call(&client, "ui", json!({"operation": "tap", "resourceId": USERNAME})).await);
        let mut password_focused = false;
        let mut public: Vec<String> = Vec::new();
        for (n, op) in sequence.iter().enumerate() {
            let field = |password: bool| if password { PASSWORD } else { USERNAME };
            let reference = |password: bool| {
                let client = &client;
                async move {
                    let found = ok(&call(
                        client,
                        "ui",
                        json!({"operation": "find", "resourceId": field(password), "match": "exact"}),
                    )
                    .await);
                    found["matches"][0]["ref"].as_str().unwrap().to_string()
                }
            };
            let result = match op {
                Op::TapId(p) => {
                    password_focused = *p;
                    call(
                        &client,
                        "ui",
                        json!({"operation": "tap", "resourceId": field(*p), "match": "exact"}),
                    )
                    .await
                }
                Op::TapRef(p) => {
                    password_focused = *p;
                    let r = reference(*p).await;
                    call(&client, "ui", json!({"operation": "tap", "ref": r})).await
                }
                Op::TapPoint(p) => {
                    password_focused = *p;
                    let y = if *p { 945 } else { 665 };
                    call(&client, "ui", json!({"operation": "tap", "x": 540, "y": y})).await
                }
                Op::TapText(label) => {
                    call(
                        &client,
                        "ui",
                        json!({"operation": "tap", "text": label, "match": "exact"}),
                    )
                    .await
                }
                Op::Type {
                    into_ref,
                    observe,
                    text,
                } => {
                    let mut args = json!({"operation": "type", "observe": observe});
                    if let Some(p) = into_ref {
                        password_focused = *p;
                        args["ref"] = json!(reference(*p).await);
                    }
                    // Unique, so no other text can contain it by chance.
                    let text = format!("Qz{case}o{n}{text}");
                    args["text"] = json!(text);
                    if password_focused {
                        secrets.push(text);
                        typed_secrets += 1;
                    } else {
                        public.push(text);
                        typed_public += 1;
                    }
                    call(&client, "ui", args).await
                }
                Op::Dump => call(&client, "ui", json!({"operation": "dump"})).await,
                Op::Reveal => {
                    reveals += 1;
                    call(
                        &client,
                        "ui",
                        json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
                    )
                    .await
                }
            };
            let answer = ok(&result).to_string();
            said.push(format!("{op:?}"));
            for secret in &secrets {
                assert!(
                    !answer.contains(secret),
                    "case {case} {said:?}: the answer holds {secret:?}: {answer}"
                );
            }
        }
        let exports = export_both(&client, &format!("case{case}")).await;
        let entries = cached(&client).await;
        for secret in &secrets {
            for (path, text, answer) in &exports {
                assert!(
                    !text.contains(secret),
                    "case {case} {said:?}: {path} holds {secret:?}:\n{text}"
                );
                assert!(!answer.to_string().contains(secret), "case {case}: {answer}");
            }
            for (uri, text) in &entries {
                assert!(!text.contains(secret), "case {case} {said:?}: {uri} holds {secret:?}");
            }
        }
        for (path, text, _) in &exports {
            for typed in &public {
                assert!(
                    text.contains(typed.as_str()),
                    "case {case} {said:?}: {path} lost {typed:?}:\n{text}"
                );
            }
            let typed_here = sequence.iter().any(|op| matches!(op, Op::Type { .. }));
            let secret_here = secrets.iter().any(|s| s.starts_with(&format!("Qz{case}o")));
            if typed_here && secret_here {
                assert!(
                    text.contains("${PASSWORD}") || text.contains(r#"env("PASSWORD")"#),
                    "case {case} {said:?}: {path} has no placeholder:\n{text}"
                );
            }
            assert_eq!(mode(Path::new(path)), 0o600);
        }
    }
    eprintln!(
        "{cases} cases: {typed_secrets} passwords and {typed_public} other texts typed, {reveals} taps on the eye icon, none of the passwords written"
    );
    assert!(
        typed_secrets > 0 && typed_public > 0 && reveals > 0,
        "the cases typed both kinds and revealed"
    );
    client.cancel().await.unwrap();
}

/// The id React Native Elements gives every input of a form.
const SHARED_ID: &str = "RNE__Input__text-input";

/// A React Native login form (as the demo app's login screen): two EditTexts with one
/// resource-id, told apart only by their content-descs, the second a password field; the first
/// is a password field too when `first_secret` (a PIN). An eye icon ("Show password") reveals the
/// password (the profile's `[[reveal]]`).
fn shared_id_form(first: &str, first_secret: bool) -> String {
    let field = |index: usize, desc: &str, password: bool, top: i32| {
        format!(
            r#"<node index="{index}" text="" resource-id="{SHARED_ID}" class="android.widget.EditText" package="{LOGIN}" content-desc="{desc}" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="{password}" selected="false" bounds="[84,{top}][900,{}]" />"#,
            top + 150
        )
    };
    format!(
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="{LOGIN}" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]"><node index="0" text="Sign in" resource-id="" class="android.widget.TextView" package="{LOGIN}" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[84,300][996,420]" />{}{}<node index="3" text="" resource-id="" class="android.widget.ImageView" package="{LOGIN}" content-desc="Show password" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[900,870][1020,1020]" /><node index="4" text="LOG IN" resource-id="RNE__Button" class="android.widget.Button" package="{LOGIN}" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[84,1240][996,1384]" /></node></hierarchy>"#,
        field(1, first, first_secret, 590),
        field(2, "Password input", true, 870),
    )
}

/// The built-in profile with the demo's login screen replaced by `shared_id_form`.
fn shared_id_profile(folder: &Path, first: &str, first_secret: bool) {
    let profile = Profile::at(folder);
    profile.write("screens/login.xml", shared_id_form(first, first_secret));
    profile.append(
        "profile.toml",
        "\n[[reveal]]\nscreen = \"login\"\ntoggle = \"desc=Show password\"\nfield = \"desc=Password input\"\n",
    );
}

/// Each `${NAME}` of an exported Maestro flow, or `env("NAME")` of a script, in order.
fn placeholders(path: &str, text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (open, close) = if path.ends_with(".js") {
        ("env(\"", "\")")
    } else {
        ("${", "}")
    };
    {
        let mut rest = text;
        while let Some(at) = rest.find(open) {
            rest = &rest[at + open.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].starts_with(close) && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Issue 42: on a React Native form whose two fields share one resource-id, the password is
/// typed, revealed by its eye icon, then the other field is typed. Each field is recorded by
/// its own content-desc (not its point), a secret field as a `${NAME}` of its own (the shared id
/// made both one placeholder, so a replay typed the password into the email field), the revealed
/// password in no export, answer, cache entry or log; `droidmcp replay` of each export with the
/// values in `--env` types each value into its own field, as the simulator shows afterwards.
/// Two forms: an email and a password, and a PIN and a password (two secrets, two values).
#[tokio::test]
async fn fields_sharing_an_id_are_recorded_and_replayed_each_with_its_own_value() {
    let password = "Hunter2-secret!";
    let Some(adb) = AdbServer::start() else { return };
    for (first, first_secret, first_value) in [
        ("Email input", false, "ada.lovelace@example.org"),
        ("PIN input", true, "73915604"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let folder = dir.path().join("profile");
        shared_id_profile(&folder, first, first_secret);
        let secrets: Vec<&str> = if first_secret {
            vec![password, first_value]
        } else {
            vec![password]
        };

        let sim = SimProcess::start_profile(&folder, &[]);
        let target = format!("tcp:{}", sim.addr);
        let ws = workspace.path().to_str().unwrap();
        let (client, log) = mcp_server_logged(
            &["--adb", &target, "--workspace", ws],
            &[("RUST_LOG", "droidmcp=debug")],
            home.path(),
        )
        .await;
        let mut answers = Vec::new();
        for (tool, args) in [
            ("adb-app", json!({"operation": "launch", "package": LOGIN})),
            (
                "ui",
                json!({"operation": "tap", "contentDesc": "Password input", "match": "exact"}),
            ),
            ("ui", json!({"operation": "type", "text": password, "observe": true})),
            (
                "ui",
                json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
            ),
            ("ui", json!({"operation": "dump"})),
            (
                "ui",
                json!({"operation": "tap", "contentDesc": first, "match": "exact"}),
            ),
            ("ui", json!({"operation": "type", "text": first_value, "observe": true})),
            ("ui", json!({"operation": "dump"})),
        ] {
            answers.push(ok(&call(&client, tool, args).await).to_string());
        }
        let exports = export_both(&client, "shared").await;
        let entries = cached(&client).await;
        client.cancel().await.unwrap();
        let log = log.lock().unwrap().clone();
        for secret in &secrets {
            for answer in &answers {
                assert!(
                    !answer.contains(secret),
                    "{first}: an answer holds {secret:?}: {answer}"
                );
            }
            for (uri, text) in &entries {
                assert!(!text.contains(secret), "{first}: {uri} holds {secret:?}");
            }
            assert!(!log.contains(secret), "{first}: the server's log holds {secret:?}");
        }
        drop(sim);

        for (path, text, answer) in &exports {
            println!("{path}:\n{text}");
            for secret in &secrets {
                assert!(!text.contains(secret), "{path} holds {secret:?}:\n{text}");
                assert!(!answer.to_string().contains(secret), "{answer}");
            }
            // Each field by its content-desc, never by the shared id or a point.
            assert!(text.contains("Password input") && text.contains(first), "{text}");
            let by_shared_id = text.lines().any(|l| {
                l.trim_start().starts_with(&format!("id: \"{SHARED_ID}"))
                    || l.contains(&format!("resourceId: \"{SHARED_ID}"))
            });
            assert!(!by_shared_id, "{path} names a field by the shared id:\n{text}");
            let by_point = text.contains("target({ x: ") || text.lines().any(|l| l.trim_start().starts_with("point:"));
            assert!(!by_point, "{path} taps a point:\n{text}");
            // One placeholder per secret field, in the order they were typed.
            let names = placeholders(path, text);
            assert_eq!(names.len(), secrets.len(), "{path}: {names:?}\n{text}");
            if !first_secret {
                assert!(text.contains(first_value), "{path} lost what was typed:\n{text}");
            }

            // Replayed on a fresh device with the values given: each lands in its own field.
            let sim = SimProcess::start_profile(&folder, &[]);
            let target = format!("tcp:{}", sim.addr);
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"));
            command.arg("replay").arg(path).args(["--adb", &target]);
            for (name, value) in names.iter().zip(&secrets) {
                command.args(["--env", &format!("{name}={value}")]);
            }
            let out = command.env("HOME", home.path()).output().expect("droidmcp replay runs");
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            println!("replay {path}: {}\n{said}", out.status);
            assert!(out.status.success(), "{said}");
            for secret in &secrets {
                assert!(!said.contains(secret), "the replay's report holds {secret:?}: {said}");
            }
            // What each field shows, as the device's own dump says (droidmcp hides a field named
            // as a password even revealed).
            let serial = adb.connect(&sim);
            let dots = |value: &str| "•".repeat(value.chars().count());
            let want_first = if first_secret {
                dots(first_value)
            } else {
                first_value.to_string()
            };
            assert_eq!(adb.text_of(&serial, first), want_first, "{path}: {first}");
            // The flow revealed the password, as it was recorded: it shows what the replay typed;
            // hidden again (the eye), its dots.
            assert_eq!(adb.text_of(&serial, "Password input"), password, "{path}");
            adb.shell(&serial, &["input", "tap", "960", "945"]);
            assert_eq!(adb.text_of(&serial, "Password input"), dots(password), "{path}");
            adb.run(&["disconnect", &serial]);
        }
    }
}
