//! `adb-app` over MCP against the simulator: paging, filters, info, launch, the install and
//! uninstall round trip (through a real adb server and straight over TCP), and bad input.

use std::collections::BTreeSet;

use crate::common::*;
use serde_json::{Value, json};

fn names(page: &Value) -> Vec<String> {
    page["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn paging_through_the_list_gives_exactly_pm_list_packages_and_install_uninstall_round_trips() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let port = adb.port.to_string();
    let recorder = ProgressRecorder::default();
    let client = mcp_server_with(
        recorder.clone(),
        &[],
        &[("ANDROID_ADB_SERVER_PORT", &port)],
        home.path(),
    )
    .await;

    // The truth, from the adb program.
    let (stdout, _, code) = adb.shell(&serial, &["pm", "list", "packages"]);
    assert_eq!(code, 0);
    let truth: BTreeSet<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("package:"))
        .map(str::to_string)
        .collect();

    let first = call(&client, "adb-app", json!({"operation": "list"})).await;
    let chars = response_chars(&first);
    println!("adb-app list (default page) on {} packages: {chars} chars", truth.len());
    assert!(chars <= 1500, "{chars} chars");
    let first = ok(&first);
    assert_eq!(first["count"], 20);
    assert_eq!(first["totalCount"].as_u64().unwrap() as usize, truth.len());
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let page = ok(&call(
            &client,
            "adb-app",
            json!({"operation": "list", "offset": offset, "limit": 37}),
        )
        .await);
        seen.extend(names(&page));
        match page["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no duplicates");
    assert_eq!(unique, truth, "no gaps");
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "pages come sorted");

    // The full list behind the cacheId pages the same way.
    let whole = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": first["cacheId"], "limit": 1000}),
    )
    .await);
    assert_eq!(whole["total"].as_u64().unwrap() as usize, truth.len());

    // Install a local APK through the native client, with progress.
    let apk_dir = tempfile::tempdir().unwrap();
    let apk = build_test_apk(apk_dir.path(), "org.droidmcp.roundtrip", 7);
    let installed = call_with_progress(
        &client,
        "adb-app",
        json!({"operation": "install", "path": apk.to_str().unwrap(), "grantPermissions": true}),
    )
    .await;
    let installed = ok(&installed);
    assert_eq!(installed["package"], "org.droidmcp.roundtrip");
    assert_eq!(installed["versionCode"], 7);
    assert_eq!(installed["versionName"], "1.7");
    {
        let progress = recorder.0.lock().unwrap();
        let size = std::fs::metadata(&apk).unwrap().len() as f64;
        let last = progress.last().expect("install sent progress");
        assert_eq!((last.progress, last.total), (size, Some(size)));
    }
    let (stdout, _, _) = adb.shell(&serial, &["pm", "list", "packages", "org.droidmcp.roundtrip"]);
    assert!(
        stdout.contains("package:org.droidmcp.roundtrip"),
        "the device has it: {stdout}"
    );
    // The cached list was dropped by the install.
    let user = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "kind": "user", "filter": "roundtrip"}),
    )
    .await);
    assert_eq!(names(&user), ["org.droidmcp.roundtrip"]);

    let removed = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "uninstall", "package": "org.droidmcp.roundtrip"}),
    )
    .await);
    assert_eq!(removed["package"], "org.droidmcp.roundtrip");
    let (stdout, _, _) = adb.shell(&serial, &["pm", "list", "packages", "org.droidmcp.roundtrip"]);
    assert!(stdout.trim().is_empty(), "gone from the device: {stdout}");
    let again = err(&call(
        &client,
        "adb-app",
        json!({"operation": "uninstall", "package": "org.droidmcp.roundtrip"}),
    )
    .await);
    assert!(again.contains("is not installed"), "{again}");

    // Launch changes the focused app, as the device itself reports it.
    let launched = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(launched["foreground"], true);
    let (focus, _, _) = adb.shell(&serial, &["dumpsys", "window"]);
    assert!(
        focus
            .lines()
            .any(|l| l.contains("mCurrentFocus") && l.contains("org.droidmcp.demo.login")),
        "{focus}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn kinds_filters_cache_reuse_info_launch_and_lifecycle_on_the_direct_path() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let all = ok(&call(&client, "adb-app", json!({"operation": "list", "limit": 100})).await);
    assert_eq!(all["cached"], false);
    let again = ok(&call(&client, "adb-app", json!({"operation": "list", "limit": 100})).await);
    assert_eq!(again["cached"], true, "a repeated list comes from the cache");
    assert_eq!(again["cacheId"], all["cacheId"]);
    let fresh = ok(&call(&client, "adb-app", json!({"operation": "list", "refresh": true})).await);
    assert_eq!(fresh["cached"], false);

    let user = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "kind": "user", "limit": 100}),
    )
    .await);
    let system = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "kind": "system", "limit": 100}),
    )
    .await);
    let total = all["totalCount"].as_u64().unwrap();
    assert_eq!(
        user["totalCount"].as_u64().unwrap() + system["totalCount"].as_u64().unwrap(),
        total
    );
    assert!(names(&user).contains(&"org.droidmcp.demo.login".to_string()));
    assert!(!names(&user).contains(&"com.android.settings".to_string()));

    let google = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "kind": "system", "filter": "GOOGLE"}),
    )
    .await);
    assert!(google["totalCount"].as_u64().unwrap() > 0);
    assert!(names(&google).iter().all(|n| n.contains("google")));
    // The cacheId of a filtered list holds just the matches.
    let matches = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": google["cacheId"], "limit": 1000}),
    )
    .await);
    assert_eq!(matches["total"], google["totalCount"]);
    let none = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "filter": "zzz-nothing"}),
    )
    .await);
    assert_eq!(none["totalCount"], 0);
    assert!(none["hint"].as_str().unwrap().contains("zzz-nothing"));

    let info = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "info", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(info["info"]["system"], false);
    assert!(info["info"]["versionName"].is_string() && info["info"]["targetSdk"].is_u64());
    assert_eq!(
        info["info"]["launcherActivity"],
        "org.droidmcp.demo.login/.LoginActivity"
    );
    let grep = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": info["cacheId"], "filter": "versionCode"}),
    )
    .await);
    assert_eq!(grep["count"], 1);

    let settings = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    assert_eq!(settings["foreground"], true);
    assert_eq!(settings["focused"]["package"], "com.android.settings");
    let login = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(login["focused"]["package"], "org.droidmcp.demo.login");
    let stopped = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "stop", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(stopped["operation"], "stop");
    let info = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "info", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(info["info"]["stopped"], true);
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "clear-data", "package": "org.droidmcp.demo.login"}),
    )
    .await);

    // Install and uninstall over the direct connection too.
    let apk_dir = tempfile::tempdir().unwrap();
    let apk = build_test_apk(apk_dir.path(), "org.droidmcp.direct", 3);
    let installed = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "install", "path": apk.to_str().unwrap()}),
    )
    .await);
    assert_eq!(
        (installed["package"].as_str(), installed["versionCode"].as_u64()),
        (Some("org.droidmcp.direct"), Some(3))
    );
    let older = build_test_apk(apk_dir.path(), "org.droidmcp.direct", 2);
    let refused = err(&call(
        &client,
        "adb-app",
        json!({"operation": "install", "path": older.to_str().unwrap()}),
    )
    .await);
    assert!(refused.contains("INSTALL_FAILED_VERSION_DOWNGRADE"), "{refused}");
    let downgraded = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "install", "path": older.to_str().unwrap(), "downgrade": true}),
    )
    .await);
    assert_eq!(downgraded["versionCode"], 2);
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "uninstall", "package": "org.droidmcp.direct", "keepData": true}),
    )
    .await);
    client.cancel().await.unwrap();
}
