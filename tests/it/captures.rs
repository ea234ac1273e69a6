//! The parsers the simulator shares with the server, run on every real capture in
//! `../shared/device-captures` (skipped with a reason when that folder is absent, failed under CI).

use droidmcp::android::device_state::parse_battery;
use droidmcp::android::getprop::parse_getprop;
use droidmcp::android::logcat::{Level, parse_threadtime_line};
use droidmcp::android::packages::{is_valid_package_name, parse_package_list};
use droidmcp::android::uiautomator::parse_ui_dump;

fn read(path: &std::path::Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("read capture")).into_owned()
}

#[test]
fn getprop_captures_parse_every_property_including_multi_line_values() {
    for (name, path) in crate::common::captures("getprop") {
        let text = read(&path);
        let props = parse_getprop(&text);
        let entries = text
            .lines()
            .filter(|l| l.starts_with('[') && l.contains("]: ["))
            .count();
        assert_eq!(props.len(), entries, "{name}: one property per entry line");
        let multi: Vec<_> = props.iter().filter(|(_, v)| v.contains('\n')).collect();
        let continuation_lines = text.lines().count() - entries;
        assert_eq!(
            multi.iter().map(|(_, v)| v.matches('\n').count()).sum::<usize>(),
            continuation_lines,
            "{name}"
        );
        if !name.contains("SUBSET") {
            assert!(props.contains_key("ro.product.model"), "{name}");
            assert!(
                props
                    .get("ro.build.version.sdk")
                    .is_some_and(|v| v.parse::<u32>().is_ok()),
                "{name}"
            );
        }
        if let Some(history) = props.get("persist.sys.boot.reason.history") {
            assert!(
                history.lines().count() >= 2 && !history.contains(']'),
                "{name}: {history:?}"
            );
        }
        println!("{name}: {} properties, {} multi-line", props.len(), multi.len());
    }
}

#[test]
fn properties_answer_for_every_getprop_capture_is_a_full_summary_within_500_chars() {
    let cache = droidmcp::context::Cache::new(Default::default());
    for (name, path) in crate::common::captures("getprop") {
        let text = read(&path);
        let props = parse_getprop(&text);
        let id = cache
            .put(
                droidmcp::context::Kind::Props,
                name.clone(),
                droidmcp::context::Data::Map(props.clone()),
            )
            .id
            .clone();
        let answer = droidmcp::tools::device::properties_output("emulator-5554", &props, &id);
        let result = droidmcp::context::budget::respond(&answer, 4000, &cache, "properties");
        let json = result.structured_content.expect("structured").to_string();
        let chars = json.chars().count();
        println!(
            "{name}: getprop {} chars -> properties answer {chars} chars",
            text.chars().count()
        );
        assert!(chars <= 500, "{name}: {chars} chars");
        if name.contains("SUBSET") {
            continue;
        }
        let summary = answer.summary.expect("summary");
        assert!(
            summary.model.is_some() && summary.manufacturer.is_some(),
            "{name}: {summary:?}"
        );
        assert!(summary.sdk_version.is_some_and(|v| v >= 23), "{name}: {summary:?}");
        assert!(
            summary.android_version.is_some() && summary.device.is_some(),
            "{name}: {summary:?}"
        );
        assert!(
            summary.product.is_some() && summary.hardware.is_some(),
            "{name}: {summary:?}"
        );
        assert!(!summary.abi_list.is_empty(), "{name}: {summary:?}");
    }
}

#[test]
fn dumpsys_battery_capture_gives_level_status_and_power_source() {
    for (name, path) in crate::common::captures("dumpsys-battery") {
        let battery = parse_battery(&read(&path));
        assert_eq!(battery.level, Some(100), "{name}");
        assert_eq!(battery.status.as_deref(), Some("charging"), "{name}");
        assert_eq!(battery.powered_by, ["ac"], "{name}");
        assert_eq!(battery.temperature_c, Some(25.0), "{name}");
    }
}

#[test]
fn pm_list_packages_capture_keeps_paths_and_names() {
    for (name, path) in crate::common::captures("pm-list-packages") {
        let text = read(&path);
        let packages = parse_package_list(&text);
        assert_eq!(
            packages.len(),
            text.lines().filter(|l| l.starts_with("package:")).count(),
            "{name}"
        );
        assert!(packages.iter().all(|p| {
            p.path
                .as_deref()
                .is_some_and(|p| p.starts_with('/') && p.ends_with(".apk"))
        }));
        assert!(
            packages.iter().all(|p| is_valid_package_name(&p.name)),
            "{name}: every name follows the grammar"
        );
        assert!(
            packages.iter().any(|p| p.path.as_deref().unwrap().contains("==/")),
            "{name}: /data/app/~~…== paths"
        );
        println!("{name}: {} packages", packages.len());
    }
}

#[test]
fn uiautomator_captures_parse_with_bounds_on_every_node() {
    let mut files = crate::common::captures("uiautomator");
    files.extend(crate::common::captures("appium-page-source"));
    for (name, path) in files {
        let text = read(&path);
        let tree = parse_ui_dump(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = roxmltree::Document::parse(text.trim_start_matches('\u{feff}'))
            .map(|d| d.descendants().filter(|n| n.is_element()).count() - 1)
            .expect("well-formed XML");
        assert_eq!(tree.nodes.len(), expected, "{name}: every element becomes a node");
        for node in &tree.nodes {
            let b = node.bounds().unwrap_or_else(|| panic!("{name}: node without bounds"));
            let (x, y) = b.center();
            assert!(b.is_empty() || b.contains(x, y), "{name}: center inside bounds");
        }
        assert!(
            tree.nodes.iter().any(|n| !n.class().is_empty()),
            "{name}: classes are read"
        );
        // Writing out and reading back keeps every attribute.
        assert_eq!(parse_ui_dump(&tree.to_xml()).unwrap().nodes, tree.nodes, "{name}");
        println!("{name}: {} nodes", tree.nodes.len());
    }
}

#[test]
fn logcat_capture_parses_and_holds_two_fatal_exceptions() {
    for (name, path) in crate::common::captures("logcat") {
        let text = read(&path);
        let parsed: Vec<_> = text.lines().filter_map(parse_threadtime_line).collect();
        let total = text.lines().filter(|l| !l.starts_with("---------")).count();
        assert_eq!(parsed.len(), total, "{name}: every threadtime line parses");
        let fatal: Vec<_> = parsed
            .iter()
            .filter(|l| l.message.starts_with("FATAL EXCEPTION"))
            .collect();
        assert_eq!(fatal.len(), 2, "{name}");
        assert!(
            fatal
                .iter()
                .all(|l| l.tag == "AndroidRuntime" && l.level == Level::Error)
        );
        println!("{name}: {} lines", parsed.len());
    }
}

#[test]
fn dumpsys_package_captures_give_versions_flags_permissions_and_skip_the_hidden_copy() {
    use droidmcp::android::dumpsys_package::parse_package_dump;
    let captures = crate::common::captures("dumpsys-package");
    for (name, path) in &captures {
        let text = read(path);
        let package = if name.contains("updated-system-app") {
            "com.tekartik.package1"
        } else {
            "com.tekartik.package2"
        };
        let dump = parse_package_dump(&text, package).unwrap_or_else(|| panic!("{name}: no package block"));
        println!("{name}: {dump:?}");
        assert!(dump.version_name.is_some() && dump.version_code.is_some(), "{name}");
        assert!(dump.target_sdk.is_some() && dump.min_sdk.is_some(), "{name}");
        assert!(dump.code_path.as_deref().is_some_and(|p| p.starts_with('/')), "{name}");
        let code_path = dump.code_path.clone().unwrap();
        assert_eq!(dump.apk_paths, [format!("{code_path}/base.apk")], "{name}");
        assert!(
            dump.first_install_time.is_some() && dump.last_update_time.is_some(),
            "{name}"
        );
        assert!(dump.granted_permissions > 0 && dump.requested_permissions > 0, "{name}");
        assert_eq!(dump.enabled.as_deref(), Some("default"), "{name}");
        assert!(parse_package_dump(&text, "com.not.there").is_none(), "{name}");
        if name.contains("updated-system-app") {
            // The live package, not the older copy under "Hidden system packages:".
            assert_eq!(dump.version_code, Some(20));
            assert_eq!(dump.version_name.as_deref(), Some("1.0.16"));
            assert!(dump.system && dump.updated_system_app);
            assert!(dump.code_path.as_deref().unwrap().starts_with("/data/app/"));
            assert_eq!(dump.granted_permissions, 4, "3 install + 1 runtime");
        }
    }
}

#[test]
fn dumpsys_activity_capture_names_the_resumed_launcher() {
    use droidmcp::android::activity::parse_focus;
    for (name, path) in crate::common::captures("dumpsys-activity") {
        let focus = parse_focus(&read(&path)).unwrap_or_else(|| panic!("{name}: no focus"));
        assert_eq!(focus.package, "com.google.android.apps.nexuslauncher", "{name}");
        assert_eq!(
            focus.activity, "com.google.android.apps.nexuslauncher.NexusLauncherActivity",
            "{name}"
        );
    }
}

/// The real activity capture names the launcher; against the real Settings dump (every node
/// com.android.settings) the answer follows the screen and says why.
#[test]
fn focus_follows_the_dumped_screen_when_the_activity_capture_disagrees() {
    use droidmcp::android::activity::focus_for_screen;
    let activities = crate::common::captures("dumpsys-activity");
    let settings = crate::common::captures("uiautomator_settings");
    for ((name, path), (dump_name, dump_path)) in activities.iter().zip(settings.iter()) {
        let tree = parse_ui_dump(&read(dump_path)).expect("parse");
        let screen_package = tree.nodes[0].attr("package");
        assert_eq!(screen_package, Some("com.android.settings"), "{dump_name}");
        let focus = focus_for_screen(&read(path), screen_package).unwrap();
        assert_eq!(focus.package, "com.android.settings", "{name} + {dump_name}");
        let note = focus.note.expect("a note saying why");
        assert!(note.contains("com.google.android.apps.nexuslauncher"), "{note}");
        println!("{name} + {dump_name}: focused {} ({note})", focus.activity);
    }
}

#[test]
fn logcat_capture_crashes_are_found_with_exception_process_and_frames() {
    use droidmcp::android::crashes::{find_crashes, pids_of_package};
    for (name, path) in crate::common::captures("logcat") {
        let lines: Vec<_> = read(&path).lines().filter_map(parse_threadtime_line).collect();
        let crashes = find_crashes(&lines);
        let java: Vec<_> = crashes.iter().filter(|c| c.kind == "java").collect();
        assert_eq!(java.len(), 2, "{name}: {crashes:#?}");
        for c in &java {
            assert_eq!(
                c.process.as_deref(),
                Some("com.mgoogle.android.gms:persistent"),
                "{name}"
            );
            assert!(
                c.what.starts_with("java.lang.NullPointerException"),
                "{name}: {}",
                c.what
            );
            // microG's code is not under the process's package: the first frame outside the
            // framework is the app's.
            assert!(
                c.app_frame
                    .as_deref()
                    .is_some_and(|f| f.starts_with("org.microg.gms.gcm.McsService.connect")),
                "{name}: {c:?}"
            );
            assert_eq!(c.top_frame, None, "{name}: the top frame is the app's");
        }
        assert_eq!(
            pids_of_package(&lines, "com.mgoogle.android.gms"),
            std::collections::HashSet::from([7675, 7711, 7932]),
            "{name}: the started main process and both crashed :persistent ones, from the log itself"
        );
        println!("{name}: {} crashes", crashes.len());
    }
}

#[test]
fn ui_elements_of_every_capture_are_labelled_centered_and_compact() {
    use droidmcp::android::ui_elements::{elements, label_of};
    let mut all = crate::common::captures("uiautomator");
    all.extend(crate::common::captures("appium"));
    for (name, path) in all {
        let tree = parse_ui_dump(&read(&path)).expect("parse");
        let els = elements(&tree);
        assert!(!els.is_empty(), "{name}");
        for e in &els {
            let b = e.bounds;
            assert_eq!(e.at, [(b.left + b.right) / 2, (b.top + b.bottom) / 2], "{name}: {e:?}");
            if e.clickable && !label_of(&tree, e.node).is_empty() {
                assert!(!e.label.is_empty(), "{name}: {e:?}");
            }
            // No clickable element is unlabeled while a descendant has text.
            let has_text_below = {
                let mut stack = tree.nodes[e.node].children.clone();
                let mut found = false;
                while let Some(i) = stack.pop() {
                    found |= !tree.nodes[i].text().trim().is_empty();
                    stack.extend(tree.nodes[i].children.iter().copied());
                }
                found
            };
            assert!(
                !(e.clickable && has_text_below && e.label.is_empty()),
                "{name}: unlabeled {e:?}"
            );
        }
        let json = serde_json::to_string(&els).unwrap();
        println!(
            "{name}: {} nodes -> {} elements, {} chars",
            tree.nodes.len(),
            els.len(),
            json.chars().count()
        );
    }
}

/// The display size a capture's file name states (`…-1080x2400.xml`), else the root's bounds.
fn display_of(name: &str, tree: &droidmcp::android::uiautomator::UiTree) -> droidmcp::android::uiautomator::Bounds {
    let size = name
        .trim_end_matches(".xml")
        .rsplit('-')
        .next()
        .and_then(|s| s.split_once('x'))
        .and_then(|(w, h)| Some((w.parse::<i32>().ok()?, h.parse::<i32>().ok()?)));
    let (w, h) = size.unwrap_or_else(|| {
        let root = tree.nodes[0].bounds().expect("root bounds");
        (root.right, root.bottom)
    });
    droidmcp::android::uiautomator::Bounds {
        left: 0,
        top: 0,
        right: w,
        bottom: h,
    }
}

/// Text targets on real screens: a tap by a tappable element's label, when that label is unique
/// on its screen, resolves to exactly that element. Never another one.
#[test]
fn tap_by_a_unique_label_resolves_to_exactly_that_element_on_every_capture() {
    use droidmcp::android::ui_elements::{Field, Matcher, best_target, elements, find};
    let mut all = crate::common::captures("uiautomator");
    all.extend(crate::common::captures("appium"));
    let (mut total_rows, mut total_resolved, mut total_wrong) = (0, 0, 0);
    for (name, path) in all {
        let tree = parse_ui_dump(&read(&path)).expect("parse");
        let els = elements(&tree);
        let screen = display_of(&name, &tree);
        let (mut rows, mut resolved, mut refused, mut wrong) = (0, 0, 0, Vec::new());
        // What a model would type for a row: its whole label, or its title when the label was
        // cut (a long row reads "Title · summary…"). Only queries unique on the screen count.
        let segments = |label: &str| -> Vec<String> { label.split(" · ").map(str::to_lowercase).collect() };
        for e in els.iter().filter(|e| e.clickable && !e.label.is_empty()) {
            let query = match e.label.ends_with('…') {
                false => e.label.clone(),
                true => e.label.split(" · ").next().unwrap_or("").to_string(),
            };
            if query.is_empty() || query.ends_with('…') {
                continue;
            }
            let q = query.to_lowercase();
            let same = els
                .iter()
                .filter(|o| o.label.to_lowercase() == q || segments(&o.label).contains(&q))
                .count();
            if same > 1 {
                continue;
            }
            rows += 1;
            let found = find(&tree, &els, Field::Text, &Matcher::Contains(query.clone()), screen);
            match best_target(&found) {
                Ok(hit) if hit.element.node == e.node => resolved += 1,
                Ok(hit) => wrong.push(format!("{query:?} → {:?}", hit.element.label)),
                Err(tied) => {
                    refused += 1;
                    let tied: Vec<&str> = tied.iter().map(|f| f.element.label.as_str()).collect();
                    println!("  refused {query:?}: tied {tied:?}");
                }
            }
        }
        println!(
            "{name}: {rows} rows with a unique label, {resolved} resolved, {refused} refused, {} wrong",
            wrong.len()
        );
        assert!(wrong.is_empty(), "{name}: tapped the wrong element: {wrong:?}");
        total_rows += rows;
        total_resolved += resolved;
        total_wrong += wrong.len();
    }
    println!("all captures: {total_rows} rows, {total_resolved} resolved, {total_wrong} wrong");
    assert!(total_rows >= 100, "the captures should give at least 100 rows to check");
}

/// `find` for a unique label names one element, in a short answer.
#[test]
fn find_by_a_unique_label_gives_one_match_on_every_capture() {
    use droidmcp::android::ui_elements::{Field, Matcher, elements, find};
    let mut all = crate::common::captures("uiautomator");
    all.extend(crate::common::captures("appium"));
    for (name, path) in all {
        let tree = parse_ui_dump(&read(&path)).expect("parse");
        let els = elements(&tree);
        let screen = display_of(&name, &tree);
        let mut sizes = Vec::new();
        for e in els
            .iter()
            .filter(|e| e.clickable && !e.label.is_empty() && !e.label.ends_with('…'))
        {
            let q = e.label.to_lowercase();
            if els.iter().filter(|o| o.label.to_lowercase().contains(&q)).count() > 1 {
                continue;
            }
            let found = find(&tree, &els, Field::Text, &Matcher::Contains(e.label.clone()), screen);
            let exact: Vec<_> = found.iter().filter(|f| f.exact()).collect();
            assert_eq!(exact.len(), 1, "{name}: {:?} → {} exact matches", e.label, exact.len());
            assert_eq!(found[0].element.node, e.node, "{name}: {:?}", e.label);
            // The answer `find` gives, as a model reads it.
            let answer = droidmcp::tools::ui::UiOutput {
                operation: "find".into(),
                device: "R58M123ABC".into(),
                focused: Some(droidmcp::android::activity::Focus {
                    package: "com.example.app".into(),
                    activity: "com.example.app.MainActivity".into(),
                    note: None,
                }),
                count: Some(1),
                total_count: Some(found.len()),
                matches: Some(vec![found[0].element.clone()]),
                hint: Some(match found.len() - 1 {
                    0 => "tap {ref: matches[0].ref} taps the best match".into(),
                    more => format!(
                        "tap {{ref: matches[0].ref}} taps the best match; {more} more only contain {:?} (ui dump {{filter}} lists them)",
                        e.label
                    ),
                }),
                ..Default::default()
            };
            sizes.push(serde_json::to_string(&answer).unwrap().chars().count());
        }
        if let (Some(min), Some(max)) = (sizes.iter().min(), sizes.iter().max()) {
            println!(
                "{name}: {} unique labels, one match each, {min}–{max} chars",
                sizes.len()
            );
            assert!(*max <= 600, "{name}: {max} chars");
        }
    }
}

#[test]
fn real_screenshots_come_to_at_most_35k_base64_chars_at_the_defaults() {
    use base64::Engine;
    use droidmcp::image::{decode, encode_jpeg, fit, grid, resize};
    for (name, path) in crate::common::captures("screenshot") {
        let frame = decode(&std::fs::read(&path).unwrap()).expect("decode");
        let (w, h) = fit(frame.width, frame.height, 1000);
        let mut small = resize(&frame, w, h).unwrap();
        let plain = base64::engine::general_purpose::STANDARD
            .encode(encode_jpeg(&small, 70).unwrap())
            .len();
        grid::draw(&mut small);
        let gridded = base64::engine::general_purpose::STANDARD
            .encode(encode_jpeg(&small, 70).unwrap())
            .len();
        println!(
            "{name}: {}×{} PNG {} base64 chars -> JPEG {w}×{h} q70 {plain} chars ({gridded} with the grid)",
            frame.width,
            frame.height,
            std::fs::metadata(&path).unwrap().len() * 4 / 3
        );
        assert_eq!(w.max(h), 1000, "{name}");
        assert!(plain <= 35_000, "{name}: {plain}");
        assert!(
            gridded * 4 <= plain * 5,
            "{name}: the grid adds more than 25%: {plain} -> {gridded}"
        );
    }
}

#[test]
fn ui_dump_answer_for_the_settings_home_capture_is_within_3000_chars() {
    use droidmcp::android::ui_elements::elements;
    use droidmcp::tools::ui::UiOutput;
    let cache = droidmcp::context::Cache::new(Default::default());
    for (name, path) in crate::common::captures("uiautomator_settings") {
        let tree = parse_ui_dump(&read(&path)).unwrap();
        let els = elements(&tree);
        let answer = UiOutput {
            operation: "dump".into(),
            device: "R58M123ABC".into(),
            focused: Some(droidmcp::android::activity::Focus {
                package: "com.android.settings".into(),
                activity: "com.android.settings.Settings".into(),
                note: None,
            }),
            screen: Some([1080, 2400]),
            count: Some(els.len()),
            total_count: Some(els.len()),
            has_more: Some(false),
            elements: Some(els),
            cache_id: Some("ui-01JD3V6M8Q9ZK4X2B7T5R1N0PA".into()),
            hint: Some("tap {ref} acts on an element; refs hold until the screen changes".into()),
            ..Default::default()
        };
        let result = droidmcp::context::budget::respond(&answer, 4000, &cache, "dump");
        let chars = result.structured_content.unwrap().to_string().chars().count();
        println!(
            "{name}: ui dump answer {chars} chars (the XML is {} chars)",
            read(&path).chars().count()
        );
        assert!(chars <= 3000, "{name}: {chars}");
    }
}

/// Every screen the tests know: the real captures and the simulator's fixture screens.
fn all_screens() -> Vec<(String, droidmcp::android::uiautomator::UiTree)> {
    let mut paths = crate::common::captures("uiautomator");
    paths.extend(crate::common::captures("appium"));
    for entry in std::fs::read_dir(crate::common::profile_dir().join("screens")).unwrap() {
        let path = entry.unwrap().path();
        paths.push((format!("fixture {}", path.file_name().unwrap().to_string_lossy()), path));
    }
    paths
        .into_iter()
        .map(|(name, path)| {
            let tree = parse_ui_dump(&read(&path)).expect("parse");
            (name, tree)
        })
        .collect()
}

/// The property refs keep: a ref of screen A that resolves on screen B names an element of the
/// same identity label (what was typed and a switch's state word left out), class and
/// resource-id.
fn check_refs_across(a: &droidmcp::android::uiautomator::UiTree, b: &droidmcp::android::uiautomator::UiTree) -> usize {
    use droidmcp::android::ui_elements::elements;
    use droidmcp::android::ui_refs::{RefBook, Resolved, resolve};
    let mut book = RefBook::default();
    let mut first = elements(a);
    book.number(&mut first);
    let mut second = elements(b);
    book.number(&mut second);
    let mut resolved = 0;
    for e in &first {
        if let Resolved::One(found) = resolve(&second, &e.reference) {
            resolved += 1;
            // Identity's label, not the listing's: what was typed (a field's text, and a form
            // row's listing label that shows it) and a switch's state word may change under one
            // ref; the label an element is known by may not.
            assert_eq!(
                found.identity.label, e.identity.label,
                "{} → {}",
                e.reference, found.reference
            );
            assert_eq!((&found.kind, &found.id), (&e.kind, &e.id));
        }
    }
    resolved
}

#[test]
fn a_ref_from_any_screen_never_resolves_to_another_element_on_any_other_screen() {
    let screens = all_screens();
    let mut pairs = 0;
    let mut resolved = 0;
    for (i, (_, a)) in screens.iter().enumerate() {
        for (j, (_, b)) in screens.iter().enumerate() {
            if i != j {
                pairs += 1;
                resolved += check_refs_across(a, b);
            }
        }
    }
    println!(
        "refs across {} screens: {pairs} ordered pairs, {resolved} refs resolved on another screen, all the same element",
        screens.len()
    );
    assert!(pairs >= 42, "{pairs}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A screen and a mutation of it (labels moved between elements, checked flags flipped, a
    /// title renamed): the same places and ids with other labels, the case that once tapped
    /// "Erase all data" for "Light". Refs never cross to another label.
    #[test]
    fn refs_never_cross_to_another_label_on_a_mutated_screen(
        pick in 0usize..1000,
        moves in proptest::collection::vec((0usize..10_000, 0usize..10_000, proptest::bool::ANY), 1..40),
    ) {
        let screens = all_screens();
        let (_, a) = &screens[pick % screens.len()];
        let mut b = a.clone();
        let n = b.nodes.len();
        for (from, to, flip) in moves {
            let text = b.nodes[from % n].text().to_string();
            let node = &mut b.nodes[to % n];
            node.set_attr("text", &text);
            if flip {
                let checked = node.flag("checked");
                node.set_attr("checked", if checked { "false" } else { "true" });
            }
        }
        check_refs_across(a, &b);
    }
}

/// Luminance (Rec. 601) of the pixel at (x, y).
fn luma(frame: &droidmcp::image::Frame, x: u32, y: u32) -> f64 {
    let i = ((y * frame.width + x) * 4) as usize;
    let p = &frame.rgba[i..i + 3];
    0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])
}

/// Mean luminance of a block of pixels, clipped to the frame.
fn mean_luma(frame: &droidmcp::image::Frame, x: i64, y: i64, w: i64, h: i64) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0);
    for yy in y.max(0)..(y + h).min(i64::from(frame.height)) {
        for xx in x.max(0)..(x + w).min(i64::from(frame.width)) {
            sum += luma(frame, xx as u32, yy as u32);
            n += 1;
        }
    }
    (n > 0).then(|| sum / f64::from(n))
}

#[test]
fn the_grid_shows_on_dark_and_light_screenshots_at_a_small_cost() {
    use base64::Engine;
    use droidmcp::image::{decode, encode_jpeg, fit, grid, resize};
    const MIN_CONTRAST: f64 = 60.0;
    let shots = crate::common::captures("screenshot");
    for (name, path) in &shots {
        let frame = decode(&std::fs::read(path).unwrap()).expect("decode");
        let (w, h) = fit(frame.width, frame.height, 1000);
        let plain = resize(&frame, w, h).unwrap();
        let mean = mean_luma(&plain, 0, 0, i64::from(w), i64::from(h)).unwrap();
        let mut gridded = plain.clone();
        grid::draw(&mut gridded);
        // Each dash (a dark and a light block) against the pixels beside it on the screen
        // underneath: one of its two blocks must stand out from what surrounds the dash.
        let (columns, rows) = grid::lines(w, h);
        let mut dashes = Vec::new();
        for x in &columns {
            for y in (0..h).step_by(grid::DASH_STEP as usize).filter(|y| y + 16 <= h) {
                dashes.push((
                    i64::from(*x),
                    i64::from(y),
                    8,
                    16,
                    (i64::from(*x) - 8, i64::from(y), 8, 16),
                    (i64::from(*x) + 8, i64::from(y), 8, 16),
                ));
            }
        }
        for y in &rows {
            for x in (0..w).step_by(grid::DASH_STEP as usize).filter(|x| x + 16 <= w) {
                dashes.push((
                    i64::from(x),
                    i64::from(*y),
                    16,
                    8,
                    (i64::from(x), i64::from(*y) - 8, 16, 8),
                    (i64::from(x), i64::from(*y) + 8, 16, 8),
                ));
            }
        }
        // Where two lines cross, the later one's blocks replace the earlier's: those dashes are
        // a crossing of dark and light blocks, judged by neither line alone.
        let crosses = |x: i64, y: i64, w: i64, h: i64| {
            columns.iter().any(|c| (x..x + w).contains(&i64::from(*c)) && w > 8)
                || rows.iter().any(|r| (y..y + h).contains(&i64::from(*r)) && h > 8)
        };
        dashes.retain(|(x, y, dw, dh, ..)| !crosses(*x, *y, *dw, *dh));
        let mut worst = f64::MAX;
        for (x, y, dw, dh, before, after) in &dashes {
            let around: Vec<f64> = [before, after]
                .iter()
                .filter_map(|(bx, by, bw, bh)| mean_luma(&plain, *bx, *by, *bw, *bh))
                .collect();
            let around = around.iter().sum::<f64>() / around.len() as f64;
            let (dark, light) = if dw > dh {
                (
                    mean_luma(&gridded, *x, *y, 8, 8).unwrap(),
                    mean_luma(&gridded, x + 8, *y, 8, 8).unwrap(),
                )
            } else {
                (
                    mean_luma(&gridded, *x, *y, 8, 8).unwrap(),
                    mean_luma(&gridded, *x, y + 8, 8, 8).unwrap(),
                )
            };
            let contrast = (dark - around).abs().max((light - around).abs());
            worst = worst.min(contrast);
        }
        let b64 = |f: &droidmcp::image::Frame| {
            base64::engine::general_purpose::STANDARD
                .encode(encode_jpeg(f, 70).unwrap())
                .len()
        };
        let (plain_chars, grid_chars) = (b64(&plain), b64(&gridded));
        println!(
            "{name}: mean luminance {mean:.0}/255; {} dashes, the least contrast {worst:.0}/255 (goal ≥ {MIN_CONTRAST}); base64 {plain_chars} → {grid_chars} chars with the grid (+{:.0}%)",
            dashes.len(),
            (grid_chars as f64 / plain_chars as f64 - 1.0) * 100.0
        );
        assert!(
            worst >= MIN_CONTRAST,
            "{name}: a dash blends into the screen ({worst:.0})"
        );
        assert!(grid_chars * 4 <= plain_chars * 5, "{name}: the grid adds more than 25%");
    }
    if !shots.is_empty() {
        let dark = shots.iter().any(|(n, _)| n.contains("facebook-login_xiaomi"));
        let light = shots.iter().any(|(n, _)| n.contains("pixel-launcher"));
        assert!(dark && light, "both the dark and the light capture were checked");
    }
}

/// A recorded flow's selectors on real screens: for every tappable element, the selector
/// `flow::selector_for` records finds that very element again the way a replay's tap does (an
/// exact match, the best target); coordinates only where no selector names it alone.
#[test]
fn a_recorded_selector_finds_the_same_element_again_on_every_capture() {
    use droidmcp::android::ui_elements::{Field, Matcher, best_target, elements, find};
    use droidmcp::flow::{Selector, selector_for};
    let mut all = crate::common::captures("uiautomator");
    all.extend(crate::common::captures("appium"));
    let (mut total, mut by_id, mut by_text, mut by_point) = (0, 0, 0, 0);
    for (name, path) in all {
        let tree = parse_ui_dump(&read(&path)).expect("parse");
        let els = elements(&tree);
        let screen = display_of(&name, &tree);
        let mut points = 0;
        for e in els.iter().filter(|e| e.clickable) {
            total += 1;
            let target = selector_for(&tree, &els, screen, e);
            let (field, value) = match &target.selector {
                Selector::ResourceId(v) => (Field::ResourceId, v),
                Selector::Text(v) => (Field::Text, v),
                Selector::ContentDesc(v) => (Field::ContentDesc, v),
                Selector::Point(at) => {
                    assert_eq!(*at, e.at, "{name}: a point selector is where the tap landed");
                    points += 1;
                    continue;
                }
                Selector::Percent(_) | Selector::Rendered(_) | Selector::Pattern(_) | Selector::Maestro(_) => {
                    panic!("{name}: a recording never makes a percent, template, pattern or Maestro selector")
                }
            };
            match field {
                Field::ResourceId => by_id += 1,
                _ => by_text += 1,
            }
            let found = find(&tree, &els, field, &Matcher::Exact(value.clone()), screen);
            let hit = best_target(&found).unwrap_or_else(|_| panic!("{name}: {value:?} is ambiguous"));
            assert_eq!(
                hit.element.node, e.node,
                "{name}: {value:?} finds {:?}, not {:?}",
                hit.element.label, e.label
            );
        }
        by_point += points;
        println!("{name}: {points} tappables by coordinates only");
    }
    println!("all captures: {total} tappables: {by_id} by resource-id, {by_text} by text or desc, {by_point} by point");
    assert!(total >= 100, "the captures should give at least 100 tappables to check");
    assert!(by_point * 4 < total, "most tappables get a selector");
}
