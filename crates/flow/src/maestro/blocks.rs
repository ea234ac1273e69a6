//! The blocks of a Maestro flow: `runFlow` (its file or commands, under `when`), `repeat`,
//! `retry`, an optional block, and the variables a block's steps run with (`env`).

use std::path::Path;

use saphyr::MarkedYamlOwned;

use super::read::Reader;
use super::rendered::App;
use super::yaml::{at, field, only_keys, raw, string, written};
use super::{fields, script::env_of};
use crate::{Action, Control, Step};

impl Reader {
    /// A `runFlow {when, file | commands}`: its steps carry the condition, the first one opening
    /// the block. A block for another platform has no steps here.
    pub(super) fn conditional(
        &mut self,
        when: &MarkedYamlOwned,
        arg: &MarkedYamlOwned,
        item: &MarkedYamlOwned,
        app: App,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        let Some(condition) = self.condition(when)? else {
            // A block for another platform has no steps here.
            return Ok(());
        };
        let mut block = Vec::new();
        // Inside another block's condition: a block of its own, its condition read as it starts.
        if self.when.is_some() {
            self.block(arg, item, app, &mut block)?;
            let control = crate::Control::If { condition };
            steps.push(self.step(Action::Block { control, body: block }, false));
            return Ok(());
        }
        if condition.visible.is_some() || condition.not_visible.is_some() || condition.script.is_some() {
            self.when = Some(condition);
        }
        let read = self.block(arg, item, app, &mut block);
        self.when = None;
        read?;
        if let Some(opening) = block.first_mut().and_then(|s| s.when.as_mut()) {
            opening.opens = true;
        }
        steps.extend(block);
        Ok(())
    }

    /// What a `runFlow` mapping runs: its file, or its commands.
    pub(super) fn block(
        &mut self,
        arg: &MarkedYamlOwned,
        item: &MarkedYamlOwned,
        app: App,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        match (field(arg, "file"), field(arg, "commands")) {
            (Some(file), None) => {
                written(file, "file", "a subflow read with the flow")?;
                self.run_file(&string(file, "file")?, item, steps)
            }
            (None, Some(commands)) => self.commands(commands, app, steps),
            _ => Err(at(arg, "runFlow takes file or commands")),
        }
    }

    pub(super) fn run_file(&mut self, file: &str, item: &MarkedYamlOwned, steps: &mut Vec<Step>) -> Result<(), String> {
        if self.files.is_empty() {
            return Err(at(
                item,
                "runFlow FILE reads a file beside the flow: replay the flow's file (droidmcp replay FLOW.yaml)",
            ));
        }
        self.file(Path::new(file), Some(item), steps)
    }

    /// `repeat {while, times?}` or `repeat {times: ${…}}`: a block decided as it runs.
    pub(super) fn repeat_block(
        &mut self,
        map: &MarkedYamlOwned,
        app: App,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        let condition = match field(map, "while") {
            Some(when) => match self.condition(when)? {
                Some(c) => Some(c),
                // A while for another platform never holds: no round runs.
                None => return Ok(()),
            },
            None => None,
        };
        let times = field(map, "times").map(|t| raw(t, "times")).transpose()?;
        let commands = field(map, "commands").ok_or_else(|| at(map, "repeat takes commands"))?;
        let mut body = Vec::new();
        self.commands(commands, app, &mut body)?;
        steps.push(self.step(
            Action::Block {
                control: Control::Repeat { times, condition },
                body,
            },
            false,
        ));
        Ok(())
    }

    /// `retry {maxRetries, file | commands, env}`.
    pub(super) fn retry_block(
        &mut self,
        arg: &MarkedYamlOwned,
        item: &MarkedYamlOwned,
        app: App,
        optional: bool,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        only_keys(arg, fields::of("retry"))?;
        let max_retries = match field(arg, "maxRetries") {
            Some(n) => raw(n, "maxRetries")?,
            None => "1".into(),
        };
        let mut body = Vec::new();
        self.block(arg, item, app, &mut body)?;
        let body = self.with_env(arg, true, body)?;
        let control = Control::Retry { max_retries };
        let retried = self.step(Action::Block { control, body }, false);
        steps.extend(self.optionally(optional, vec![retried]));
        Ok(())
    }

    /// `steps`, or when `optional` (a runFlow's, a retry's) a block whose failure is a warning.
    pub(super) fn optionally(&self, optional: bool, steps: Vec<Step>) -> Vec<Step> {
        match optional {
            true => vec![self.step(
                Action::Block {
                    control: Control::Optional,
                    body: steps,
                },
                false,
            )],
            false => steps,
        }
    }

    /// `steps` under `node`'s `env` (a runFlow's or a retry's: `strong`; a header's: not).
    pub(super) fn with_env(&self, node: &MarkedYamlOwned, strong: bool, steps: Vec<Step>) -> Result<Vec<Step>, String> {
        let vars = env_of(node)?;
        if vars.is_empty() {
            return Ok(steps);
        }
        Ok(vec![self.step(
            Action::Block {
                control: Control::Env { vars, strong },
                body: steps,
            },
            false,
        )])
    }
}
