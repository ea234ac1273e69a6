//! The server's memory follows the capture cap and the cache bound, not the size of what a device
//! prints. Each case runs a fresh server against a simulator in its own process (so only the
//! server is measured) and prints its peak RSS above idle (VmHWM − VmRSS at idle).

use crate::common::*;
use serde_json::json;

const MIB: u64 = 1024;

/// A fresh server on `sim`, warmed up by one small call; its pid and idle RSS.
async fn fresh_server(sim: &SimProcess, extra: &[&str], home: &std::path::Path) -> (McpClient, u32, u64) {
    let target = format!("tcp:{}", sim.addr);
    let mut args = vec!["--adb", target.as_str()];
    args.extend_from_slice(extra);
    let Running { client, pid, .. } = Server::new(home)
        .args(&args)
        .transport(Transport::Stdio)
        .serve_with(())
        .await;
    let pid = pid.expect("a stdio server's pid");
    ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 1000"}),
    )
    .await);
    let idle = status_kib(pid, "VmRSS");
    (client, pid, idle)
}

fn seq(lines: u64) -> serde_json::Value {
    json!({"operation": "run", "command": format!("seq 1 {lines}"), "timeoutMs": 300000})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peak_memory_follows_the_capture_cap_and_the_cache_bound_not_the_output() {
    if !std::path::Path::new("/proc/self/status").exists() {
        skip_or_fail("no /proc: peak RSS cannot be read on this system");
        return;
    }
    let sim = SimProcess::start(&[]);
    let mut report = Vec::new();

    // One 5 MB output and one 50 MB output (over the 32 MiB cap).
    for (lines, label) in [(700_000u64, "5 MB"), (6_500_000, "50 MB")] {
        let home = tempfile::tempdir().unwrap();
        let (client, pid, idle) = fresh_server(&sim, &[], home.path()).await;
        let result = call(&client, "adb-shell", seq(lines)).await;
        let chars = response_chars(&result);
        let out = ok(&result);
        let peak = status_kib(pid, "VmHWM").saturating_sub(idle);
        let stdout = out["stdout"].as_str().unwrap();
        assert!(chars <= 4000, "{label}: {chars} chars");
        assert!(stdout.ends_with(&format!("\n{lines}\n")), "{label}: the tail is kept");
        if lines > 1_000_000 {
            let hint = out["hint"].as_str().unwrap_or("");
            assert!(hint.contains("capture cap"), "{label}: {hint}");
            // The stored entry says where it is cut.
            let id = out["stdoutCacheId"].as_str().unwrap();
            let cut = ok(&call(
                &client,
                "cache",
                json!({"operation": "get", "id": id, "filter": "bytes dropped here"}),
            )
            .await);
            assert_eq!(cut["matching"], 1, "{cut}");
            assert!(cut["items"].as_str().unwrap().contains("bytes dropped here"), "{cut}");
        }
        report.push(format!(
            "one {label} output ({} chars of stdout): peak {} MiB above idle, answer {chars} chars",
            out["stdoutChars"],
            peak / MIB
        ));
        assert!(peak <= 64 * MIB, "{label}: peak {} MiB above idle", peak / MIB);
        client.cancel().await.unwrap();
    }

    // 100 × 5 MB with a 16 MiB cache: the cache bound plus a working set, no more.
    let home = tempfile::tempdir().unwrap();
    let (client, pid, idle) = fresh_server(&sim, &["--cache-mib", "16"], home.path()).await;
    let started = std::time::Instant::now();
    for _ in 0..100 {
        ok(&call(&client, "adb-shell", seq(700_000)).await);
    }
    let peak = status_kib(pid, "VmHWM").saturating_sub(idle);
    let rss = status_kib(pid, "VmRSS").saturating_sub(idle);
    report.push(format!(
        "100 × 5 MB with --cache-mib 16: peak {} MiB above idle, {} MiB at the end ({} s)",
        peak / MIB,
        rss / MIB,
        started.elapsed().as_secs()
    ));
    for line in &report {
        println!("{line}");
    }
    assert!(peak <= (16 + 48) * MIB, "peak {} MiB above idle", peak / MIB);
    client.cancel().await.unwrap();
}

/// A script's memory is all of it: the answers the host gave and the script has not read yet
/// count with its heap toward the run's one limit (64 MiB). A run that asks for 175 answers of
/// 786 KB at once (a file of 262,000 `€` read back, and tool calls beside them) gets an error
/// naming the limit and what to do, not the host holding them; the server goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_unread_answers_count_toward_its_memory_limit() {
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let (client, pid, idle) = fresh_server(&sim, &[], home.path()).await;
    let code = "await workspace.write('big.txt', '€'.repeat(262000));\n\
                const reads = [];\n\
                for (let i = 0; i < 175; i++) reads.push(workspace.read('big.txt'), ...(i % 20 ? [] : [shell.run({command: 'echo ' + i})]));\n\
                const all = await Promise.all(reads);\n\
                console.log(all.length);";
    let run = call(
        &client,
        "script",
        json!({"operation": "run", "code": code, "timeoutMs": 120000}),
    )
    .await;
    let said = err(&run);
    let peak = status_kib(pid, "VmHWM").saturating_sub(idle);
    println!(
        "175 reads of 786 KB and 9 tool calls at once: peak {} MiB above idle; {said}",
        peak / MIB
    );
    for part in [
        "would pass the run's memory limit of 64 MiB",
        "the answers it has not read yet",
        "await fewer calls at once",
    ] {
        assert!(said.contains(part), "the error names the bound and what to do: {said}");
    }
    // The server goes on: a tool call and a script after it answer.
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let after = ok(&call(
        &client,
        "script",
        json!({"operation": "run", "code": "console.log((await shell.run({command: 'echo ok'})).stdout.trim())"}),
    )
    .await);
    assert_eq!(after["output"], "ok\n");
    client.cancel().await.unwrap();
}
