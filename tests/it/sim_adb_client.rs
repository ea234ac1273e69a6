//! The simulator through the adb_client crate: via the adb server (host protocol on a private
//! port) and straight to the simulated adbd over TCP.

use std::net::SocketAddrV4;

use crate::common::{AdbServer, SimProcess, build_test_apk};
use adb_client::ADBDeviceExt;
use adb_client::server_device::ADBServerDevice;
use adb_client::tcp::ADBTcpDevice;

/// Runs a command, returning (stdout, stderr).
fn shell(device: &mut dyn ADBDeviceExt, cmd: &str) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    device
        .shell_command(&cmd, Some(&mut out), Some(&mut err))
        .expect("shell command");
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// The checks both paths must pass.
fn exercise(device: &mut dyn ADBDeviceExt, apk_dir: &std::path::Path, package: &str) {
    assert_eq!(
        shell(device, "getprop ro.product.model").0.trim_end(),
        "Pixel 7 (droidmcp sim)"
    );
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    device
        .push(&mut data.as_slice(), &"/data/local/tmp/blob.bin")
        .expect("push");
    let mut back = Vec::new();
    device.pull(&"/data/local/tmp/blob.bin", &mut back).expect("pull");
    assert_eq!(back, data, "pull returns what push sent");
    let stat = device.stat(&"/data/local/tmp/blob.bin").expect("stat");
    assert_eq!(stat.file_size, 200_000);
    let apk = build_test_apk(apk_dir, package, 1);
    device.install(&apk, None).expect("install");
    assert!(
        shell(device, &format!("pm list packages {package}"))
            .0
            .contains(package)
    );
    // Tap the Settings icon on the launcher and see the screen change.
    device.shell_command(&"input tap 159 1410", None, None).expect("tap");
    assert!(
        shell(device, "uiautomator dump /dev/tty")
            .0
            .contains(r#"package="com.android.settings""#)
    );
}

#[test]
fn adb_client_through_the_adb_server() {
    let Some(adb) = AdbServer::start() else { return };
    let sim = SimProcess::start(&[]);
    let serial = adb.connect(&sim);
    let server = SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, adb.port);
    // ADBServerDevice talks to the running server; it never spawns `adb start-server`.
    let mut device = ADBServerDevice::new(serial, Some(server));
    let dir = tempfile::tempdir().unwrap();
    exercise(&mut device, dir.path(), "org.droidmcp.test.viaserver");
    // Through the server, shell v2 keeps stderr apart from stdout.
    let (out, err) = shell(&mut device, "nosuch");
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("", "/system/bin/sh: nosuch: inaccessible or not found\n")
    );
}

#[test]
fn adb_client_straight_to_the_simulated_adbd() {
    let sim = SimProcess::start(&[]);
    let mut device = ADBTcpDevice::new(sim.addr).expect("direct TCP connection");
    let dir = tempfile::tempdir().unwrap();
    exercise(&mut device, dir.path(), "org.droidmcp.test.direct");
    // Direct TCP uses shell v1: stderr arrives with stdout.
    let (out, _) = shell(&mut device, "nosuch");
    assert_eq!(out, "/system/bin/sh: nosuch: inaccessible or not found\n");
}

#[test]
fn many_streams_and_connections_at_once() {
    let sim = SimProcess::start(&[]);
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let addr = sim.addr;
            std::thread::spawn(move || {
                let mut device = ADBTcpDevice::new(addr).expect("connect");
                for j in 0..10 {
                    let (out, _) = shell(&mut device, &format!("echo {i}-{j}"));
                    assert_eq!(out, format!("{i}-{j}\n"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
}

#[test]
fn fault_garbage_bytes_break_the_stream() {
    let sim = SimProcess::start(&["--garbage-after-bytes", "1"]);
    // Garbage right after the CNXN reply: the client sees a bad message, not a device.
    let result = ADBTcpDevice::new(sim.addr).and_then(|mut d| d.shell_command(&"echo hi", Some(&mut Vec::new()), None));
    assert!(result.is_err(), "garbage must surface as an error: {result:?}");
}

#[test]
fn fault_latency_slows_but_keeps_answers_correct() {
    let sim = SimProcess::start(&["--latency-ms", "5"]);
    let mut device = ADBTcpDevice::new(sim.addr).expect("connect");
    assert_eq!(shell(&mut device, "getprop ro.product.device").0, "emu64xa\n");
}

#[test]
fn fault_stalled_command_never_answers_until_the_host_gives_up() {
    let sim = SimProcess::start(&["--stall-on", "uiautomator"]);
    let addr = sim.addr;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut device = ADBTcpDevice::new(addr).expect("connect");
        let _ = tx.send(shell(&mut device, "echo alive").0);
        let _ = device.shell_command(&"uiautomator dump /dev/tty", Some(&mut Vec::new()), None);
        let _ = tx.send("answered".to_string());
    });
    assert_eq!(rx.recv().unwrap(), "alive\n");
    // Other commands keep working while one stalls.
    let mut other = ADBTcpDevice::new(addr).expect("second connection");
    assert_eq!(shell(&mut other, "echo still here").0, "still here\n");
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(),
        "the stalled command must not answer"
    );
}
