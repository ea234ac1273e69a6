//! The variables a replayed flow gets (`--env`, the environment's `MAESTRO_*`, Maestro's own
//! defaults) and what the report keeps out of them.

use std::path::Path;

use super::{Options, Report};

/// The variables Maestro defines for every flow it runs (`Env.withDefaultEnvVars`), over any
/// given: the flow file's name without its extension, the device's serial, and the shard (a
/// replay runs its flows on one device, Maestro's first shard). What they hold is no secret.
pub(super) fn defaults(file: &Path, device: Option<String>) -> Vec<(String, String)> {
    let mut vars = vec![
        ("MAESTRO_SHARD_ID".to_string(), "1".to_string()),
        ("MAESTRO_SHARD_INDEX".into(), "0".into()),
    ];
    if let Some(stem) = file.file_stem() {
        vars.push(("MAESTRO_FILENAME".into(), stem.to_string_lossy().into_owned()));
    }
    if let Some(serial) = device.filter(|d| !d.trim().is_empty()) {
        vars.push(("MAESTRO_DEVICE_UDID".into(), serial));
    }
    vars
}

/// The variables a flow gets from outside: `--env NAME=VALUE`, and as Maestro does, each
/// `MAESTRO_*` variable of droidmcp's own environment that `--env` does not name (not the shard's,
/// which only the replay sets, as in Maestro).
pub(super) fn variables(options: &Options) -> Vec<(String, String)> {
    let mut env = options.env.clone();
    let shell = std::env::vars().filter(|(name, value)| {
        name.starts_with("MAESTRO_")
            && !value.is_empty()
            && !["MAESTRO_SHARD_ID", "MAESTRO_SHARD_INDEX"].contains(&name.as_str())
            && parse_env(&format!("{name}=")).is_ok()
    });
    for (name, value) in shell {
        if !env.iter().any(|(given, _)| *given == name) {
            env.push((name, value));
        }
    }
    env
}

/// The shortest value `redact` masks: a shorter one cannot be told from ordinary text (a letter,
/// a digit, a dot) and would garble every message it is not in.
const MASKED_FROM_CHARS: usize = 4;

/// Every value given with `--env` (a password, a token) out of what the report says, written
/// `${NAME}` instead. A step's own failure already quotes its templates as written
/// (`runtime.js`'s `asWritten`, `maestro::yaml::at`); this is for what the device echoes back (the
/// screen's labels after a failure, a field that shows what was typed), which only its value can
/// find: whole occurrences (bounded by no letter, digit or _), of values of at least
/// `MASKED_FROM_CHARS` characters.
pub(super) fn redact(report: &mut Report, env: &[(String, String)]) {
    let hide = |text: &mut String| {
        for (name, value) in env.iter().filter(|(_, v)| v.chars().count() >= MASKED_FROM_CHARS) {
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
                *text = mask_whole(text, &form, &format!("${{{name}}}"));
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

/// `text` with each occurrence of `form` that no letter, digit or _ touches written `with`.
fn mask_whole(text: &str, form: &str, with: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in text.match_indices(form) {
        if at < from {
            continue;
        }
        let end = at + form.len();
        if word(text[..at].chars().next_back()) || word(text[end..].chars().next()) {
            continue;
        }
        out.push_str(&text[from..at]);
        out.push_str(with);
        from = end;
    }
    out.push_str(&text[from..]);
    out
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::mask_whole;

    /// A value is masked where it stands whole (no letter, digit or _ touching it), and nowhere
    /// else: the words around it stay as they were.
    #[test]
    fn a_value_is_masked_only_where_it_stands_whole() {
        let cases = std::cell::Cell::new(0);
        let mut runner = proptest::test_runner::TestRunner::default();
        let words = "[a-z0-9.]{0,6}";
        runner
            .run(&(words, "[a-z0-9.-]{4,8}", words), |(before, value, after)| {
                prop_assume!(!before.contains(&value) && !after.contains(&value));
                cases.set(cases.get() + 1);
                let text = format!("{before} \"{value}\" {before}{value}{after}");
                let masked = mask_whole(&text, &value, "${V}");
                prop_assert!(masked.starts_with(&format!("{before} \"${{V}}\" ")), "{masked}");
                let glued = before.chars().next_back().is_some_and(char::is_alphanumeric)
                    || after.chars().next().is_some_and(char::is_alphanumeric);
                if glued {
                    prop_assert!(masked.ends_with(&format!("{before}{value}{after}")), "{masked}");
                }
                Ok(())
            })
            .unwrap();
        println!("{} texts: a value masked whole, never inside a word", cases.get());
    }
}
