//! Where a replay's outputs go, all through the one door (`crate::confine::Folder`): the report
//! (`--junit`, or `--format junit|html` to `--output`, else `report.xml`/`report.html` here, as
//! Maestro's `TestCommand.saveReport`), and with `--test-output-dir DIR` (or the config's
//! `testOutputDir`) Maestro's test output folder `DIR/<yyyy-MM-dd_HHmmss>/`
//! (`TestDebugReporter.buildDefaultDebugOutputPath`): `maestro.log`, each flow's
//! `commands-[shard-N-]NAME.json` and failure screenshot `screenshot-[shard-N-]failed-MS-NAME.jpg`
//! (`TestDebugReporter.saveFlow`), and the screenshots the flows took. Maestro's names hold
//! `(NAME)` and `❌`, which are not plain names: droidmcp writes NAME made plain, and `failed`.
//! Maestro overwrites a file of a flow named as another was (two `login.yaml` in two folders);
//! here each name is taken once per run, whatever its case (`-2`, `-3` … before the extension).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::confine::{Folder, plain_file, plain_name};

use super::{JunitFormat, Options, Report, ReportFormat};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Junit(JunitFormat),
    Html,
}

pub struct Outputs {
    report: Option<(Folder, String, Kind)>,
    /// The test output folder of this run.
    run_dir: Option<Folder>,
    /// `--test-suite-name`: the Maestro-shaped JUnit report's suite name.
    suite_name: Option<String>,
    log: Mutex<String>,
    /// Each name a file was written under this run (folded to lower case), and by whom, so that
    /// another flow's file of the same name is kept beside it.
    claims: Mutex<HashMap<Vec<String>, Claim>>,
}

/// Who wrote a file of this run under a name.
struct Claim {
    /// The flow's file and shard (empty: a name droidmcp gave).
    owner: String,
    /// The flow's name, as a line shows it.
    flow: String,
    /// A name given to a file renamed away from another's: never a flow's own name too.
    renamed: bool,
}

impl Claim {
    fn new(owner: &str, flow: &str, renamed: bool) -> Claim {
        Claim {
            owner: owner.to_string(),
            flow: flow.to_string(),
            renamed,
        }
    }
}

/// `STEM-TAIL` and `end` (`[-K].png`) as one plain name that fits (`confine::plain_file`'s
/// bounds): the tail made plain, and what does not fit cut from it, then from the stem.
fn fitted(stem: &str, tail: &str, end: &str) -> String {
    use crate::confine::{MAX_NAME_BYTES, MAX_NAME_CHARS};
    let whole = plain_file(&format!("{stem}-"), tail, end);
    if whole.chars().count() <= MAX_NAME_CHARS && whole.len() <= MAX_NAME_BYTES {
        return whole;
    }
    // The stem alone is too long for any tail: keep its head, room for 20 chars of the tail.
    let room_chars = MAX_NAME_CHARS - 21 - end.chars().count();
    let room_bytes = MAX_NAME_BYTES - 21 * 4 - end.len();
    let mut head = String::new();
    for c in stem.chars() {
        if head.chars().count() == room_chars || head.len() + c.len_utf8() > room_bytes {
            break;
        }
        head.push(c);
    }
    let head = head.trim_end();
    plain_file(&format!("{head}-"), tail, end)
}

impl Outputs {
    /// Checks and opens every place the options name, before anything runs. `configured`: the
    /// workspace config's testOutputDir.
    pub fn open(options: &Options, configured: Option<&Path>) -> Result<Outputs, String> {
        let kind = match (options.format, &options.junit, options.junit_format) {
            (Some(ReportFormat::Html), _, Some(_)) => {
                return Err("--junit-format shapes a JUnit report, not --format html: drop it".into());
            }
            (None, None, Some(_)) => {
                return Err("--junit-format shapes a JUnit report: add --junit PATH or --format junit".into());
            }
            (Some(ReportFormat::Noop), ..) if options.output.is_some() || options.junit_format.is_some() => {
                return Err("--format noop writes no report: drop --output and --junit-format, or choose --format junit or html".into());
            }
            (Some(ReportFormat::Noop), ..) => None,
            (Some(ReportFormat::Html), ..) => Some(Kind::Html),
            (Some(ReportFormat::Junit), _, shape) => Some(Kind::Junit(shape.unwrap_or(JunitFormat::Maestro))),
            (None, Some(_), shape) => Some(Kind::Junit(shape.unwrap_or(JunitFormat::Steps))),
            (None, None, None) => None,
        };
        let path = match (&options.junit, &options.output, kind) {
            (Some(path), ..) => Some((path.clone(), "--junit")),
            (None, Some(path), _) => Some((path.clone(), "--output")),
            (None, None, Some(Kind::Html)) => Some(("report.html".into(), "--format html")),
            (None, None, Some(Kind::Junit(_))) => Some(("report.xml".into(), "--format junit")),
            (None, None, None) => None,
        };
        let report = match (path, kind) {
            (Some((path, option)), Some(kind)) => {
                let file = path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .ok_or_else(|| format!("{option}: {} names no file", path.display()))?;
                plain_name(&file).map_err(|e| format!("{option}: {e}"))?;
                let folder =
                    Folder::chosen(path.parent().unwrap_or(Path::new(""))).map_err(|e| format!("{option}: {e}"))?;
                Some((folder, file, kind))
            }
            _ => None,
        };
        if options.test_suite_name.is_some() && kind != Some(Kind::Junit(JunitFormat::Maestro)) {
            return Err("--test-suite-name names the suite of Maestro's JUnit report: add --format junit (without --junit-format steps)".into());
        }
        // Maestro's `--debug-output DIR` is DIR/.maestro/tests/<stamp> (TestDebugReporter's
        // default under DIR instead of the home folder); `--flatten-debug-output` is the folder
        // itself, no stamp.
        let (option, given, base) = match &options.debug_output {
            Some(dir) => (
                "--debug-output",
                Some(dir.as_path()),
                dir.join(".maestro").join("tests"),
            ),
            None => {
                let dir = options.test_output_dir.as_deref().or(configured);
                ("--test-output-dir", dir, dir.map(Path::to_path_buf).unwrap_or_default())
            }
        };
        if options.flatten_debug_output && given.is_none() {
            return Err("--flatten-debug-output writes the test output straight into its folder: name it with --debug-output DIR or --test-output-dir DIR".into());
        }
        let run_dir = match given {
            Some(dir) if options.flatten_debug_output => Some(Folder::chosen(dir)),
            Some(_) => {
                let stamp = chrono::Local::now().format("%Y-%m-%d_%H%M%S").to_string();
                Some(Folder::chosen(&base).and_then(|d| d.sub(&stamp)))
            }
            None => None,
        };
        let run_dir = run_dir
            .transpose()
            .map_err(|e| format!("{option} {}: {e}", given.unwrap_or(Path::new("")).display()))?;
        Ok(Outputs {
            report,
            run_dir,
            suite_name: options.test_suite_name.clone(),
            log: Mutex::new(String::new()),
            claims: Mutex::new(HashMap::new()),
        })
    }

    /// Where the files a flow made go: the test output folder, else the report's, else here.
    pub fn beside(&self) -> Result<Folder, String> {
        match (&self.run_dir, &self.report) {
            (Some(dir), _) => Ok(dir.clone()),
            (None, Some((folder, ..))) => Ok(folder.clone()),
            (None, None) => Folder::chosen(Path::new("")),
        }
    }

    /// The name a file a flow made is written under (`parts`, a path in `beside`). Maestro
    /// writes `takeScreenshot: NAME` to NAME.png whichever flow or shard took it, the last
    /// silently replacing the others; here a flow's own file keeps its name (a flow that takes
    /// the same name twice replaces its own, as in Maestro), and a file of that name (in any
    /// case: a case-blind disk's view) another flow (or the same flow on another shard) already
    /// wrote this run, or a name given to a renamed file, is kept: this one goes to
    /// `NAME-FLOW[-shard-N][-K].png`, cut to fit a name, on no name claimed this run, with a
    /// line saying why. `owner`: the flow's file and shard; `flow`: its name.
    pub fn name_made_file(
        &self,
        parts: Vec<String>,
        owner: &str,
        flow: &str,
        shard: Option<usize>,
    ) -> (Vec<String>, Option<String>) {
        let shown = match shard {
            Some(n) => format!("{flow:?} (shard {n})"),
            None => format!("{flow:?}"),
        };
        let folded = |name: &[String]| -> Vec<String> { name.iter().map(|p| p.to_lowercase()).collect() };
        let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
        let by_name = match claims.get(&folded(&parts)) {
            Some(claim) if claim.owner != owner || claim.renamed => claim.flow.clone(),
            _ => {
                claims.insert(folded(&parts), Claim::new(owner, &shown, false));
                return (parts, None);
            }
        };
        let (dir, file) = parts.split_at(parts.len() - 1);
        let (stem, ext) = match file[0].rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => (stem.to_string(), format!(".{ext}")),
            _ => (file[0].clone(), String::new()),
        };
        let mut tail = flow.to_string();
        if let Some(n) = shard {
            tail.push_str(&format!("-shard-{n}"));
        }
        let renamed = (1..)
            .map(|k| {
                let end = if k == 1 { ext.clone() } else { format!("-{k}{ext}") };
                let name: Vec<String> = dir.iter().cloned().chain([fitted(&stem, &tail, &end)]).collect();
                name
            })
            .find(|name| !claims.contains_key(&folded(name)))
            .unwrap_or_default();
        claims.insert(folded(&renamed), Claim::new(owner, &shown, true));
        let note = format!(
            "{} was written by the flow {by_name} this run: this one is kept as {} (Maestro would replace one with the other)",
            parts.join("/"),
            renamed.join("/")
        );
        (renamed, Some(note))
    }

    /// A name droidmcp gives a file of this run (a flow's commands, its failure's screenshot):
    /// `prefix`, `text` made plain, `ext`, cut to fit (`plain_file`), and no name given or
    /// claimed before whatever its case (a case-blind disk's view): two flows named alike, or
    /// alike once plain or folded, keep a file each, the later `-2`, `-3` … before `ext`.
    fn fresh(&self, prefix: &str, text: &str, ext: &str) -> String {
        let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
        let folded: HashSet<String> = claims.keys().filter(|k| k.len() == 1).map(|k| k[0].clone()).collect();
        let name = (1..)
            .map(|n| match n {
                1 => plain_file(prefix, text, ext),
                n => plain_file(prefix, text, &format!("-{n}{ext}")),
            })
            .find(|name| !folded.contains(&name.to_lowercase()))
            .unwrap_or_default();
        claims.insert(vec![name.to_lowercase()], Claim::new("", "", false));
        name
    }

    /// The folder and name of a failure's screenshot: in the test output folder as Maestro names
    /// it, else beside the report, else in the user's private temp folder.
    pub fn failure_shot(&self, name: &str, shard: Option<usize>) -> (Result<Folder, String>, String) {
        let prefix = shard.map(|n| format!("shard-{n}-")).unwrap_or_default();
        match (&self.run_dir, &self.report) {
            (Some(dir), _) => {
                let ms = chrono::Local::now().timestamp_millis();
                let file = self.fresh(&format!("screenshot-{prefix}failed-{ms}-"), name, ".jpg");
                (Ok(dir.clone()), file)
            }
            (None, report) => {
                let end = match shard {
                    Some(n) => format!("-shard-{n}-failure.jpg"),
                    None => "-failure.jpg".to_string(),
                };
                let file = self.fresh("", name, &end);
                let folder = match report {
                    Some((folder, ..)) => Ok(folder.clone()),
                    None => Folder::user_temp("replay"),
                };
                (folder, file)
            }
        }
    }

    /// Prints a line of the run (and keeps it for maestro.log).
    pub fn say(&self, text: &str) {
        println!("{text}");
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.push_str(text);
        log.push('\n');
    }

    /// A flow ended: its lines printed at once (flows on several devices end in any order), and
    /// its steps written to the test output folder.
    pub fn flow_done(&self, report: &Report) {
        self.say(&lines(report));
        let Some(dir) = &self.run_dir else { return };
        let prefix = report.shard.map(|n| format!("shard-{n}-")).unwrap_or_default();
        let file = self.fresh(&format!("commands-{prefix}"), &report.name, ".json");
        let text = serde_json::to_string_pretty(&commands(report)).unwrap_or_default();
        if let Err(e) = dir.write(&[file], text.as_bytes()) {
            tracing::warn!("--test-output-dir: {e}");
        }
    }

    /// Writes the report and the run's log.
    pub fn finish(&self, reports: &[Report]) -> Result<(), String> {
        if let Some((folder, file, kind)) = &self.report {
            let text = match kind {
                Kind::Junit(JunitFormat::Steps) => super::junit(reports),
                Kind::Junit(JunitFormat::Maestro) => super::junit_maestro(reports, self.suite_name.as_deref()),
                Kind::Html => super::html(reports),
            };
            let path = folder.write(std::slice::from_ref(file), text.as_bytes())?;
            println!("report  {}", path.display());
        }
        if let Some(dir) = &self.run_dir {
            let log = self.log.lock().unwrap_or_else(|p| p.into_inner()).clone();
            dir.write(&["maestro.log".into()], log.as_bytes())?;
            println!("output  {}", dir.path().display());
        }
        Ok(())
    }
}

/// A flow's steps as Maestro's commands-NAME.json lists its commands: each with its status
/// (COMPLETED, WARNED, FAILED, SKIPPED), duration and error.
fn commands(report: &Report) -> Value {
    let steps: Vec<Value> = report
        .steps
        .iter()
        .map(|(name, result)| {
            let metadata = match result {
                None => json!({"status": "SKIPPED"}),
                Some(r) => match report.failure(r) {
                    Some(e) => json!({"status": "FAILED", "duration": r.ms, "error": {"message": e}}),
                    None if !r.warnings.is_empty() => {
                        json!({"status": "WARNED", "duration": r.ms, "warnings": r.warnings})
                    }
                    None => json!({"status": "COMPLETED", "duration": r.ms}),
                },
            };
            json!({"command": {"step": name}, "metadata": metadata})
        })
        .collect();
    Value::Array(steps)
}

/// What a flow's run prints: a line per step, its failure, its files, and a summary line
/// (naming its device when there are several).
pub(super) fn lines(report: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (name, result) in &report.steps {
        let _ = match result {
            Some(r) => match report.failure(r) {
                None if r.warnings.is_empty() => writeln!(out, "ok      {name} ({} ms)", r.ms),
                None => writeln!(out, "ok      {name} ({} ms); warning: {}", r.ms, r.warnings.join("; ")),
                Some(e) => writeln!(out, "FAILED  {name} ({} ms): {e}", r.ms),
            },
            None => writeln!(out, "skipped {name}"),
        };
    }
    if let Some(e) = &report.run_error {
        let _ = writeln!(out, "FAILED  the run: {e}");
    }
    if let Some(e) = &report.lost {
        let _ = writeln!(out, "FAILED  the device: {e}");
    }
    if let Some(path) = &report.screenshot {
        let _ = writeln!(out, "screenshot of the failure: {}", path.display());
    }
    for path in &report.files {
        let _ = writeln!(out, "file    {}", path.display());
    }
    for note in &report.notes {
        let _ = writeln!(out, "note    {note}");
    }
    let (failed, skipped) = (report.failed(), report.skipped());
    let steps = report.steps.len();
    let on = match report.shard {
        Some(_) => format!(" on {}", report.device),
        None => String::new(),
    };
    let _ = write!(
        out,
        "{}{on}: {steps} step{}, {} passed, {failed} failed, {skipped} skipped, {:.1} s",
        report.name,
        if steps == 1 { "" } else { "s" },
        steps - failed - skipped,
        report.ms as f64 / 1000.0
    );
    out
}
