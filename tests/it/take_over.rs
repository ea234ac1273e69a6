//! The device panel's take-over, for every tool and operation tools/list offers: while a person
//! holds the simulated device, each call that changes the device is refused with nothing done,
//! and each call that only reads answers, made by the assistant or inside its script. Which is
//! which is not taken from droidmcp's own table (`Command::acts`): the same call is made again
//! once the device is released, and it acts if the device's state (as `adb shell` reads it)
//! changed.

use serde_json::{Value, json};

use crate::common::*;
use crate::panel::{AppsClient, panel_call};

/// A 12-digit PIN for the unlock case (a test secret long enough not to turn up by chance).
const PIN: &str = "739164825031";
const PIN_ENV: &str = "DROIDMCP_TAKE_OVER_PIN";
const REFUSED: &str = "a person has taken over";

/// What `adb shell` tells of the device: the app in front and the keyguard, whether it is awake,
/// the battery, how many packages, how many log lines, and the texts on the screen.
const DEVICE_STATE: &str = "dumpsys window | grep -E 'mCurrentFocus|isStatusBarKeyguard'; \
    dumpsys power | grep mWakefulness=; dumpsys battery | grep level; pm list packages | wc -l; \
    logcat -d | wc -l; uiautomator dump /dev/tty | grep -o 'text=\"[^\"]*\"' | tr '\\n' ' '";

/// One call to try: its tool and arguments, the panel's calls that set the device up so that
/// the call, if it acts, visibly changes it, and those that put things back afterwards.
pub(crate) struct Case {
    pub(crate) tool: &'static str,
    pub(crate) args: Value,
    setup: Vec<(&'static str, Value)>,
    teardown: Vec<(&'static str, Value)>,
    /// Its class, declared, for a call the simulator shows no trace of (a long press).
    declared_acting: Option<bool>,
}

fn case(tool: &'static str, args: Value) -> Case {
    Case {
        tool,
        args,
        setup: Vec::new(),
        teardown: Vec::new(),
        declared_acting: None,
    }
}

impl Case {
    fn after(mut self, tool: &'static str, args: Value) -> Case {
        self.setup.push((tool, args));
        self
    }

    fn then(mut self, tool: &'static str, args: Value) -> Case {
        self.teardown.push((tool, args));
        self
    }

    pub(crate) fn operation(&self) -> &str {
        self.args["operation"].as_str().unwrap()
    }
}

fn launch(package: &str) -> Value {
    json!({"operation": "launch", "package": package})
}

fn key(name: &str) -> Value {
    json!({"operation": "key", "name": name})
}

/// At least one call per operation tools/list offers. A string argument `$field` is the field
/// of the last setup call's answer (a cacheId, a runId).
pub(crate) fn cases(apk: &str) -> Vec<Case> {
    let contacts = "com.google.android.contacts";
    let login = "org.droidmcp.demo.login";
    vec![
        case("adb-device", json!({"operation": "list"})),
        case("adb-device", json!({"operation": "select"})),
        case("adb-device", json!({"operation": "properties"})),
        case("adb-device", json!({"operation": "wait", "timeoutMs": 5000})),
        case("adb-device", json!({"operation": "health"})),
        case(
            "adb-device",
            json!({"operation": "emulator", "command": "power capacity 15"}),
        )
        .after(
            "adb-device",
            json!({"operation": "emulator", "command": "power capacity 80"}),
        ),
        case(
            "adb-device",
            json!({"operation": "emulator", "command": "power display"}),
        ),
        case("adb-device", json!({"operation": "wake"})).after("adb-shell", shell_run("input keyevent SLEEP")),
        case("adb-device", json!({"operation": "unlock", "pinEnv": PIN_ENV}))
            .after(
                "adb-shell",
                shell_run(&format!(
                    "locksettings set-pin {PIN}; input keyevent SLEEP; input keyevent WAKEUP"
                )),
            )
            .then("adb-shell", shell_run(&format!("locksettings clear --old {PIN}"))),
        Case {
            // Taking or ending a lease changes who may act, not the device: refused while held.
            declared_acting: Some(true),
            ..case("adb-device", json!({"operation": "lease", "ttlSecs": 60}))
                .then("device-panel", json!({"operation": "release"}))
        },
        Case {
            declared_acting: Some(true),
            ..case("adb-device", json!({"operation": "release"}))
        },
        case("adb-app", json!({"operation": "list", "limit": 3})),
        case(
            "adb-app",
            json!({"operation": "info", "package": "com.android.settings"}),
        ),
        case("adb-app", launch("com.android.settings")).after("ui", key("HOME")),
        case(
            "adb-app",
            json!({"operation": "stop", "package": "com.android.settings"}),
        )
        .after("adb-app", launch("com.android.settings")),
        case("adb-app", json!({"operation": "clear-data", "package": login})).after("adb-app", launch(login)),
        case("adb-app", json!({"operation": "install", "path": apk})),
        case(
            "adb-app",
            json!({"operation": "uninstall", "package": "com.airbnb.android"}),
        ),
        case("adb-logcat", json!({"operation": "read", "lines": 5})),
        case("adb-logcat", json!({"operation": "clear"})),
        case("adb-shell", shell_run("input keyevent HOME")).after("adb-app", launch("com.android.settings")),
        case("ui", json!({"operation": "dump", "limit": 3})),
        case("ui", json!({"operation": "find", "text": "Settings"})).after("ui", key("HOME")),
        case("ui", json!({"operation": "tap", "text": "Settings"})).after("ui", key("HOME")),
        Case {
            // The simulator ignores a long press (a swipe that does not move): nothing to see.
            declared_acting: Some(true),
            ..case("ui", json!({"operation": "long-press", "text": "Settings"})).after("ui", key("HOME"))
        },
        case("ui", json!({"operation": "swipe", "direction": "up"})).after("adb-app", launch(contacts)),
        case("ui", json!({"operation": "type", "text": "take-over-typed"}))
            .after("adb-app", launch(login))
            .after(
                "ui",
                json!({"operation": "tap", "resourceId": format!("{login}:id/username")}),
            ),
        case("ui", key("HOME")).after("adb-app", launch("com.android.settings")),
        case("ui", json!({"operation": "scroll", "direction": "down"})).after("adb-app", launch(contacts)),
        case(
            "ui",
            json!({"operation": "wait", "text": "Settings", "timeoutMs": 5000}),
        )
        .after("ui", key("HOME")),
        case("ui", json!({"operation": "screenshot"})),
        case("cache", json!({"operation": "get", "id": "$cacheId"}))
            .after("adb-app", json!({"operation": "list", "limit": 1})),
        case("cache", json!({"operation": "list"})),
        case("cache", json!({"operation": "stats"})),
        case("cache", json!({"operation": "clear"})),
        case("flow", json!({"operation": "export", "name": "take-over"})).after("ui", key("HOME")),
        case("flow", json!({"operation": "reset"})),
        case(
            "script",
            json!({"operation": "run", "code": "console.log('reads nothing')"}),
        ),
        case("script", json!({"operation": "list"})),
        case("script", json!({"operation": "clear", "id": "$runId"}))
            .after("script", json!({"operation": "run", "code": "console.log(1)"})),
    ]
}

/// Every (tool, operation) the model sees in tools/list (not the panel's own app-only tool).
async fn listed(client: &rmcp::service::RunningService<rmcp::RoleClient, AppsClient>) -> Vec<(String, String)> {
    operations(client)
        .await
        .into_iter()
        .filter(|o| o.tool != "device-panel")
        .map(|o| (o.tool, o.op))
        .collect()
}

/// A string argument `$field` replaced by that field of `answer`.
fn filled(args: &Value, answer: &Value) -> Value {
    let mut args = args.clone();
    for value in args.as_object_mut().unwrap().values_mut() {
        if let Some(field) = value.as_str().and_then(|s| s.strip_prefix('$')).map(str::to_string) {
            *value = answer[&field].clone();
            assert!(value.is_string(), "no {field} in {answer}");
        }
    }
    args
}

/// The script namespace of a tool a script can call, as the registry names it.
fn namespace(tool: &str) -> Option<&'static str> {
    droidmcp::tools::registry::find(tool).and_then(|t| t.namespace)
}

/// A script that makes the same call and prints what came of it.
pub(crate) fn script_calling(namespace: &str, args: &Value) -> Value {
    let mut args = args.clone();
    let operation = args.as_object_mut().unwrap().remove("operation").unwrap();
    let mut function = String::new();
    let mut words = operation.as_str().unwrap().split('-');
    function.push_str(words.next().unwrap());
    for word in words {
        function.push_str(&word[..1].to_uppercase());
        function.push_str(&word[1..]);
    }
    let code = format!(
        "try {{ await {namespace}.{function}({args}); console.log('answered') }} catch (e) {{ console.log(String(e)) }}"
    );
    json!({"operation": "run", "code": code})
}

/// The case's setup through the panel; its arguments, filled from the last setup answer.
async fn setup(client: &rmcp::service::RunningService<rmcp::RoleClient, AppsClient>, case: &Case) -> Value {
    let mut last = Value::Null;
    for (tool, args) in &case.setup {
        last = ok(&panel_call(client, tool, args.clone()).await);
    }
    filled(&case.args, &last)
}

/// The text of an answer, error or not.
fn said(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn every_operation_that_changes_a_held_device_is_refused_with_nothing_done_and_every_reading_answers() {
    let home = tempfile::tempdir().unwrap();
    let apks = tempfile::tempdir().unwrap();
    let apk = build_test_apk(apks.path(), "org.droidmcp.takeover", 1);
    let client = mcp_server_with(
        AppsClient,
        &["--sim"],
        &[(PIN_ENV, PIN), ("DROIDMCP_PIN_ENV", PIN_ENV)],
        home.path(),
    )
    .await;
    let state = async || {
        let answer = ok(&panel_call(&client, "adb-shell", shell_run(DEVICE_STATE)).await);
        answer["stdout"].as_str().unwrap().to_string()
    };
    let cases = cases(apk.to_str().unwrap());

    // Every operation the model can call has a case, so a new one is classified here too.
    let listed = listed(&client).await;
    let missing: Vec<String> = listed
        .iter()
        .filter(|(tool, op)| !cases.iter().any(|c| c.tool == tool && c.operation() == op))
        .map(|(tool, op)| format!("{tool} {op}"))
        .collect();
    assert!(missing.is_empty(), "no case for {missing:?}: add one to cases()");

    let mut wrong = Vec::new();
    let (mut acting, mut reading) = (0, 0);
    for case in &cases {
        let what = format!("{} {}", case.tool, case.args);
        // Held: the device must not change. Then, set up afresh and released: did it change?
        let args = setup(&client, case).await;
        ok(&panel_call(&client, "device-panel", json!({"operation": "hold"})).await);
        let before = state().await;
        // A call that cannot be built is refused for its arguments first, held or not.
        let mut invalid = args.clone();
        invalid["notAField"] = json!(true);
        let invalid = err(&call(&client, case.tool, invalid).await);
        if !invalid.contains("notAField") || invalid.contains(REFUSED) {
            wrong.push(format!("{what} with a field it does not take, held: {invalid}"));
        }
        let held = call(&client, case.tool, args.clone()).await;
        let in_script = match namespace(case.tool) {
            Some(ns) => Some(ok(&call(&client, "script", script_calling(ns, &args)).await)["output"].to_string()),
            None => None,
        };
        let while_held = state().await;
        ok(&panel_call(&client, "device-panel", json!({"operation": "release"})).await);
        let args = setup(&client, case).await;
        let unchanged = state().await;
        let released = call(&client, case.tool, args).await;
        let after = state().await;
        for (tool, args) in &case.teardown {
            ok(&panel_call(&client, tool, args.clone()).await);
        }

        let acts = case.declared_acting.unwrap_or(after != unchanged);
        let refused = held.is_error == Some(true) && said(&held).contains(REFUSED);
        if acts {
            acting += 1;
        } else {
            reading += 1;
        }
        if acts && !refused {
            wrong.push(format!(
                "{what} changes the device (released: {}) but ran while a person held it: {}",
                said(&released),
                said(&held)
            ));
        }
        if refused && !acts {
            wrong.push(format!(
                "{what} only reads (released, the device did not change: {}) but was refused while held",
                said(&released)
            ));
        }
        if while_held != before {
            wrong.push(format!(
                "{what} changed the device while a person held it ({}):\n{before}\n→\n{while_held}",
                said(&held)
            ));
        }
        if let Some(output) = &in_script
            && output.contains(REFUSED) != acts
        {
            wrong.push(format!(
                "{what}, called by a script while held, acts: {acts}; the script saw: {output}"
            ));
        }
        if !acts && held.is_error == Some(true) {
            wrong.push(format!("{what} only reads, but failed while held: {}", said(&held)));
        }
        if released.is_error == Some(true) {
            wrong.push(format!("{what} failed once released: {}", said(&released)));
        }
    }
    eprintln!(
        "{} cases ({acting} acting, {reading} reading) over {} listed operations",
        cases.len(),
        listed.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(acting >= 15 && reading >= 15, "{acting} acting, {reading} reading");
    client.cancel().await.unwrap();
}
