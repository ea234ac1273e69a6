//! What a Maestro flow decides as it runs (issue 35): its JavaScript (`runScript`, `evalScript`,
//! `assertTrue`) and the blocks whose steps run under a rule (variables in scope, `repeat`,
//! `retry`, `onFlowComplete`). Strings here are Maestro templates: a `${…}` is JavaScript the
//! replay evaluates when the step runs (`crates/flow/src/maestro/runtime.js`), `\${` a literal `${`.

use super::{Step, When};

/// JavaScript a flow runs in the replay's own sandbox (QuickJS, the run's limits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Js {
    /// `runScript`: a file's code (read with the flow), run with `env` as its own variables.
    Run {
        file: String,
        code: String,
        env: Vec<(String, String)>,
    },
    /// `evalScript`: a template evaluated for what its `${…}` do (its value is dropped).
    Eval { script: String },
    /// `assertTrue`: a template whose value must be true (not blank, false, undefined, null, 0).
    Assert { condition: String },
}

/// A Maestro command (or a condition's selector) with a `${…}` in it: its step renders each one
/// (`runtime.js`'s `rendered`, over `interp`) and reads the command again, rendered, with the
/// reader that read the flow (`maestro::rendered`), then runs what that reads.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The command's name; none for a condition's selector.
    pub command: Option<String>,
    /// Its argument as written (`maestro::template::encode`: each scalar with its line).
    pub arg: serde_json::Value,
    /// The flow's appId as written, when the command names no app of its own.
    pub app: Option<serde_json::Value>,
    /// What it does, its `${…}` as written: how a report names it.
    pub said: String,
    /// The flow file and the line it is on (its refusals name them).
    pub file: String,
    pub line: usize,
    /// Which of the steps the command reads as (`launchApp {clearState}` is two) this one runs:
    /// the first reads them all, the others run theirs (`runtime.js`'s `rendered`).
    pub part: (usize, usize),
}

impl PartialEq for Rendered {
    /// The same command, wherever it was written.
    fn eq(&self, other: &Rendered) -> bool {
        fn shape(v: &serde_json::Value) -> serde_json::Value {
            match v {
                serde_json::Value::Object(o) => o
                    .iter()
                    .filter(|(k, _)| *k != "l")
                    .map(|(k, v)| (k.clone(), shape(v)))
                    .collect(),
                serde_json::Value::Array(items) => items.iter().map(shape).collect(),
                other => other.clone(),
            }
        }
        let app = |r: &Rendered| r.app.as_ref().map(shape);
        (&self.command, shape(&self.arg), app(self), &self.said, self.part)
            == (&other.command, shape(&other.arg), app(other), &other.said, other.part)
    }
}

impl Eq for Rendered {}

/// The rule a block's steps run under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Variables defined as the block starts and put back as it ends: a flow header's `env`
    /// (`strong: false`), a `runFlow`'s (`strong: true`, over the subflow's header). `--env`
    /// wins over both.
    Env { vars: Vec<(String, String)>, strong: bool },
    /// `repeat`: at most `times` (a template), while `condition` holds (read before each round).
    Repeat {
        times: Option<String>,
        condition: Option<When>,
    },
    /// `retry`: the steps again after a failure, at most `max_retries` times (a template; 1 by
    /// default, 3 at most, as Maestro).
    Retry { max_retries: String },
    /// A flow's `onFlowComplete`: these steps run after the block, even after it failed.
    Complete { after: Vec<Step> },
    /// A condition inside another block's (`runFlow when` in `runFlow when`), read as it starts.
    If { condition: When },
    /// An optional `runFlow` or `retry`: a failure of its steps is a warning, the flow goes on.
    Optional,
}

impl Js {
    pub fn describe(&self) -> String {
        match self {
            Js::Run { file, .. } => format!("run script {file}"),
            Js::Eval { script } => format!("evaluate {script:?}"),
            Js::Assert { condition } => format!("assert {condition:?} is true"),
        }
    }
}

impl Control {
    /// `repeat while text "More" shows, at most 3 times`: how a report names the block.
    pub fn describe(&self) -> String {
        match self {
            Control::Env { vars, strong } => {
                let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
                let whose = if *strong { "runFlow env" } else { "flow env" };
                format!("with {whose} {}", names.join(", "))
            }
            Control::Repeat { times, condition } => {
                let mut out = "repeat".to_string();
                if let Some(when) = condition {
                    out.push_str(&format!(" while {}", when.describe().trim_start_matches("if ")));
                }
                if let Some(times) = times {
                    out.push_str(&format!(", at most {times} times"));
                }
                out
            }
            Control::Retry { max_retries } => format!("retry at most {max_retries} times"),
            Control::Complete { .. } => "then onFlowComplete, even after a failure".into(),
            Control::If { condition } => condition.describe(),
            Control::Optional => "optional: a failure is a warning".into(),
        }
    }
}

/// The steps a report numbers, in the order the script names them: each block's own steps in
/// place of the block (an onFlowComplete's after its block's).
pub fn leaves(steps: &[Step]) -> Vec<&Step> {
    let mut out = Vec::new();
    for step in steps {
        match &step.action {
            super::Action::Block { control, body } => {
                out.extend(leaves(body));
                if let Control::Complete { after } = control {
                    out.extend(leaves(after));
                }
            }
            _ => out.push(step),
        }
    }
    out
}
