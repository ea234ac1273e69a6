//! `adb-device emulator`: console commands reach the simulated device's emulator console, and
//! what they set shows where a device shows it (dumpsys, the dump, taps, the log).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::*;

async fn emulator(client: &McpClient, command: &str) -> rmcp::model::CallToolResult {
    call(
        client,
        "adb-device",
        json!({"operation": "emulator", "command": command}),
    )
    .await
}

#[tokio::test]
async fn console_commands_set_battery_location_rotation_and_messages_on_the_device() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    // The in-process simulator asks for the token the emulator way: a file in the home folder.
    assert!(home.path().join(".emulator_console_auth_token").exists());

    let result = emulator(&client, "power capacity 17").await;
    println!("emulator power capacity 17: {} chars", response_chars(&result));
    let answer = ok(&result);
    assert_eq!(answer["reply"], "OK");
    assert!(
        answer["console"].as_str().unwrap().starts_with("127.0.0.1:"),
        "{answer}"
    );
    ok(&emulator(&client, "power ac off").await);
    let health = ok(&call(&client, "adb-device", json!({"operation": "health"})).await);
    assert_eq!(health["health"]["battery"]["level"], 17, "{health}");

    ok(&emulator(&client, "geo fix -122.084 37.422 12").await);
    let location = ok(&shell(&client, "dumpsys location").await)["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(location.contains("gps 37.422000,-122.084000"), "{location}");

    // A quarter turn: the next dump is landscape, and a tap by label still lands on its element.
    ok(&emulator(&client, "rotate").await);
    let dump = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert_eq!(dump["screen"], json!([2400, 1080]), "{}", dump["screen"]);
    let shot = ok(&call(&client, "ui", json!({"operation": "screenshot"})).await);
    assert_eq!(
        (shot["image"].clone(), shot["screen"].clone()),
        (json!([1000, 450]), json!([2400, 1080]))
    );
    let tapped = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "text": "Settings", "observe": true}),
    )
    .await);
    assert_eq!(
        tapped["observed"]["focused"]["package"], "com.android.settings",
        "{tapped}"
    );

    ok(&emulator(&client, "sms send +15551234 Your code is 4321").await);
    ok(&emulator(&client, "gsm call 5550100").await);
    let log = ok(&shell(&client, "logcat -d -s SmsReceiver:I Telecom:I").await)["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(log.contains("SMS received from +15551234: Your code is 4321"), "{log}");
    assert!(log.contains("Incoming call from 5550100"), "{log}");
    assert_eq!(
        ok(&emulator(&client, "gsm list").await)["reply"],
        "inbound from 5550100 : ringing"
    );

    // The console's own refusal comes back as an error naming it; so does a command the
    // simulator's console does not have.
    let refused = err(&emulator(&client, "power capacity 200").await);
    assert!(
        refused.contains("refused `power capacity 200`") && refused.contains("capacity"),
        "{refused}"
    );
    let unknown = err(&emulator(&client, "sensor set acceleration 0:9.8:0").await);
    assert!(unknown.contains("unknown command"), "{unknown}");

    // What stops or resets the emulator is refused before it is sent, with the flag to allow it.
    // Only commands that read or set device state go without it (an allow-list): `crash` and
    // `network capture` (a host file) were sent before.
    for admin in ["kill", "crash", "network capture start /tmp/droidmcp.pcap"] {
        let refused = err(&emulator(&client, admin).await);
        assert!(
            refused.contains("--allow-emulator-admin") && refused.contains("only reads or sets device state"),
            "{admin}: {refused}"
        );
    }
    let two = err(&emulator(&client, "rotate\nkill").await);
    assert!(two.contains("one console command per call"), "{two}");
    // The connection is still there, and still authenticated.
    assert_eq!(ok(&emulator(&client, "ping").await)["reply"], "I am alive!");
}

/// `droidmcp sim --console` in its own process and HOME (so its own token).
struct ConsoleSim {
    child: std::process::Child,
    adb: String,
    console: String,
    _home: tempfile::TempDir,
}

impl ConsoleSim {
    fn start() -> ConsoleSim {
        let home = tempfile::tempdir().unwrap();
        let console = format!("127.0.0.1:{}", free_port());
        let mut child = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["sim", "--listen", "127.0.0.1:0", "--console", &console])
            .env("HOME", home.path())
            .env_remove("ANDROID_EMULATOR_HOME")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let adb = lines.next().unwrap().unwrap();
        let said = lines.next().unwrap().unwrap();
        assert_eq!(said, format!("console on {console}"));
        ConsoleSim {
            child,
            adb: adb.strip_prefix("listening on ").unwrap().to_string(),
            console,
            _home: home,
        }
    }
}

impl Drop for ConsoleSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_missing_or_wrong_token_and_a_device_that_is_no_emulator_get_their_errors() {
    let sim = ConsoleSim::start();
    let target = format!("tcp:{}", sim.adb);
    let mapped = format!("{}={}", sim.adb, sim.console);

    // No console known for a device not named emulator-NNNN.
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &target], &[], home.path()).await;
    let not = err(&emulator(&client, "ping").await);
    assert!(
        not.contains("is not an emulator") && not.contains("--emulator-console"),
        "{not}"
    );
    client.cancel().await.unwrap();

    // The simulator read its token at start; with its file gone, the path its greeting names
    // holds nothing, and the console asks for a token this home does not have.
    let token_file = sim._home.path().join(".emulator_console_auth_token");
    let token = std::fs::read_to_string(&token_file).unwrap();
    std::fs::remove_file(&token_file).unwrap();
    let client = mcp_server(&["--adb", &target, "--emulator-console", &mapped], &[], home.path()).await;
    let missing = err(&emulator(&client, "ping").await);
    assert!(
        missing.contains("asks for its auth token") && missing.contains(".emulator_console_auth_token"),
        "{missing}"
    );
    client.cancel().await.unwrap();

    // A stale token is refused, and the error says where it was read and what to do.
    std::fs::write(home.path().join(".emulator_console_auth_token"), "stale0123456789\n").unwrap();
    let client = mcp_server(&["--adb", &target, "--emulator-console", &mapped], &[], home.path()).await;
    let wrong = err(&emulator(&client, "ping").await);
    assert!(
        wrong.contains("refused the token") && wrong.contains("copy the current"),
        "{wrong}"
    );
    client.cancel().await.unwrap();

    // A console that does not answer.
    let closed = format!("{}=127.0.0.1:{}", sim.adb, free_port());
    let client = mcp_server(&["--adb", &target, "--emulator-console", &closed], &[], home.path()).await;
    let down = err(&emulator(&client, "ping").await);
    assert!(down.contains("cannot reach the emulator console"), "{down}");
    client.cancel().await.unwrap();

    // The token in ANDROID_EMULATOR_HOME's file is found there, before the home folder's.
    let emulator_home = tempfile::tempdir().unwrap();
    std::fs::write(emulator_home.path().join(".emulator_console_auth_token"), token).unwrap();
    let client = mcp_server(
        &["--adb", &target, "--emulator-console", &mapped],
        &[("ANDROID_EMULATOR_HOME", emulator_home.path().to_str().unwrap())],
        home.path(),
    )
    .await;
    assert_eq!(ok(&emulator(&client, "ping").await)["reply"], "I am alive!");
    client.cancel().await.unwrap();
}
