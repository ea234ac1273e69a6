//! One mechanism per concern: each concern below has one home in `src/` or `crates/*/src/`, and
//! this test fails when a second copy of it appears anywhere else (found by the text a copy
//! cannot do without). When it fails, call the one in its home instead of writing another.

use crate::common::*;

/// A concern, how a copy of it shows (every marker on one file), its one home, and the files
/// that still hold an older copy until their own refactor (allowed, not required).
struct Mechanism {
    concern: &'static str,
    markers: &'static [&'static str],
    home: &'static str,
    pending: &'static [&'static str],
}

const MECHANISMS: &[Mechanism] = &[
    Mechanism {
        concern: "turning a point into a device command (input.rs chooses the input device or `input`)",
        markers: &["input tap "],
        home: "src/tools/ui/input.rs",
        pending: &[],
    },
    Mechanism {
        concern: "turning a press or a swipe into a device command (input.rs)",
        markers: &["input swipe "],
        home: "src/tools/ui/input.rs",
        pending: &[],
    },
    Mechanism {
        concern: "measuring a stream's speed from the bytes it sent (`link.rs` keeps each device's)",
        markers: &["fn bytes_per_s("],
        home: "crates/adb/src/capture.rs",
        pending: &[],
    },
    Mechanism {
        concern: "taking a screenshot, raw or PNG by the link (the one screencap)",
        markers: &["\"screencap -p\""],
        home: "src/tools/ui/capture.rs",
        pending: &[],
    },
    Mechanism {
        concern: "cutting a string to a length (the one cut)",
        markers: &["fn cut("],
        home: "crates/android/src/text.rs",
        pending: &[],
    },
    Mechanism {
        concern: "shrinking a JSON value to a char limit",
        markers: &["fn shrink("],
        home: "crates/context/src/shrink.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a second JSON shrinker under the old name",
        markers: &["fn cut_value("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "naming a file a replayed flow made (another flow's or shard's of the same name kept)",
        markers: &["fn name_made_file("],
        home: "src/replay/output.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a principal's folder name",
        markers: &["fn principal_folder("],
        home: "crates/confine/src/lib.rs",
        pending: &[],
    },
    Mechanism {
        concern: "path confinement: refusing a symbolic link",
        markers: &["is_symlink()"],
        home: "crates/confine/src/lib.rs",
        pending: &[],
    },
    Mechanism {
        concern: "path confinement: a whole path kept under allowed folders",
        markers: &["canonicalize(", "starts_with(dir"],
        home: "crates/confine/src/lib.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a path a third party wrote kept inside its folder as a chroot keeps it (confine::chrooted)",
        markers: &["\"..\" =>", "parts.pop()"],
        home: "crates/confine/src/lib.rs",
        // The simulated device's own paths, resolved as its kernel does (sim sits below confine).
        pending: &["crates/sim/src/fs.rs"],
    },
    Mechanism {
        concern: "writing a file: the one door, confine::Folder::write (plain names, no link followed, 0600 in 0700 folders)",
        markers: &["O_NOFOLLOW"],
        home: "crates/confine/src/at.rs",
        pending: &[],
    },
    Mechanism {
        concern: "opening a file to write past the one door (confine::Folder::write)",
        markers: &["OpenOptions"],
        home: "crates/confine/src/at.rs",
        pending: &[],
    },
    Mechanism {
        concern: "writing a whole file past the one door (confine::Folder::write)",
        markers: &["fs::write("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "creating a file past the one door (confine::Folder::write)",
        markers: &["File::create("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "making a folder past the one door (confine::Folder::private, chosen, sub)",
        markers: &["create_dir"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "renaming a file into place past the one door (confine::Folder::write)",
        markers: &["fs::rename("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "a folder's mode changed past the one door (confine::Folder::private)",
        markers: &["set_permissions("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "a folder's mode changed through a handle past the one door (confine::Folder::private)",
        markers: &["fchmod("],
        home: "crates/confine/src/at.rs",
        pending: &[],
    },
    Mechanism {
        concern: "removing a folder tree past the one door (confine::Folder::remove: through the held handle, no link followed)",
        markers: &["remove_dir_all("],
        home: "",
        pending: &["crates/script/src/runs.rs"],
    },
    Mechanism {
        concern: "serving HTTP connections: hyper with its header timeout (axum::serve has none)",
        markers: &["axum::serve("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "reading an HTTP request's body: http::body::read (a time, a bound, a slot, the scan)",
        markers: &["axum::body::to_bytes(body"],
        home: "src/http/body.rs",
        pending: &[],
    },
    Mechanism {
        concern: "whose a legacy HTTP session is: http::sessions (owned_by, claim)",
        markers: &["mcp-session-id", "HeaderValue::from_static"],
        home: "src/http/sessions.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a poll loop (sleeps between looks, reports progress)",
        markers: &["tokio::time::sleep", "get_progress_token"],
        home: "src/tools/poll.rs",
        pending: &[],
    },
    Mechanism {
        concern: "refusing a field the operation does not take",
        markers: &["fn check_fields("],
        home: "src/tools/command.rs",
        pending: &[],
    },
    Mechanism {
        concern: "reading a tool's arguments into its wire struct",
        markers: &["fn parse_args"],
        home: "src/tools/command.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a range check of a number on the wire",
        markers: &["must be between"],
        home: "src/tools/command.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a step entering a recording (Recordings::record, after the call worked)",
        markers: &["steps.push_back("],
        home: "crates/flow/src/record.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a reading handed to the recording (read.rs's `seen`, inside read_screen: every reading, as it is taken)",
        markers: &["flows.saw("],
        home: "src/tools/ui/read.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a swipe's path across the screen from a direction (the one swipe geometry)",
        markers: &["cx + dx", "cy - dy"],
        home: "src/tools/ui/act.rs",
        pending: &[],
    },
    Mechanism {
        concern: "the text field with input focus in a reading (act.rs's focused_field; a web page's is web.rs's, over DevTools)",
        markers: &["f == \"focused\""],
        home: "src/tools/ui/act.rs",
        pending: &[],
    },
    Mechanism {
        concern: "reading a call's raw `operation` (only the one parse does; whether a call acts on a device is its built command's Command::acts)",
        markers: &["get(\"operation\")"],
        home: "src/tools/command.rs",
        pending: &[],
    },
    Mechanism {
        concern: "whether a call acts (Command::acts), read once by the lease door (leases::acts, leases::refusal)",
        markers: &[".acts()"],
        home: "src/tools/leases.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a principal's handles (cache, refs, skills, runs, recordings) kept in or read from the shared store (--state), at the one door",
        markers: &["&state.handles", ".put_if(", "flows.put("],
        home: "src/tools/handles.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a lease checked and renewed by an acting call (Leases::touch), at the one door",
        markers: &[".touch("],
        home: "src/tools/leases.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a lease's key: the phone, whichever route reaches it (Adb::identity, read by leases::key)",
        markers: &["adb.identity("],
        home: "src/tools/leases.rs",
        pending: &[],
    },
    Mechanism {
        concern: "who may act on a leased device, take or end its lease (state::Lease::lets)",
        markers: &[".lets("],
        home: "crates/state/src/leases.rs",
        pending: &[],
    },
    Mechanism {
        concern: "the take-over decided from a tool's name and raw arguments, before its command is built",
        markers: &["fn acts(tool"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "one Direction for the finger (swipe) and the content (scroll): FingerDirection, ContentDirection",
        markers: &["enum Direction"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "a tuple named Aim for where an action lands: ui's Landing",
        markers: &["type Aim"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "flow::Target::recorded, which records nothing: checks()",
        markers: &["pub fn recorded(&self)"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "running a script in a web page (devtools::Session::evaluate: droidmcp's isolated world, never the page's own)",
        markers: &["\"Runtime.evaluate\""],
        home: "crates/adb/src/devtools.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a web frame's offset, its content box (web.rs's contentOffset, for reading, tapping and the cover check)",
        markers: &["clientTop"],
        home: "src/tools/ui/web.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a reading with a remember flag: read_screen and read_current",
        markers: &["remember: bool"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "deciding whether a flow's field is a `${…}` template (flow::maestro::template, by interp's own scan): a command that tests it itself renders on a path of its own",
        markers: &["contains(\"${\")"],
        home: "crates/flow/src/maestro/template.rs",
        pending: &[],
    },
    Mechanism {
        concern: "evaluating a `${…}` (runtime.js's interp, the one door every template of every Maestro command goes through)",
        markers: &["\\$\\{", "new Function"],
        home: "crates/flow/src/maestro/runtime.js",
        pending: &[],
    },
    Mechanism {
        concern: "Maestro's long press on Android, 3 s (maestro/command/tap_on.rs's LONG_PRESS_MS; the JavaScript run is handed it)",
        markers: &["3000"],
        home: "crates/flow/src/maestro/command/tap_on.rs",
        pending: &[],
    },
    Mechanism {
        concern: "Maestro's scrollUntilVisible loop of looks and swipes (maestro/command/scroll_until_visible.rs's scrollUntil, in JavaScript only)",
        markers: &["did not show after"],
        home: "crates/flow/src/maestro/command/scroll_until_visible.rs",
        pending: &[],
    },
    Mechanism {
        concern: "Maestro's swipe time for a scroll's speed (scroll_until_visible.rs's swipe_ms, in Rust only)",
        markers: &["1000 * left"],
        home: "crates/flow/src/maestro/command/scroll_until_visible.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a finger moving to a tenth of the screen from an edge (prelude.js's towards)",
        markers: &["* 0.9)"],
        home: "crates/flow/src/prelude.js",
        pending: &[],
    },
    Mechanism {
        concern: "telling an element that is not on the screen from a failed call, by the error's code (prelude.js's notThere)",
        markers: &["=== \"not_found\""],
        home: "crates/flow/src/prelude.js",
        pending: &[],
    },
    Mechanism {
        concern: "the error kind \"not on the screen (yet), nothing done\" (ui's resolve::not_on_screen, the one door it is set at)",
        markers: &["Some(ErrorKind::NotFound)"],
        home: "src/tools/ui/resolve.rs",
        pending: &[],
    },
    Mechanism {
        concern: "an element's identity, which refs, verify before act, the recorded selectors, the secret fields and web elements compare (android::identity::Identity, made once per reading)",
        markers: &["struct Identity"],
        home: "crates/android/src/identity.rs",
        pending: &[],
    },
    Mechanism {
        concern: "whether a node is a text field, whose text is state (identity::is_field, field_class)",
        markers: &["ends_with(\"EditText\")"],
        home: "crates/android/src/identity.rs",
        pending: &[],
    },
    Mechanism {
        concern: "an On/Off word taken for a checkable's state outside its identity (verify's and the Maestro writer's copies; identity::state_word is the rule)",
        markers: &["\"on\" | \"off\""],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "what typing into a secret field is recorded as, its field's own ${NAME} (Recording::typed)",
        markers: &["is_password(", "${{"],
        home: "crates/flow/src/record.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a secret field's text hidden from a reading (Recordings::hidden, flow::record::hide)",
        markers: &["\"•\".repeat("],
        home: "crates/flow/src/record.rs",
        pending: &[],
    },
    Mechanism {
        concern: "whether a field's name (resource-id, content-desc, hint, the label before it) names a password (flow::record::names_a_password)",
        markers: &["\"passcode\""],
        home: "crates/flow/src/record/secrets.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a list of the tools (tools/registry.rs's TOOLS: tools/list, dispatch, the task decision, code mode and replay --check read it)",
        markers: &["\"adb-device\"", "\"adb-app\"", "\"adb-logcat\"", "\"adb-shell\""],
        home: "src/tools/registry.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a tool's route written by hand (rmcp's #[tool] methods): the router is built from the registry",
        markers: &["#[tool("],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "a glob import of a parent module: a file says at its top what it uses",
        markers: &["use super::*"],
        home: "",
        // Its unit tests (`pub(crate) mod tests`, which other crates' tests reach).
        pending: &["crates/context/src/shrink.rs"],
    },
    Mechanism {
        concern: "placing a point inside an element's bounds (Maestro's element-relative point: android::relative_point)",
        markers: &["bounds.left +", "/ 100"],
        home: "crates/android/src/relative_point.rs",
        pending: &[],
    },
    Mechanism {
        concern: "skipping a test for a missing tool or capture (a failure under CI)",
        markers: &["eprintln!(\"SKIPPED"],
        home: "crates/testkit/src/lib.rs",
        pending: &[],
    },
];

/// Every source file (`.rs`, and the JavaScript the flows' scripts run, `.js`) under a folder, as
/// (path relative to `root`, code without comments).
fn sources(root: &std::path::Path, dir: &std::path::Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(root, &path, found);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let code = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            found.push((rel, code));
        }
    }
}

/// What droidmcp runs of a source: a unit-test file (`tests.rs`) is none of it, and a file's
/// `#[cfg(test)] mod tests` at its end is cut off (tests make their fixtures as they like).
fn without_tests(files: Vec<(String, String)>) -> Vec<(String, String)> {
    files
        .into_iter()
        .filter(|(rel, _)| rel != "tests.rs" && !rel.ends_with("/tests.rs"))
        .map(|(rel, code)| match code.find("#[cfg(test)]\nmod tests") {
            Some(at) => (rel, code[..at].to_string()),
            None => (rel, code),
        })
        .collect()
}

/// The tests' own helpers (tests/it/common), one of each (issue 38): a suite that needs one
/// calls it rather than writing another.
const TEST_MECHANISMS: &[Mechanism] = &[
    Mechanism {
        concern: "starting an MCP server on stdio (rmcp's child-process transport)",
        markers: &["TokioChildProcess"],
        home: "common/server.rs",
        pending: &[],
    },
    Mechanism {
        concern: "starting droidmcp serve --http and reading where it listens",
        markers: &["MCP at "],
        home: "common/server.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a simulator profile copied to change (Profile)",
        markers: &["copy_dir("],
        home: "common/mod.rs",
        pending: &[],
    },
    Mechanism {
        concern: "a tool's code-mode namespace by hand (the registry's `namespace`)",
        markers: &["\"adb-logcat\" => \"logcat\""],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "reading a process's memory from /proc (status_kib)",
        markers: &["/status\")", "strip_prefix("],
        home: "common/mod.rs",
        pending: &[],
    },
    Mechanism {
        concern: "walking tools/list's tools and operations (operations, complete)",
        markers: &["[\"operation\"][\"enum\"]"],
        home: "common/schema.rs",
        pending: &[],
    },
    Mechanism {
        concern: "an adb-shell wrapper (shell, shell_on)",
        markers: &["\"adb-shell\"", "command: &str"],
        home: "common/server.rs",
        pending: &[],
    },
    Mechanism {
        concern: "starting headless Chromium (Headless::start: one way to find and launch it)",
        markers: &["--remote-debugging-port"],
        home: "common/chromium.rs",
        pending: &[],
    },
    Mechanism {
        concern: "skipping a test for a missing tool or capture (testkit's skip_or_fail, through common)",
        markers: &["SKIPPED"],
        home: "",
        pending: &[],
    },
    Mechanism {
        concern: "a reqwest client (http_client: the TLS provider installed first)",
        markers: &["reqwest::Client::new()"],
        home: "common/server.rs",
        pending: &[],
    },
];

/// Each of `mechanisms` held only by its home (or a pending file) among `files`; what is wrong.
fn second_copies(under: &str, files: &[(String, String)], mechanisms: &[Mechanism]) -> Vec<String> {
    let mut copies = Vec::new();
    for m in mechanisms {
        let holders: Vec<&str> = files
            .iter()
            .filter(|(_, code)| m.markers.iter().all(|marker| code.contains(marker)))
            .map(|(rel, _)| rel.as_str())
            .collect();
        let stray: Vec<&str> = holders
            .iter()
            .copied()
            .filter(|rel| *rel != m.home && !m.pending.contains(rel))
            .collect();
        println!(
            "{}: {:?} in {}; home {}; {}",
            m.concern,
            m.markers,
            if holders.is_empty() {
                "no file".to_string()
            } else {
                holders.join(", ")
            },
            if m.home.is_empty() { "none (gone)" } else { m.home },
            if stray.is_empty() {
                "no second copy".to_string()
            } else {
                format!("second copies: {}", stray.join(", "))
            }
        );
        if !m.home.is_empty() && !holders.contains(&m.home) {
            copies.push(format!(
                "{}: its home {under}{} no longer holds it; update the list (and docs/ARCHITECTURE.md)",
                m.concern, m.home
            ));
        }
        for rel in stray {
            copies.push(format!(
                "{under}{rel} has a second copy of {} ({:?}): use the one in {under}{}",
                m.concern, m.markers, m.home
            ));
        }
    }
    println!("{} mechanisms over {} files", mechanisms.len(), files.len());
    copies
}

/// The code of the root's `src/` and of each crate's `crates/*/src/`, by path from the repository.
fn code_files() -> Vec<(String, String)> {
    let root = repo_dir();
    let mut files = Vec::new();
    sources(&root, &root.join("src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        sources(&root, &entry.unwrap().path().join("src"), &mut files);
    }
    files
}

#[test]
fn each_concern_has_one_home_and_no_second_copy() {
    let mut files = code_files();
    // The simulator is the device side: it sleeps and cuts as a device does, on its own.
    files.retain(|(rel, _)| !rel.starts_with("crates/sim/"));
    let copies = second_copies("", &without_tests(files), MECHANISMS);
    assert!(copies.is_empty(), "{}", copies.join("\n"));
}

/// The words of ui's errors (resolve.rs, wait.rs, scroll.rs, act.rs), which a person reads and may
/// be reworded: a script steers by an error's `code` (issue 43), so no flow JavaScript holds them.
const ERROR_WORDS: &[&str] = &[
    "did not appear",
    "no longer on the screen",
    "nothing on the screen matches",
    "is not on the screen",
    "is still on the screen",
    "is ambiguous",
    "timed out after",
    "nothing was done",
];

#[test]
fn no_script_steers_by_an_errors_words() {
    let files = without_tests(code_files());
    let rust: String = files
        .iter()
        .filter(|(rel, _)| rel.ends_with(".rs"))
        .map(|(_, code)| code.as_str())
        .collect();
    let scripts: Vec<&(String, String)> = files.iter().filter(|(rel, _)| rel.ends_with(".js")).collect();
    let mut found = Vec::new();
    for words in ERROR_WORDS {
        // Still an error's words: a reworded message is reworded here too.
        assert!(
            rust.contains(words),
            "{words:?} is no error's words any more: update ERROR_WORDS"
        );
        for (rel, code) in &scripts {
            if code.contains(words) {
                found.push(format!(
                    "{rel} matches an error's words {words:?}: test the error's `code` instead"
                ));
            }
        }
    }
    println!(
        "{} error phrases checked in {} .js files",
        ERROR_WORDS.len(),
        scripts.len()
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_tests_share_one_harness() {
    let tests = repo_dir().join("tests/it");
    let mut files = Vec::new();
    sources(&tests, &tests, &mut files);
    // This file names the markers.
    files.retain(|(rel, _)| rel != "house.rs");
    let copies = second_copies("tests/it/", &files, TEST_MECHANISMS);
    assert!(copies.is_empty(), "{}", copies.join("\n"));
}

/// The root crate's files, its unit tests too, name what they use: no `use super::*`.
#[test]
fn the_root_crate_imports_explicitly() {
    let root = repo_dir();
    let mut files = Vec::new();
    sources(&root, &root.join("src"), &mut files);
    let globs: Vec<&str> = files
        .iter()
        .filter(|(_, code)| code.contains("use super::*"))
        .map(|(rel, _)| rel.as_str())
        .collect();
    println!("{} files of src/, {} with a glob import", files.len(), globs.len());
    assert!(
        globs.is_empty(),
        "these import their parent whole (`use super::*`): name what they use: {globs:?}"
    );
}

/// A file of `src/` or `crates/*/src/` is at most 600 lines: past that it holds more than one
/// concern (split it by stage or by concern, as `ui/` and `flow/maestro/` are).
#[test]
fn no_source_file_is_over_600_lines() {
    let root = repo_dir();
    let files = code_files();
    let mut long: Vec<String> = Vec::new();
    let mut longest = (0, String::new());
    for (rel, _) in &files {
        let lines = std::fs::read_to_string(root.join(rel)).unwrap().lines().count();
        if lines > longest.0 {
            longest = (lines, rel.clone());
        }
        if lines > 600 {
            long.push(format!("{rel} has {lines} lines (at most 600): split it"));
        }
    }
    println!(
        "{} files; the longest, {}, has {} lines",
        files.len(),
        longest.1,
        longest.0
    );
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The simulator takes a lock only through `sim::lock`, which takes back a lock a panicking task
/// left poisoned: a `.lock()` anywhere else in it (with its `expect` or `unwrap`) would let one
/// failed command stop the device answering every client.
#[test]
fn the_simulator_takes_its_locks_through_one_door() {
    let root = repo_dir().join("crates/sim/src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let strays: Vec<String> = files
        .iter()
        .filter(|(rel, code)| code.contains(".lock()") && rel != "lib.rs")
        .map(|(rel, _)| format!("crates/sim/src/{rel} takes a lock itself: call sim::lock"))
        .collect();
    let home = &files
        .iter()
        .find(|(rel, _)| rel == "lib.rs")
        .expect("crates/sim/src/lib.rs")
        .1;
    println!(
        "{} simulator files; the one lock door in crates/sim/src/lib.rs",
        files.len()
    );
    assert!(
        home.contains("pub fn lock<T>") && home.matches(".lock()").count() == 1,
        "crates/sim/src/lib.rs must hold the one `lock` door and no other .lock()"
    );
    assert!(strays.is_empty(), "{}", strays.join("\n"));
}

/// Functions longer than `MAX_FN_LINES` still to be split (path and name): allowed until then,
/// not required. The root crate has none.
const LONG_FN_PENDING: &[&str] = &[];

/// A function is at most this many lines, from its `fn` to its closing brace: past that it does
/// several things (split it where its stages split, as ui's operations are).
const MAX_FN_LINES: usize = 120;

/// Every function with a body in `code` (Rust) outside `#[cfg(test)]` items, as (name, first
/// line, lines). Strings, chars and comments are skipped, so a brace in them counts for nothing.
fn fn_bodies(code: &str) -> Vec<(String, usize, usize)> {
    let c: Vec<char> = code.chars().collect();
    let (mut i, mut line, mut depth) = (0, 1, 0usize);
    // Open functions (name, first line, depth of their body); `pending` a `fn` not yet opened.
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    let mut pending: Option<(String, usize)> = None;
    let mut found = Vec::new();
    // The depth of a `#[cfg(test)]` item being skipped, and whether one is about to open.
    let (mut test_depth, mut test_next): (Option<usize>, bool) = (None, false);
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or(' ');
        if ch == '\n' {
            line += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        } else if ch == '/' && next == '*' {
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                line += usize::from(c[i] == '\n');
                i += 1;
            }
            i += 2;
            continue;
        } else if ch == 'r' && (next == '#' || next == '"') && (i == 0 || !ident(c[i - 1])) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            while j < c.len() && c[j] == '#' {
                j += 1;
            }
            if c.get(j) == Some(&'"') {
                let hashes = j - i - 1;
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    line += usize::from(c[j] == '\n');
                    j += 1;
                }
                i = j;
                continue;
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                line += usize::from(c.get(i) == Some(&'\n'));
                i += 1;
            }
        } else if ch == '\'' {
            // A char ('{', '\n', '\u{7b}'), not a lifetime ('a).
            if next == '\\' {
                let close = (i + 2..c.len()).find(|&k| c[k] == '\'').unwrap_or(i + 2);
                i = close + 1;
                continue;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
                continue;
            }
        } else if c[i..].starts_with(&['#', '[', 'c', 'f', 'g', '(', 't', 'e', 's', 't', ')', ']']) {
            test_next = true;
        } else if ch == 'f'
            && next == 'n'
            && (i == 0 || !ident(c[i - 1]))
            && !ident(c.get(i + 2).copied().unwrap_or(' '))
        {
            let start = (i + 2..c.len()).find(|&k| !c[k].is_whitespace()).unwrap_or(c.len());
            let end = (start..c.len()).find(|&k| !ident(c[k])).unwrap_or(c.len());
            if end > start {
                pending = Some((c[start..end].iter().collect(), line));
            }
        } else if ch == ';' && open.last().is_none_or(|o| o.2 < depth) {
            // A declaration without a body (a trait's), at the level its `fn` was written.
            pending = None;
        } else if ch == '{' {
            depth += 1;
            if test_next && test_depth.is_none() {
                test_depth = Some(depth);
            }
            test_next = false;
            if let Some((name, first)) = pending.take() {
                open.push((name, first, depth));
            }
        } else if ch == '}' {
            if open.last().is_some_and(|o| o.2 == depth) {
                let (name, first, _) = open.pop().unwrap();
                if test_depth.is_none() {
                    found.push((name, first, line - first + 1));
                }
            }
            if test_depth == Some(depth) {
                test_depth = None;
            }
            depth = depth.saturating_sub(1);
        }
        i += 1;
    }
    found
}

#[test]
fn no_function_is_over_120_lines() {
    let root = repo_dir();
    let mut files = Vec::new();
    let mut walk = vec![root.join("src")];
    walk.extend(
        std::fs::read_dir(root.join("crates"))
            .unwrap()
            .map(|e| e.unwrap().path().join("src")),
    );
    while let Some(dir) = walk.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            if path.is_dir() && !rel.ends_with("/tests") {
                walk.push(path);
            } else if rel.ends_with(".rs") && !rel.ends_with("/tests.rs") {
                files.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let (mut counted, mut long, mut pending) = (0, Vec::new(), Vec::new());
    let mut longest = (0, String::new());
    for (rel, code) in &files {
        for (name, first, lines) in fn_bodies(code) {
            counted += 1;
            let at = format!("{rel}:{first} {name}");
            if lines > longest.0 {
                longest = (lines, at.clone());
            }
            if lines <= MAX_FN_LINES {
                continue;
            }
            match LONG_FN_PENDING.contains(&format!("{rel} {name}").as_str()) {
                true => pending.push(format!("{at} ({lines} lines, pending)")),
                false => long.push(format!(
                    "{at} has {lines} lines (at most {MAX_FN_LINES}): split it where its stages split"
                )),
            }
        }
    }
    println!(
        "{counted} functions in {} files; the longest, {}, has {} lines; pending: {pending:?}",
        files.len(),
        longest.1,
        longest.0
    );
    assert!(counted > 1000, "the scan found only {counted} functions");
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The fuzz project includes the adb crate's wire decoders by path (it would otherwise build the
/// whole crate): each may name only siblings the fuzz project includes too, or `.ci/run`'s fuzz
/// build breaks where README's tests cannot see it.
#[test]
fn the_fuzzed_decoders_name_only_siblings_the_fuzz_project_includes() {
    let root = repo_dir();
    let includes = std::fs::read_to_string(root.join("fuzz/src/adb.rs")).unwrap();
    let mut included = Vec::new();
    let mut path = None;
    for line in includes.lines() {
        if let Some(p) = line
            .trim()
            .strip_prefix("#[path = \"")
            .and_then(|l| l.strip_suffix("\"]"))
        {
            path = Some(p.to_string());
        } else if let (Some(p), Some(m)) = (path.take(), line.trim().strip_prefix("pub mod ")) {
            let file = root.join("fuzz/src").join(&p);
            included.push((m.trim_end_matches(';').to_string(), file));
        }
    }
    assert!(included.len() >= 4, "fuzz/src/adb.rs includes {included:?}");
    let names: Vec<&str> = included.iter().map(|(m, _)| m.as_str()).collect();
    let mut wrong = Vec::new();
    for (module, file) in &included {
        let code = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        for (at, _) in code.match_indices("super::") {
            let name: String = code[at + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != "super" && !names.contains(&name.as_str()) {
                wrong.push(format!("{module} ({}) names super::{name}", file.display()));
            }
        }
    }
    println!(
        "{} decoders included by the fuzz project, each naming only included siblings",
        included.len()
    );
    assert!(
        wrong.is_empty(),
        "include these in fuzz/src/adb.rs too, or move what they use: {wrong:?}"
    );
}
