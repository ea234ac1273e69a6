//! A small POSIX-like `sh` for the simulated device: quoting, `;`, `&&`, `||`, `!`, pipes,
//! `>`/`>>`/`2>`/`2>&1`/`<` redirections and `$?`. Each simple command runs through `commands`.

use std::sync::Arc;

use super::Simulator;
use super::commands;

/// What a command or a whole script produced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: i32,
    /// The command keeps running after its output (e.g. `logcat` without `-d`) until the host closes.
    pub keeps_running: bool,
    /// `exit N` ran: the script stops with `code`.
    pub exits: bool,
}

impl Output {
    pub fn ok(stdout: impl Into<Vec<u8>>) -> Output {
        Output {
            stdout: stdout.into(),
            ..Output::default()
        }
    }

    pub fn err(code: i32, stderr: impl Into<Vec<u8>>) -> Output {
        Output {
            stderr: stderr.into(),
            code,
            ..Output::default()
        }
    }
}

/// Stands for `$?` inside a word until the command runs.
const LAST_STATUS: char = '\u{E000}';

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Op(&'static str),
    /// `N>file`, `N>>file`, `<file`, `2>&1`: the operator and its fd.
    Redirect {
        fd: u8,
        op: &'static str,
    },
}

#[derive(Debug, Default, Clone)]
struct SimpleCommand {
    argv: Vec<String>,
    stdin_from: Option<String>,
    stdout_to: Option<(String, bool)>,
    stderr_to: Option<(String, bool)>,
    stderr_to_stdout: bool,
    stdout_to_stderr: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Connector {
    Always,
    IfOk,
    IfFailed,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SyntaxError {
    #[error("syntax error: unterminated quoted string")]
    Unterminated,
    #[error("syntax error: unexpected '{0}'")]
    Unexpected(String),
    #[error("syntax error: command substitution is not supported by the simulator")]
    Substitution,
}

fn tokenize(script: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut tokens = Vec::new();
    let mut chars = script.chars().peekable();
    let mut word = String::new();
    let mut in_word = false;
    macro_rules! end_word {
        () => {
            if in_word {
                tokens.push(Token::Word(std::mem::take(&mut word)));
                in_word = false;
            }
        };
    }
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                end_word!();
                if c == '\n' {
                    tokens.push(Token::Op(";"));
                }
            }
            '#' if !in_word => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                in_word = true;
                single_quoted(&mut chars, &mut word)?;
            }
            '"' => {
                in_word = true;
                double_quoted(&mut chars, &mut word)?;
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => word.push(c),
                }
            }
            '$' => {
                in_word = true;
                expand_dollar(&mut chars, &mut word)?;
            }
            '`' => return Err(SyntaxError::Substitution),
            ';' => {
                end_word!();
                tokens.push(Token::Op(";"));
            }
            '&' => {
                end_word!();
                if chars.peek() == Some(&'&') {
                    chars.next();
                    tokens.push(Token::Op("&&"));
                } else {
                    // Background jobs run in the foreground here.
                    tokens.push(Token::Op(";"));
                }
            }
            '|' => {
                end_word!();
                if chars.peek() == Some(&'|') {
                    chars.next();
                    tokens.push(Token::Op("||"));
                } else {
                    tokens.push(Token::Op("|"));
                }
            }
            '>' | '<' => {
                // A word made only of digits right before `>` is the fd (`2>`).
                let fd = if in_word && !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) {
                    let fd = word.parse::<u8>().unwrap_or(1);
                    word.clear();
                    in_word = false;
                    fd
                } else {
                    end_word!();
                    if c == '<' { 0 } else { 1 }
                };
                let op = if c == '<' {
                    "<"
                } else if chars.peek() == Some(&'>') {
                    chars.next();
                    ">>"
                } else if chars.peek() == Some(&'&') {
                    chars.next();
                    ">&"
                } else {
                    ">"
                };
                tokens.push(Token::Redirect { fd, op });
            }
            '(' | ')' | '{' | '}' if !in_word => return Err(SyntaxError::Unexpected(c.to_string())),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        tokens.push(Token::Word(word));
    }
    Ok(tokens)
}

/// The rest of a `'…'` string: every character as it is.
fn single_quoted(chars: &mut std::iter::Peekable<std::str::Chars>, word: &mut String) -> Result<(), SyntaxError> {
    loop {
        match chars.next() {
            Some('\'') => return Ok(()),
            Some(c) => word.push(c),
            None => return Err(SyntaxError::Unterminated),
        }
    }
}

/// The rest of a `"…"` string: `\` escapes only `"`, `\`, `$` and a backquote; `$` expands.
fn double_quoted(chars: &mut std::iter::Peekable<std::str::Chars>, word: &mut String) -> Result<(), SyntaxError> {
    loop {
        match chars.next() {
            Some('"') => return Ok(()),
            Some('\\') => match chars.next() {
                Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                Some('\n') => {}
                Some(c) => {
                    word.push('\\');
                    word.push(c);
                }
                None => return Err(SyntaxError::Unterminated),
            },
            Some('$') => expand_dollar(chars, word)?,
            Some('`') => return Err(SyntaxError::Substitution),
            Some(c) => word.push(c),
            None => return Err(SyntaxError::Unterminated),
        }
    }
}

fn expand_dollar(chars: &mut std::iter::Peekable<std::str::Chars>, word: &mut String) -> Result<(), SyntaxError> {
    match chars.peek() {
        Some('?') => {
            chars.next();
            word.push(LAST_STATUS);
        }
        Some('(') => return Err(SyntaxError::Substitution),
        Some(c) if c.is_ascii_alphabetic() || *c == '_' || *c == '{' => {
            let braced = *c == '{';
            if braced {
                chars.next();
            }
            let mut name = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    name.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            if braced && chars.next() != Some('}') {
                return Err(SyntaxError::Unterminated);
            }
            word.push_str(env_var(&name));
        }
        _ => word.push('$'),
    }
    Ok(())
}

/// The few variables a shell user on a device sees; anything else expands to nothing, as in sh.
fn env_var(name: &str) -> &'static str {
    match name {
        "HOME" => "/",
        "PATH" => "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
        "USER" => "shell",
        "EXTERNAL_STORAGE" => "/sdcard",
        "ANDROID_DATA" => "/data",
        "TMPDIR" => "/data/local/tmp",
        _ => "",
    }
}

/// Splits tokens into pipelines joined by `;`, `&&`, `||`.
fn parse(tokens: Vec<Token>) -> Result<Vec<(Connector, Vec<SimpleCommand>)>, SyntaxError> {
    let mut list: Vec<(Connector, Vec<SimpleCommand>)> = Vec::new();
    let mut pipeline: Vec<SimpleCommand> = Vec::new();
    let mut cmd = SimpleCommand::default();
    let mut connector = Connector::Always;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(tok) = tokens.next() {
        match tok {
            Token::Word(w) => cmd.argv.push(w),
            Token::Redirect { fd, op } => {
                let target = match tokens.next() {
                    Some(Token::Word(w)) => w,
                    other => return Err(SyntaxError::Unexpected(format!("{other:?} after {op}"))),
                };
                match (fd, op) {
                    (0, "<") => cmd.stdin_from = Some(target),
                    (2, ">&") if target == "1" => cmd.stderr_to_stdout = true,
                    (1, ">&") if target == "2" => cmd.stdout_to_stderr = true,
                    (1, ">" | ">>") => cmd.stdout_to = Some((target, op == ">>")),
                    (2, ">" | ">>") => cmd.stderr_to = Some((target, op == ">>")),
                    _ => return Err(SyntaxError::Unexpected(format!("{fd}{op}{target}"))),
                }
            }
            Token::Op("|") => {
                if cmd.argv.is_empty() {
                    return Err(SyntaxError::Unexpected("|".into()));
                }
                pipeline.push(std::mem::take(&mut cmd));
            }
            Token::Op(op) => {
                if !cmd.argv.is_empty() {
                    pipeline.push(std::mem::take(&mut cmd));
                }
                if pipeline.is_empty() {
                    if op == ";" {
                        continue;
                    }
                    return Err(SyntaxError::Unexpected(op.into()));
                }
                list.push((connector, std::mem::take(&mut pipeline)));
                connector = match op {
                    "&&" => Connector::IfOk,
                    "||" => Connector::IfFailed,
                    _ => Connector::Always,
                };
            }
        }
    }
    if !cmd.argv.is_empty() {
        pipeline.push(cmd);
    } else if !pipeline.is_empty() || connector != Connector::Always {
        return Err(SyntaxError::Unexpected("end of command".into()));
    }
    if !pipeline.is_empty() {
        list.push((connector, pipeline));
    }
    Ok(list)
}

/// Whether a script's first command reads stdin, so the service must collect it before running.
/// Returns the byte count when the command says how much (`install -S N`), else `usize::MAX`.
pub fn stdin_wanted(script: &str) -> Option<usize> {
    let tokens = tokenize(script).ok()?;
    let argv: Vec<&str> = tokens
        .iter()
        .take_while(|t| matches!(t, Token::Word(_)))
        .map(|t| if let Token::Word(w) = t { w.as_str() } else { "" })
        .collect();
    let program = argv.first()?.rsplit('/').next()?;
    let installs = matches!(
        (program, argv.get(1)),
        ("pm", Some(&"install")) | ("cmd", Some(&"package"))
    );
    if installs && argv.contains(&"install") {
        let size = argv
            .iter()
            .position(|a| *a == "-S")
            .and_then(|i| argv.get(i + 1)?.parse().ok());
        return size;
    }
    let operands = operands(&argv[1..]);
    // `head -c N` reads N bytes and ends, as toybox's does: a file pushed through exec's stdin.
    if program == "head" && operands == 0 {
        let counted = argv
            .iter()
            .position(|a| *a == "-c")
            .and_then(|i| argv.get(i + 1)?.parse().ok());
        if counted.is_some() {
            return counted;
        }
    }
    let reads = match program {
        "tr" | "xargs" => true,
        "grep" | "egrep" | "fgrep" | "sed" => operands <= 1,
        "cat" | "head" | "tail" | "wc" | "sort" | "uniq" | "cut" | "base64" | "rev" | "tac" => operands == 0,
        _ => false,
    };
    reads.then_some(usize::MAX)
}

/// How many arguments are operands rather than options or an option's value (`-n 5`).
fn operands(args: &[&str]) -> usize {
    const VALUED: &[&str] = &[
        "-n", "-c", "-d", "-f", "-k", "-t", "-w", "-e", "-A", "-B", "-C", "-m", "-b",
    ];
    let mut count = 0;
    let mut previous = "";
    for arg in args {
        if !arg.starts_with('-') && !VALUED.contains(&previous) {
            count += 1;
        }
        previous = arg;
    }
    count
}

/// Runs a whole command line against the device.
pub async fn run_script(sim: &Arc<Simulator>, script: &str, stdin: Vec<u8>) -> Output {
    run_script_after(sim, script, stdin, 0).await
}

/// Runs a command line where `$?` starts as `last_status` (the previous line of a session).
pub async fn run_script_after(sim: &Arc<Simulator>, script: &str, stdin: Vec<u8>, last_status: i32) -> Output {
    let list = match tokenize(script).and_then(parse) {
        Ok(list) => list,
        Err(e) => return Output::err(2, format!("/system/bin/sh: {e}\n")),
    };
    let mut total = Output::default();
    let mut status = last_status;
    let mut stdin = Some(stdin);
    for (connector, pipeline) in list {
        let run = match connector {
            Connector::Always => true,
            Connector::IfOk => status == 0,
            Connector::IfFailed => status != 0,
        };
        if !run {
            continue;
        }
        let mut input = stdin.take().unwrap_or_default();
        // `! PIPELINE`: its status inverted.
        let mut pipeline = pipeline;
        let negated = pipeline
            .first()
            .is_some_and(|c| c.argv.first().map(String::as_str) == Some("!"));
        if negated {
            pipeline[0].argv.remove(0);
        }
        for (i, cmd) in pipeline.iter().enumerate() {
            let last = i + 1 == pipeline.len();
            let out = run_simple(sim, cmd, std::mem::take(&mut input), status).await;
            total.stderr.extend_from_slice(&out.stderr);
            if last {
                status = out.code;
                total.stdout.extend_from_slice(&out.stdout);
                total.keeps_running |= out.keeps_running;
            } else {
                input = out.stdout;
            }
            if out.exits {
                total.code = out.code;
                total.exits = true;
                return total;
            }
        }
        if negated {
            status = i32::from(status == 0);
        }
        if total.keeps_running {
            break;
        }
    }
    total.code = status;
    total
}

async fn run_simple(sim: &Arc<Simulator>, cmd: &SimpleCommand, stdin: Vec<u8>, last_status: i32) -> Output {
    let argv: Vec<String> = cmd
        .argv
        .iter()
        .map(|a| a.replace(LAST_STATUS, &last_status.to_string()))
        .collect();
    let stdin = match &cmd.stdin_from {
        Some(path) => match sim.with_device(|d| d.fs.read(path).map(<[u8]>::to_vec)) {
            Ok(data) => data,
            Err(e) => return Output::err(1, format!("/system/bin/sh: {path}: {e}\n")),
        },
        None => stdin,
    };
    // Builtins: `exec CMD` runs CMD; the others change nothing the simulator models.
    let argv: Vec<String> = match argv.first().map(String::as_str) {
        Some("exec") => argv[1..].to_vec(),
        Some("export" | "unset" | "cd" | "set" | "alias" | "umask") => return Output::default(),
        _ => argv,
    };
    if argv.first().map(String::as_str) == Some("test") {
        return test(sim, &argv[1..]);
    }
    if argv.first().map(String::as_str) == Some("exit") {
        let code = argv.get(1).and_then(|c| c.parse::<i32>().ok()).unwrap_or(last_status) & 0xff;
        return Output {
            code,
            exits: true,
            ..Output::default()
        };
    }
    let mut out = commands::run(sim, &argv, stdin).await;
    if cmd.stderr_to_stdout {
        let err = std::mem::take(&mut out.stderr);
        out.stdout.extend_from_slice(&err);
    }
    if cmd.stdout_to_stderr {
        let data = std::mem::take(&mut out.stdout);
        out.stderr.extend_from_slice(&data);
    }
    if let Some((path, _)) = &cmd.stdout_to
        && path.starts_with("/dev/input/")
    {
        // A write to an input device: the kernel takes the events (sim/touch); costs/input_write.
        let data = std::mem::take(&mut out.stdout);
        let program = argv.first().map(String::as_str).unwrap_or_default();
        let written = sim.with_device(|d| {
            crate::costs::input_write(d);
            crate::touch::redirect(d, program, path, &data)
        });
        if let Err(why) = written {
            return Output::err(1, format!("{why}\n"));
        }
    }
    if let Some((path, append)) = &cmd.stdout_to {
        let data = std::mem::take(&mut out.stdout);
        if let Err(e) = redirect(sim, path, data, *append) {
            return Output::err(1, format!("/system/bin/sh: {path}: {e}\n"));
        }
    }
    if let Some((path, append)) = &cmd.stderr_to {
        let data = std::mem::take(&mut out.stderr);
        if let Err(e) = redirect(sim, path, data, *append) {
            return Output::err(1, format!("/system/bin/sh: {path}: {e}\n"));
        }
    }
    out
}

/// mksh's `test` builtin, for what the device layer asks: `-w`/`-r`/`-e` of a path (an input
/// device is writable unless the phone refuses), `-n`/`-z` of a string.
fn test(sim: &Simulator, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let yes = match args.as_slice() {
        ["-w" | "-r" | "-e", path] if path.starts_with("/dev/input/") => {
            sim.with_device(|d| d.touch.is_node(path) && (args[0] == "-e" || !d.touch.refused))
        }
        ["-w" | "-r" | "-e", path] => sim.with_device(|d| d.fs.get(path).is_some()),
        ["-n", s] => !s.is_empty(),
        ["-z", s] => s.is_empty(),
        [s] => !s.is_empty(),
        _ => return Output::err(2, "test: the simulator's test takes -w|-r|-e PATH, -n|-z STRING\n"),
    };
    Output {
        code: i32::from(!yes),
        ..Output::default()
    }
}

fn redirect(sim: &Simulator, path: &str, data: Vec<u8>, append: bool) -> Result<(), super::fs::FsError> {
    if path == "/dev/null" {
        return Ok(());
    }
    sim.with_device(|d| {
        let mut content = if append {
            d.fs.read(path).map(<[u8]>::to_vec).unwrap_or_default()
        } else {
            Vec::new()
        };
        content.extend_from_slice(&data);
        d.fs.write(path, content, 0o666, super::fs::now_secs())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_operators_tokenize_like_sh() {
        let t = tokenize(r#"echo 'a b' "c\"d" e\ f;false&&x||y|z 2>&1 >/dev/null"#).unwrap();
        let words: Vec<String> = t
            .iter()
            .filter_map(|t| if let Token::Word(w) = t { Some(w.clone()) } else { None })
            .collect();
        assert_eq!(words[..4], ["echo", "a b", "c\"d", "e f"]);
        assert!(t.contains(&Token::Op("&&")) && t.contains(&Token::Op("||")) && t.contains(&Token::Op("|")));
        assert!(t.contains(&Token::Redirect { fd: 2, op: ">&" }));
        assert_eq!(tokenize("echo 'open"), Err(SyntaxError::Unterminated));
        assert_eq!(tokenize("echo $(reboot)"), Err(SyntaxError::Substitution));
    }

    #[test]
    fn stdin_is_wanted_by_install_with_size_and_bare_cat() {
        assert_eq!(stdin_wanted("cmd package 'install' -S 1234"), Some(1234));
        assert_eq!(stdin_wanted("cat"), Some(usize::MAX));
        assert_eq!(stdin_wanted("cat /sdcard/x"), None);
        assert_eq!(stdin_wanted("grep -c x"), Some(usize::MAX));
        assert_eq!(stdin_wanted("grep x /sdcard/f"), None);
        assert_eq!(stdin_wanted("head -n 5"), Some(usize::MAX));
        assert_eq!(stdin_wanted("head -c 16 > '/sdcard/Pictures/a.png'"), Some(16));
        assert_eq!(stdin_wanted("tr a-z A-Z"), Some(usize::MAX));
        assert_eq!(stdin_wanted("getprop"), None);
    }
}
