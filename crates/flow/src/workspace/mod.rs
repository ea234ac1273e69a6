//! A Maestro workspace as `maestro test DIR` reads it (`WorkspaceExecutionPlanner.plan`,
//! mobile-dev-inc/maestro `maestro-orchestra/.../workspace/WorkspaceExecutionPlanner.kt`): which
//! flows of the folders and files given run, and in what order. `read` walks the folders and reads
//! the config and each flow's header; `plan` is pure (files in, ordered list out).
//!
//! Maestro's rules, kept: a folder's flows are its `.yaml`/`.yml` files but `config.*` and the
//! config file itself; `config.yaml` (else `config.yml`) of the first folder, or `--config`;
//! `flows` globs (Java's glob syntax, matched against the path below the folder; `*` by
//! default: the top level only) with `!` exclusions; a file named on the command line always
//! passes the globs; `includeTags`/`excludeTags` of the config added to the command line's (a
//! flow passes with any include tag and no exclude tag); `executionOrder.flowsOrder` run first,
//! in order (`ExecutionOrderPlanner`); `local.deterministicOrder` sorts the rest by file name.
//! Where droidmcp differs: the rest run in the path's order (Maestro's is the file system's walk
//! order, unspecified), and every name of `flowsOrder` the sequence leaves out is said.

use std::path::{Path, PathBuf};

use saphyr::{MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use crate::maestro::yaml;

/// What `config.yaml` says that decides the run (Maestro ignores other keys: so does this).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub flows: Option<Vec<String>>,
    pub include_tags: Vec<String>,
    pub exclude_tags: Vec<String>,
    pub deterministic_order: bool,
    pub flows_order: Vec<String>,
    /// `executionOrder.continueOnFailure`, true unless it says false.
    pub continue_on_failure: bool,
    /// `testOutputDir`: where a run's outputs go, relative to the workspace.
    pub test_output_dir: Option<String>,
}

/// A flow's header as the planner reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    pub name: Option<String>,
    pub tags: Vec<String>,
}

/// One flow file a plan chooses from.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowFile {
    pub path: PathBuf,
    /// Its path below the folder it was found in (`/` between parts); `None` for a file named
    /// on the command line, which the globs do not filter.
    pub below: Option<String>,
    pub header: Header,
}

/// What runs: `sequence` first, in order (stopping at a failure unless `continue_on_failure`),
/// then `flows`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub sequence: Vec<PathBuf>,
    pub continue_on_failure: bool,
    pub flows: Vec<PathBuf>,
    /// What the run should say without failing (a `flowsOrder` name left out of the sequence).
    pub notes: Vec<String>,
    /// The config's `testOutputDir`, resolved against the workspace.
    pub test_output_dir: Option<PathBuf>,
}

/// The tags given on the command line, each checked.
#[derive(Debug, Clone, Default)]
pub struct Tags {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

/// One `--include-tags`/`--exclude-tags` value: comma-separated tags, as Maestro's picocli
/// splits them (`split = ","`). An empty piece (`a,,b`, or `""` from an empty CI variable) is
/// no tag: Maestro's is a tag no flow has, which includes and excludes nothing.
pub fn parse_tags(option: &str, given: &str) -> Result<Vec<String>, String> {
    given
        .split(',')
        .filter(|tag| !tag.is_empty())
        .map(|tag| {
            let why = if tag.chars().any(char::is_whitespace) {
                Some("a tag with a space (tags are separated by commas, no spaces; Maestro would look for the tag with its space, which no flow has)")
            } else if tag.starts_with('!') {
                Some("a tag starting with ! (to leave flows with a tag out, name it in --exclude-tags)")
            } else {
                None
            };
            match why {
                Some(why) => Err(format!(
                    "{option} {given:?}: {why}; write the tags separated by commas, e.g. {option} smoke,login"
                )),
                None => Ok(tag.to_string()),
            }
        })
        .collect()
}

/// Reads the config file's text.
pub fn read_config(text: &str) -> Result<Config, String> {
    let docs = yaml::load(text)?;
    let mut config = Config {
        continue_on_failure: true,
        ..Config::default()
    };
    let Some(doc) = docs.first() else {
        return Ok(config);
    };
    let map = match &doc.data {
        YamlDataOwned::Mapping(map) => map,
        YamlDataOwned::Value(ScalarOwned::Null) => return Ok(config),
        _ => return Err("the config is a mapping (flows:, includeTags:, executionOrder: …)".into()),
    };
    for (key, value) in map {
        match scalar(key).as_deref() {
            Some("flows") => config.flows = Some(strings(value, "flows")?),
            Some("includeTags") => config.include_tags = strings(value, "includeTags")?,
            Some("excludeTags") => config.exclude_tags = strings(value, "excludeTags")?,
            Some("testOutputDir") => {
                config.test_output_dir = Some(scalar(value).ok_or("testOutputDir is a folder's path")?)
            }
            Some("local") => {
                if let Some(order) = get(value, "deterministicOrder") {
                    config.deterministic_order = boolean(order, "local.deterministicOrder")?;
                }
            }
            Some("executionOrder") => {
                if let Some(go_on) = get(value, "continueOnFailure") {
                    config.continue_on_failure = boolean(go_on, "executionOrder.continueOnFailure")?;
                }
                if let Some(order) = get(value, "flowsOrder") {
                    config.flows_order = strings(order, "executionOrder.flowsOrder")?;
                }
            }
            _ => {}
        }
    }
    Ok(config)
}

/// Reads a flow's header (the first of its two documents): its `name` and `tags`.
pub fn read_header(text: &str) -> Result<Header, String> {
    let docs = yaml::load(text)?;
    let mut header = Header::default();
    if docs.len() < 2 {
        return Ok(header);
    }
    if let Some(name) = get(&docs[0], "name") {
        header.name = scalar(name);
    }
    if let Some(tags) = get(&docs[0], "tags") {
        // `List<String>` in Maestro's `YamlConfig`, read without ACCEPT_SINGLE_VALUE_AS_ARRAY:
        // a lone string is refused there too (the config's `StringList` takes one).
        if !matches!(
            tags.data,
            YamlDataOwned::Sequence(_) | YamlDataOwned::Value(ScalarOwned::Null)
        ) {
            let one = scalar(tags).unwrap_or_else(|| "smoke".into());
            return Err(format!(
                "the header's tags is a list (tags: [{one}], or one tag a line after `- `); Maestro refuses anything else there too"
            ));
        }
        header.tags = strings(tags, "tags")?;
    }
    Ok(header)
}

fn get<'a>(node: &'a MarkedYamlOwned, key: &str) -> Option<&'a MarkedYamlOwned> {
    match &node.data {
        YamlDataOwned::Mapping(map) => map
            .iter()
            .find(|(k, _)| scalar(k).as_deref() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// A scalar as Maestro's reader has it: as written (`1.10`, `007`, `yes` stay so).
fn scalar(node: &MarkedYamlOwned) -> Option<String> {
    yaml::scalar(node)
}

fn boolean(node: &MarkedYamlOwned, what: &str) -> Result<bool, String> {
    yaml::boolean(node).map_err(|()| format!("{what} is true or false"))
}

/// A list of strings, or one string (Maestro's `StringList` takes both).
fn strings(node: &MarkedYamlOwned, what: &str) -> Result<Vec<String>, String> {
    match &node.data {
        YamlDataOwned::Sequence(items) => items
            .iter()
            .map(|item| scalar(item).ok_or_else(|| format!("{what} is a list of names")))
            .collect(),
        YamlDataOwned::Value(ScalarOwned::Null) => Ok(Vec::new()),
        _ => scalar(node)
            .map(|one| vec![one])
            .ok_or_else(|| format!("{what} is a list of names")),
    }
}

/// A Java `glob:` pattern (`FileSystem.getPathMatcher`, `sun.nio.fs.Globs.toRegexPattern`) as a
/// regular expression over a `/`-separated path: `*` within a part, `**` across parts, `?`,
/// `[…]` (with `!` to negate), `{a,b}`, `\` to escape.
pub fn glob(pattern: &str) -> Result<regex::Regex, String> {
    let bad = |why: &str| {
        format!("the flows pattern {pattern:?} is not a glob: {why} (e.g. \"**\", \"login/*\", \"!subflows/**\")")
    };
    let mut out = String::from("^");
    let mut chars = pattern.chars().peekable();
    let mut in_group = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().ok_or_else(|| bad("a \\ with nothing after it"))?;
                out.push_str(&regex::escape(&next.to_string()));
            }
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str(".*");
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let mut class = String::from("[");
                if chars.peek() == Some(&'!') {
                    chars.next();
                    class.push('^');
                }
                let mut closed = false;
                let mut first = true;
                for c in chars.by_ref() {
                    match c {
                        ']' if !first => {
                            closed = true;
                            break;
                        }
                        '/' => return Err(bad("a / inside [ ]")),
                        '-' => class.push('-'),
                        c if c.is_alphanumeric() || !c.is_ascii() => class.push(c),
                        c => {
                            class.push('\\');
                            class.push(c);
                        }
                    }
                    first = false;
                }
                if !closed {
                    return Err(bad("a [ that is not closed"));
                }
                class.push_str("&&[^/]]");
                out.push_str(&class);
            }
            '{' if in_group => return Err(bad("a { inside another { }")),
            '{' => {
                in_group = true;
                out.push_str("(?:(?:");
            }
            '}' if in_group => {
                in_group = false;
                out.push_str("))");
            }
            ',' if in_group => out.push_str(")|(?:"),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    if in_group {
        return Err(bad("a { that is not closed"));
    }
    out.push('$');
    regex::Regex::new(&out).map_err(|e| bad(&e.to_string()))
}

/// The run's flows, in order, from `files` (the given files first, in the order given, then each
/// folder's in path order), the config, and the command line's tags. `single` is a lone flow
/// file named on the command line: Maestro runs it as it is, whatever the tags.
pub fn plan(files: &[FlowFile], config: &Config, tags: &Tags, single: bool) -> Result<Plan, String> {
    let mut plan = Plan {
        continue_on_failure: config.continue_on_failure,
        ..Plan::default()
    };
    if single {
        plan.flows = files.iter().map(|f| f.path.clone()).collect();
        return Ok(plan);
    }
    let globs = config.flows.clone().unwrap_or_else(|| vec!["*".into()]);
    let (negative, positive): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.starts_with('!'));
    if positive.is_empty() && !negative.is_empty() {
        return Err(format!(
            "the config's flows has only ! patterns ({}), so no flow would run: add one that chooses flows, e.g. flows: [\"**\", {}]",
            quoted(&negative),
            quoted(&negative)
        ));
    }
    let matchers = |list: &[&String], strip: bool| -> Result<Vec<regex::Regex>, String> {
        list.iter().map(|g| glob(if strip { &g[1..] } else { g })).collect()
    };
    let (yes, no) = (matchers(&positive, false)?, matchers(&negative, true)?);
    let chosen: Vec<&FlowFile> = files
        .iter()
        .filter(|f| match &f.below {
            None => true,
            Some(below) => yes.iter().any(|g| g.is_match(below)) && !no.iter().any(|g| g.is_match(below)),
        })
        .collect();
    if chosen.is_empty() {
        if globs == ["*"] {
            return Err("the folder has no flow at its top level (without a config, Maestro runs only those): to run the flows of its subfolders, add a config.yaml saying flows: [\"**\"] (or name them, e.g. flows: [\"login/*\"])".into());
        }
        let hint = if positive.iter().any(|g| g.starts_with("./")) {
            " (a pattern is matched against the path below the folder as written: login/* rather than ./login/*)"
        } else {
            ""
        };
        return Err(format!(
            "the config's flows patterns {} match no flow file of the folder{hint}: fix them, e.g. flows: [\"**\"]",
            quoted(&positive)
        ));
    }
    let include: Vec<&String> = tags.include.iter().chain(&config.include_tags).collect();
    let exclude: Vec<&String> = tags.exclude.iter().chain(&config.exclude_tags).collect();
    let tagged: Vec<&FlowFile> = chosen
        .into_iter()
        .filter(|f| {
            let has = |list: &[&String]| f.header.tags.iter().any(|t| list.contains(&t));
            (include.is_empty() || has(&include)) && (exclude.is_empty() || !has(&exclude))
        })
        .collect();
    if tagged.is_empty() {
        return Err(format!(
            "no flow has the tags asked for (include: {}; exclude: {}): a flow runs with any include tag and no exclude tag, read from its header's tags: fix the tags, or the flows' headers",
            if include.is_empty() {
                "any".into()
            } else {
                quoted(&include)
            },
            if exclude.is_empty() {
                "none".into()
            } else {
                quoted(&exclude)
            },
        ));
    }
    // The sequence: flowsOrder's names, by header name else file name, as ExecutionOrderPlanner
    // takes them: the longest run of leading names that are flows of the plan.
    let called = |f: &FlowFile| {
        f.header.name.clone().unwrap_or_else(|| {
            let file = f
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            file.rsplit_once('.').map_or(file.clone(), |(stem, _)| stem.to_string())
        })
    };
    let mut order: Vec<&String> = Vec::new();
    for name in &config.flows_order {
        if !order.contains(&name) {
            order.push(name);
        }
    }
    let by_name = |name: &str| tagged.iter().rev().find(|f| called(f) == name).copied();
    if order.iter().any(|n| by_name(n).is_some()) {
        let lead: Vec<&String> = order.iter().take_while(|n| by_name(n).is_some()).copied().collect();
        if lead.is_empty() {
            return Err(format!(
                "executionOrder.flowsOrder starts with {:?}, which no flow of the run is called (a flow is called by its header's name, else its file name without .yaml): fix the name, or its tags or the flows patterns that leave it out",
                order[0]
            ));
        }
        for left in order.iter().skip(lead.len()) {
            plan.notes.push(format!(
                "executionOrder.flowsOrder names {left:?} after {:?}: {}, so it and the names after it run in no sequence, as in Maestro",
                lead.last().map(|s| s.as_str()).unwrap_or_default(),
                if by_name(left).is_some() { "an earlier name is missing" } else { "no flow of the run is called so" }
            ));
        }
        plan.sequence = lead.iter().filter_map(|n| by_name(n)).map(|f| f.path.clone()).collect();
    } else if !order.is_empty() {
        plan.notes.push(format!(
            "executionOrder.flowsOrder names no flow of the run ({}): every flow runs in no sequence, as in Maestro",
            quoted(&order)
        ));
    }
    let mut rest: Vec<&FlowFile> = tagged
        .into_iter()
        .filter(|f| !plan.sequence.contains(&f.path))
        .collect();
    if config.deterministic_order {
        rest.sort_by_key(|f| f.path.file_name().map(|n| n.to_os_string()));
    }
    plan.flows = rest.into_iter().map(|f| f.path.clone()).collect();
    Ok(plan)
}

fn quoted(list: &[&String]) -> String {
    list.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
}

/// Reads what `plan` needs from the paths given (flow files and folders): each folder's flow
/// files (no link to a folder followed, as Java's `Files.walk`), the config (`config_file`, else
/// the first folder's `config.yaml` or `config.yml`), and the headers. Returns the files, the
/// config, and whether the input is a lone flow file.
pub fn read(inputs: &[PathBuf], config_file: Option<&Path>) -> Result<(Vec<FlowFile>, Config, bool), String> {
    if let Some(missing) = inputs.iter().find(|p| !p.exists()) {
        return Err(format!("{}: no such file or folder", missing.display()));
    }
    let (dirs, given): (Vec<&PathBuf>, Vec<&PathBuf>) = inputs.iter().partition(|p| p.is_dir());
    let config_path = match config_file {
        Some(path) if !path.is_file() => {
            return Err(format!("--config {}: no such file", path.display()));
        }
        Some(path) => Some(path.to_path_buf()),
        None => dirs.iter().find_map(|d| {
            ["config.yaml", "config.yml"]
                .iter()
                .map(|n| d.join(n))
                .find(|p| p.is_file())
        }),
    };
    let is_flow = |path: &Path| {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let stem = path.file_stem().and_then(|e| e.to_str()).unwrap_or_default();
        matches!(ext, "yaml" | "yml") && stem != "config" && Some(path) != config_path.as_deref()
    };
    let header_of = |path: &Path| -> Result<Header, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        read_header(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let single = dirs.is_empty() && given.len() == 1;
    let mut files = Vec::new();
    for path in &given {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        // A droidmcp script is a flow too (Maestro has none); it has no header.
        if ext == "js" {
            files.push(FlowFile {
                path: path.to_path_buf(),
                below: None,
                header: Header::default(),
            });
        } else if single || is_flow(path) {
            files.push(FlowFile {
                path: path.to_path_buf(),
                below: None,
                header: if single { Header::default() } else { header_of(path)? },
            });
        }
    }
    for dir in &dirs {
        let mut found = Vec::new();
        walk(dir, "", &mut found)?;
        found.sort();
        let flows: Vec<(String, PathBuf)> = found.into_iter().filter(|(_, p)| is_flow(p)).collect();
        if flows.is_empty() {
            return Err(format!(
                "{}: the folder holds no flow file (.yaml or .yml, config.yaml aside)",
                dir.display()
            ));
        }
        for (below, path) in flows {
            files.push(FlowFile {
                header: header_of(&path)?,
                path,
                below: Some(below),
            });
        }
    }
    if files.is_empty() {
        return Err("no flow among the files given: a flow is a Maestro .yaml/.yml file or a .js flow".into());
    }
    let mut config = match &config_path {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            read_config(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => Config {
            continue_on_failure: true,
            ..Config::default()
        },
    };
    // testOutputDir is the config author's, so it stays in the config's folder as a chroot
    // keeps a path (`/tmp/x` and `../../x` are inside it): `--test-output-dir` goes elsewhere.
    if let (Some(dir), Some(path)) = (config.test_output_dir.take(), &config_path) {
        let base = path.parent().unwrap_or(Path::new(""));
        config.test_output_dir = Some(base.join(confine::chrooted(&dir)).to_string_lossy().into_owned());
    }
    Ok((files, config, single))
}

/// Every file below `dir` as (its path below, its path), not following a link to a folder.
fn walk(dir: &Path, below: &str, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read the folder {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read the folder {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if below.is_empty() {
            name.clone()
        } else {
            format!("{below}/{name}")
        };
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read {}: {e}", entry.path().display()))?;
        if kind.is_dir() {
            walk(&entry.path(), &rel, out)?;
        } else if kind.is_file() || entry.path().is_file() {
            // A file, or a link to one (Java's isRegularFile follows it).
            out.push((rel, entry.path()));
        }
    }
    Ok(())
}

impl Plan {
    /// Every flow of the plan, the sequence first.
    pub fn all(&self) -> impl Iterator<Item = &PathBuf> {
        self.sequence.iter().chain(&self.flows)
    }
}

#[cfg(test)]
mod tests;
