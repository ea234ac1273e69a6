//! The replay's JUnit reports: a testsuite per flow and a testcase per step (`steps`), or
//! Maestro's shape (`maestro`), a testcase per flow.

use super::Report;

/// JUnit XML: a testsuite per flow, a testcase per step (a failure names the step, its selector
/// and what the screen showed; a skipped step after it is `<skipped/>`).
pub fn junit(reports: &[Report]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for report in reports {
        suite(&mut out, report);
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite(out: &mut String, report: &Report) {
    let run_failed = report.run_error.is_some() || report.lost.is_some();
    let failures = report.failed() + usize::from(run_failed);
    let skipped = report.skipped();
    let tests = report.steps.len() + usize::from(run_failed);
    out.push_str(&format!(
        "<testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        xml(&report.name),
        report.ms as f64 / 1000.0
    ));
    if !report.device.is_empty() {
        out.push_str(&format!(
            "  <properties><property name=\"device\" value=\"{}\"/></properties>\n",
            xml(&report.device)
        ));
    }
    let class = xml(&format!("droidmcp.flow.{}", report.name));
    let shot = report
        .screenshot
        .as_ref()
        .map(|p| format!("\nScreenshot: {}", p.display()))
        .unwrap_or_default();
    for (name, result) in &report.steps {
        let time = result.as_ref().map_or(0.0, |r| r.ms as f64 / 1000.0);
        out.push_str(&format!(
            "  <testcase classname=\"{class}\" name=\"{}\" time=\"{time:.3}\"",
            xml(name)
        ));
        match result {
            None => out.push_str(">\n    <skipped message=\"an earlier step failed\"/>\n  </testcase>\n"),
            Some(r) => {
                let failure = report.failure(r);
                if failure.is_none() && r.warnings.is_empty() {
                    out.push_str("/>\n");
                    continue;
                }
                out.push_str(">\n");
                if let Some(e) = failure {
                    out.push_str(&format!(
                        "    <failure message=\"{}\">step {}: {}{}</failure>\n",
                        xml(&crate::android::text::echoed(&e)),
                        xml(name),
                        xml(&e),
                        xml(&shot)
                    ));
                }
                if !r.warnings.is_empty() {
                    out.push_str(&format!(
                        "    <system-out>{}</system-out>\n",
                        xml(&r.warnings.join("\n"))
                    ));
                }
                out.push_str("  </testcase>\n");
            }
        }
    }
    if let Some(e) = report.lost.as_ref().or(report.run_error.as_ref()) {
        out.push_str(&format!(
            "  <testcase classname=\"{class}\" name=\"the run\" time=\"0\">\n    <failure message=\"{}\">{}{}</failure>\n  </testcase>\n",
            xml(&crate::android::text::echoed(e)),
            xml(e),
            xml(&shot)
        ));
    }
    out.push_str("</testsuite>\n");
}

/// The report as Maestro writes it (`JUnitTestSuiteReporter`): a testsuite per device named
/// `suite` (`--test-suite-name`, "Test Suite" by default) (Maestro's merged shards' suites) with its `device`, a testcase per flow named by its
/// name, times in whole seconds, a `status` (SUCCESS or ERROR), and a failed flow's `<failure>`
/// text: its failing step (number and what it did), why, what the screen showed, and the
/// screenshot's path.
pub fn junit_maestro(reports: &[Report], suite_name: Option<&str>) -> String {
    let suite_name = xml(suite_name.unwrap_or("Test Suite"));
    let seconds = |ms: u64| ms / 1000;
    let mut devices: Vec<&str> = Vec::new();
    for report in reports {
        if !devices.contains(&report.device.as_str()) {
            devices.push(&report.device);
        }
    }
    let mut out = String::from("<?xml version='1.0' encoding='UTF-8'?>\n<testsuites>\n");
    for device in devices {
        let suite: Vec<&Report> = reports.iter().filter(|r| r.device == device).collect();
        let failed = suite.iter().filter(|r| !r.passed()).count();
        let device_attr = if device.is_empty() {
            String::new()
        } else {
            format!(" device=\"{}\"", xml(device))
        };
        out.push_str(&format!(
            "  <testsuite name=\"{suite_name}\"{device_attr} tests=\"{}\" failures=\"{failed}\" time=\"{}\">\n",
            suite.len(),
            seconds(suite.iter().map(|r| r.ms).sum())
        ));
        for report in suite {
            let name = xml(&report.name);
            let head = format!(
                "    <testcase id=\"{name}\" name=\"{name}\" classname=\"{name}\" time=\"{}\" status=\"{}\"",
                seconds(report.ms),
                if report.passed() { "SUCCESS" } else { "ERROR" }
            );
            match report.why() {
                None => out.push_str(&format!("{head}/>\n")),
                Some(e) => {
                    let shot = report
                        .screenshot
                        .as_ref()
                        .map(|p| format!("\nScreenshot: {}", p.display()))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "{head}>\n      <failure>{}</failure>\n    </testcase>\n",
                        xml(&format!("{e}{shot}"))
                    ));
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text for XML content or an attribute: the five escapes, and no control characters (XML 1.0
/// allows none but tab and line ends).
pub(super) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use proptest::prelude::*;

    use super::{Report, junit, junit_maestro};
    use crate::replay::StepResult;

    /// Issue 35: the Maestro-shaped report parses as XML and is what Maestro writes: one
    /// testsuite "Test Suite" counting flows and failed flows, a testcase per flow (id, name and
    /// classname its name, a status), and a failed flow's failure text naming its failing step,
    /// why, and its screenshot; whatever the names and errors hold.
    #[test]
    fn the_maestro_junit_report_has_a_testcase_per_flow() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cases = AtomicUsize::new(0);
        let flows = proptest::collection::vec((any::<String>(), any::<bool>(), any::<String>()), 1..5);
        let result = proptest::test_runner::TestRunner::default().run(&flows, |flows| {
            cases.fetch_add(1, Ordering::Relaxed);
            let reports: Vec<Report> = flows
                .iter()
                .map(|(name, ok, error)| Report {
                    name: name.clone(),
                    steps: vec![(
                        "1 tap text \"Go\"".into(),
                        Some(StepResult {
                            name: "1 tap text \"Go\"".into(),
                            ok: *ok,
                            ms: 2500,
                            warnings: Vec::new(),
                            error: (!ok).then(|| error.clone()),
                        }),
                    )],
                    ms: 2500,
                    screenshot: (!ok).then(|| PathBuf::from("/tmp/r/flow-failure.jpg")),
                    ..Default::default()
                })
                .collect();
            let xml = junit_maestro(&reports, None);
            let doc = roxmltree::Document::parse(&xml).map_err(|e| TestCaseError::fail(format!("{e}\n{xml}")))?;
            let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
            let failed = flows.iter().filter(|(_, ok, _)| !ok).count();
            prop_assert_eq!(suite.attribute("name"), Some("Test Suite"));
            prop_assert_eq!(
                suite.attribute("tests").map(str::to_string),
                Some(flows.len().to_string())
            );
            prop_assert_eq!(
                suite.attribute("failures").map(str::to_string),
                Some(failed.to_string())
            );
            let testcases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
            prop_assert_eq!(testcases.len(), flows.len());
            for (case, (_, ok, _)) in testcases.iter().zip(&flows) {
                prop_assert_eq!(case.attribute("id"), case.attribute("name"));
                prop_assert_eq!(case.attribute("classname"), case.attribute("name"));
                prop_assert_eq!(case.attribute("time"), Some("2"));
                prop_assert_eq!(case.attribute("status"), Some(if *ok { "SUCCESS" } else { "ERROR" }));
                let failure = case.children().find(|n| n.has_tag_name("failure"));
                prop_assert_eq!(failure.is_some(), !ok);
                if let Some(f) = failure {
                    let text = f.text().unwrap_or_default();
                    prop_assert!(text.starts_with("step 1 tap text \"Go\": "), "{}", text);
                    prop_assert!(text.ends_with("Screenshot: /tmp/r/flow-failure.jpg"), "{}", text);
                }
            }
            Ok(())
        });
        eprintln!("{} cases", cases.load(Ordering::Relaxed));
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    proptest! {
    /// A JUnit report parses as XML, and each testcase is named as its step, whatever the step's
    /// name and error hold (control characters become spaces: XML 1.0 cannot carry them).
    #[test]
    fn the_junit_report_is_xml_naming_each_step(
        names in proptest::collection::vec(any::<String>(), 1..5),
        error in any::<String>(),
    ) {
        let steps = names.iter().enumerate().map(|(i, n)| {
            let result = StepResult { name: n.clone(), ok: i != 0, ms: 5, warnings: vec![error.clone()], error: (i == 0).then(|| error.clone()) };
            (n.clone(), Some(result))
        }).collect();
        let report = Report { name: "generated".into(), steps, ..Default::default() };
        let xml = junit(&[report]);
        let doc = roxmltree::Document::parse(&xml).map_err(|e| TestCaseError::fail(format!("{e}\n{xml}")))?;
        let cases: Vec<String> = doc.descendants().filter(|n| n.has_tag_name("testcase")).map(|n| n.attribute("name").unwrap_or_default().to_string()).collect();
        let expected: Vec<String> = names.iter().map(|n| n.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().replace('\r', " ")).collect();
        prop_assert_eq!(cases.len(), expected.len());
        for (case, want) in cases.iter().zip(&expected) {
            // XML normalizes whitespace in attributes (tab, line ends become spaces).
            let norm = |s: &str| s.replace(['\t', '\n', '\r'], " ");
            prop_assert_eq!(norm(case), norm(want));
        }
    }
    }
}
