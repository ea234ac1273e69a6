//! The simulator against Debian's real `adb`: it must not be able to tell it from a device.

use crate::common::{AdbServer, SimProcess, build_test_apk, center_of, connected_sim};

#[test]
fn adb_connect_lists_the_model_and_product() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let devices = String::from_utf8_lossy(&adb.run(&["devices", "-l"]).stdout).into_owned();
    let line = devices
        .lines()
        .find(|l| l.starts_with(&serial))
        .expect("sim in adb devices");
    assert!(line.contains(" device "), "{line}");
    assert!(line.contains("model:Pixel_7__droidmcp_sim_"), "{line}");
    assert!(
        line.contains("product:sdk_gphone64_x86_64") && line.contains("device:emu64xa"),
        "{line}"
    );
}

#[test]
fn adb_shell_getprop_reads_the_profile() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let (out, _, code) = adb.shell(&serial, &["getprop", "ro.product.model"]);
    assert_eq!((out.as_str(), code), ("Pixel 7 (droidmcp sim)\n", 0));
    let (all, _, _) = adb.shell(&serial, &["getprop"]);
    assert!(
        all.lines().filter(|l| l.starts_with('[')).count() >= 400,
        "profile has 400+ properties"
    );
}

#[test]
fn adb_shell_exit_codes_match_a_device() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    assert_eq!(adb.shell(&serial, &["false"]).2, 1);
    assert_eq!(adb.shell(&serial, &["true"]).2, 0);
    assert_eq!(adb.shell(&serial, &["exit", "42"]).2, 42);
    let (out, err, code) = adb.shell(&serial, &["nosuch"]);
    assert_eq!(code, 127);
    assert!(out.is_empty(), "stdout stays empty: {out:?}");
    assert_eq!(err, "/system/bin/sh: nosuch: inaccessible or not found\n");
    let (out, _, code) = adb.shell(&serial, &["echo a && false || echo 'b c' | grep b; echo $?"]);
    assert_eq!((out.as_str(), code), ("a\nb c\n0\n", 0));
}

#[test]
fn adb_exec_out_screencap_is_a_png_of_the_screen_size() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let out = adb.run(&["-s", &serial, "exec-out", "screencap", "-p"]);
    assert!(out.status.success());
    let img = image::load_from_memory_with_format(&out.stdout, image::ImageFormat::Png).expect("valid PNG");
    assert_eq!((img.width(), img.height()), (1080, 2400));
    // The raw format: a 16-byte header, then RGBA.
    let raw = adb.run(&["-s", &serial, "exec-out", "screencap"]).stdout;
    assert_eq!(u32::from_le_bytes(raw[0..4].try_into().unwrap()), 1080);
    assert_eq!(u32::from_le_bytes(raw[4..8].try_into().unwrap()), 2400);
    assert_eq!(raw.len(), 16 + 1080 * 2400 * 4);
}

#[test]
fn adb_push_then_pull_round_trips_byte_for_byte() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Over 64 KiB so the sync DATA chunking is exercised, and every byte value.
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let src = dir.path().join("in.bin");
    std::fs::write(&src, &data).unwrap();
    let push = adb.run(&["-s", &serial, "push", src.to_str().unwrap(), "/sdcard/Download/in.bin"]);
    assert!(push.status.success(), "{}", String::from_utf8_lossy(&push.stderr));
    let dst = dir.path().join("out.bin");
    let pull = adb.run(&["-s", &serial, "pull", "/sdcard/Download/in.bin", dst.to_str().unwrap()]);
    assert!(pull.status.success(), "{}", String::from_utf8_lossy(&pull.stderr));
    assert_eq!(std::fs::read(dst).unwrap(), data);
    let (ls, _, _) = adb.shell(&serial, &["ls", "/sdcard/Download"]);
    assert_eq!(ls, "in.bin\n");
    let missing = adb.run(&["-s", &serial, "pull", "/sdcard/nope.bin", dir.path().to_str().unwrap()]);
    assert!(!missing.status.success(), "pulling a missing file fails");
}

#[test]
fn adb_install_and_uninstall_change_the_package_list() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let apk = build_test_apk(dir.path(), "org.droidmcp.test.installme", 3);
    assert_eq!(adb.shell(&serial, &["pm", "list", "packages", "installme"]).0, "");
    let install = adb.run(&["-s", &serial, "install", apk.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&install.stdout).contains("Success"),
        "{install:?}"
    );
    assert_eq!(
        adb.shell(&serial, &["pm", "list", "packages", "-3", "installme"]).0,
        "package:org.droidmcp.test.installme\n"
    );
    // The installed app launches and takes the focus.
    adb.shell(
        &serial,
        &[
            "monkey",
            "-p",
            "org.droidmcp.test.installme",
            "-c",
            "android.intent.category.LAUNCHER",
            "1",
        ],
    );
    let (focus, _, _) = adb.shell(&serial, &["dumpsys", "window"]);
    assert!(
        focus.contains("mCurrentFocus=Window{") && focus.contains("org.droidmcp.test.installme/"),
        "{focus}"
    );
    let uninstall = adb.run(&["-s", &serial, "uninstall", "org.droidmcp.test.installme"]);
    assert!(String::from_utf8_lossy(&uninstall.stdout).contains("Success"));
    assert_eq!(adb.shell(&serial, &["pm", "list", "packages", "installme"]).0, "");
}

#[test]
fn input_tap_on_settings_entries_changes_the_ui_dump() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let dump = |adb: &AdbServer| {
        let out = adb.run(&["-s", &serial, "exec-out", "uiautomator", "dump", "/dev/tty"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let home = dump(&adb);
    assert!(home.ends_with("UI hierchary dumped to: /dev/tty\n"));
    let (x, y) = center_of(&home, "content-desc", "Settings");
    adb.shell(&serial, &["input", "tap", &x.to_string(), &y.to_string()]);
    let settings = dump(&adb);
    assert!(settings.contains(r#"package="com.android.settings""#));
    let (x, y) = center_of(&settings, "text", "Network & internet");
    adb.shell(&serial, &["input", "tap", &x.to_string(), &y.to_string()]);
    let network = dump(&adb);
    assert!(network.contains(r#"text="Airplane mode""#), "the sub-page is shown");
    // A file dump goes where a device puts it, with the device's message.
    let (msg, _, _) = adb.shell(&serial, &["uiautomator", "dump"]);
    assert_eq!(msg, "UI hierchary dumped to: /sdcard/window_dump.xml\n");
    adb.shell(&serial, &["input", "keyevent", "BACK"]);
    assert!(
        dump(&adb).contains(r#"text="Search Settings""#),
        "BACK returns to the Settings home"
    );
}

#[test]
fn adb_logcat_dump_and_filters() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let all = adb.run(&["-s", &serial, "logcat", "-d"]);
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(text.lines().count() >= 2000, "2,000+ lines");
    assert_eq!(text.matches("FATAL EXCEPTION").count(), 2);
    let errors = adb.run(&["-s", &serial, "logcat", "-d", "AndroidRuntime:E", "*:S"]);
    let errors = String::from_utf8_lossy(&errors.stdout);
    assert!(
        errors
            .lines()
            .filter(|l| !l.starts_with("---------"))
            .all(|l| l.contains(" E AndroidRuntime: "))
    );
    let last3 = adb.run(&["-s", &serial, "logcat", "-d", "-t", "3"]);
    assert_eq!(
        String::from_utf8_lossy(&last3.stdout)
            .lines()
            .filter(|l| !l.starts_with("---------"))
            .count(),
        3
    );
    assert!(adb.run(&["-s", &serial, "logcat", "-c"]).status.success());
    let after = adb.run(&["-s", &serial, "logcat", "-d"]);
    assert!(after.stdout.is_empty(), "logcat -c empties the log");
}

#[test]
fn auth_with_required_keys_accepts_the_listed_key_only() {
    let Some(trusted) = AdbServer::start() else { return };
    let Some(stranger) = AdbServer::start() else { return };
    let key = trusted.public_key_path();
    let sim = SimProcess::start(&["--auth-keys", key.to_str().unwrap()]);
    let serial = trusted.connect(&sim);
    assert_eq!(trusted.shell(&serial, &["getprop", "ro.product.device"]).0, "emu64xa\n");
    let refused = stranger.run(&["connect", &serial]);
    assert!(
        String::from_utf8_lossy(&refused.stdout).contains("failed to authenticate"),
        "{refused:?}"
    );
    let devices = String::from_utf8_lossy(&stranger.run(&["devices"]).stdout).into_owned();
    assert!(devices.contains(&format!("{serial}\tunauthorized")), "{devices}");
}

#[test]
fn fault_dropped_connection_cuts_the_output_and_adb_reports_the_device_gone() {
    let Some((adb, _sim, serial)) = connected_sim(&["--drop-after-bytes", "20000"]) else {
        return;
    };
    // adb_client busy-loops on a closed socket, so this fault is checked with the real adb.
    let out = adb.run(&["-s", &serial, "exec-out", "seq", "100000"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.stdout.len() < 20_000,
        "output stops where the connection dropped: {} bytes",
        out.stdout.len()
    );
    assert!(!text.contains("\n100000\n"));
    let (_, err, code) = adb.shell(&serial, &["echo", "again"]);
    assert_ne!(code, 0, "the device is gone until it reconnects: {err}");
}

#[test]
fn interactive_adb_shell_runs_each_line_and_exits_with_its_code() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let mut child = adb
        .command()
        .args(["-s", &serial, "shell"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("adb shell");
    use std::io::Write;
    // adb may have ended already (it would say why on stdout): a closed pipe is not the failure.
    if let Err(e) = child
        .stdin
        .take()
        .unwrap()
        .write_all(b"getprop ro.product.device\nfalse\necho $?\nexit 3\n")
    {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text, "emu64xa:/ $ emu64xa\nemu64xa:/ $ emu64xa:/ $ 1\nemu64xa:/ $ ");
    assert_eq!(out.status.code(), Some(3));
}
