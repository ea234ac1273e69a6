//! The variables a replay gives its flows (`--env`, `MAESTRO_*`), and their values kept out of
//! what it reports.

use super::{Options, Report};

/// The variables a flow gets from outside: `--env NAME=VALUE`, and as Maestro does, each
/// `MAESTRO_*` variable of droidmcp's own environment that `--env` does not name.
pub(super) fn variables(options: &Options) -> Vec<(String, String)> {
    let mut env = options.env.clone();
    let shell =
        std::env::vars().filter(|(name, _)| name.starts_with("MAESTRO_") && parse_env(&format!("{name}=")).is_ok());
    for (name, value) in shell {
        if !env.iter().any(|(given, _)| *given == name) {
            env.push((name, value));
        }
    }
    env
}

/// Every value given with `--env` (a password, a token) out of what the report says: written
/// `${NAME}` instead, whatever failed or showed it.
pub(super) fn redact(report: &mut Report, env: &[(String, String)]) {
    let hide = |text: &mut String| {
        for (name, value) in env.iter().filter(|(_, v)| !v.is_empty()) {
            // As given, and as a message may quote it: in a regular expression, in JSON, both.
            let json = |v: &str| {
                serde_json::to_string(v)
                    .unwrap_or_default()
                    .trim_matches('"')
                    .to_string()
            };
            let pattern = regex::escape(value);
            for form in [
                json(&json(&pattern)),
                json(&pattern),
                pattern,
                json(value),
                value.clone(),
            ] {
                *text = text.replace(&form, &format!("${{{name}}}"));
            }
        }
    };
    for (_, result) in &mut report.steps {
        if let Some(r) = result {
            r.error.iter_mut().for_each(hide);
            r.warnings.iter_mut().for_each(hide);
        }
    }
    report.run_error.iter_mut().for_each(hide);
}

pub(super) fn parse_env(given: &str) -> Result<(String, String), String> {
    match given.split_once('=') {
        Some((name, value)) if crate::flow::placeholder_name(&format!("${{{name}}}")).is_some() => {
            Ok((name.to_string(), value.to_string()))
        }
        _ => Err(format!(
            "{given:?} is not NAME=VALUE (NAME: letters, digits and _, starting with a letter)"
        )),
    }
}
