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
    ];
    proptest::collection::vec(op, 1..10)
}

/// Generated sequences of taps (by ref, text, resourceId, point) and types on the login demo:
/// whatever was typed while the password field had focus (the model: the last field tapped) is
/// in neither export nor in any cache entry nor in any answer; what was typed into the user name
/// is in the exports, and so is the password's placeholder.
#[tokio::test]
async fn generated_taps_and_types_never_write_a_password() {
    use proptest::strategy::{Strategy, ValueTree};
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let mut runner = proptest::test_runner::TestRunner::default();
    let cases = 32;
    let mut secrets: Vec<String> = Vec::new();
    let (mut typed_secrets, mut typed_public) = (0, 0);
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
        "{cases} cases: {typed_secrets} passwords and {typed_public} other texts typed, none of the passwords written"
    );
    assert!(typed_secrets > 0 && typed_public > 0, "the cases typed both kinds");
    client.cancel().await.unwrap();
}
