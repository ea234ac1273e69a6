//! Device leases (issue 45): two principals (tokens) on one `serve --http`, three simulated
//! devices behind two `--adb` sources (an adb server with two Pixels, a direct Android 6). A
//! lease keeps the other principal's acting calls out, naming the holder and until when, and
//! lets it read; the holder's use renews it; release and expiry end it; a lease by match takes a
//! free device of that model, API level or source; a person's take-over in the panel is a lease
//! in the same store, so the two refuse each other. Which operations a non-holder is refused is
//! generated from the registry (`Built::acts`).

use rmcp::ClientServiceExt;
use serde_json::{Value, json};

use crate::common::*;
use crate::panel::{AppsClient, panel_call};

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0";
const LEASED: &str = "is leased to alice until";

type Client<H> = rmcp::service::RunningService<rmcp::RoleClient, H>;

/// The lab: the server, both principals' clients (Alice's offers the panel), the devices'
/// names as the server lists them, and what keeps them running.
struct Lab {
    server: HttpServer,
    alice: Client<AppsClient>,
    bob: Client<()>,
    /// The two Pixels on the adb server (source `labA`), the Android 6 on the direct source (`bench`).
    pixels: [String; 2],
    old: String,
    _devices: (Option<AdbServer>, Vec<SimProcess>),
}

async fn lab(home: &std::path::Path) -> Option<Lab> {
    let adb = AdbServer::start()?;
    let sims = vec![
        SimProcess::start(&[]),
        SimProcess::start(&[]),
        SimProcess::start_profile(&repo_dir().join("fixtures/android6-emulator"), &[]),
    ];
    let pixels = [adb.connect(&sims[0]), adb.connect(&sims[1])];
    let old = sims[2].serial();
    let (a, b) = (
        format!("labA=server:127.0.0.1:{}", adb.port),
        format!("bench=tcp:{}", sims[2].addr),
    );
    let (alice_token, bob_token) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--adb", &a, "--adb", &b, "--token", &alice_token, "--token", &bob_token],
        &[],
        home,
    )
    .await;
    let alice = AppsClient
        .serve_with_lifecycle(server.transport(Some(ALICE)), lifecycle())
        .await
        .unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), lifecycle()).await.unwrap();
    Some(Lab {
        server,
        alice,
        bob,
        pixels,
        old,
        _devices: (Some(adb), sims),
    })
}

fn tap(device: &str) -> Value {
    json!({"operation": "tap", "x": 540, "y": 1200, "device": device})
}

/// The lease `adb-device list` shows on `device` (Null when none).
async fn listed_lease<H: rmcp::ClientHandler>(client: &Client<H>, device: &str) -> Value {
    let list = ok(&call(client, "adb-device", json!({"operation": "list"})).await);
    let row = list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["serial"] == device)
        .unwrap_or_else(|| panic!("{device} in {list}"))
        .clone();
    row.get("lease").cloned().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_refuses_another_principals_acting_calls_lets_it_read_is_renewed_by_use_and_ends_by_release_or_expiry()
{
    let home = tempfile::tempdir().unwrap();
    let Some(lab) = lab(home.path()).await else { return };
    let (alice, bob, p0) = (&lab.alice, &lab.bob, lab.pixels[0].as_str());

    let leased = ok(&call(
        alice,
        "adb-device",
        json!({"operation": "lease", "device": p0, "ttlSecs": 600}),
    )
    .await);
    assert_eq!(leased["device"], p0, "{leased}");
    assert_eq!(leased["lease"]["holder"], "alice", "{leased}");
    assert_eq!(leased["lease"]["ttlSecs"], 600, "{leased}");
    let until = leased["lease"]["until"].as_str().unwrap().to_string();

    // Bob's acting calls are refused, naming Alice and until when, and nothing is done; in a
    // script too. His readings answer.
    let before = ok(&shell_on(bob, Some(lab.pixels[1].as_str()), "echo other-device-free").await);
    assert_eq!(before["stdout"], "other-device-free\n");
    let refused = err(&call(bob, "ui", tap(p0)).await);
    assert!(refused.contains(&format!("{p0} {LEASED} {until}")), "{refused}");
    assert!(refused.contains("release"), "says what to do: {refused}");
    let refused = err(&shell_on(bob, Some(p0), "touch /data/local/tmp/bob-was-here").await);
    assert!(refused.contains(LEASED), "{refused}");
    let script = ok(&call(
        bob,
        "script",
        json!({"operation": "run", "code": format!("try {{ await ui.key({{name: 'HOME', device: '{p0}'}}); console.log('acted') }} catch (e) {{ console.log(String(e)) }}")}),
    )
    .await);
    assert!(script["output"].as_str().unwrap().contains(LEASED), "{script}");
    let dump = ok(&call(bob, "ui", json!({"operation": "dump", "device": p0, "limit": 3})).await);
    assert!(dump["elements"].is_array(), "{dump}");
    ok(&call(bob, "adb-device", json!({"operation": "properties", "device": p0})).await);
    // Nor can he take or end Alice's lease.
    let taken = err(&call(bob, "adb-device", json!({"operation": "lease", "device": p0})).await);
    assert!(taken.contains(LEASED), "{taken}");
    let released = err(&call(bob, "adb-device", json!({"operation": "release", "device": p0})).await);
    assert!(released.contains(LEASED), "{released}");
    // Nothing Bob tried reached the device.
    let files = ok(&shell_on(alice, Some(p0), "ls /data/local/tmp").await);
    assert!(!files["stdout"].as_str().unwrap().contains("bob-was-here"), "{files}");

    // Both see the lease in the list; Alice's acting call renews it (her `ls` above did too).
    let until = listed_lease(alice, p0).await["until"].as_str().unwrap().to_string();
    assert_eq!(listed_lease(bob, p0).await["until"], until.as_str());
    ok(&call(alice, "ui", tap(p0)).await);
    let renewed = listed_lease(bob, p0).await;
    assert_eq!(renewed["holder"], "alice");
    assert!(
        renewed["until"].as_str().unwrap() > until.as_str(),
        "{renewed} after {until}"
    );

    // Released: Bob acts.
    let released = ok(&call(alice, "adb-device", json!({"operation": "release", "device": p0})).await);
    assert!(released["hint"].as_str().unwrap().contains("released"), "{released}");
    assert_eq!(listed_lease(bob, p0).await, Value::Null);
    ok(&call(bob, "ui", tap(p0)).await);

    // A lease of a second ends by itself: Bob's tap goes through once it has (polled, at most
    // a minute: no timing asserted), and the list shows it free.
    let p1 = lab.pixels[1].as_str();
    ok(&call(
        alice,
        "adb-device",
        json!({"operation": "lease", "device": p1, "ttlSecs": 1}),
    )
    .await);
    let mut tries = 0;
    loop {
        tries += 1;
        let answer = call(bob, "ui", tap(p1)).await;
        if answer.is_error != Some(true) {
            break;
        }
        assert!(err(&answer).contains(LEASED), "{}", err(&answer));
        assert!(tries < 600, "the 1 s lease never ended");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listed_lease(alice, p1).await, Value::Null);
    println!("a 1 s lease ended after {tries} tries of the other principal's tap");
    lab.server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_by_match_takes_a_free_device_of_that_model_sdk_or_source_on_either_source() {
    let home = tempfile::tempdir().unwrap();
    let Some(lab) = lab(home.path()).await else { return };
    let (alice, bob) = (&lab.alice, &lab.bob);
    let lease = async |client: &Client<()>, matching: Value| {
        call(client, "adb-device", json!({"operation": "lease", "match": matching})).await
    };

    // The Android 6 device is on the second source, a direct one.
    let old = ok(&lease(bob, json!({"sdk": 23})).await);
    assert_eq!(old["device"], lab.old.as_str(), "{old}");
    let refused = err(&call(
        alice,
        "ui",
        json!({"operation": "key", "name": "HOME", "device": lab.old}),
    )
    .await);
    assert!(refused.contains("is leased to bob until"), "{refused}");

    // Two Pixels match "pixel 7": Bob gets one, Alice the other; a lease again by match renews
    // the one each holds; none is left for Alice of sdk 23.
    let first = ok(&lease(bob, json!({"model": "pixel 7", "source": "labA"})).await);
    let second = ok(&call(
        alice,
        "adb-device",
        json!({"operation": "lease", "match": {"model": "PIXEL", "sdk": 34}}),
    )
    .await);
    let mut got = [first["device"].as_str().unwrap(), second["device"].as_str().unwrap()];
    got.sort();
    let mut pixels = lab.pixels.clone();
    pixels.sort();
    assert_eq!(got, [pixels[0].as_str(), pixels[1].as_str()]);
    let again = ok(&call(
        alice,
        "adb-device",
        json!({"operation": "lease", "match": {"model": "pixel"}}),
    )
    .await);
    assert_eq!(again["device"], second["device"], "{again}");
    let again = ok(&lease(bob, json!({"model": "pixel"})).await);
    assert_eq!(again["device"], first["device"], "{again}");
    let none_left = err(&call(alice, "adb-device", json!({"operation": "lease", "match": {"sdk": 23}})).await);
    assert!(
        none_left.contains(&format!(
            "every device that matches sdk 23 is leased: {} to bob until",
            lab.old
        )),
        "{none_left}"
    );
    // The list shows all three leases.
    for (device, holder) in [
        (&lab.old, "bob"),
        (&second["device"].as_str().unwrap().to_string(), "alice"),
    ] {
        assert_eq!(listed_lease(alice, device).await["holder"], holder);
    }
    lab.server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_take_over_in_the_panel_and_another_principals_lease_refuse_each_other() {
    let home = tempfile::tempdir().unwrap();
    let Some(lab) = lab(home.path()).await else { return };
    let (alice, bob, p0) = (&lab.alice, &lab.bob, lab.pixels[0].as_str());

    // Alice takes over in her panel: Bob can neither lease nor act; Alice's panel acts, her
    // assistant waits.
    let held = ok(&panel_call(alice, "device-panel", json!({"operation": "hold", "device": p0})).await);
    assert_eq!(held["held"], true, "{held}");
    let refused = err(&call(bob, "adb-device", json!({"operation": "lease", "device": p0})).await);
    assert!(
        refused.contains("is leased to a person (alice) in the droidmcp device panel until"),
        "{refused}"
    );
    let refused = err(&call(bob, "ui", tap(p0)).await);
    assert!(refused.contains("a person (alice)"), "{refused}");
    ok(&panel_call(alice, "ui", tap(p0)).await);
    let paused = err(&call(alice, "ui", tap(p0)).await);
    assert!(paused.contains("a person has taken over"), "{paused}");
    assert_eq!(
        listed_lease(bob, p0).await["holder"],
        "a person (alice) in the droidmcp device panel"
    );
    ok(&panel_call(alice, "device-panel", json!({"operation": "release", "device": p0})).await);

    // Bob leases it: Alice's take-over is refused, naming him, and so are her panel's acts.
    ok(&call(bob, "adb-device", json!({"operation": "lease", "device": p0})).await);
    let refused = err(&panel_call(alice, "device-panel", json!({"operation": "hold", "device": p0})).await);
    assert!(refused.contains(&format!("{p0} is leased to bob until")), "{refused}");
    let refused = err(&panel_call(alice, "ui", tap(p0)).await);
    assert!(refused.contains("is leased to bob"), "{refused}");
    lab.server.terminate().await;
}

/// Both Pixels are copies of one emulator image, so both print the same ro.serialno, as real
/// emulators do: a lease keyed by the phone (not its route) must still tell them apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_copies_of_one_emulator_image_are_two_phones_with_a_lease_each() {
    let home = tempfile::tempdir().unwrap();
    let Some(lab) = lab(home.path()).await else { return };
    let (alice, bob, [p0, p1]) = (&lab.alice, &lab.bob, &lab.pixels);
    let serials: Vec<String> = futures::future::join_all(
        lab.pixels
            .iter()
            .map(|p| shell_on(alice, Some(p), "getprop ro.serialno")),
    )
    .await
    .iter()
    .map(|answer| ok(answer)["stdout"].as_str().unwrap_or_default().trim().to_string())
    .collect();
    assert_eq!(serials[0], serials[1], "the two copies print one ro.serialno");
    ok(&call(alice, "adb-device", json!({"operation": "lease", "device": p0})).await);
    ok(&call(bob, "adb-device", json!({"operation": "lease", "device": p1})).await);
    ok(&call(bob, "ui", tap(p1)).await);
    ok(&call(alice, "ui", tap(p0)).await);
    let refused = err(&call(bob, "ui", tap(p0)).await);
    assert!(refused.contains(&format!("{p0} {LEASED}")), "{refused}");
    assert_eq!(listed_lease(alice, p0).await["holder"], "alice");
    assert_eq!(listed_lease(alice, p1).await["holder"], "bob");
    lab.server.terminate().await;
}

/// A device that cannot say which phone it is (its getprop never answers) gets no lease, with an
/// error saying why; while another device is leased, acting calls on it are refused too: keyed
/// by its route instead, a second route to the same phone would slip past the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_that_cannot_say_which_phone_it_is_gets_no_lease_and_no_acting_call_while_leases_live() {
    let home = tempfile::tempdir().unwrap();
    let fine = SimProcess::start(&[]);
    let mute = SimProcess::start(&["--stall-on", "getprop"]);
    let sources = [format!("fine=tcp:{}", fine.addr), format!("mute=tcp:{}", mute.addr)];
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &[
            "--adb",
            &sources[0],
            "--adb",
            &sources[1],
            "--token",
            &a,
            "--token",
            &b,
            "--timeout-ms",
            "3000",
        ],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), lifecycle()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), lifecycle()).await.unwrap();
    let refused = err(&call(
        &bob,
        "adb-device",
        json!({"operation": "lease", "device": mute.serial()}),
    )
    .await);
    assert!(
        refused.contains(&format!("cannot tell which phone `{}` is", mute.serial()))
            && refused.contains("nothing was leased"),
        "{refused}"
    );
    // Nobody holds anything yet: acting on it is not held up.
    ok(&shell_on(&bob, Some(&mute.serial()), "echo free").await);
    ok(&call(
        &alice,
        "adb-device",
        json!({"operation": "lease", "device": fine.serial()}),
    )
    .await);
    let refused = err(&shell_on(&bob, Some(&mute.serial()), "touch /data/local/tmp/bob").await);
    assert!(
        refused.contains("cannot tell which phone") && refused.contains("nothing was done"),
        "{refused}"
    );
    let listed = ok(&call(&bob, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(listed["devices"].as_array().map(Vec::len), Some(2), "{listed}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_lease_requests_are_refused_saying_what_was_wrong() {
    let home = tempfile::tempdir().unwrap();
    let Some(lab) = lab(home.path()).await else { return };
    let (alice, bob, p0) = (&lab.alice, &lab.bob, lab.pixels[0].as_str());
    let lease = async |args: Value| {
        let mut all = json!({"operation": "lease"});
        all.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
        err(&call(bob, "adb-device", all).await)
    };
    let cases = [
        (json!({"device": "no-such-phone"}), "no-such-phone"),
        (
            json!({"device": p0, "ttlSecs": 0}),
            "ttlSecs must be between 1 and 86400; got 0",
        ),
        (
            json!({"device": p0, "ttlSecs": 86_401}),
            "ttlSecs must be between 1 and 86400; got 86401",
        ),
        (json!({"device": p0, "ttlSecs": -5}), "ttlSecs"),
        (
            json!({"device": p0, "match": {"sdk": 34}}),
            "takes `device` or `match`, not both",
        ),
        (json!({"match": {}}), "`match` is empty"),
        (
            json!({"match": {"colour": "red"}}),
            "unknown field `colour`, expected one of `model`, `sdk`, `source`",
        ),
        (json!({"match": {"sdk": "34"}}), "match.sdk"),
        (
            json!({"match": {"model": "Nokia 3310"}}),
            "no online device matches model \"Nokia 3310\"",
        ),
        (json!({"match": {"sdk": 99}}), "no online device matches sdk 99"),
        (
            json!({"match": {"source": "labZ"}}),
            "no online device matches source \"labZ\"",
        ),
    ];
    for (args, says) in &cases {
        let refused = lease(args.clone()).await;
        assert!(refused.contains(says), "{args}: {refused}");
    }
    // Nothing matched names what there is.
    let refused = lease(json!({"match": {"model": "Nokia 3310"}})).await;
    assert!(
        refused.contains(&format!("{} (source bench", lab.old)) && refused.contains("sdk 23"),
        "{refused}"
    );
    // Releasing another's lease.
    ok(&call(alice, "adb-device", json!({"operation": "lease", "device": p0})).await);
    let refused = err(&call(bob, "adb-device", json!({"operation": "release", "device": p0})).await);
    assert!(
        refused.contains(&format!("{p0} {LEASED}")) && refused.contains("nothing was done"),
        "{refused}"
    );
    assert_eq!(listed_lease(bob, p0).await["holder"], "alice");
    println!(
        "{} bad lease requests, each refused with what was wrong",
        cases.len() + 1
    );
    lab.server.terminate().await;
}

/// Every operation tools/list offers (the take-over suite's case for each), made by Bob on a
/// device Alice leased, directly and from a script: refused, naming Alice, exactly when the
/// registry says it acts (`Built::acts`, from `Command::acts`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_the_registry_says_acts_is_refused_to_a_non_holder_and_no_other() {
    let home = tempfile::tempdir().unwrap();
    let apks = tempfile::tempdir().unwrap();
    let apk = build_test_apk(apks.path(), "org.droidmcp.leased", 1);
    let (alice_token, bob_token) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--sim", "--token", &alice_token, "--token", &bob_token],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), lifecycle()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), lifecycle()).await.unwrap();
    ok(&call(&alice, "adb-device", json!({"operation": "lease", "ttlSecs": 3600})).await);

    let cases = crate::take_over::cases(apk.to_str().unwrap());
    let (mut acting, mut reading, mut wrong) = (0, 0, Vec::new());
    for case in &cases {
        let mut args = case.args.clone();
        for value in args.as_object_mut().unwrap().values_mut() {
            if value.as_str().is_some_and(|s| s.starts_with('$')) {
                *value = json!("made-up");
            }
        }
        let tool = droidmcp::tools::registry::find(case.tool).unwrap();
        let acts = (tool.build)(args.as_object().unwrap().clone()).unwrap().acts;
        let answer = call(&bob, case.tool, args.clone()).await;
        let text = answer
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<String>();
        let refused = answer.is_error == Some(true) && text.contains(LEASED);
        if refused != acts {
            wrong.push(format!("{} {args}: acts {acts}, refused {refused}: {text}", case.tool));
        }
        if acts && let Some(ns) = tool.namespace {
            let out = ok(&call(&bob, "script", crate::take_over::script_calling(ns, &args)).await);
            if !out["output"].as_str().unwrap_or_default().contains(LEASED) {
                wrong.push(format!("{} {args} from a script was not refused: {out}", case.tool));
            }
        }
        match acts {
            true => acting += 1,
            false => reading += 1,
        }
    }
    println!(
        "{} generated cases from the registry ({acting} acting, refused to the non-holder, also from a script; {reading} reading, answered)",
        cases.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(acting >= 15 && reading >= 15, "{acting} acting, {reading} reading");
    server.terminate().await;
}
