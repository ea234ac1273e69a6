//! `droidmcp replay FILE`: a `.js` flow, or a Maestro `.yaml` flow turned into the same script
//! (`flow::maestro::parse`, then `flow::js::render`), run through the script sandbox against any
//! device. A client of the server on the command line's layer: `flow/` only models, reads and
//! writes flows. One
//! line per step, a JUnit report, and for a failed step what the screen showed and a screenshot.
//! Whatever it writes (the report, the failure's screenshot, the files a flow made) goes through
//! the one door (`crate::confine`) into the report's folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::confine::Folder;
use crate::server::{DroidMcp, call_once};
use crate::tools::State;
use env::{defaults, parse_env, redact, variables};

mod env;
mod files;
mod junit;
pub use junit::{junit, junit_maestro};

#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The flows, run in order on one device: .js flows (as `flow export` writes them, or any
    /// droidmcp script that keeps flow-results.json) or Maestro .yaml flows.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write a JUnit XML report here (a testsuite per flow, a testcase per step); a failed
    /// step's screenshot and the files a flow makes go in its folder (made 0700 if new). The
    /// file's name is plain: letters, digits, spaces, - _ . (not first: . or -).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// The report's shape: `steps` (a testsuite per flow, a testcase per step) or `maestro`
    /// (as `maestro test --format junit` writes it: one testsuite, a testcase per flow).
    #[arg(long, value_enum, default_value_t = JunitFormat::Steps, requires = "junit")]
    pub junit_format: JunitFormat,
    /// A step healed by its label (its selector no longer matched) fails instead of passing with
    /// a warning.
    #[arg(long)]
    pub strict: bool,
    /// A variable of the flows (a password the recording left out, typed as ${NAME}; a Maestro
    /// flow's ${NAME}), over any the flow defines: NAME=VALUE, repeatable. `MAESTRO_*` variables
    /// of the environment count too, as in Maestro.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Read the flows (a Maestro flow with its subflows) without a device: print what would run
    /// and every command refused (file, line, why); exit 1 when one is.
    #[arg(long, conflicts_with_all = ["junit", "strict", "env", "sim", "adb", "allow_network", "run_timeout_ms"])]
    pub check: bool,
    /// How long each step waits for its element and its outcome, in ms.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..=120_000))]
    pub step_timeout_ms: u64,
    /// Lets the flows' scripts reach the network (Maestro's `http.get/post/put/delete`, http or
    /// https), which they cannot otherwise.
    #[arg(long)]
    pub allow_network: bool,
    /// How long one flow may run in all, in ms (its scripts' endless loops end there).
    #[arg(long, default_value_t = MAX_RUN_MS, value_parser = clap::value_parser!(u64).range(1_000..=MAX_RUN_MS))]
    pub run_timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JunitFormat {
    Steps,
    Maestro,
}

/// The longest replay: a script run's time limit.
const MAX_RUN_MS: u64 = crate::tools::script::MAX_TIMEOUT_MS;

/// One step's record, as the script keeps it in `flow-results.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct StepResult {
    pub name: String,
    pub ok: bool,
    pub ms: u64,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub name: String,
    /// Every step of the flow in order, with its result when it ran.
    pub steps: Vec<(String, Option<StepResult>)>,
    /// Why the run ended early when no step says it (a syntax error, the time limit).
    pub run_error: Option<String>,
    pub strict: bool,
    pub ms: u64,
    /// The failure's screenshot, when one was taken.
    pub screenshot: Option<PathBuf>,
    /// The script ran to its end.
    pub ended: bool,
}

impl Report {
    /// A step's failure, if it failed (healed under `--strict` counts).
    pub fn failure(&self, result: &StepResult) -> Option<String> {
        match (&result.error, self.strict && !result.warnings.is_empty()) {
            (Some(e), _) => Some(e.clone()),
            (None, true) => Some(format!("{} (--strict)", result.warnings.join("; "))),
            (None, false) => None,
        }
    }

    /// Steps that ran and failed.
    pub fn failed(&self) -> usize {
        self.steps
            .iter()
            .filter(|(_, r)| r.as_ref().is_some_and(|r| self.failure(r).is_some()))
            .count()
    }

    /// Steps an earlier failure kept from running.
    pub fn skipped(&self) -> usize {
        self.steps.iter().filter(|(_, r)| r.is_none()).count()
    }

    /// No step failed and the run ended by itself (a step may not have run then: a repeat of
    /// no rounds).
    pub fn passed(&self) -> bool {
        self.run_error.is_none() && self.failed() == 0 && (self.ended || self.skipped() == 0)
    }
}

/// Runs the flows in order, each printing a line per step; every file is read (and a Maestro
/// flow parsed) before any runs, so a typo fails the command at once, naming its file and line.
pub async fn run(state: Arc<State>, options: &Options) -> anyhow::Result<Vec<Report>> {
    let flows = options
        .files
        .iter()
        .map(|f| script_of(f))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Where the report goes, checked before anything runs.
    let report = report_file(options).map_err(|e| anyhow::anyhow!("--junit: {e}"))?;
    let mut reports = Vec::new();
    for (file, (name, code, media)) in options.files.iter().zip(flows) {
        // What addMedia adds goes to the device first (a script cannot push a host file).
        files::push(&state, &media).await?;
        reports.push(run_one(&state, options, file, name, code).await?);
    }
    if reports.len() > 1 {
        let passed = reports.iter().filter(|r| r.passed()).count();
        println!(
            "{} flows: {passed} passed, {} failed",
            reports.len(),
            reports.len() - passed
        );
    }
    if let Some((folder, file)) = report {
        let xml = match options.junit_format {
            JunitFormat::Steps => junit(&reports),
            JunitFormat::Maestro => junit_maestro(&reports),
        };
        folder
            .write(&[file], xml.as_bytes())
            .map_err(|e| anyhow::anyhow!("--junit: {e}"))?;
    }
    Ok(reports)
}

/// The report's folder (made 0700 when new) and its file's plain name, from `--junit`.
fn report_file(options: &Options) -> Result<Option<(Folder, String)>, String> {
    let Some(path) = &options.junit else {
        return Ok(None);
    };
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{} names no file", path.display()))?;
    crate::confine::plain_name(&file)?;
    let folder = Folder::chosen(path.parent().unwrap_or(Path::new("")))?;
    Ok(Some((folder, file)))
}

/// The folder a replay's files go in: the report's (`--junit`), else `otherwise`.
fn report_folder(options: &Options, otherwise: impl FnOnce() -> Result<Folder, String>) -> Result<Folder, String> {
    match report_file(options)? {
        Some((folder, _)) => Ok(folder),
        None => otherwise(),
    }
}

/// `droidmcp replay --check`: each flow read without a device (a Maestro flow with its subflows,
/// going on past a refused command), its steps printed as they would run and each refusal as
/// `refused FILE line N: why`; whether none was refused.
pub fn check(options: &Options) -> bool {
    let mut refused_total = 0;
    for file in &options.files {
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let mut notes = Vec::new();
        let (steps, refused) = match ext {
            "yaml" | "yml" => {
                let checked = crate::flow::maestro::check_file(file, crate::tools::flow::replayable);
                let mut lines = Vec::new();
                would(&checked.steps, &mut 0, &mut lines);
                notes = checked.notes;
                (lines, checked.refused)
            }
            "js" => match std::fs::read_to_string(file) {
                Ok(code) => (step_names(&code), Vec::new()),
                Err(e) => (Vec::new(), vec![format!("cannot read {}: {e}", file.display())]),
            },
            _ => (
                Vec::new(),
                vec![format!(
                    "{}: a flow is a .js file (flow export {{format: \"js\"}}) or a Maestro .yaml file",
                    file.display()
                )],
            ),
        };
        for line in &steps {
            println!("would   {line}");
        }
        for note in &notes {
            println!("note    {note}");
        }
        for why in &refused {
            println!("refused {why}");
        }
        println!(
            "{}: {} steps would run, {} refused",
            file.display(),
            steps.iter().filter(|l| !l.starts_with(' ')).count(),
            refused.len()
        );
        refused_total += usize::from(!refused.is_empty());
    }
    if options.files.len() > 1 {
        println!(
            "{} flows: {} read, {refused_total} with refusals",
            options.files.len(),
            options.files.len() - refused_total
        );
    }
    refused_total == 0
}

/// What `--check` prints of `steps`: each step numbered as the replay names it, each block's rule
/// on a line of its own (indented).
fn would(steps: &[crate::flow::Step], number: &mut usize, out: &mut Vec<String>) {
    for step in steps {
        match &step.action {
            crate::flow::Action::Block { control, body } => {
                out.push(format!("  {}:", step.describe()));
                would(body, number, out);
                if let crate::flow::Control::Complete { after } = control {
                    would(after, number, out);
                }
            }
            _ => {
                *number += 1;
                out.push(format!("{number} {}", step.describe()));
            }
        }
    }
}

/// A flow file's name, the script that replays it, and the host files its addMedia steps push.
fn script_of(file: &Path) -> anyhow::Result<(String, String, Vec<crate::flow::commands::Media>)> {
    let text = std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or_default();
    let (mut named, mut media) = (None, Vec::new());
    let code = match ext {
        "js" => text,
        "yaml" | "yml" => {
            // Read again by path, so a `runFlow: FILE` finds FILE beside it.
            let (name, steps) = crate::flow::maestro::parse_file(file, crate::tools::flow::replayable)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            named = name;
            media = crate::flow::commands::media(&steps);
            crate::flow::js::render(&steps, &[format!("from {}", file.display())])
        }
        _ => anyhow::bail!(
            "{}: a flow is a .js file (flow export {{format: \"js\"}}) or a Maestro .yaml file",
            file.display()
        ),
    };
    // A Maestro flow's header `name`, else the file's.
    let name = named.unwrap_or_else(|| {
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "flow".into())
    });
    Ok((name, code, media))
}

async fn run_one(
    state: &Arc<State>,
    options: &Options,
    file: &Path,
    name: String,
    code: String,
) -> anyhow::Result<Report> {
    let names = step_names(&code);
    let env = variables(options);
    let device = state.device(None).await.ok();
    let mut given = env.clone();
    given.extend(defaults(file, device));
    let started = Instant::now();
    let answer = call(
        state,
        "script",
        json!({
            "operation": "run",
            "code": code,
            "timeoutMs": options.run_timeout_ms,
            "args": {
                "timeoutMs": options.step_timeout_ms,
                "env": given
                    .iter()
                    .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                    .collect::<serde_json::Map<String, Value>>(),
            },
        }),
    )
    .await?;
    let results = read_results(state, &answer);
    let mut report = Report {
        name,
        strict: options.strict,
        ms: started.elapsed().as_millis() as u64,
        ..Default::default()
    };
    // Each step with its records in the order they ran (a step of a repeat has one per round),
    // or none when it did not run.
    for name in &names {
        let ran: Vec<&StepResult> = results.iter().filter(|r| &r.name == name).collect();
        if ran.is_empty() {
            report.steps.push((name.clone(), None));
        }
        report
            .steps
            .extend(ran.into_iter().map(|r| (name.clone(), Some(r.clone()))));
    }
    // A hand-written script's records under names of its own.
    for result in results.iter().filter(|r| !names.contains(&r.name)) {
        report.steps.push((result.name.clone(), Some(result.clone())));
    }
    // What the flow made on the device (takeScreenshot), pulled beside the report.
    let run = answer.get("runId").and_then(Value::as_str).unwrap_or_default();
    let beside = report_folder(options, || Folder::chosen(Path::new("")));
    let (pulled, unpulled) = files::pull(state, run, beside).await;
    let failed_step = results.iter().any(|r| r.error.is_some());
    report.ended = answer.get("ok") == Some(&Value::Bool(true));
    if !report.ended && !failed_step {
        let error = answer
            .get("error")
            .or_else(|| answer.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the run failed");
        // The step that was running (a script's endless loop): the first after the last that
        // has a record and has none.
        let last = report.steps.iter().rposition(|(_, r)| r.is_some()).map_or(0, |i| i + 1);
        report.run_error = Some(match report.steps.iter().skip(last).find(|(_, r)| r.is_none()) {
            Some((name, _)) => format!("{error}, in step {name}"),
            None => error.to_string(),
        });
    }
    if !report.passed() {
        let (seen, shot) = what_the_screen_shows(state, options, &report.name).await;
        if let Some(seen) = seen {
            let failing = report
                .steps
                .iter_mut()
                .filter_map(|(_, r)| r.as_mut())
                .find(|r| r.error.is_some());
            match failing {
                Some(r) => r.error = r.error.take().map(|e| format!("{e}. The screen shows {seen}")),
                None => report.run_error = report.run_error.take().map(|e| format!("{e}. The screen shows {seen}")),
            }
        }
        report.screenshot = shot;
    }
    if !unpulled.is_empty() && report.run_error.is_none() {
        report.run_error = Some(format!("files the flow made were not pulled: {}", unpulled.join("; ")));
    }
    redact(&mut report, &env);
    print(&report);
    for path in pulled {
        println!("file    {}", path.display());
    }
    Ok(report)
}

/// A tool call through the server, as an assistant makes it: its structured answer, or
/// `{ok: false, message}` for an error without one.
async fn call(state: &Arc<State>, tool: &str, args: Value) -> anyhow::Result<Value> {
    let Value::Object(args) = args else {
        unreachable!("arguments are an object")
    };
    let result = call_once(DroidMcp::new(state.clone()), tool, args).await?;
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    Ok(json!({ "ok": result.is_error != Some(true), "message": text.join("\n") }))
}

/// `await step("3 tap …", …)` lines: the flow's steps, so the ones a failure skipped are named.
pub(crate) fn step_names(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| l.trim_start().strip_prefix("await step("))
        .filter_map(|rest| {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
            stream.next().and_then(Result::ok)
        })
        .collect()
}

/// The steps' records the run left in its folder.
fn read_results(state: &State, answer: &Value) -> Vec<StepResult> {
    let Some(run) = answer.get("runId").and_then(Value::as_str) else {
        return Vec::new();
    };
    state
        .runs
        .read_run_file(run, crate::flow::js::RESULTS_FILE)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// After a failure: the activity and the first labels on the screen, and a screenshot saved
/// beside the report (or in the user's private `droidmcp-replay-UID` in the temp folder), named
/// by the flow's name made plain: a flow's `name:` is a third party's text.
async fn what_the_screen_shows(state: &Arc<State>, options: &Options, name: &str) -> (Option<String>, Option<PathBuf>) {
    let seen = match call(state, "ui", json!({"operation": "dump", "limit": 12})).await {
        Ok(dump) if dump.get("elements").is_some() => {
            let activity = dump["focused"]["activity"]
                .as_str()
                .unwrap_or("no activity")
                .to_string();
            let labels: Vec<String> = dump["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["label"].as_str())
                .filter(|l| !l.is_empty())
                .map(|l| format!("{l:?}"))
                .collect();
            Some(format!("{activity} with {}", labels.join(", ")))
        }
        _ => None,
    };
    let Value::Object(args) = json!({"operation": "screenshot"}) else {
        unreachable!()
    };
    let shot = match call_once(DroidMcp::new(state.clone()), "ui", args).await {
        Ok(result) => result.content.iter().find_map(|c| c.as_image().cloned()),
        Err(_) => None,
    };
    let folder = report_folder(options, || Folder::user_temp("replay"));
    let path = shot.and_then(|image| {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data).ok()?;
        let file = format!("{}-failure.jpg", crate::confine::plain_from(name));
        match folder.and_then(|folder| folder.write(&[file], &bytes)) {
            Ok(path) => Some(path),
            Err(e) => {
                tracing::warn!("the failure's screenshot was not saved: {e}");
                None
            }
        }
    });
    (seen, path)
}

fn print(report: &Report) {
    for (name, result) in &report.steps {
        match result {
            Some(r) => match report.failure(r) {
                None if r.warnings.is_empty() => println!("ok      {name} ({} ms)", r.ms),
                None => println!("ok      {name} ({} ms); warning: {}", r.ms, r.warnings.join("; ")),
                Some(e) => println!("FAILED  {name} ({} ms): {e}", r.ms),
            },
            None => println!("skipped {name}"),
        }
    }
    if let Some(e) = &report.run_error {
        println!("FAILED  the run: {e}");
    }
    if let Some(path) = &report.screenshot {
        println!("screenshot of the failure: {}", path.display());
    }
    let (failed, skipped) = (report.failed(), report.skipped());
    let steps = report.steps.len();
    println!(
        "{}: {steps} step{}, {} passed, {failed} failed, {skipped} skipped, {:.1} s",
        report.name,
        if steps == 1 { "" } else { "s" },
        steps - failed - skipped,
        report.ms as f64 / 1000.0
    );
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::step_names;
    use crate::flow::js;
    use crate::flow::tests::step;

    proptest! {
    /// The script names every step, in order, whatever the labels hold: the replay reads the
    /// names back to report the steps a failure skipped.
    #[test]
    fn the_script_names_every_step(steps in proptest::collection::vec(step(), 1..8)) {
        let code = js::render(&steps, &["a header\nwith */ a line".into()]);
        let names: Vec<String> = steps.iter().enumerate().map(|(i, s)| format!("{} {}", i + 1, s.describe())).collect();
        prop_assert_eq!(step_names(&code), names);
        // Nothing from the recording ends a comment or a string early: no line terminator but
        // the renderer's own line feeds (JavaScript also ends lines at CR, U+2028, U+2029).
        prop_assert!(!code.contains(['\r', '\u{2028}', '\u{2029}']), "a raw line terminator");
    }

    }
}
