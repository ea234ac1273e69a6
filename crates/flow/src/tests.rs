//! The formats hold whatever an app shows: generated steps with any text (quotes, newlines,
//! `*/`, regex metacharacters, U+2028, YAML's own syntax) survive a Maestro round trip (the
//! replay's own checks, step names and JUnit, are in `crate::replay`).

use proptest::prelude::*;

use super::*;

/// Text as apps show it and as an adversary would write it.
pub(crate) fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 &·.,:#'-]{1,24}",
        proptest::string::string_regex(r#"[\PC\n\t"\\/*$^.|?+()\[\]{}:#&!%@`'\u{2028}-]{1,16}"#).unwrap(),
        Just("- tapOn: x\n---\n".to_string()),
        Just("*/ await x; //".to_string()),
        Just("yes".to_string()),
        Just("123".to_string()),
        Just("null".to_string()),
        Just("line\u{2028}await shell.run({command: \"reboot\"})\u{2029}//".to_string()),
        Just("next\u{85}line".to_string()),
    ]
    .prop_filter("a selector is trimmed text", |s| !s.trim().is_empty() && s.trim() == s)
}

pub(crate) fn selector() -> BoxedStrategy<Selector> {
    prop_oneof![
        text().prop_map(Selector::ResourceId),
        text().prop_map(Selector::Text),
        text().prop_map(Selector::ContentDesc),
        (0i32..5000, 0i32..5000).prop_map(|(x, y)| Selector::Point([x, y])),
        // A valid regex that is no literal (its `.*`): always a pattern.
        text().prop_map(|t| Selector::Pattern(format!("{}.*", regex::escape(&t)))),
        maestro_selector(),
    ]
    .boxed()
}

/// Maestro's whole selector: an index always (so it reads back as one), with a text, an id,
/// flags and a selector nested under a relation now and then.
fn maestro_selector() -> BoxedStrategy<Selector> {
    use android::selector::ElementSelector;
    let escaped = || proptest::option::of(text().prop_map(|t| regex::escape(&t)));
    (
        escaped(),
        escaped(),
        0i64..5,
        proptest::option::of(any::<bool>()),
        escaped(),
        proptest::option::of(0i32..2000),
    )
        .prop_map(|(text, id, index, enabled, below, width)| {
            Selector::Maestro(ElementSelector {
                text,
                id,
                index: Some(android::selector::Index::At(index)),
                enabled,
                width,
                below: below.map(|t| {
                    Box::new(ElementSelector {
                        text: Some(t),
                        ..ElementSelector::default()
                    })
                }),
                ..ElementSelector::default()
            })
        })
        // Boxed, as `when` is: the value trees would overflow a test thread's stack.
        .boxed()
}

pub(crate) fn target() -> impl Strategy<Value = Target> {
    let selector = prop_oneof![
        4 => selector(),
        1 => (0u32..=100, 0u32..=100).prop_map(|(x, y)| Selector::Percent([x, y])),
    ];
    (selector, proptest::option::of(text())).prop_map(|(selector, label)| Target {
        label,
        ..Target::bare(selector)
    })
}

fn direction() -> impl Strategy<Value = String> {
    prop_oneof![Just("up"), Just("down"), Just("left"), Just("right")].prop_map(str::to_string)
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        text().prop_map(|command| Action::Emulator { command }),
        (-180.0f64..=180.0, -90.0f64..=90.0).prop_map(|(lon, lat)| Action::Emulator {
            command: format!("geo fix {lon} {lat}")
        }),
        text().prop_map(|package| Action::Launch { package }),
        text().prop_map(|package| Action::Stop { package }),
        text().prop_map(|package| Action::ClearData { package }),
        target().prop_map(|target| Action::Tap { target }),
        commands::generated(selector().boxed(), target().boxed()).prop_map(Action::Command),
        (target(), proptest::option::of(500u32..5000))
            .prop_map(|(target, duration_ms)| Action::LongPress { target, duration_ms }),
        (proptest::option::of(target()), text(), any::<bool>(), any::<bool>()).prop_map(
            |(target, text, clear, submit)| {
                Action::Type {
                    target,
                    text,
                    clear,
                    submit,
                }
            }
        ),
        prop_oneof![
            Just("BACK"),
            Just("HOME"),
            Just("ENTER"),
            Just("DEL"),
            Just("APP_SWITCH")
        ]
        .prop_map(|n| Action::Key { name: n.into() }),
        (
            (0i32..2000, 0i32..2000),
            (0i32..2000, 0i32..2000),
            proptest::option::of(50u32..3000)
        )
            .prop_map(|(from, to, duration_ms)| Action::Swipe {
                from: [from.0, from.1],
                to: [to.0, to.1],
                duration_ms
            }),
        (
            (0u32..=100, 0u32..=100),
            (0u32..=100, 0u32..=100),
            proptest::option::of(50u32..3000)
        )
            .prop_map(|(from, to, duration_ms)| Action::SwipePercent {
                from: [from.0, from.1],
                to: [to.0, to.1],
                duration_ms
            }),
        (direction(), proptest::option::of(50u32..=10_000))
            .prop_map(|(direction, duration_ms)| Action::SwipeToward { direction, duration_ms }),
        (maestro_selector(), direction(), proptest::option::of(50u32..=10_000)).prop_map(
            |(from, direction, duration_ms)| Action::SwipeFrom {
                from,
                direction,
                duration_ms
            }
        ),
        (1u32..=1000).prop_map(|chars| Action::Erase { chars }),
        proptest::option::of(1u64..60_000).prop_map(|timeout_ms| Action::Settle { timeout_ms }),
        (direction(), proptest::option::of(selector()))
            .prop_map(|(direction, until)| Action::Scroll { direction, until }),
        (selector(), any::<bool>(), proptest::option::of(1u64..60_000)).prop_map(|(selector, gone, timeout_ms)| {
            Action::Wait {
                selector,
                gone,
                timeout_ms,
            }
        }),
    ]
}

/// A runFlow when's condition: an id or a text that shows, or does not, or both.
fn when() -> BoxedStrategy<When> {
    let shown = || proptest::option::of(selector().prop_filter("no point", |s| !s.fragile()));
    (shown(), shown(), any::<bool>())
        .prop_filter("a condition", |(visible, not_visible, _)| {
            visible.is_some() || not_visible.is_some()
        })
        .prop_map(|(visible, not_visible, opens)| When {
            visible,
            not_visible,
            script: None,
            opens,
        })
        // Boxed: the nested strategy's value trees overflow a test thread's stack in debug builds.
        .boxed()
}

pub fn step() -> impl Strategy<Value = Step> {
    (
        action(),
        proptest::option::of(text()),
        proptest::collection::vec(selector(), 0..3),
        proptest::option::of(text()),
        any::<bool>(),
        proptest::option::weighted(0.3, when()),
    )
        .prop_map(|(action, activity, visible, on, optional, when)| Step {
            // Only what a Maestro flow can make optional and read back alike: a tap.
            optional: optional && matches!(action, Action::Tap { .. }),
            action,
            expect: Expect { activity, visible },
            on,
            when,
        })
}

proptest! {
    /// Read back, a written flow reads the same again: Maestro's form of the steps is a fixpoint
    /// (it merges what Maestro cannot say, e.g. a content-desc is a text, typing into a field is
    /// a tap then the typing), and nothing an app shows can break the YAML.
    #[test]
    fn a_maestro_flow_reads_back_as_the_same_steps(steps in proptest::collection::vec(step(), 1..8), app in text()) {
        let written = maestro::render(&steps, &["generated\nheader".into()], &app);
        prop_assert!(!written.contains(['\r', '\u{2028}', '\u{2029}', '\u{85}']), "a raw line break");
        let read = maestro::parse(&written).map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
        let again = maestro::parse(&maestro::render(&read, &[], &app)).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&read, &again);
        // Every selector of a tap survives, escaped or not.
        let taps = |steps: &[Step]| -> Vec<Selector> {
            steps.iter().filter_map(|s| match &s.action {
                Action::Tap { target } => Some(target.selector.clone()),
                _ => None,
            }).collect()
        };
        for selector in taps(&steps) {
            let kept = match &selector {
                Selector::ContentDesc(v) => Selector::Text(v.clone()),
                other => other.clone(),
            };
            prop_assert!(taps(&read).contains(&kept), "{:?} lost", selector);
        }
        // An optional tap stays optional, and a required one required.
        let optional_taps = |steps: &[Step]| -> usize { steps.iter().filter(|s| s.optional).count() };
        prop_assert_eq!(optional_taps(&read), optional_taps(&steps));
        // A location set through the console survives as Maestro's setLocation.
        let places = |steps: &[Step]| -> Vec<(f64, f64)> {
            steps.iter().filter_map(|s| match &s.action {
                Action::Emulator { command } => maestro::location(command),
                _ => None,
            }).collect()
        };
        prop_assert_eq!(places(&read), places(&steps));
    }

    /// A flow someone edited by hand, badly: any edit of a written flow (characters cut, doubled
    /// or put in, YAML's own syntax among them) is read or refused with a message, never a
    /// panic; and what is read writes back to the same steps.
    #[test]
    fn an_edited_flow_is_read_or_refused_never_a_panic(
        steps in proptest::collection::vec(step(), 1..6),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..3, "[-:#&*!|>'\"%@`{}\\[\\], \n\t0-9a-z]{0,3}"), 1..6),
    ) {
        let mut text: Vec<char> = maestro::render(&steps, &[], "a.b").chars().collect();
        for (at, cut, put) in edits {
            let at = at.index(text.len() + 1);
            let end = (at + cut).min(text.len());
            text.splice(at..end, put.chars());
        }
        let text: String = text.into_iter().collect();
        match maestro::parse(&text) {
            Ok(read) => {
                let again = maestro::parse(&maestro::render(&read, &[], "a.b"));
                prop_assert_eq!(Ok(read), again, "{}", text);
            }
            Err(message) => prop_assert!(!message.is_empty()),
        }
    }
}

#[test]
fn a_maestro_flow_written_by_hand_reads_as_steps() {
    let flow = "appId: com.example.app\nname: Sign in\n---\n- launchApp\n- tapOn: \"Sign in\"\n- tapOn:\n    id: \"com.example.app:id/user\"\n- inputText: ada\n- pressKey: Enter\n- assertVisible: Welcome\n- scrollUntilVisible:\n    element:\n      text: \"Terms \\\\(2026\\\\)\"\n    direction: DOWN\n- extendedWaitUntil:\n    notVisible: \"Loading\"\n    timeout: 5000\n- back\n";
    let steps = maestro::parse(flow).unwrap();
    let described: Vec<String> = steps.iter().map(Step::describe).collect();
    assert_eq!(
        described,
        [
            "launch com.example.app",
            "tap text \"Sign in\"",
            "tap resourceId \"com.example.app:id/user\"",
            "type \"ada\"",
            "key ENTER",
            "scroll down until text \"Terms (2026)\"",
            "wait until text \"Loading\" is gone",
            "key BACK",
        ]
    );
    assert_eq!(steps[4].expect.visible, vec![Selector::Text("Welcome".into())]);
    let located =
        maestro::parse("appId: a.b\n---\n- setLocation:\n    latitude: 52.36\n    longitude: \"4.88\"\n").unwrap();
    assert_eq!(located[0].describe(), "emulator \"geo fix 4.88 52.36\"");
    assert_eq!(
        maestro::parse("appId: a.b\n---\n- setLocation:\n    latitude: 91\n    longitude: 0\n").unwrap_err(),
        "line 4: latitude is a number of degrees from -90 to 90"
    );
    // Maestro's text is a regular expression: escaped throughout, it is that text; else a pattern.
    let texts = maestro::parse(
        "appId: a.b\n---\n- tapOn: \"Log.*\"\n- tapOn: \"Dr\\\\. Smith\"\n- tapOn:\n    text: \"\\\\d+ new\"\n- assertNotVisible: \"Load(ing)?\"\n",
    )
    .unwrap();
    let described: Vec<String> = texts.iter().map(Step::describe).collect();
    assert_eq!(
        described,
        [
            "tap text matching \"Log.*\"",
            "tap text \"Dr. Smith\"",
            "tap text matching \"\\\\d+ new\"",
            "wait until text matching \"Load(ing)?\" is gone",
        ]
    );
    // runFlow when: the block's steps carry its condition, read once by its first; an assertion
    // after the block is not part of it; a block for another platform has no steps here.
    let blocks = maestro::parse(
        "appId: a.b\n---\n- launchApp\n- runFlow:\n    when:\n      visible: \"Allow\"\n    commands:\n      - tapOn: \"Allow\"\n      - back\n- assertVisible: Home\n- runFlow:\n    when:\n      platform: iOS\n    commands:\n      - tapOn: \"OK\"\n- runFlow:\n    when:\n      notVisible:\n        id: \"a.b:id/banner\"\n      platform: android\n    commands:\n      - back\n",
    )
    .unwrap();
    let described: Vec<String> = blocks.iter().map(Step::describe).collect();
    assert_eq!(
        described,
        [
            "launch a.b",
            "tap text \"Allow\", if text \"Allow\" shows",
            "key BACK, if text \"Allow\" shows",
            "check text \"Home\"",
            "key BACK, if resourceId \"a.b:id/banner\" does not show",
        ]
    );
    let opens: Vec<bool> = blocks
        .iter()
        .map(|s| s.when.as_ref().is_some_and(|w| w.opens))
        .collect();
    assert_eq!(opens, [false, true, false, false, true]);
    let flow = "- runFlow:\n    when:\n      visible:\n        point: \"1, 2\"\n    commands:\n      - back\n";
    let refused = maestro::parse(&format!("appId: a.b\n---\n{flow}")).unwrap_err();
    assert!(
        refused.contains("line 5: visible is an id or a text, not a point"),
        "{refused}"
    );
    // A text that is no valid regex is that very text, as Maestro matches it (`toRegexSafe`); one
    // Java reads but Rust does not is refused; one with a `${…}` is read again, rendered, as its
    // step runs.
    let literal = maestro::parse("appId: a.b\n---\n- tapOn: \"Sign (in\"\n- tapOn: \"+234 801\"\n").unwrap();
    let described: Vec<String> = literal.iter().map(Step::describe).collect();
    assert_eq!(described, ["tap text \"Sign (in\"", "tap text \"+234 801\""]);
    let unreadable = maestro::parse("appId: a.b\n---\n- tapOn: \"(?=Sign)\"\n").unwrap_err();
    assert!(
        unreadable.starts_with("line 3: text \"(?=Sign)\" is not a valid regex"),
        "{unreadable}"
    );
    let template = maestro::parse("appId: a.b\n---\n- tapOn: \"${NAME}.*\"\n").unwrap();
    assert_eq!(template[0].describe(), "tap text \"${NAME}.*\"");
    assert!(matches!(template[0].action, Action::Rendered(_)), "{template:?}");
    // onFlowStart runs first.
    let started = maestro::parse("appId: a.b\nonFlowStart:\n  - launchApp\n---\n- back\n").unwrap();
    let described: Vec<String> = started.iter().map(Step::describe).collect();
    assert_eq!(described, ["launch a.b", "key BACK"]);
    assert!(
        maestro::parse("- launchApp\n")
            .unwrap_err()
            .contains("needs an app: give appId")
    );
}

#[test]
fn a_placeholder_is_named_by_words_a_replay_can_pass() {
    for (words, name) in [
        ("password", "PASSWORD"),
        ("pin-code", "PIN_CODE"),
        ("1pin", "SECRET_1PIN"),
        ("Password input", "PASSWORD_INPUT"),
        ("  Confirm -- password ", "CONFIRM_PASSWORD"),
        ("סיסמה", "SECRET"),
        ("", "SECRET"),
    ] {
        assert_eq!(placeholder_word(words), name, "{words:?}");
        assert_eq!(placeholder_name(&format!("${{{name}}}")), Some(name));
    }
    assert_eq!(placeholder_word(&"x".repeat(100)).len(), 48);
    assert_eq!(placeholder_name("${PIN_CODE}"), Some("PIN_CODE"));
    for not_one in ["$PASSWORD", "${}", "${1X}", "${A B}", "x${A}", "${A}}"] {
        assert_eq!(placeholder_name(not_one), None, "{not_one}");
    }
}

#[test]
fn repeat_run_flow_optional_and_percentages_read_as_plain_steps() {
    let flow = "appId: a.b\n---\n- repeat:\n    times: 3\n    commands:\n      - tapOn: \"Add\"\n- runFlow:\n    commands:\n      - back\n- tapOn:\n    text: \"Skip\"\n    optional: true\n- assertVisible: Home\n- tapOn:\n    point: \"50%, 90%\"\n- swipe:\n    start: \"50%, 80%\"\n    end: \"50%, 20%\"\n";
    let steps = maestro::parse(flow).unwrap();
    let described: Vec<String> = steps.iter().map(Step::describe).collect();
    assert_eq!(
        described,
        [
            "tap text \"Add\"",
            "tap text \"Add\"",
            "tap text \"Add\"",
            "key BACK",
            "tap text \"Skip\"",
            "check text \"Home\"",
            "tap point (50%, 90%), fragile",
            "swipe (50%, 80%) to (50%, 20%)",
        ]
    );
    // The assertion after an optional tap is a check of its own, and required.
    assert!(steps[4].optional && steps[4].expect.visible.is_empty());
    assert!(!steps[5].optional);

    let refused = |flow: &str| maestro::parse(&format!("appId: a.b\n---\n{flow}")).unwrap_err();
    assert_eq!(
        refused("- repeat:\n    times: 100000\n    commands:\n      - back\n"),
        "line 3: repeat grows the flow past 5000 steps"
    );
    assert_eq!(
        refused("- runFlow: login.yaml\n"),
        "line 3: runFlow FILE reads a file beside the flow: replay the flow's file (droidmcp replay FLOW.yaml)"
    );
    assert_eq!(
        refused("- tapOn:\n    point: \"50%, 101%\"\n"),
        "line 4: a point in percent is \"x%, y%\", each 0 to 100"
    );
    assert_eq!(
        refused("- tapOn:\n    text: x\n    optional: maybe\n"),
        "line 5: optional is true or false"
    );
}

#[test]
fn run_flow_reads_files_beside_the_flow_and_refuses_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    std::fs::create_dir(dir.path().join("common")).unwrap();
    write(
        "main.yaml",
        "appId: a.b\n---\n- runFlow: common/login.yaml\n- runFlow:\n    file: common/login.yaml\n- back\n",
    );
    write("common/login.yaml", "appId: c.d\n---\n- launchApp\n- inputText: ada\n");
    let (_, steps) = maestro::parse_file(&dir.path().join("main.yaml"), |_| Ok(())).unwrap();
    let described: Vec<String> = steps.iter().map(Step::describe).collect();
    // The subflow's own appId is its app.
    assert_eq!(
        described,
        ["launch c.d", "type \"ada\"", "launch c.d", "type \"ada\"", "key BACK"]
    );

    write("a.yaml", "appId: a.b\n---\n- back\n- runFlow: b.yaml\n");
    write("b.yaml", "appId: a.b\n---\n- runFlow: a.yaml\n");
    let looped = maestro::parse_file(&dir.path().join("a.yaml"), |_| Ok(())).unwrap_err();
    assert!(
        looped.ends_with("line 4: in b.yaml: line 3: runFlow a.yaml runs a flow that is already running (a loop)"),
        "{looped}"
    );
    write("c.yaml", "appId: a.b\n---\n- runFlow: missing.yaml\n");
    let missing = maestro::parse_file(&dir.path().join("c.yaml"), |_| Ok(())).unwrap_err();
    assert!(
        missing.contains("c.yaml: line 3: cannot read missing.yaml"),
        "{missing}"
    );
}

/// Issue 33 item 9: each Maestro option is honoured or refused with its line, never read and
/// dropped. Honoured: a direction swipe's duration and `eraseText: N` reach the script.
#[test]
fn maestro_options_are_honoured_or_refused_with_their_line() {
    let script = |flow: &str| js::render(&maestro::parse(&format!("appId: a.b\n---\n{flow}")).unwrap(), &[]);
    let swiped = script("- swipe:\n    direction: UP\n    duration: 1500\n");
    assert!(
        swiped.contains(r#"await ui.swipe({ direction: "up", durationMs: 1500 });"#),
        "{swiped}"
    );
    let erased = script("- eraseText: 3\n");
    assert!(
        erased.contains(r#"for (let i = 0; i < 3; i++) await ui.key({ name: "DEL" });"#),
        "{erased}"
    );
    // Issue 35: the options and commands public suites use most, read as Maestro runs them.
    let read = |flow: &str| -> Vec<String> {
        maestro::parse(flow)
            .unwrap_or_else(|e| panic!("{flow}: {e}"))
            .iter()
            .map(Step::describe)
            .collect()
    };
    assert_eq!(
        read(
            "appId: a.b\njsEngine: graaljs\n---\n- launchApp:\n    clearState: true\n    stopApp: true\n    clearKeychain: true\n    label: Fresh start\n- waitForAnimationToEnd\n- waitForAnimationToEnd:\n    timeout: 5000\n- hideKeyboard\n- clearKeychain\n- repeat:\n    times: 1\n    label: once\n    commands:\n      - back\n- runFlow:\n    label: setup\n    commands:\n      - launchApp:\n          stopApp: false\n"
        ),
        [
            "clear data of a.b",
            "stop a.b",
            "launch a.b",
            "wait for the screen to settle",
            "wait for the screen to settle, at most 5000 ms",
            "key BACK",
            "clearKeychain: nothing to do on Android (the keychain is iOS's)",
            "key BACK",
            "launch a.b",
        ]
    );
    assert_eq!(
        read(
            "appId: a.b\n---\n- inputText:\n    text: ada\n    label: Name\n- pressKey:\n    key: Enter\n- tapOn:\n    text: Go\n    retryTapIfNoChange: false\n"
        ),
        ["type \"ada\"", "key ENTER", "tap text \"Go\""]
    );
    // Maestro's random inputs, in its shapes.
    let typed: Vec<String> = maestro::parse(
        "appId: a.b\n---\n- inputRandomText\n- inputRandomNumber:\n    length: 12\n- inputRandomEmail\n- inputRandomPersonName\n- inputRandomText:\n    length: 0\n",
    )
    .unwrap()
    .into_iter()
    .map(|s| match s.action {
        Action::Type { text, .. } => text,
        other => panic!("{other:?}"),
    })
    .collect();
    let shape = |pattern: &str, text: &str| regex::Regex::new(pattern).unwrap().is_match(text);
    assert!(shape("^[A-Za-z0-9]{8}$", &typed[0]), "{typed:?}");
    assert!(shape("^[1-9][0-9]{11}$", &typed[1]), "{typed:?}");
    assert!(shape("^[a-z]+_[a-z]+_[0-9]{4}@[a-z]+\\.com$", &typed[2]), "{typed:?}");
    assert!(shape("^[A-Z][a-z]+ [A-Z][a-z]+$", &typed[3]), "{typed:?}");
    assert!(shape("^[A-Za-z0-9]{8}$", &typed[4]), "{typed:?}");
    let retried = maestro::parse("appId: a.b\n---\n- tapOn:\n    text: Go\n    retryTapIfNoChange: true\n").unwrap();
    assert_eq!(retried[0].describe(), "tap text \"Go\", again if nothing changed");
    assert!(
        script("- waitForAnimationToEnd:\n    timeout: 700\n").contains("await Promise.race([settle(), sleep(700)]);")
    );
    let refused = |flow: &str| maestro::parse(&format!("appId: a.b\n---\n{flow}")).unwrap_err();
    for (flow, error) in [
        (
            "- scrollUntilVisible:\n    element: \"Battery\"\n    timeout: 2000000\n",
            "line 5: timeout is a number of ms, up to 600000",
        ),
        (
            "- swipe:\n    direction: UP\n    duration: 60000\n",
            "line 5: duration is 50 to 10000 ms",
        ),
        (
            "- swipe:\n    direction: UP\n    start: \"1, 2\"\n",
            "line 5: swipe takes direction, or start and end, not both",
        ),
        (
            "- eraseText: all\n",
            "line 3: eraseText takes a number of characters, 1 to 1000",
        ),
        (
            "- eraseText:\n    charactersToErase: 5000\n",
            "line 4: eraseText takes a number of characters",
        ),
        (
            "- back:\n    times: 2\n",
            "line 4: `times` is not supported here (optional are)",
        ),
        (
            "- pressKey: Remote Dpad Sideways\n",
            "line 3: pressKey \"Remote Dpad Sideways\" is none of Maestro's key names",
        ),
        (
            "- scroll:\n    speed: 40\n",
            "line 4: `speed` is not supported here (optional are)",
        ),
        (
            "- launchApp:\n    clearState: yes please\n",
            "line 4: clearState is true or false",
        ),
        (
            "- launchApp:\n    permissions:\n      all: always\n",
            "line 5: all is allow, deny or unset",
        ),
    ] {
        let said = refused(flow);
        assert!(said.starts_with(error), "{flow}: {said}");
    }
}
