//! The replay's HTML report (`--format html`): what Maestro's `HtmlTestSuiteReporter` shows (the
//! result, the duration, the flows, failed and passed, each flow's status, duration, file and
//! failure) with each flow's device, on one self-contained page: its style inline, no script,
//! nothing fetched (Maestro's loads Bootstrap from a CDN; a CI artifact is often opened offline).

use super::Report;
// HTML5 reads XML's five escapes, so the JUnit report's one escaper serves the page too.
use super::junit::xml as text;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}\
th,td{border:1px solid #ccc;padding:.4em;text-align:left;vertical-align:top}\
.SUCCESS td.status{background:#d4edda}.ERROR td.status{background:#f8d7da}\
.cards span{display:inline-block;margin-right:2em;font-size:1.2em}pre{white-space:pre-wrap;margin:0}";

/// One page listing every flow with its device and status.
pub fn html(reports: &[Report]) -> String {
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let seconds: u64 = reports.iter().map(|r| r.ms).sum::<u64>() / 1000;
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>droidmcp replay report</title><style>{STYLE}</style></head><body>\n\
<h1>Flow Execution Summary</h1>\n<p id=\"result\">Test Result: {}</p><p>Duration: {seconds}s</p>\n\
<p class=\"cards\"><span>Total number of Flows: <b id=\"total\">{}</b></span><span>Failed Flows: <b id=\"failed\">{failed}</b></span><span>Successful Flows: <b id=\"passed\">{}</b></span></p>\n\
<table><thead><tr><th>Flow</th><th>Device</th><th>Status</th><th>Duration</th><th>File</th><th>Failure</th></tr></thead><tbody>\n",
        if failed == 0 { "PASSED" } else { "FAILED" },
        reports.len(),
        reports.len() - failed
    );
    for report in reports {
        let status = if report.passed() { "SUCCESS" } else { "ERROR" };
        let why = report.why().unwrap_or_default();
        let shot = report
            .screenshot
            .as_ref()
            .map(|p| format!("\nScreenshot: {}", p.display()))
            .unwrap_or_default();
        out.push_str(&format!(
            "<tr class=\"flow {status}\"><td class=\"name\">{}</td><td class=\"device\">{}</td><td class=\"status\">{status}</td><td>{:.1}s</td><td>{}</td><td class=\"failure\"><pre>{}</pre></td></tr>\n",
            text(&report.name),
            text(&report.device),
            report.ms as f64 / 1000.0,
            text(&report.file.display().to_string()),
            text(&format!("{why}{}", if why.is_empty() { "" } else { &shot })),
        ));
    }
    out.push_str("</tbody></table>\n</body></html>\n");
    out
}
