//! `droidmcp replay --check`: the flows the options choose (`suite::plan`), each read without a
//! device, what would run and every refusal printed.

use std::path::PathBuf;

use super::{Options, step_names, suite};

/// `droidmcp replay --check`: each flow read without a device (a Maestro flow with its subflows,
/// going on past a refused command), its steps printed as they would run and each refusal as
/// `refused FILE line N: why`; whether none was refused.
pub fn check(options: &Options) -> bool {
    let plan = match suite::plan(options) {
        Ok(plan) => plan,
        Err(e) => {
            println!("refused {e}");
            return false;
        }
    };
    let files: Vec<PathBuf> = plan.all().cloned().collect();
    for (i, file) in plan.sequence.iter().enumerate() {
        println!("order   {} {}", i + 1, file.display());
    }
    let mut refused_total = 0;
    for file in &files {
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
    if files.len() > 1 {
        println!(
            "{} flows: {} read, {refused_total} with refusals",
            files.len(),
            files.len() - refused_total
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
