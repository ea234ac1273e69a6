//! Unit tests of `script::sandbox`.

use super::*;
use serde_json::json;

/// Answers `adb-device list` with one device, hangs on `adb-shell`, gives `ui wait` a
/// `not_found` error, refuses the rest.
struct FakeHost;

impl Host for FakeHost {
    fn namespaces(&self) -> Vec<crate::api::Namespace> {
        let ns = |name, tool, ops: &[&str]| crate::api::Namespace {
            name,
            tool,
            input: json!({"properties": {"operation": {"enum": ops}}})
                .as_object()
                .unwrap()
                .clone(),
            output: serde_json::Map::new(),
        };
        vec![
            ns("device", "adb-device", &["list"]),
            ns("app", "adb-app", &["info"]),
            ns("shell", "adb-shell", &["run"]),
            ns("ui", "ui", &["wait"]),
        ]
    }

    fn call(&self, _index: usize, tool: String, arguments: serde_json::Value) -> HostFuture {
        Box::pin(async move {
            match (tool.as_str(), arguments["operation"].as_str()) {
                ("adb-device", Some("list")) => Ok(json!({"devices": [{"serial": "emulator-5554"}]})),
                ("adb-shell", _) => {
                    std::future::pending::<()>().await;
                    unreachable!()
                }
                ("ui", Some("wait")) => Err(Thrown {
                    message: "\"Next\" did not appear".into(),
                    code: Some("not_found".into()),
                }),
                _ => Err(format!("no such call: {tool} {arguments}").into()),
            }
        })
    }
}

async fn run_with(code: &str, limits: Limits) -> Outcome {
    run(code, &json!({"n": 2}), &limits, Arc::new(FakeHost), ()).await
}

fn quick() -> Limits {
    Limits {
        timeout: Duration::from_millis(500),
        ..Limits::default()
    }
}

#[tokio::test]
async fn a_script_composes_calls_and_only_its_output_returns() {
    let out = run_with(
        "const d = await device.list(); console.log(d.devices.length, d.devices[0].serial); \
         try { await app.info({package: 'x'}) } catch (e) { console.log('caught:', e.message.slice(0, 12)) }",
        quick(),
    )
    .await;
    assert_eq!(out.error, None);
    assert_eq!(out.output, "1 emulator-5554\ncaught: no such call\n");
    let calls: Vec<(&str, &str, bool)> = out
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), c.operation.as_str(), c.ok))
        .collect();
    assert_eq!(calls, [("adb-device", "list", true), ("adb-app", "info", false)]);
}

/// A tool's error code reaches the script as `e.code` beside the message; an error without one
/// has none.
#[tokio::test]
async fn a_tools_error_code_is_the_thrown_errors_code() {
    let out = run_with(
        "try { await ui.wait({text: 'Next'}) } catch (e) { console.log(e.code, e.message) } \
         try { await app.info({package: 'x'}) } catch (e) { console.log(e.code === undefined) }",
        quick(),
    )
    .await;
    assert_eq!(out.error, None);
    assert_eq!(out.output, "not_found \"Next\" did not appear\ntrue\n");
}

#[tokio::test]
async fn errors_carry_the_message_and_the_line() {
    let out = run_with("console.log('before');\nnull.x;", quick()).await;
    assert_eq!(out.output, "before\n", "the output printed before the error comes back");
    assert_eq!(
        out.error.unwrap(),
        "cannot read property 'x' of null (line 2, column 1)"
    );
    let first = run_with("let a = 1; null.x", quick()).await;
    assert!(first.error.unwrap().ends_with("(line 1, column 12)"));
    let out = run_with("let = ;", quick()).await;
    let error = out.error.unwrap();
    assert_eq!(error, "variable name expected (line 1, column 6)");
}

#[tokio::test]
async fn every_limit_stops_the_run_and_is_named() {
    let started = Instant::now();
    let spin = run_with("for (;;) {}", quick()).await;
    assert!(spin.error.unwrap().contains("time limit of 500 ms"));
    let hang = run_with("await shell.run({command: 'sleep 99'})", quick()).await;
    assert!(
        hang.error.unwrap().contains("time limit"),
        "a hung host call is cut too"
    );
    // Uncut, the second run would sleep 99 s; the bound leaves room for a loaded host.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    let memory = Limits {
        memory_bytes: 8 << 20,
        ..quick()
    };
    let big = run_with("const a = []; for (;;) a.push('x'.repeat(1 << 16));", memory).await;
    assert!(big.error.unwrap().contains("out of memory: its limit is 8 MiB"));
    let deep = run_with("const f = (n) => f(n + 1) + 1; f(0);", quick()).await;
    assert!(deep.error.unwrap().contains("stack"), "recursion hits the stack limit");

    let calls = Limits {
        max_calls: 3,
        ..quick()
    };
    let many = run_with("for (let i = 0; i < 5; i++) await device.list();", calls.clone()).await;
    assert!(many.error.unwrap().contains("more than 3 calls"));
    assert_eq!(many.calls.len(), 3);
    // workspace.* and skills.* count as calls too.
    let local = run_with(
        "for (let i = 0; i < 5; i++) { try { await workspace.list(); } catch (e) { if (e.message.includes('more than')) throw e; } }",
        calls,
    )
    .await;
    assert!(local.error.unwrap().contains("more than 3 calls"));

    // An argument is measured in the sandbox, before it is copied out: a 20 MB one is refused.
    let huge = run_with("await shell.run({command: 'x'.repeat(20 << 20)});", quick()).await;
    let said = huge.error.unwrap();
    assert!(said.contains("over the 262144 a call takes"), "{said}");
    assert!(huge.calls.is_empty(), "the host never saw it");

    let output = Limits {
        max_output_chars: 100,
        ..quick()
    };
    let loud = run_with("for (let i = 0; i < 1000; i++) console.log('line', i);", output).await;
    assert!(loud.output.ends_with("…[output cut at its limit]\n"), "{}", loud.output);
    assert!(loud.output.chars().count() < 140);
}

/// Dropping a run's future (a client's cancel, the call's deadline) stops a busy loop in the
/// sandbox, and what the run held is let go once its thread has ended.
#[tokio::test]
async fn dropping_the_run_stops_a_busy_loop_and_lets_go_of_its_hold() {
    let slots = Arc::new(tokio::sync::Semaphore::new(1));
    let permit = slots.clone().try_acquire_owned().unwrap();
    let limits = Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    let no_args = json!({});
    let spinning = run("for (;;) {}", &no_args, &limits, Arc::new(FakeHost), permit);
    let _ = tokio::time::timeout(Duration::from_millis(200), spinning).await;
    let dropped = Instant::now();
    // Kept, the slot would come back at the run's 60 s deadline.
    let back = tokio::time::timeout(Duration::from_secs(10), slots.acquire()).await;
    assert!(back.is_ok(), "the busy loop kept its slot");
    println!("the slot was back {:?} after the drop", dropped.elapsed());
}

#[tokio::test]
async fn args_sleep_and_a_polluted_prototype() {
    let out = run_with(
        "console.log(args.n * 21);\n\
         const t = Date.now(); await sleep(50); console.log(Date.now() - t >= 45);\n\
         JSON.stringify = () => '{\"operation\":\"evil\"}'; Object.prototype.operation = 'evil';\n\
         Array.prototype.map = () => []; const d = await device.list(); console.log(d.devices.length);",
        quick(),
    )
    .await;
    assert_eq!(out.error, None);
    assert_eq!(out.output, "42\ntrue\n1\n", "the API kept its own JSON and operation");
    let returned = run_with("console.log('first'); return {n: args.n};", quick()).await;
    assert_eq!(
        returned.output, "first\n{\"n\":2}\n",
        "a returned value is printed last"
    );
    let long = run_with("await sleep(1e9)", quick()).await;
    assert!(long.error.unwrap().contains("time limit"), "sleep ends with the run");
    let no_local = run_with("await workspace.list()", quick()).await;
    assert!(no_local.error.unwrap().contains("not available"));
}

#[tokio::test]
async fn nothing_outside_the_api_is_reachable() {
    let probes = [
        "typeof require",
        "typeof process",
        "typeof Deno",
        "typeof fetch",
        "typeof setTimeout",
        "typeof std",
        "typeof os",
        "typeof __call",
        "typeof globalThis.__call",
        "typeof __local + typeof __sleep + typeof __args",
        "Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith('__')).length",
        "(() => { try { device.list = 1 } catch (e) {} return typeof device.list })()",
        "(() => { try { globalThis.device = {} } catch (e) {} return Object.isFrozen(device) })()",
        "Function('return typeof process')()",
    ];
    let code: String = probes.iter().map(|p| format!("console.log(String({p}));\n")).collect();
    let out = run_with(&code, quick()).await;
    assert_eq!(out.error, None);
    let said: Vec<&str> = out.output.lines().collect();
    let expected = [
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefinedundefinedundefined",
        "0",
        "function",
        "true",
        "undefined",
    ];
    assert_eq!(said, expected);
    let import = run_with("await import('fs')", quick()).await;
    assert!(import.error.is_some(), "no module loader: {:?}", import.output);
}

/// Counts the calls that work at once.
#[derive(Default)]
struct CountingHost {
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Host for CountingHost {
    fn namespaces(&self) -> Vec<crate::api::Namespace> {
        FakeHost.namespaces()
    }

    fn call(&self, _index: usize, _tool: String, _arguments: serde_json::Value) -> HostFuture {
        let (now, most) = (self.now.clone(), self.most.clone());
        Box::pin(async move {
            most.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            Ok(json!({"done": true}))
        })
    }
}

#[tokio::test]
async fn a_runs_calls_work_a_few_at_once_and_the_rest_wait_their_turn() {
    let host = Arc::new(CountingHost::default());
    let code = "const all = await Promise.all(Array.from({length: 40}, () => app.info({})));\n\
                console.log(all.filter((a) => a.done).length);";
    let outcome = run(code, &json!({}), &Limits::default(), host.clone(), ()).await;
    let most = host.most.load(Ordering::SeqCst);
    println!("40 calls at once: at most {most} worked at the same time");
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.output, "40\n", "every call was answered");
    assert_eq!(most, MAX_CALLS_AT_ONCE);
}
