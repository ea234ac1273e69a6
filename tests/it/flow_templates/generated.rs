//! Generated from the compatibility table: every command it says a replay runs, each field the
//! reader takes for it (`flow::maestro::fields`, the reader's own lists), given a `${…}`. Each
//! case is checked alone by `replay --check`, which refuses it at its line saying it cannot be
//! rendered, or takes it; the taken ones of a sample are then replayed on the simulator all at
//! once, their values from the flow's env, against the same flow written plainly: the device
//! must see the same commands (the rendered values), the run end alike, and no `${` reach it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use droidmcp::flow::maestro::compat::{COMMANDS, Status};
use droidmcp::flow::maestro::fields;

use crate::common::*;
use crate::flow_commands::sent;

/// Where a sample runs: the built-in profile, it booting into the inbox (Maestro's selectors),
/// or a simulator of its own whose state `observe` reads after the run.
#[derive(Clone, Copy, PartialEq)]
enum On {
    Phone,
    Inbox,
    Observed(&'static str),
}

/// A sample of a command: the app, the steps before it, and its items, each value a case marks
/// `«…»` written as it stands in the flow.
struct Sample {
    app: &'static str,
    on: On,
    before: &'static str,
    items: String,
}

const CONTACTS: &str = "com.google.android.contacts";
const LOGIN: &str = "org.droidmcp.demo.login";
const USERNAME: &str = "- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n";

/// Selectors that each find one element of the inbox, together holding every key Maestro's
/// selector has; none is a Delete (a tap on one leaves the inbox).
const FOUND: &[&str] = &[
    "    text: «Inbox»\n    id: «tab_inbox»\n    index: «0»\n    leftOf: «Sent»\n    selected: «true»\n    enabled: «true»\n    checked: «false»\n    focused: «false»\n    width: «416»\n    height: «100»\n    tolerance: «2»\n",
    "    id: «row_title»\n    below: «\"Row 1\"»\n    above: «\"Row 3\"»\n",
    "    text: «Sent»\n    rightOf: «Inbox»\n",
    "    text: «Unread»\n    childOf:\n      containsChild: «\"Row 3\"»\n",
    "    id: «row»\n    containsChild: «\"Row 5\"»\n    containsDescendants:\n      - «\"Row 5\"»\n      - «Read»\n",
];

/// Selectors that find nothing in the inbox only because of their keys (as inbox.yaml's).
const MISSED: &[&str] = &[
    "    text: «\"Row \\\\d\"»\n    index: «5»\n",
    "    text: «\"Row 1\"»\n    below: «\"Row 2\"»\n",
    "    text: «\"Row 3\"»\n    above:\n      id: «row_title»\n      index: «1»\n",
    "    text: «Delete»\n    leftOf: «\"Row 1\"»\n",
    "    text: «\"Row \\\\d\"»\n    rightOf: «Delete»\n",
    "    text: «Archive»\n    enabled: «true»\n",
    "    text: «Select all»\n    checked: «true»\n",
    "    id: «search»\n    focused: «false»\n",
    "    text: «Sent»\n    selected: «true»\n",
    "    text: «Delete»\n    width: «238»\n",
    "    height: «999»\n    text: «Delete»\n    tolerance: «1»\n",
    "    text: «Unread»\n    childOf:\n      containsChild: «\"Row 4\"»\n",
    "    id: «row»\n    containsDescendants:\n      - «\"Row 5\"»\n      - «Unread»\n",
    "    id: «row»\n    containsChild: «\"Row 9\"»\n",
    "    point: «\"50%, 10%\"»\n    optional: «false»\n",
];

/// Each command's items on the inbox, one per selector, with what a command adds.
fn on_the_inbox(command: &str) -> Sample {
    let selectors = if command == "assertNotVisible" { MISSED } else { FOUND };
    let mut items = format!("- {command}: «\"Row 3\"»\n");
    for selector in selectors {
        items.push_str(&format!("- {command}:\n{selector}"));
        if command == "copyTextFrom" {
            items.push_str("- pasteText\n");
        }
    }
    let options = match command {
        "tapOn" | "doubleTapOn" => "    repeat: «2»\n    delay: «50»\n",
        "longPressOn" => "    repeat: «1»\n    delay: «50»\n",
        _ => "",
    };
    if command != "assertNotVisible" {
        items.push_str(&format!(
            "- {command}:\n    text: «\"Row 2\"»\n    label: «caption»\n    optional: «false»\n{options}"
        ));
    }
    if !options.is_empty() {
        items.push_str(&format!(
            "- {command}:\n    text: «\"Row 4\"»\n    retryTapIfNoChange: «false»\n    waitToSettleTimeoutMs: «200»\n    waitUntilVisible: «true»\n- {command}:\n    point: «\"50%, 10%\"»\n"
        ));
    } else if command != "assertNotVisible" {
        items.push_str(&format!("- {command}:\n    point: «\"50%, 10%\"»\n"));
    }
    Sample {
        app: LOGIN,
        on: On::Inbox,
        before: "",
        items,
    }
}

fn sample(app: &'static str, on: On, before: &'static str, items: &str) -> Sample {
    Sample {
        app,
        on,
        before,
        items: items.to_string(),
    }
}

/// The samples of `command`, with a value in each field the reader takes for it.
fn samples(command: &str) -> Vec<Sample> {
    let phone = On::Phone;
    let only_optional = |name: &str| sample(LOGIN, phone, "", &format!("- {name}:\n    optional: «true»\n"));
    match command {
        "tapOn" | "doubleTapOn" | "longPressOn" | "assertVisible" | "assertNotVisible" | "copyTextFrom" => {
            vec![on_the_inbox(command)]
        }
        "launchApp" => vec![sample(
            CONTACTS,
            phone,
            "",
            "- launchApp: «com.google.android.contacts»\n- launchApp:\n    appId: «org.wikipedia»\n    clearState: «true»\n    stopApp: «true»\n    clearKeychain: «false»\n    permissions:\n      «camera»: «allow»\n    arguments:\n      «user»: «ada»\n    optional: «false»\n- launchApp:\n    url: «com.google.android.contacts»\n",
        )],
        "stopApp" | "killApp" | "clearState" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n- pressKey: Home\n",
            &format!(
                "- {command}: «com.google.android.contacts»\n- {command}:\n    appId: «com.google.android.contacts»\n    optional: «false»\n"
            ),
        )],
        "clearKeychain"
        | "inputRandomEmail"
        | "inputRandomPersonName"
        | "pasteText"
        | "hideKeyboard"
        | "hide keyboard"
        | "back"
        | "scroll"
        | "stopRecording"
        | "toggleAirplaneMode" => vec![only_optional(command)],
        "action" => vec![sample(LOGIN, phone, "", "- action: «back»\n- action: «hideKeyboard»\n")],
        "assertWithAI" => vec![sample(
            LOGIN,
            phone,
            "",
            "- assertWithAI: «it shows»\n- assertWithAI:\n    assertion: «it shows»\n    optional: «true»\n",
        )],
        "assertNoDefectsWithAI" => vec![only_optional(command)],
        "extractTextWithAI" => vec![sample(
            LOGIN,
            phone,
            "",
            "- extractTextWithAI: «the name»\n- extractTextWithAI:\n    query: «the name»\n    outputVariable: «name»\n    optional: «true»\n",
        )],
        "inputText" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            &format!("{USERNAME}- inputText: «ada»\n- inputText:\n    text: «\" lovelace\"»\n    optional: «false»\n"),
        )],
        "inputRandomNumber" | "inputRandomText" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            &format!("{USERNAME}- {command}:\n    length: «5»\n    optional: «false»\n"),
        )],
        "eraseText" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            &format!(
                "{USERNAME}- inputText: abcdef\n- eraseText: «2»\n- eraseText:\n    charactersToErase: «1»\n    optional: «false»\n"
            ),
        )],
        "setClipboard" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            &format!(
                "{USERNAME}- setClipboard: «clip-1»\n- pasteText\n- setClipboard:\n    text: «clip-2»\n    optional: «false»\n- pasteText\n"
            ),
        )],
        "pressKey" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            "- pressKey: «Enter»\n- pressKey:\n    key: «Remote Dpad Down»\n    optional: «false»\n",
        )],
        "scrollUntilVisible" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- scrollUntilVisible:\n    element: «\"Zhang Wei\"»\n    direction: «DOWN»\n    timeout: «8000»\n    speed: «60»\n    visibilityPercentage: «50»\n    centerElement: «true»\n    waitToSettleTimeoutMs: «200»\n    optional: «false»\n- scrollUntilVisible:\n    element:\n      text: «\"Ada Lovelace\"»\n    direction: «UP»\n",
        )],
        "swipe" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- swipe:\n    direction: «UP»\n    duration: «400»\n    waitToSettleTimeoutMs: «200»\n    optional: «false»\n- swipe:\n    start: «\"50%, 30%\"»\n    end: «\"50%, 70%\"»\n- swipe:\n    from:\n      text: «\"Ada Lovelace\"»\n    direction: «UP»\n",
        )],
        "assertTrue" => vec![sample(
            LOGIN,
            phone,
            "",
            "- assertTrue: «true»\n- assertTrue:\n    condition: «\"yes\"»\n    optional: «false»\n- assertTrue: «\"0\"»\n",
        )],
        "evalScript" => vec![sample(
            LOGIN,
            phone,
            "",
            "- evalScript: «1»\n- evalScript:\n    script: «two»\n    optional: «false»\n",
        )],
        "extendedWaitUntil" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- extendedWaitUntil:\n    visible: «\"Ada Lovelace\"»\n    timeout: «3000»\n- extendedWaitUntil:\n    notVisible: «\"Nobody Here\"»\n    timeout: «500»\n    optional: «false»\n",
        )],
        "waitForAnimationToEnd" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- waitForAnimationToEnd:\n    timeout: «500»\n    optional: «false»\n",
        )],
        "takeScreenshot" | "startRecording" => {
            let stop = if command == "startRecording" {
                "- stopRecording\n"
            } else {
                ""
            };
            vec![sample(
                CONTACTS,
                phone,
                "- launchApp\n",
                &format!(
                    "- {command}: «first»\n{stop}- {command}:\n    path: «\"shots/second\"»\n    optional: «false»\n{stop}"
                ),
            )]
        }
        "openLink" => vec![sample(
            "org.wikipedia",
            phone,
            "",
            "- openLink: «\"https://example.com/a\"»\n- openLink:\n    link: «\"https://en.wikipedia.org/wiki/Ada\"»\n    autoVerify: «true»\n    browser: «false»\n    optional: «false»\n",
        )],
        "setLocation" => vec![sample(
            CONTACTS,
            On::Observed("dumpsys location"),
            "",
            "- setLocation:\n    latitude: «52.36»\n    longitude: «4.88»\n    optional: «false»\n",
        )],
        "travel" => vec![sample(
            CONTACTS,
            On::Observed("dumpsys location"),
            "",
            "- travel:\n    points:\n      - «\"52.36, 4.88\"»\n      - «\"52.3601, 4.8801\"»\n    speed: «1000»\n    optional: «false»\n",
        )],
        "setPermissions" => vec![sample(
            "org.wikipedia",
            phone,
            "",
            "- setPermissions:\n    appId: «org.wikipedia»\n    permissions:\n      «camera»: «allow»\n      notifications: «deny»\n    optional: «false»\n",
        )],
        "addMedia" => vec![sample(
            CONTACTS,
            phone,
            "",
            "- addMedia:\n    - «cat.png»\n- addMedia:\n    files:\n      - «cat.png»\n    optional: «false»\n",
        )],
        "setAirplaneMode" => vec![sample(
            CONTACTS,
            phone,
            "",
            "- setAirplaneMode: «enabled»\n- setAirplaneMode:\n    value: «disabled»\n    optional: «false»\n",
        )],
        "setOrientation" => vec![sample(
            CONTACTS,
            phone,
            "",
            "- setOrientation: «LANDSCAPE_LEFT»\n- setOrientation:\n    orientation: «PORTRAIT»\n    optional: «false»\n",
        )],
        "runFlow" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- runFlow: «sub.yaml»\n- runFlow:\n    when:\n      visible: «\"Ada Lovelace\"»\n      notVisible: «\"Nobody Here\"»\n      platform: «Android»\n      true: «\"yes\"»\n    env:\n      WHO: «\"Alan Turing\"»\n    commands:\n      - tapOn: «\"Ada Lovelace\"»\n      - tapOn: ${WHO}\n- runFlow:\n    file: «sub.yaml»\n    optional: «false»\n",
        )],
        "repeat" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            "- repeat:\n    times: «2»\n    while:\n      notVisible: «\"Nobody Here\"»\n    commands:\n      - pressKey: «Enter»\n",
        )],
        "retry" => vec![sample(
            CONTACTS,
            phone,
            "- launchApp\n",
            "- retry:\n    maxRetries: «1»\n    env:\n      X: «y»\n    commands:\n      - tapOn: «\"Ada Lovelace\"»\n- retry:\n    file: «sub.yaml»\n    optional: «false»\n",
        )],
        "runScript" => vec![sample(
            LOGIN,
            phone,
            "- launchApp\n",
            &format!(
                "- runScript: «s.js»\n- runScript:\n    file: «s.js»\n    env:\n      A: «ada»\n    when:\n      true: «\"yes\"»\n    optional: «false»\n{USERNAME}- inputText: ${{output.v}}\n"
            ),
        )],
        _ => Vec::new(),
    }
}

/// One marked value: where it stands in the items (its bytes), the field it is in (a mapping key
/// at the command's level, or `""` for the command's own value), its command and its line there.
struct Mark {
    start: usize,
    end: usize,
    command: String,
    field: String,
    line: usize,
}

fn marks(items: &str) -> Vec<Mark> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(open) = items[search..].find('«').map(|i| i + search) {
        let close = items[open..].find('»').map(|i| i + open).expect("a closed mark");
        let line = items[..open].matches('\n').count();
        // This line, then the ones above it, up to the command's own (`- NAME`).
        let lines: Vec<&str> = items.lines().take(line + 1).collect();
        let mut field = String::new();
        let mut command = String::new();
        for l in lines.iter().rev() {
            if indent(l) == 0 && l.starts_with("- ") {
                command = l[2..].split(':').next().unwrap_or_default().trim().to_string();
                break;
            }
            if indent(l) == 4 && field.is_empty() && !l.trim_start().starts_with("- ") {
                field = l.trim().split(':').next().unwrap_or_default().to_string();
            }
        }
        out.push(Mark {
            start: open,
            end: close + '»'.len_utf8(),
            command,
            field,
            line,
        });
        search = close;
    }
    out
}

/// The items with the marks in `templated` written `${V<i>}`, the others as they stand.
fn written(items: &str, marks: &[Mark], templated: &BTreeSet<usize>) -> String {
    let mut out = String::new();
    let mut at = 0;
    for (i, m) in marks.iter().enumerate() {
        out.push_str(&items[at..m.start]);
        match templated.contains(&i) {
            true => out.push_str(&format!("${{V{i}}}")),
            false => out.push_str(&items[m.start + '«'.len_utf8()..m.end - '»'.len_utf8()]),
        }
        at = m.end;
    }
    out.push_str(&items[at..]);
    out
}

fn value(items: &str, m: &Mark) -> String {
    items[m.start + '«'.len_utf8()..m.end - '»'.len_utf8()].to_string()
}

/// The flow: its header (the app, and as its env each templated value as it was written), then
/// the steps before the sample's and its items.
fn flow_text(s: &Sample, items: &str, env: &[(usize, String)]) -> String {
    let mut head = format!("appId: {}\n", s.app);
    if !env.is_empty() {
        head.push_str("env:\n");
        for (i, v) in env {
            head.push_str(&format!("  V{i}: {v}\n"));
        }
    }
    format!("{head}---\n{}{items}", s.before)
}

/// The commands that change the device, in order (readings, whose number a wait decides, left
/// out); a random text as its length.
fn acts(out: &Output, random: bool) -> Vec<String> {
    let acting = [
        "input ",
        "am ",
        "pm grant",
        "pm revoke",
        "pm clear",
        "settings put",
        "cmd ",
        "screencap",
        "screenrecord",
        "pkill",
        "monkey",
    ];
    let mut acts: Vec<String> = sent(out)
        .into_iter()
        .filter(|c| acting.iter().any(|a| c.starts_with(a)))
        .map(|c| match (random, c.strip_prefix("input text ")) {
            (true, Some(text)) => format!("input text of {} chars", text.len()),
            _ => c,
        })
        .collect();
    // stopRecording sends SIGINT again until screenrecord has started to take it: how often is
    // the device's timing, not the command's.
    acts.dedup_by(|a, b| a == b && a.starts_with("pkill "));
    acts
}

/// How many steps failed (the summary's `F failed`; a command whose template stands for a number
/// or a choice is one step, where written plainly it may be several).
fn counts(out: &Output) -> String {
    let said = String::from_utf8_lossy(&out.stdout);
    let line = said.lines().rev().find(|l| l.contains(" passed, ")).unwrap_or_default();
    line.split(", ")
        .find(|p| p.ends_with(" failed"))
        .unwrap_or_default()
        .to_string()
}

fn replay(dir: &Path, file: &Path, on: On, inbox: &Path) -> (Output, Option<String>) {
    let home = tempfile::tempdir().unwrap();
    let sim = matches!(on, On::Observed(_)).then(|| SimProcess::start(&[]));
    let mut command = Command::new(env!("CARGO_BIN_EXE_droidmcp"));
    command.arg("replay").arg(file).args(["--step-timeout-ms", "3000"]);
    match (on, &sim) {
        (On::Inbox, _) => command.arg("--sim").arg(inbox),
        (_, Some(sim)) => command.arg("--adb").arg(format!("tcp:{}", sim.addr)),
        _ => command.arg("--sim"),
    };
    let out = command
        .current_dir(dir)
        .env("HOME", home.path())
        .env("RUST_LOG", "droidmcp=debug")
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    let seen = match (on, &sim) {
        (On::Observed(observe), Some(sim)) => Some(shell_by_call(sim, observe)),
        _ => None,
    };
    (out, seen)
}

#[test]
fn a_template_in_any_field_of_any_command_is_rendered_or_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("inbox");
    Profile::at(&inbox).edit("profile.toml", |toml| {
        toml.replace("home = \"launcher\"", "home = \"inbox\"")
    });
    std::fs::write(
        dir.path().join("sub.yaml"),
        "appId: com.google.android.contacts\n---\n- back\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("s.js"), "output.v = A;\n").unwrap();
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(8, 8, image::Rgba([1, 2, 3, 255]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    std::fs::write(dir.path().join("cat.png"), png).unwrap();

    // Every replayed command has samples, and they give a value to each field the reader takes.
    let replayed: Vec<&str> = COMMANDS
        .iter()
        .filter(|(_, s, _)| *s == Status::Replayed)
        .map(|(n, _, _)| *n)
        .collect();
    let mut all: Vec<(String, Sample)> = Vec::new();
    let mut uncovered = Vec::new();
    for command in &replayed {
        let taken = fields(command).unwrap_or_else(|| panic!("the reader lists no fields of {command}"));
        let of_it = samples(command);
        let given: BTreeSet<String> = of_it
            .iter()
            .flat_map(|s| marks(&s.items))
            .filter(|m| m.command == *command)
            .map(|m| m.field)
            .collect();
        if given.is_empty() {
            uncovered.push(format!("{command}: no sample"));
        }
        for field in taken {
            if !given.contains(field) {
                uncovered.push(format!("{command} {field}"));
            }
        }
        all.extend(of_it.into_iter().map(|s| (command.to_string(), s)));
    }
    assert!(uncovered.is_empty(), "fields with no ${{…}} case: {uncovered:?}");

    // Each case alone, read by `--check`: taken, or refused at its line as not renderable.
    let mut files = Vec::new();
    for (n, (_, s)) in all.iter().enumerate() {
        for (i, _) in marks(&s.items).iter().enumerate() {
            let text = flow_text(s, &written(&s.items, &marks(&s.items), &BTreeSet::from([i])), &[]);
            let file = dir.path().join(format!("s{n}-c{i}.yaml"));
            std::fs::write(&file, text).unwrap();
            files.push(file);
        }
    }
    let check = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["replay", "--check"])
        .args(&files)
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    let mut refused: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut problems = Vec::new();
    for (n, (_, s)) in all.iter().enumerate() {
        for (i, m) in marks(&s.items).iter().enumerate() {
            let file: PathBuf = dir.path().join(format!("s{n}-c{i}.yaml")).canonicalize().unwrap();
            let lines: Vec<&str> = said
                .lines()
                .filter(|l| l.starts_with(&format!("refused {} ", file.display())))
                .collect();
            let line = m.line + 3 + s.before.lines().count();
            match lines.as_slice() {
                [] => {}
                [one] if one.contains(&format!(" line {line}: ")) && one.contains("${…} there cannot be rendered") => {
                    refused.insert((n, i));
                }
                other => problems.push(format!("{} {} (line {line}): {other:?}", m.command, m.field)),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "refused otherwise than at its line as not renderable:\n{}",
        problems.join("\n")
    );

    // The taken cases of each sample, replayed at once against the sample written plainly.
    let runs: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter(|(n, (_, s))| (0..marks(&s.items).len()).any(|i| !refused.contains(&(*n, i))))
        .map(|(n, (c, _))| (n, c.clone()))
        .collect();
    // Each run its own simulator, side by side (a long press sleeps its 3 s, not the machine).
    let jobs: Vec<(usize, bool)> = runs.iter().flat_map(|(n, _)| [(*n, false), (*n, true)]).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(std::collections::BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                while let Some(&(n, templating)) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let s = &all[n].1;
                    let m = marks(&s.items);
                    let taken: BTreeSet<usize> = match templating {
                        true => (0..m.len()).filter(|i| !refused.contains(&(n, *i))).collect(),
                        false => BTreeSet::new(),
                    };
                    let env: Vec<(usize, String)> = taken.iter().map(|i| (*i, value(&s.items, &m[*i]))).collect();
                    let file = dir
                        .path()
                        .join(format!("s{n}-{}.yaml", if templating { "templated" } else { "plain" }));
                    std::fs::write(&file, flow_text(s, &written(&s.items, &m, &taken), &env)).unwrap();
                    let ran = replay(dir.path(), &file, s.on, &inbox);
                    done.lock().unwrap().insert((n, templating), ran);
                }
            });
        }
    });
    let done = done.into_inner().unwrap();
    let mut failures = Vec::new();
    for (n, command) in &runs {
        let ((want, want_seen), (got, got_seen)) = (&done[&(*n, false)], &done[&(*n, true)]);
        let random = command.starts_with("inputRandom");
        let literal: Vec<String> = sent(got).into_iter().filter(|c| c.contains("${")).collect();
        let same = (want.status.code(), counts(want), acts(want, random), want_seen)
            == (got.status.code(), counts(got), acts(got, random), got_seen);
        if !same || !literal.is_empty() || counts(want).is_empty() {
            failures.push(format!(
                "{command} (sample {n}): written plainly {} {:?} {:?}\n{}\nwith ${{…}} {} {:?} {:?}\n{}",
                counts(want),
                want.status.code(),
                acts(want, random),
                String::from_utf8_lossy(&want.stdout),
                counts(got),
                got.status.code(),
                acts(got, random),
                String::from_utf8_lossy(&got.stdout),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let cases: usize = all.iter().map(|(_, s)| marks(&s.items).len()).sum();
    let fields_covered: BTreeSet<(String, String)> = all
        .iter()
        .flat_map(|(_, s)| marks(&s.items))
        .map(|m| (m.command, m.field))
        .collect();
    println!(
        "{} commands the table replays, {} (command, field) pairs, {cases} ${{…}} cases: {} rendered and replayed alike on the simulator ({} runs), {} refused at their line by --check",
        replayed.len(),
        fields_covered.len(),
        cases - refused.len(),
        runs.len() * 2,
        refused.len()
    );
}
