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
