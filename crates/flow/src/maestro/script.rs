//! The JavaScript half of a Maestro flow, read (issue 35): `env` (a header's, a `runFlow`'s),
//! `runScript` (its file read and compiled now, run with the flow), `evalScript`, `assertTrue`,
//! conditions with `true`, `repeat while`, `retry` and `onFlowComplete`. What they decide is
//! decided as the flow runs (`flow::control`, `runtime.js`); reading only checks their shape.

use std::path::Path;

use saphyr::MarkedYamlOwned;

use super::read::Reader;
use super::selectors::selector;
use super::yaml::{at, field, key, only_keys, scalar, string};
use crate::{Action, Control, Js, Selector, Step, When};

/// The largest script file a flow may run (the replay's whole script is bounded too).
const MAX_SCRIPT_BYTES: usize = 64 << 10;

impl Reader {
    /// A step of `action` in the block being read.
    pub(super) fn step(&self, action: Action, optional: bool) -> Step {
        let mut step = Step::new(action);
        step.optional = optional;
        step.when = self.when.clone();
        step
    }

    /// `runScript`, `evalScript`, `assertTrue`: a step of JavaScript (a runScript with `when`,
    /// a block of one step under that condition).
    pub(super) fn script(
        &mut self,
        name: &str,
        arg: &MarkedYamlOwned,
        optional: bool,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        let text_of = |field_name: &str| -> Result<String, String> {
            match scalar(arg) {
                Some(text) => Ok(text),
                None => {
                    only_keys(arg, &[field_name, "optional"])?;
                    let node = field(arg, field_name).ok_or_else(|| at(arg, &format!("{name} takes {field_name}")))?;
                    string(node, field_name)
                }
            }
        };
        let action = match name {
            "evalScript" => Action::Script(Js::Eval {
                script: text_of("script")?,
            }),
            "assertTrue" => Action::Script(Js::Assert {
                condition: text_of("condition")?,
            }),
            _ => {
                let (file_node, env, when) = match scalar(arg) {
                    Some(_) => (arg, Vec::new(), None),
                    None => {
                        only_keys(arg, &["file", "env", "when", "optional"])?;
                        let file = field(arg, "file").ok_or_else(|| at(arg, "runScript takes file"))?;
                        (file, env_of(arg)?, field(arg, "when"))
                    }
                };
                let file = string(file_node, "file")?;
                let code = self.script_file(&file, file_node)?;
                let step = Action::Script(Js::Run { file, code, env });
                if let Some(when) = when {
                    let Some(condition) = self.condition(when)? else {
                        return Ok(());
                    };
                    if self.when.is_some() {
                        let body = vec![self.step(step, optional)];
                        steps.push(self.step(
                            Action::Block {
                                control: Control::If { condition },
                                body,
                            },
                            false,
                        ));
                        return Ok(());
                    }
                    let mut step = self.step(step, optional);
                    step.when = Some(When {
                        opens: true,
                        ..condition
                    });
                    steps.push(step);
                    return Ok(());
                }
                step
            }
        };
        steps.push(self.step(action, optional));
        Ok(())
    }

    /// A script file beside the flow, read and compiled (not run): a syntax error is refused
    /// with the script's file and line.
    fn script_file(&self, file: &str, node: &MarkedYamlOwned) -> Result<String, String> {
        let full = match self.files.last().and_then(|f| f.parent()) {
            Some(folder) if Path::new(file).is_relative() => folder.join(file),
            _ => Path::new(file).to_path_buf(),
        };
        let code = match std::fs::metadata(&full) {
            Ok(m) if m.len() as usize > MAX_SCRIPT_BYTES => {
                return Err(at(
                    node,
                    &format!(
                        "runScript {file} is {} KiB, over the {} KiB a replay runs",
                        m.len() >> 10,
                        MAX_SCRIPT_BYTES >> 10
                    ),
                ));
            }
            _ => std::fs::read_to_string(&full).map_err(|e| at(node, &format!("runScript cannot read {file}: {e}")))?,
        };
        compile(&code).map_err(|e| at(node, &format!("runScript {file}: {e}")))?;
        Ok(code)
    }

    /// A condition (`visible`, `notVisible`, `platform`, `true`): `None` when it is for another
    /// platform (never true here).
    pub(super) fn condition(&mut self, when: &MarkedYamlOwned) -> Result<Option<When>, String> {
        only_keys(when, &["visible", "notVisible", "platform", "true"])?;
        if let Some(platform) = field(when, "platform")
            && !string(platform, "platform")?.eq_ignore_ascii_case("android")
        {
            return Ok(None);
        }
        let shown = |name: &str| -> Result<Option<Selector>, String> {
            let Some(node) = field(when, name) else {
                return Ok(None);
            };
            match selector(node)? {
                s if s.fragile() => Err(at(
                    key(when, name).unwrap_or(node),
                    &format!("{name} is an id or a text, not a point"),
                )),
                s => Ok(Some(s)),
            }
        };
        Ok(Some(When {
            visible: shown("visible")?,
            not_visible: shown("notVisible")?,
            script: field(when, "true").map(|s| string(s, "true")).transpose()?,
            opens: false,
        }))
    }

    /// `repeat {while, times?}` or `repeat {times: ${…}}`: a block decided as it runs.
    pub(super) fn repeat_block(
        &mut self,
        map: &MarkedYamlOwned,
        app_id: Option<&str>,
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
        let times = field(map, "times").map(|t| string(t, "times")).transpose()?;
        let commands = field(map, "commands").ok_or_else(|| at(map, "repeat takes commands"))?;
        let mut body = Vec::new();
        self.commands(commands, app_id, &mut body)?;
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
        app_id: Option<&str>,
        optional: bool,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        only_keys(arg, &["maxRetries", "file", "commands", "env", "optional"])?;
        let max_retries = match field(arg, "maxRetries") {
            Some(n) => string(n, "maxRetries")?,
            None => "1".into(),
        };
        let mut body = Vec::new();
        self.block(arg, item, app_id, &mut body)?;
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

/// `env: {NAME: value, …}` of a header, a runFlow, a retry or a runScript (values as written,
/// templates evaluated as the flow runs).
fn env_of(node: &MarkedYamlOwned) -> Result<Vec<(String, String)>, String> {
    let Some(env) = field(node, "env") else {
        return Ok(Vec::new());
    };
    if env.data.is_null() {
        return Ok(Vec::new());
    }
    let map = env
        .data
        .as_mapping()
        .ok_or_else(|| at(env, "env is a mapping of NAME: value"))?;
    let mut vars = Vec::new();
    for (name, value) in map {
        let name = scalar(name).unwrap_or_default();
        if crate::placeholder_name(&format!("${{{name}}}")).is_none() && !name.starts_with('_') {
            return Err(at(
                env,
                &format!(
                    "env {:?} is not a variable name (letters, digits and _)",
                    android::text::echoed(&name)
                ),
            ));
        }
        // A null value is an empty text, as Maestro reads it.
        vars.push((name, scalar(value).unwrap_or_default()));
    }
    Ok(vars)
}

/// Compiles a script without running it (QuickJS, as the replay will): a syntax error with its
/// line.
pub(super) fn compile(code: &str) -> Result<(), String> {
    let runtime = rquickjs::Runtime::new().map_err(|e| format!("cannot start QuickJS: {e}"))?;
    runtime.set_memory_limit(32 << 20);
    let context = rquickjs::Context::full(&runtime).map_err(|e| format!("cannot start QuickJS: {e}"))?;
    context.with(|ctx| {
        let mut options = rquickjs::context::EvalOptions::default();
        options.strict = false;
        options.filename = Some("script".into());
        // A function that is never called: its body is only parsed. On the code's first line, so
        // line numbers hold.
        let source = format!("(function () {{{code}\n}})");
        match ctx.eval_with_options::<rquickjs::Value, _>(source, options) {
            Ok(_) => Ok(()),
            Err(_) => {
                let caught = ctx.catch();
                let error = caught.as_exception();
                let message = error
                    .and_then(|e| e.message())
                    .unwrap_or_else(|| "not JavaScript".into());
                let line = error
                    .and_then(|e| e.stack())
                    .and_then(|s| s.split("script:").nth(1).map(str::to_string))
                    .and_then(|s| s.split(':').next().and_then(|l| l.parse::<u32>().ok()));
                Err(match line {
                    Some(line) => format!("line {line}: {message}"),
                    None => message,
                })
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What the replay's script makes of the `ui.type` text of a step: the rendered expression
    /// evaluated by QuickJS over `runtime.js`, with `vars` as the flow's variables.
    fn typed_at_replay(step: &Step, vars: &[(&str, &str)]) -> Result<String, String> {
        let code = crate::js::render(std::slice::from_ref(step), &[]);
        let line = code
            .lines()
            .find(|l| l.contains("await ui.type({ text: "))
            .expect("a type line");
        let expression = line
            .trim()
            .strip_prefix("await ui.type({ text: ")
            .and_then(|l| l.strip_suffix(" });"))
            .expect("the text alone");
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let env: serde_json::Map<String, serde_json::Value> =
                vars.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
            let args = serde_json::json!({ "env": env });
            let source = format!(
                "globalThis.args = {args};\n{}\n{expression}",
                include_str!("runtime.js")
            );
            ctx.eval::<String, _>(source).map_err(|_| {
                let caught = ctx.catch();
                caught.as_exception().and_then(|e| e.message()).unwrap_or_default()
            })
        })
    }

    /// Whatever text a person types (any `$`, `{`, `}`, `\`), the recording keeps it so that a
    /// replay types that very text, though a flow's text is a template (`${…}` evaluated): the
    /// recorder writes a `${` typed as `\${`. And a template's `${…}` is evaluated, `\${` kept.
    #[test]
    fn recorded_text_replays_as_typed_and_a_template_is_evaluated() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cases = AtomicUsize::new(0);
        let texts = prop_oneof![
            crate::tests::text(),
            "[a-z$\\\\{}]{1,12}",
            Just("${USER}".to_string()),
            Just("\\${USER}".to_string()),
        ];
        let mut runner = proptest::test_runner::TestRunner::default();
        let result = runner.run(&texts, |text| {
            cases.fetch_add(1, Ordering::Relaxed);
            let recorded = crate::Recording::default().typed(&text, None, &[]);
            let step = Step::new(Action::Type {
                target: None,
                text: recorded.clone(),
                clear: false,
                submit: false,
            });
            let typed = typed_at_replay(&step, &[("USER", "ada")]);
            prop_assert_eq!(typed, Ok(text.clone()), "recorded as {:?}", recorded);
            Ok(())
        });
        eprintln!("{} cases", cases.load(Ordering::Relaxed));
        if let Err(e) = result {
            panic!("{e}");
        }
        let template = |text: &str| {
            Step::new(Action::Type {
                target: None,
                text: text.into(),
                clear: false,
                submit: false,
            })
        };
        let with_user = [("USER", "ada")];
        assert_eq!(
            typed_at_replay(&template("${USER.substring(0, 2)}-${1 + 1}"), &with_user),
            Ok("ad-2".into())
        );
        assert_eq!(
            typed_at_replay(&template("US$ \\${USER}"), &with_user),
            Ok("US$ ${USER}".into())
        );
        assert_eq!(typed_at_replay(&template("${NOBODY || 'x'}"), &[]), Ok("x".into()));
        let missing = typed_at_replay(&template("a ${NOBODY}"), &[]).unwrap_err();
        assert!(
            missing.contains("NOBODY is not defined; replay with --env NOBODY=VALUE"),
            "{missing}"
        );
    }

    #[test]
    fn a_syntax_error_is_named_with_its_line_and_valid_code_compiles_without_running() {
        assert_eq!(compile("output.a = 1;\nwhile (true) {}\n"), Ok(()));
        let error = compile("output.a = 1;\n\nconst x = {;\n").unwrap_err();
        assert!(error.starts_with("line 3: "), "{error}");
    }
}
