//! The fault matrix: every fault the simulator (or the adb server) can show, against each tool's
//! main operation, on both routes. Each cell asserts that the call's deadline stopped it (it
//! answered well before twice its timeout); that the answer is either correct or an error naming the cause; that the call
//! after the fault clears succeeds; that the server never panicked; and, on the adb-server route,
//! that a second device saw nothing. The table it prints is docs/reliability.md's figures.
//!
//! It is `#[ignore]`d in README's `cargo test`: 192 cells, each a simulator, a server and an adb
//! server, beside the other suites on a 2-core machine under load made its timings no proof of
//! anything, and a newcomer's first run red. `.ci/run` runs it alone, blocking
//! (`cargo test --test it fault_matrix -- --ignored`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

const TIMEOUT_MS: u64 = 3000;
/// What the suite allows past a timeout before calling an answer a hang. The server's own
/// deadline is the timeout plus 300 ms; a call that deadline did not stop runs until the device
/// answers, which a stalled device never does, so a hang is any answer past four times the
/// timeout: room for a host starved of CPU, none for a deadline that does not fire. How close
/// answers come to the timeout is measured, not asserted: the table's `slowest` column (3,238 ms
/// with the whole suite running beside it on 2 cores, where a 500 ms allowance once failed CI).
const SLACK_MS: u64 = 3 * TIMEOUT_MS;
/// How long the call after a fault may keep failing (as a user would retry it) before recovery
/// counts as failed: the device is back, but a starved host may need more than one 3 s try.
const RECOVERY: Duration = Duration::from_secs(30);
/// Cells run side by side: most of their time is spent waiting on a stalled device.
const PARALLEL: usize = 4;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Route {
    Direct,
    Server,
}

/// What happens while the call runs.
#[derive(Clone, Copy, PartialEq, Debug)]
enum During {
    Nothing,
    KillSim,
    KillAdbServer,
    AdbDisconnect,
}

struct Fault {
    name: &'static str,
    sim_flags: &'static [&'static str],
    during: During,
    /// An error must contain one of these: the cause, in words a user acts on.
    phrases: &'static [&'static str],
    /// Also accepted through the adb server, which reports a device it lost in its own words.
    server_phrases: &'static [&'static str],
    /// Cells expected to fail, with the open reason (printed; 0 is the goal).
    expected_to_fail: Option<&'static str>,
}

const TIMED_OUT: &[&str] = &["timeout", "timed out"];
const CONNECTION_LOST: &[&str] = &["disconnected", "connection", "cannot reach"];
/// The adb server's words for a device whose transport went away.
const SERVER_LOST_IT: &[&str] = &["not found", "offline", "transport", "disconnected", "connection"];

fn faults() -> Vec<Fault> {
    let fault = |name, sim_flags, during, phrases, server_phrases| Fault {
        name,
        sim_flags,
        during,
        phrases,
        server_phrases,
        expected_to_fail: None,
    };
    vec![
        fault(
            "latency 200 ms",
            &["--latency-ms", "200"],
            During::Nothing,
            TIMED_OUT,
            &[],
        ),
        fault(
            "stalled getprop",
            &["--stall-on", "getprop"],
            During::Nothing,
            TIMED_OUT,
            &[],
        ),
        fault(
            "stalled uiautomator",
            &["--stall-on", "uiautomator"],
            During::Nothing,
            TIMED_OUT,
            &[],
        ),
        fault(
            "stalled logcat",
            &["--stall-on", "logcat"],
            During::Nothing,
            TIMED_OUT,
            &[],
        ),
        fault(
            "stalled screencap",
            &["--stall-on", "screencap"],
            During::Nothing,
            TIMED_OUT,
            &[],
        ),
        fault(
            "dropped at 2,000 B",
            &["--drop-after-bytes", "2000"],
            During::Nothing,
            CONNECTION_LOST,
            SERVER_LOST_IT,
        ),
        fault(
            "dropped at 50,000 B",
            &["--drop-after-bytes", "50000"],
            During::Nothing,
            CONNECTION_LOST,
            SERVER_LOST_IT,
        ),
        fault(
            "garbage at 100 B",
            &["--garbage-after-bytes", "100"],
            During::Nothing,
            &["bad data"],
            SERVER_LOST_IT,
        ),
        fault(
            "garbage at 20,000 B",
            &["--garbage-after-bytes", "20000"],
            During::Nothing,
            &["bad data"],
            SERVER_LOST_IT,
        ),
        fault(
            "simulator killed",
            &["--latency-ms", "100"],
            During::KillSim,
            CONNECTION_LOST,
            SERVER_LOST_IT,
        ),
        fault(
            "adb server killed",
            &["--latency-ms", "100"],
            During::KillAdbServer,
            &["adb server"],
            &[],
        ),
        fault(
            "adb disconnect",
            &["--latency-ms", "100"],
            During::AdbDisconnect,
            &["not found", "disconnected", "offline", "dropped the transport"],
            &[],
        ),
        fault(
            "unauthorized key",
            &["--auth-keys", "OTHER_KEY"],
            During::Nothing,
            &["unauthorized", "allow usb debugging"],
            &[],
        ),
    ]
}

impl Fault {
    /// Whether `text` names this fault's cause (on `route`).
    fn named_in(&self, route: Route, text: &str) -> bool {
        let text = text.to_lowercase();
        let extra = if route == Route::Server {
            self.server_phrases
        } else {
            &[]
        };
        !text.contains("early eof") && self.phrases.iter().chain(extra).any(|p| text.contains(p))
    }
}

/// Each tool's main operation, and what a correct answer holds.
fn operations() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("device list", "adb-device", json!({"operation": "list"})),
        ("device properties", "adb-device", json!({"operation": "properties"})),
        ("device health", "adb-device", json!({"operation": "health"})),
        ("app list", "adb-app", json!({"operation": "list"})),
        ("ui dump", "ui", json!({"operation": "dump"})),
        ("ui screenshot", "ui", json!({"operation": "screenshot"})),
        ("logcat read", "adb-logcat", json!({"operation": "read"})),
        (
            "shell run",
            "adb-shell",
            json!({"operation": "run", "command": "echo ok"}),
        ),
    ]
}

/// Whether a successful answer is right. `fault` is what the device suffers during the call
/// (None once it cleared): `list` must report the device's state truly (online, or a state or
/// error naming the fault), and `health` must either find nothing wrong and say so completely,
/// or list a problem that names the fault.
fn is_correct(op: &str, result: &rmcp::model::CallToolResult, serial: &str, fault: Option<(&Fault, Route)>) -> bool {
    let Some(v) = result.structured_content.as_ref() else {
        return false;
    };
    let names_fault = |text: &str| fault.is_some_and(|(f, route)| f.named_in(route, text));
    match op {
        "device list" => {
            let devices = v["devices"].as_array().cloned().unwrap_or_default();
            match devices
                .iter()
                .find(|d| d["serial"].as_str().is_some_and(|s| s.ends_with(serial)))
            {
                Some(d) if d["state"] == "device" && d["error"].is_null() => true,
                Some(d) => names_fault(&format!("{} {}", d["state"], d["error"])),
                // Gone from the list: right only when the fault took it away and the answer says why.
                None => fault.is_some() && names_fault(&v.to_string()),
            }
        }
        "device properties" => v["summary"]["model"].is_string(),
        "device health" => {
            let health = &v["health"];
            let problems = health["problems"].as_array().cloned().unwrap_or_default();
            if problems.is_empty() {
                health["state"] == "device" && health["bootCompleted"] == true && health["battery"]["level"].is_u64()
            } else {
                problems.iter().any(|p| names_fault(p.as_str().unwrap_or_default()))
            }
        }
        "app list" => v["totalCount"].as_u64().is_some_and(|n| n > 0),
        "ui dump" => v["elements"].as_array().is_some_and(|e| !e.is_empty()),
        "ui screenshot" => result.content.iter().any(|c| c.as_image().is_some()),
        "logcat read" => v["totalLines"].as_u64().is_some_and(|n| n > 0),
        "shell run" => v["stdout"] == "ok\n",
        _ => false,
    }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Correct,
    ClearError(String),
    Unclear(String),
    Hang,
}

struct Cell {
    route: Route,
    fault: &'static str,
    op: &'static str,
    outcome: Outcome,
    millis: u128,
    /// Why the call after the fault cleared failed, if it did.
    after: Option<String>,
    /// Whether the call after needed its one retry (its first try timed out).
    retried: bool,
    panicked: bool,
    expected_to_fail: Option<&'static str>,
}

/// One cell, each with its own simulator, droidmcp and (adb-server route) adb server.
async fn run_cell(
    route: Route,
    fault: &Fault,
    (op, tool, args): (&'static str, &'static str, Value),
    other_key: &str,
    bystander: &str,
) -> Option<Cell> {
    let flags: Vec<&str> = fault
        .sim_flags
        .iter()
        .map(|f| if *f == "OTHER_KEY" { other_key } else { f })
        .collect();
    let mut sim = SimProcess::start_at("127.0.0.1:0", &flags);
    let serial = sim.serial();
    let home = tempfile::tempdir().unwrap();
    let timeout = TIMEOUT_MS.to_string();
    let (client, log, adb) = match route {
        Route::Direct => {
            let target = format!("tcp:{serial}");
            let server = Server::new(home.path()).args(&["--adb", &target, "--timeout-ms", &timeout]);
            let Running { client, log, .. } = server.transport(Transport::Stdio).serve_with(()).await;
            (client, log, None)
        }
        Route::Server => {
            let adb = AdbServer::start()?;
            adb.connect_only(&serial);
            adb.connect_only(bystander);
            let port = adb.port.to_string();
            let server = Server::new(home.path())
                .args(&["--device", &serial, "--timeout-ms", &timeout])
                .envs(&[("ANDROID_ADB_SERVER_PORT", &port)]);
            let Running { client, log, .. } = server.transport(Transport::Stdio).serve_with(()).await;
            (client, log, Some(adb))
        }
    };
    let adb = adb.map(Arc::new);
    if let Some(adb) = adb.as_ref().filter(|_| fault.name != "unauthorized key") {
        // The device is online before the call, or the cell would test adb's start-up.
        adb.wait_for(&serial);
    }

    // The fault strikes while the device runs the call's first command (or after 2 s, for a
    // call that sends none, like `list` through the adb server).
    let striker = {
        let adb = adb.clone();
        let serial = serial.clone();
        let pid = sim.pid();
        let during = fault.during;
        let sim_log = sim.log_handle();
        let opened_before = sim_log.lock().unwrap().matches("stream opened").count();
        std::thread::spawn(move || {
            if during == During::Nothing {
                return;
            }
            for _ in 0..400 {
                if sim_log.lock().unwrap().matches("stream opened").count() > opened_before {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(20));
            match during {
                During::KillSim => {
                    let _ = std::process::Command::new("kill")
                        .args(["-9", &pid.to_string()])
                        .status();
                }
                During::KillAdbServer => adb.unwrap().kill_hard(),
                During::AdbDisconnect => {
                    adb.unwrap().run(&["disconnect", &serial]);
                }
                During::Nothing => {}
            }
        })
    };
    let started = Instant::now();
    let result = call(&client, tool, args.clone()).await;
    let millis = started.elapsed().as_millis();
    striker.join().unwrap();

    let outcome = if millis > (TIMEOUT_MS + SLACK_MS) as u128 {
        eprintln!(
            "{route:?} / {} / {op}: answered after {millis} ms: {:?}",
            fault.name, result.content
        );
        Outcome::Hang
    } else if result.is_error != Some(true) {
        if is_correct(op, &result, &serial, Some((fault, route))) {
            Outcome::Correct
        } else {
            Outcome::Unclear(format!(
                "a success that is not correct: {:?}",
                result.structured_content
            ))
        }
    } else {
        let message = err(&result);
        if fault.named_in(route, &message) {
            Outcome::ClearError(message)
        } else {
            Outcome::Unclear(message)
        }
    };

    // The fault clears: the device comes back healthy where it was, the adb server is up again.
    sim.kill();
    let _sim = SimProcess::start_at(&serial, &[]);
    if let Some(adb) = &adb {
        if fault.during == During::KillAdbServer {
            adb.restart();
            adb.connect_only(bystander);
        }
        if !adb.reconnect(&serial) {
            // Not droidmcp's doing: say so rather than blame the call after.
            panic!(
                "{route:?} / {} / {op}: adb did not bring {serial} back online in three tries",
                fault.name
            );
        }
    } else {
        // A failed connect holds off new ones for the documented 1 s cool-down.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    // The call after measures recovery, not speed: a host starved of CPU (the suite under
    // `--test-threads 8` on 2 cores) once let a screenshot run past 3 s, twice in a row. So, as a
    // user would, it is tried again after a timeout (or a connection still settling) until it
    // works or RECOVERY is spent; retries are counted in the table.
    let recovering = Instant::now();
    let mut next = call(&client, tool, args.clone()).await;
    let mut retried = false;
    while !is_correct(op, &next, &serial, None) && recovering.elapsed() < RECOVERY {
        let message = if next.is_error == Some(true) {
            err(&next)
        } else {
            String::new()
        };
        if !(message.contains("timed out") || message.contains("timeout") || fault.named_in(route, &message)) {
            break; // a wrong answer that is no passing fault: judged below
        }
        retried = true;
        tokio::time::sleep(Duration::from_millis(500)).await;
        next = call(&client, tool, args.clone()).await;
    }
    let after = if is_correct(op, &next, &serial, None) {
        None
    } else if next.is_error == Some(true) {
        Some(err(&next))
    } else {
        Some(format!("not correct: {:?}", next.structured_content))
    };
    let _ = client.cancel().await;
    let stderr = log.lock().unwrap().clone();
    let panicked = stderr.contains("panicked") || stderr.contains("internal error");
    Some(Cell {
        route,
        fault: fault.name,
        op,
        outcome,
        millis,
        after,
        retried,
        panicked,
        expected_to_fail: fault.expected_to_fail,
    })
}

/// A throwaway public key the simulator will not accept from anyone (for "unauthorized").
fn other_key(dir: &std::path::Path) -> Option<String> {
    let path = dir.join("otherkey");
    let made = std::process::Command::new("adb")
        .arg("keygen")
        .arg(&path)
        .output()
        .is_ok_and(|o| o.status.success());
    if !made {
        skip_or_fail("`adb keygen` failed or adb is not installed (apt-get install -y adb)");
        return None;
    }
    Some(path.with_extension("pub").to_string_lossy().into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "192 cells: .ci/run runs it alone (cargo test --test it fault_matrix -- --ignored)"]
async fn every_fault_on_every_operation_on_both_routes() {
    let keys = tempfile::tempdir().unwrap();
    let Some(other_key) = other_key(keys.path()) else {
        return;
    };
    // A second device on every adb server: no cell may touch it.
    let bystander = SimProcess::start_logged(&[]);
    let bystander_serial = bystander.serial();

    let mut plan = Vec::new();
    for route in [Route::Direct, Route::Server] {
        for (f, fault) in faults().into_iter().enumerate() {
            if route == Route::Direct && matches!(fault.during, During::KillAdbServer | During::AdbDisconnect) {
                continue; // no adb server on this route
            }
            // FAULT_MATRIX_ONLY=name runs one fault's row (to look into it).
            if std::env::var("FAULT_MATRIX_ONLY").is_ok_and(|only| only != fault.name) {
                continue;
            }
            for op in operations() {
                plan.push((route, f, op));
            }
        }
    }
    let planned = plan.len();
    let cells = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (route, f, op) in plan {
        let (cells, gate, other_key, bystander) =
            (cells.clone(), gate.clone(), other_key.clone(), bystander_serial.clone());
        tasks.push(tokio::spawn(async move {
            let _turn = gate.acquire().await.unwrap();
            let fault = &faults()[f];
            if let Some(cell) = run_cell(route, fault, op, &other_key, &bystander).await {
                cells.lock().unwrap().push(cell);
            }
        }));
    }
    for t in tasks {
        t.await.expect("a cell panicked");
    }
    let cells = std::mem::take(&mut *cells.lock().unwrap());
    if cells.is_empty() {
        return; // adb missing: skipped (fails under CI in AdbServer::start)
    }
    print_table(&cells, started.elapsed());
    println!("{} of {planned} planned cells ran", cells.len());
    assert_eq!(cells.len(), planned, "a cell was dropped: its adb server did not start");
    if std::env::var("FAULT_MATRIX_ONLY").is_err() {
        assert_eq!(
            planned, 192,
            "the matrix is 8 operations × (11 faults direct + 13 through the adb server)"
        );
    }

    let touched: Vec<String> = bystander
        .log()
        .lines()
        .filter(|l| l.contains("stream opened"))
        .map(String::from)
        .collect();
    assert!(touched.is_empty(), "the second device was driven: {touched:?}");

    let mut failures = Vec::new();
    for c in &cells {
        let mut wrong = Vec::new();
        if let Outcome::Unclear(m) = &c.outcome {
            wrong.push(format!("unclear answer: {m}"));
        }
        if c.outcome == Outcome::Hang {
            wrong.push(format!("answered after {} ms", c.millis));
        }
        if let Some(a) = &c.after {
            wrong.push(format!("the call after the fault cleared failed: {a}"));
        }
        if c.panicked {
            wrong.push("the server panicked".into());
        }
        match (wrong.is_empty(), c.expected_to_fail) {
            (false, None) => failures.push(format!("{:?} / {} / {}: {}", c.route, c.fault, c.op, wrong.join("; "))),
            (true, Some(reason)) => failures.push(format!(
                "{:?} / {} / {}: passes now; flip its expected-to-fail ({reason})",
                c.route, c.fault, c.op
            )),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} cells failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn print_table(cells: &[Cell], took: Duration) {
    println!(
        "\nfault matrix: {} cells in {:.1} s, timeout {TIMEOUT_MS} ms",
        cells.len(),
        took.as_secs_f64()
    );
    println!(
        "{:<22} {:>6} {:>4} {:>6} {:>7} {:>5} {:>8} {:>8}",
        "fault", "route", "ok", "clear", "unclear", "hang", "after", "slowest"
    );
    let mut totals = [0usize; 5];
    let mut slowest_all = 0;
    for name in faults().iter().map(|f| f.name) {
        for route in [Route::Direct, Route::Server] {
            let row: Vec<&Cell> = cells.iter().filter(|c| c.fault == name && c.route == route).collect();
            if row.is_empty() {
                continue;
            }
            let count = |f: &dyn Fn(&Cell) -> bool| row.iter().filter(|c| f(c)).count();
            let ok = count(&|c| c.outcome == Outcome::Correct);
            let clear = count(&|c| matches!(c.outcome, Outcome::ClearError(_)));
            let unclear = count(&|c| matches!(c.outcome, Outcome::Unclear(_)));
            let hang = count(&|c| c.outcome == Outcome::Hang);
            let after = count(&|c| c.after.is_none());
            let slowest = row.iter().map(|c| c.millis).max().unwrap_or(0);
            slowest_all = slowest_all.max(slowest);
            for (t, n) in totals.iter_mut().zip([ok, clear, unclear, hang, after]) {
                *t += n;
            }
            let route = if route == Route::Direct { "direct" } else { "server" };
            println!(
                "{name:<22} {route:>6} {ok:>4} {clear:>6} {unclear:>7} {hang:>5} {:>8} {:>6}ms",
                format!("{after}/{}", row.len()),
                slowest
            );
        }
    }
    let expected = cells.iter().filter(|c| c.expected_to_fail.is_some()).count();
    println!(
        "{:<22} {:>6} {:>4} {:>6} {:>7} {:>5} {:>8} {:>6}ms",
        "all",
        "",
        totals[0],
        totals[1],
        totals[2],
        totals[3],
        format!("{}/{}", totals[4], cells.len()),
        slowest_all
    );
    println!(
        "expected to fail: {expected}; panics: {}; calls after the fault tried again (a timeout or the fault's own error): {}",
        cells.iter().filter(|c| c.panicked).count(),
        cells.iter().filter(|c| c.retried).count()
    );
    println!("what a user reads (the first error of each fault and route):");
    for name in faults().iter().map(|f| f.name) {
        for route in [Route::Direct, Route::Server] {
            let first = cells.iter().find_map(|c| match &c.outcome {
                Outcome::ClearError(m) if c.fault == name && c.route == route => Some(m),
                _ => None,
            });
            if let Some(message) = first {
                let cut: String = message.chars().take(110).collect();
                println!("  {name} / {route:?}: {cut}");
            }
        }
    }
    // FAULT_MATRIX_ALL=1 prints every cell (to see which answers vary from run to run).
    if std::env::var("FAULT_MATRIX_ALL").is_ok() {
        for c in cells {
            println!(
                "  CELL {:?} / {} / {} / {} ms: {:?} after={:?}",
                c.route, c.fault, c.op, c.millis, c.outcome, c.after
            );
        }
    }
    for c in cells
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Unclear(_)) || c.after.is_some())
    {
        println!(
            "  FAILED {:?} / {} / {}: {:?} after={:?}",
            c.route, c.fault, c.op, c.outcome, c.after
        );
    }
}
