//! A tool call's arguments as one typed command. The wire form stays one flat object per tool
//! (one compact schema in tools/list); each tool builds its command enum from it here, through
//! one `parse` that refuses unknown fields, wrong types and fields the operation does not take,
//! and one `Range` check for every count and time. What a command holds is valid: the server's
//! deadline and task decision and the take-over check read it, and the tool applies it, never
//! the raw JSON (`registry.rs` holds each tool's command type).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::de::DeserializeOwned;

use super::State;

/// A tool's typed command: how it is built from the wire, and what the server needs to know of
/// it before it runs.
pub trait Command: Sized + Send + Sync + 'static {
    /// Builds the command from the tool's wire arguments; the error says which field is wrong
    /// and what to do.
    fn parse(args: JsonObject) -> Result<Self, String>;
    /// How long the server lets the call run.
    fn deadline(&self) -> Deadline;
    /// Whether it may run long enough to be a task for a client that takes tasks.
    fn runs_long(&self) -> bool {
        false
    }
    /// Whether it changes the device (taps, typing, launching, installing, a shell command,
    /// waking, an emulator line that sets something), and so is refused while another holds
    /// the device's lease, and renews the caller's own (`tools::leases`). Reading goes on. Each command says it, with no
    /// default, so a new operation is classified where it is built.
    fn acts(&self) -> bool;
    /// The device it names (`None`: the session's default); the one the take-over check asks.
    fn device(&self) -> Option<&str>;
    /// Runs it on the device layer; the answer is shaped for the budget.
    fn apply(self, state: Arc<State>, ctx: RequestContext<RoleServer>) -> impl Future<Output = CallToolResult> + Send;
}

/// How long a call may run, as the server's guard bounds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// It bounds itself: a wait by its timeoutMs, an install by the APK's size.
    Own,
    /// Its own timeoutMs (else the server's `--timeout-ms`), plus how long its gesture lasts on
    /// the device (a long press, a swipe).
    Within {
        timeout: Option<Duration>,
        gesture: Duration,
    },
}

impl Deadline {
    /// Within the server's `--timeout-ms`.
    pub const SERVER: Deadline = Deadline::Within {
        timeout: None,
        gesture: Duration::ZERO,
    };

    /// Within this call's own timeout.
    pub fn within(timeout: Duration) -> Deadline {
        Deadline::Within {
            timeout: Some(timeout),
            gesture: Duration::ZERO,
        }
    }
}

/// The one parse of a tool's flat wire arguments: serde reads them into the tool's wire struct
/// (an unknown field, a wrong type or an unknown operation is refused with the field it is
/// about), then `fields` says which fields the operation takes and any other one given is
/// refused, instead of being silently ignored.
pub fn parse<A: DeserializeOwned>(
    tool: &str,
    args: JsonObject,
    fields: impl FnOnce(&A) -> &'static [&'static str],
) -> Result<A, String> {
    let given: Vec<String> = args.keys().cloned().collect();
    let operation = operation_name(&args);
    let parsed: A = parse_args(tool, args)?;
    check_fields(&format!("{tool} {operation}"), &given, fields(&parsed))?;
    Ok(parsed)
}

/// Refuses a field that the operation does not take, instead of ignoring it: a tool's arguments
/// are one flat object (one compact schema in tools/list), so serde alone cannot tell.
/// `operation` and `device` go with every operation.
pub fn check_fields(what: &str, given: &[String], allowed: &[&str]) -> Result<(), String> {
    match given
        .iter()
        .find(|f| !matches!(f.as_str(), "operation" | "device") && !allowed.contains(&f.as_str()))
    {
        None => Ok(()),
        Some(stray) if allowed.is_empty() => Err(format!(
            "`{}` does not apply to {what}; it takes no other field",
            crate::android::text::echoed(stray)
        )),
        Some(stray) => Err(format!(
            "`{}` does not apply to {what}; it takes {}",
            crate::android::text::echoed(stray),
            allowed.join(", ")
        )),
    }
}

/// The `operation` as given (for messages; valid once `parse_args` accepted it).
pub fn operation_name(args: &JsonObject) -> String {
    args.get("operation")
        .and_then(|o| o.as_str())
        .unwrap_or_default()
        .to_string()
}

/// Arguments into the tool's struct. Bad arguments become a tool error with serde's precise
/// message (unknown operation, missing field, wrong type), not a JSON-RPC error, which clients
/// tend to show as an opaque failure; the error names the field it is about (`limit: invalid
/// type: string "x", expected u64`), which serde alone does not.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<T, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let field = e.path().to_string();
        let what = e.into_inner();
        match field.as_str() {
            "." | "" => format!("invalid arguments for {tool}: {what}. tools/list shows its input schema"),
            _ => format!("invalid arguments for {tool}: `{field}`: {what}. tools/list shows its input schema"),
        }
    })
}

/// The range a number on the wire must be in (a timeoutMs, a limit, an offset, a count of
/// lines): the one check, whose refusal names the field, the range and what to do instead.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub field: &'static str,
    pub min: u64,
    pub max: u64,
    /// Said after the minimum, e.g. ` (the summary alone)`.
    pub min_means: &'static str,
    /// Said after the refusal: what to do instead, e.g. `. Page on with offset`.
    pub instead: &'static str,
}

impl Range {
    pub const fn new(field: &'static str, min: u64, max: u64) -> Range {
        Range {
            field,
            min,
            max,
            min_means: "",
            instead: "",
        }
    }

    pub const fn min_means(self, min_means: &'static str) -> Range {
        Range { min_means, ..self }
    }

    pub const fn instead(self, instead: &'static str) -> Range {
        Range { instead, ..self }
    }

    /// The value given, else `default`, once it is in the range.
    pub fn check(&self, given: Option<u64>, default: u64) -> Result<u64, String> {
        let value = given.unwrap_or(default);
        if (self.min..=self.max).contains(&value) {
            return Ok(value);
        }
        Err(format!(
            "{} must be between {}{} and {}; got {value}{}",
            self.field, self.min, self.min_means, self.max, self.instead
        ))
    }

    /// The same, as a count of items (an offset, a limit).
    pub fn check_count(&self, given: Option<u64>, default: u64) -> Result<usize, String> {
        let value = self.check(given, default)?;
        usize::try_from(value).map_err(|_| format!("{} {value} is too large", self.field))
    }

    /// The same, as milliseconds.
    pub fn check_ms(&self, given: Option<u64>, default: u64) -> Result<Duration, String> {
        self.check(given, default).map(Duration::from_millis)
    }
}

/// Any offset into a list: from 0, as far as a list can reach.
pub const OFFSET: Range = Range::new("offset", 0, usize::MAX as u64);

#[cfg(test)]
mod tests {
    use super::{Duration, OFFSET, Range, check_fields};

    #[test]
    fn a_number_out_of_its_range_is_refused_with_its_field_range_and_advice() {
        let lines = Range::new("`lines`", 0, 200)
            .min_means(" (the summary alone)")
            .instead(". cache get pages all of them");
        assert_eq!(lines.check(None, 20), Ok(20));
        assert_eq!(lines.check(Some(0), 20), Ok(0));
        assert_eq!(
            lines.check(Some(201), 20).unwrap_err(),
            "`lines` must be between 0 (the summary alone) and 200; got 201. cache get pages all of them"
        );
        let timeout = Range::new("timeoutMs", 1, 600_000);
        assert_eq!(
            timeout.check_ms(Some(0), 60_000).unwrap_err(),
            "timeoutMs must be between 1 and 600000; got 0"
        );
        assert_eq!(timeout.check_ms(None, 60_000), Ok(Duration::from_secs(60)));
        assert_eq!(OFFSET.check_count(Some(7), 0), Ok(7));
    }

    #[test]
    fn a_field_the_operation_does_not_take_is_named_with_those_it_does() {
        let given = ["operation".to_string(), "limit".to_string()];
        assert_eq!(
            check_fields("cache list", &given, &[]).unwrap_err(),
            "`limit` does not apply to cache list; it takes no other field"
        );
        assert_eq!(
            check_fields("cache clear", &given, &["id"]).unwrap_err(),
            "`limit` does not apply to cache clear; it takes id"
        );
        assert!(check_fields("cache get", &given, &["id", "limit"]).is_ok());
    }
}
