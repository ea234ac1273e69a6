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

use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::{DroidMcp, call_once};
use crate::tools::State;
use env::{defaults, parse_env, redact, variables};

mod check;
mod env;
mod failure;
mod files;
mod html;
mod junit;
mod output;
mod suite;
pub use check::check;
pub use html::html;
pub use junit::{junit, junit_maestro};
pub use suite::named_devices;

#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The flows: .js flows (as `flow export` writes them, or any droidmcp script that keeps
    /// flow-results.json), Maestro .yaml flows, or Maestro workspace folders, whose flows are
    /// chosen as `maestro test DIR` chooses them (config.yaml's flows, tags, executionOrder).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The workspace's config instead of the folder's config.yaml (or config.yml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Run only the flows whose header has one of these tags (comma-separated; added to the
    /// config's includeTags).
    #[arg(long, value_name = "TAGS")]
    pub include_tags: Vec<String>,
    /// Leave out the flows whose header has one of these tags (comma-separated; added to the
    /// config's excludeTags).
    #[arg(long, value_name = "TAGS")]
    pub exclude_tags: Vec<String>,
    /// Deal the flows out over N devices, run in parallel (each device its own flows in turn).
    #[arg(long, value_name = "N", conflicts_with = "shard_all", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub shard_split: Option<u64>,
    /// Run every flow on each of N devices, in parallel.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub shard_all: Option<u64>,
    /// Write a report: `junit` (Maestro's shape unless --junit-format steps) or `html` (one
    /// self-contained page), to --output, else report.xml or report.html here, as Maestro does;
    /// `noop` (Maestro's default): none. Any case, as Maestro takes it.
    #[arg(long, value_enum, ignore_case = true, conflicts_with = "junit")]
    pub format: Option<ReportFormat>,
    /// Where --format writes its report. The file's name is plain (as --junit's).
    #[arg(long, value_name = "PATH", requires = "format")]
    pub output: Option<PathBuf>,
    /// Write each flow's steps (commands-NAME.json), its failure's screenshot, the screenshots it
    /// took and the run's log (maestro.log) in DIR/<date>_<time>/, as Maestro lays them out (the
    /// config's testOutputDir otherwise).
    #[arg(long, value_name = "DIR", conflicts_with = "debug_output")]
    pub test_output_dir: Option<PathBuf>,
    /// The same test output where Maestro 1.x's `--debug-output DIR` puts it:
    /// DIR/.maestro/tests/<date>_<time>/.
    #[arg(long, value_name = "DIR")]
    pub debug_output: Option<PathBuf>,
    /// The test output straight in the folder of --debug-output or --test-output-dir, with no
    /// <date>_<time> folder (Maestro's option, for CI).
    #[arg(long)]
    pub flatten_debug_output: bool,
    /// The suite's name in `--format junit`'s report (Maestro's; "Test Suite" otherwise).
    #[arg(long, value_name = "NAME")]
    pub test_suite_name: Option<String>,
    /// Write a JUnit XML report here (a testsuite per flow, a testcase per step); a failed
    /// step's screenshot and the files a flow makes go in its folder (made 0700 if new). The
    /// file's name is plain: letters, digits, spaces, - _ . (not first: . or -).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `steps` (a testsuite per flow, a testcase per step: --junit's
    /// default) or `maestro` (as `maestro test --format junit` writes it: a testsuite per device,
    /// a testcase per flow: --format junit's default).
    #[arg(long, value_enum)]
    pub junit_format: Option<JunitFormat>,
    /// A step healed by its label (its selector no longer matched) fails instead of passing with
    /// a warning.
    #[arg(long)]
    pub strict: bool,
    /// A variable of the flows (a password the recording left out, typed as ${NAME}; a Maestro
    /// flow's ${NAME}), over any the flow defines: NAME=VALUE, repeatable. `MAESTRO_*` variables
    /// of the environment count too, as in Maestro.
    #[arg(long = "env", short = 'e', value_name = "NAME=VALUE", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Read the flows (a Maestro flow with its subflows) without a device: print what would run
    /// and every command refused (file, line, why); exit 1 when one is.
    #[arg(long, conflicts_with_all = ["junit", "strict", "env", "sim", "adb", "allow_network", "run_timeout_ms", "shard_split", "shard_all", "format", "test_output_dir", "debug_output", "flatten_debug_output", "test_suite_name"])]
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

impl Options {
    /// The shards asked for (1 without --shard-split or --shard-all).
    pub fn shards(&self) -> usize {
        self.shard_split.or(self.shard_all).unwrap_or(1) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JunitFormat {
    Steps,
    Maestro,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Junit,
    Html,
    Noop,
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
    /// The device it ran on (several with shards).
    pub device: String,
    /// Its flow file.
    pub file: PathBuf,
    /// Its shard's number from 1, with several devices.
    pub shard: Option<usize>,
    /// Why the device was lost during it (dropped mid-run).
    pub lost: Option<String>,
    /// The files it made, pulled from the device.
    pub files: Vec<PathBuf>,
    /// What the run says about it without failing it (a file kept under another name).
    pub notes: Vec<String>,
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
        self.lost.is_none() && self.run_error.is_none() && self.failed() == 0 && (self.ended || self.skipped() == 0)
    }

    /// Why the flow failed, in a line: the device lost, else its failing step, else the run.
    pub fn why(&self) -> Option<String> {
        self.lost
            .clone()
            .or_else(|| {
                self.steps.iter().find_map(|(step, r)| {
                    r.as_ref()
                        .and_then(|r| self.failure(r))
                        .map(|e| format!("step {step}: {e}"))
                })
            })
            .or_else(|| self.run_error.clone())
    }
}

/// Runs the flows the options choose (`suite::plan`), each printing a line per step, over one
/// device or, with shards, several at once; every file is read (and a Maestro flow parsed)
/// before any runs, so a typo fails the command at once, naming its file and line. `named`:
/// the devices `--device` names.
pub async fn run(state: Arc<State>, options: &Options, named: &[String]) -> anyhow::Result<Vec<Report>> {
    let plan = suite::plan(options).map_err(anyhow::Error::msg)?;
    let flows = plan
        .all()
        .map(|f| script_of(f).map(|script| (f.clone(), script)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Where the reports go, checked before anything runs.
    let outputs =
        Arc::new(output::Outputs::open(options, plan.test_output_dir.as_deref()).map_err(anyhow::Error::msg)?);
    let shards = options.shards();
    if shards > 1 && !plan.sequence.is_empty() {
        anyhow::bail!(
            "the config's executionOrder runs flows in a sequence, which shards cannot (nor can Maestro's): drop --shard-split/--shard-all, or the executionOrder"
        );
    }
    let devices = suite::devices(&state, named, shards)
        .await
        .map_err(anyhow::Error::msg)?;
    let all = options.shard_all.is_some();
    let devices = suite::used(&devices, shards, plan.flows.len(), all);
    if devices.len() > 1 {
        println!(
            "{} {} flows over {} devices: {}",
            if all { "running all" } else { "splitting" },
            plan.flows.len(),
            devices.len(),
            devices.join(", ")
        );
    }
    let states = device_states(&state, devices, named, shards);
    let sharded = devices.len() > 1;
    let one = |device: usize, flow: usize| {
        let (states, outputs, flows) = (&states, &outputs, &flows);
        async move {
            let (file, (name, code, media)) = &flows[flow];
            let state = &states[device];
            let serial = &devices[device];
            let shard = sharded.then_some(device + 1);
            // A task of its own: the devices' flows run on every worker thread, not in turn on
            // this one.
            let ran = tokio::spawn({
                let (state, options, outputs) = (state.clone(), options.clone(), outputs.clone());
                let (file, name, code, media) = (file.clone(), name.clone(), code.clone(), media.clone());
                async move {
                    // What addMedia adds goes to the device first (a script cannot push a host
                    // file).
                    files::push(&state, &media).await?;
                    run_one(&state, &options, &outputs, &file, name, code, shard).await
                }
            });
            let failed = |e: String| Report {
                name: name.clone(),
                run_error: Some(e),
                ..Default::default()
            };
            let mut report = match ran.await {
                Ok(Ok(report)) => report,
                Ok(Err(e)) => failed(e.to_string()),
                Err(e) => failed(format!("the flow's run ended: {e}")),
            };
            report.device = serial.clone();
            report.file = file.clone();
            report.shard = shard;
            // A failure with its device gone: the device dropped.
            let dropped = if report.passed() {
                false
            } else if let Err(e) = state.adb.resolve(Some(serial)).await {
                let rest = if all {
                    "are not run there"
                } else {
                    "move to the other devices"
                };
                report.lost = Some(format!(
                    "the device {serial} dropped mid-run ({e}); its remaining flows {rest}"
                ));
                true
            } else {
                false
            };
            outputs.flow_done(&report);
            (report, dropped)
        }
    };
    let mut reports = Vec::new();
    // The sequence first, on the one device, stopping at a failure unless continueOnFailure.
    for at in 0..plan.sequence.len() {
        let (report, _) = one(0, at).await;
        let failed = !report.passed();
        reports.push(report);
        if failed && !plan.continue_on_failure {
            println!(
                "{} failed and executionOrder.continueOnFailure is false: the rest of the sequence does not run",
                reports.last().map(|r| r.name.as_str()).unwrap_or_default()
            );
            break;
        }
    }
    let first = plan.sequence.len();
    let queues = suite::deal(plan.flows.len(), devices.len(), all);
    let (mut ran, left) = suite::share(queues, !all, |device, flow| one(device, first + flow)).await;
    ran.sort_by_key(|r| (flows.iter().position(|(f, _)| *f == r.file), r.shard));
    reports.extend(ran);
    for (kept, flow) in left {
        let (file, (name, ..)) = &flows[first + flow];
        let report = unrun(name, file, kept.map(|d| (&devices[d], sharded.then_some(d + 1))));
        outputs.flow_done(&report);
        reports.push(report);
    }
    summarize(&outputs, &reports)?;
    Ok(reports)
}

/// A flow no device ran: the one it stayed on dropped (`--shard-all`), or every device did.
fn unrun(name: &str, file: &Path, kept: Option<(&String, Option<usize>)>) -> Report {
    Report {
        name: name.to_string(),
        file: file.to_path_buf(),
        lost: Some(match kept {
            Some((serial, _)) => format!("not run: the device {serial} dropped mid-run"),
            None => "not run: every device dropped".into(),
        }),
        device: kept.map(|(serial, _)| serial.clone()).unwrap_or_default(),
        shard: kept.and_then(|(_, shard)| shard),
        ..Default::default()
    }
}

/// Each device's own state (selected device, screens, refs, runs), as its own server; the
/// server's own when one device was neither named nor sharded.
fn device_states(state: &Arc<State>, devices: &[String], named: &[String], shards: usize) -> Vec<Arc<State>> {
    if devices.len() == 1 && named.is_empty() && shards == 1 {
        return vec![state.clone()];
    }
    devices
        .iter()
        .map(|serial| {
            let mut own = state.session(crate::tools::LOCAL_PRINCIPAL);
            own.confined_installs = state.confined_installs;
            own.select(Some(serial.clone()));
            Arc::new(own)
        })
        .collect()
}

/// The run's last line, then its report and log written.
fn summarize(outputs: &output::Outputs, reports: &[Report]) -> anyhow::Result<()> {
    if reports.len() > 1 {
        let passed = reports.iter().filter(|r| r.passed()).count();
        outputs.say(&format!(
            "{} flows: {passed} passed, {} failed",
            reports.len(),
            reports.len() - passed
        ));
    }
    outputs.finish(reports).map_err(anyhow::Error::msg)
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
    outputs: &output::Outputs,
    file: &Path,
    name: String,
    code: String,
    shard: Option<usize>,
) -> anyhow::Result<Report> {
    let names = step_names(&code);
    let env = variables(options);
    let device = state.device(None).await.ok();
    let mut given = env.clone();
    given.extend(defaults(file, device, shard));
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
        name: name.clone(),
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
    let owner = format!("{}#{shard:?}", file.display());
    let claim = |parts: Vec<String>| outputs.name_made_file(parts, &owner, &name, shard);
    let (pulled, unpulled, notes) = files::pull(state, run, outputs.beside(), &claim).await;
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
        let (seen, shot) = failure::what_the_screen_shows(state, outputs, &report.name, shard).await;
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
    report.files = pulled;
    report.notes = notes;
    Ok(report)
}

/// A tool call through the server, as an assistant makes it: its structured answer, or
/// `{ok: false, message}` for an error without one.
pub(crate) async fn call(state: &Arc<State>, tool: &str, args: Value) -> anyhow::Result<Value> {
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
