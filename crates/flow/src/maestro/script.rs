//! The JavaScript half of a Maestro flow, read (issue 35): `env` (a header's, a `runFlow`'s),
//! `runScript` (its file read and compiled now, run with the flow), `evalScript`, `assertTrue`,
//! and conditions (`when`, with `true`), which `blocks.rs` reads its blocks under. What they
//! decide is decided as the flow runs (`flow::control`, `runtime.js`); reading only checks their
//! shape.

use std::path::Path;

use saphyr::MarkedYamlOwned;

use super::fields;
use super::read::Reader;
use super::selectors::selector;
use super::template::holds_one;
use super::yaml::{at, field, key, only_keys, raw, scalar, string, written};
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
        // The script's own JavaScript: its `${…}` are the script's to evaluate, as written.
        let text_of = |field_name: &str| -> Result<String, String> {
            match scalar(arg) {
                Some(text) => Ok(text),
                None => {
                    only_keys(arg, fields::of(name))?;
                    let node = field(arg, field_name).ok_or_else(|| at(arg, &format!("{name} takes {field_name}")))?;
                    raw(node, field_name)
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
                        only_keys(arg, fields::of(name))?;
                        let file = field(arg, "file").ok_or_else(|| at(arg, "runScript takes file"))?;
                        (file, env_of(arg)?, field(arg, "when"))
                    }
                };
                written(file_node, name, "a script read and compiled with the flow")?;
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
        written(when, "when", "a block's condition, read with the flow")?;
        only_keys(when, fields::of("when"))?;
        if let Some(platform) = field(when, "platform") {
            written(
                platform,
                "platform",
                "read with the flow (a block for another platform has no steps)",
            )?;
            if !string(platform, "platform")?.eq_ignore_ascii_case("android") {
                return Ok(None);
            }
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
                // Looked for as the block starts, rendered then.
                _ if holds_one(node) => Ok(Some(Selector::Rendered(Box::new(
                    self.rendered_selector(node, || selector(node))?,
                )))),
                s => Ok(Some(s)),
            }
        };
        Ok(Some(When {
            visible: shown("visible")?,
            not_visible: shown("notVisible")?,
            script: field(when, "true").map(|s| raw(s, "true")).transpose()?,
            opens: false,
        }))
    }
}

/// `env: {NAME: value, …}` of a header, a runFlow, a retry or a runScript (values as written,
/// templates evaluated as the flow runs).
pub(super) fn env_of(node: &MarkedYamlOwned) -> Result<Vec<(String, String)>, String> {
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
        written(name, "env", "a variable's name, read with the flow")?;
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

    /// The text the replay's script types for `steps` (the `ui.type` call's argument, evaluated by
    /// QuickJS), and the script's lines.
    fn typed_at_replay(code: &str) -> String {
        let line = code
            .lines()
            .find(|l| l.contains("await ui.type("))
            .unwrap_or_else(|| panic!("a type line: {code}"));
        let argument = line
            .trim()
            .strip_prefix("await ui.type(")
            .and_then(|l| l.strip_suffix(");"))
            .expect("the argument alone");
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| ctx.eval::<String, _>(format!("({argument}).text")).unwrap())
    }

    /// Whatever text a person types (any `$`, `{`, `}`, `\`), the recording keeps it so that a
    /// replay types that very text, exported as a script or as a Maestro flow read back (where a
    /// text is a template: the recorder writes a `${` typed as `\${`).
    #[test]
    fn recorded_text_replays_as_typed() {
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
            let script = crate::js::render(std::slice::from_ref(&step), &[]);
            prop_assert_eq!(typed_at_replay(&script), text.clone(), "recorded as {:?}", recorded);
            let flow = super::super::render(std::slice::from_ref(&step), &[], "a.b");
            let read = super::super::parse(&flow).map_err(TestCaseError::fail)?;
            let script = crate::js::render(&read, &[]);
            prop_assert_eq!(typed_at_replay(&script), text.clone(), "{}", flow);
            Ok(())
        });
        eprintln!("{} cases", cases.load(Ordering::Relaxed));
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// A Maestro `inputText` with `${…}` is read again as its step runs: its fields rendered by
    /// `runtime.js` (the one door), then read by the reader into the lines that type the result;
    /// `\${` is a literal `${`, and what the template gives is typed as it is, `${` and all.
    #[test]
    fn a_template_is_rendered_as_the_step_runs_then_read_again() {
        let typed = |text: &str, env: serde_json::Value| -> Result<String, String> {
            let flow = format!(
                "appId: a.b\n---\n- inputText: {}\n",
                serde_json::to_string(text).unwrap()
            );
            let steps = super::super::parse(&flow)?;
            let Action::Rendered(rendered) = &steps[0].action else {
                return Err(format!("not read as it runs: {steps:?}"));
            };
            let request = super::super::request(rendered);
            let runtime = rquickjs::Runtime::new().unwrap();
            let context = rquickjs::Context::full(&runtime).unwrap();
            let rendered = context.with(|ctx| {
                let source = format!(
                    "globalThis.args = {};\n{}\nJSON.stringify({{ ...{request}, arg: renderFields({request}.arg) }})",
                    serde_json::json!({ "env": env }),
                    include_str!("runtime.js")
                );
                ctx.eval::<String, _>(source).map_err(|_| {
                    let caught = ctx.catch();
                    caught.as_exception().and_then(|e| e.message()).unwrap_or_default()
                })
            })?;
            let request: serde_json::Value = serde_json::from_str(&rendered).unwrap();
            let steps: Vec<String> = serde_json::from_str(&super::super::read_rendered(&request, |_| Ok(()))?).unwrap();
            Ok(typed_at_replay(&steps.join("\n")))
        };
        let user = serde_json::json!({ "USER": "ada", "ODD": "${X} \\${Y}" });
        assert_eq!(
            typed("${USER.substring(0, 2)}-${1 + 1}", user.clone()),
            Ok("ad-2".into())
        );
        assert_eq!(
            typed("US$ \\${USER} ${USER}", user.clone()),
            Ok("US$ ${USER} ada".into())
        );
        assert_eq!(typed("${ODD}", user.clone()), Ok("${X} \\${Y}".into()));
        assert_eq!(typed("${NOBODY || 'x'}", user.clone()), Ok("x".into()));
        let missing = typed("a ${NOBODY}", user).unwrap_err();
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
