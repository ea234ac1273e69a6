//! One script run in a fresh QuickJS runtime (rquickjs): memory, stack, wall clock, host calls
//! and output are bounded; the only ways out are `console.*`, the host's `call` and its `http`
//! (`http.rs`, which the host refuses unless it allows the network). No module loader, file
//! system, process or timers: QuickJS alone has none, and nothing here adds them. Each run has a thread of its own (with a small runtime of its own for the script's promises):
//! a busy script never holds the server's async workers, which once let two `for(;;){}` stop
//! every call for seconds. The host's calls run on the server's runtime. A stop token (the
//! client's cancel, the call's deadline, the session's or the server's end: anything that drops
//! the run's future) is checked by the interpreter's interrupt handler, so even a busy loop ends
//! within one check.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rquickjs::function::{Async, Func};
use rquickjs::{AsyncContext, AsyncRuntime, CatchResultExt, CaughtError, Promise};
use tokio_util::sync::CancellationToken;

/// What one run may use.
#[derive(Debug, Clone)]
pub struct Limits {
    pub memory_bytes: usize,
    pub stack_bytes: usize,
    pub timeout: Duration,
    pub max_calls: usize,
    pub max_output_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            stack_bytes: 1 << 20,
            timeout: Duration::from_secs(60),
            max_calls: 200,
            max_output_chars: 1 << 20,
        }
    }
}

/// What a script reaches outside itself. `call(index, tool, arguments)` gives the tool's full
/// structured result, or its error (`Thrown`: its message, and its code) (`index` numbers the run's calls from 0, in the
/// order made). `local(operation, arguments)` serves `workspace.*` and `skills.*`.
pub trait Host: Send + Sync + 'static {
    /// The tools a script can call, as namespaces (`device.list()`), from their schemas.
    fn namespaces(&self) -> Vec<super::api::Namespace>;

    fn call(&self, index: usize, tool: String, arguments: serde_json::Value) -> HostFuture;

    fn local(&self, operation: String, _arguments: serde_json::Value) -> HostFuture {
        Box::pin(async move { Err(format!("{operation} is not available here").into()) })
    }

    /// A script's `http` request (`http.rs`), within `timeout`; refused unless the host allows it.
    fn http(&self, _request: serde_json::Value, _timeout: Duration) -> HostFuture {
        Box::pin(async { Err("a script reaches no network here".into()) })
    }
}

pub type HostFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<serde_json::Value, Thrown>> + Send>>;

/// A host's error as a script catches it: an `Error` with this message and, when the tool gave
/// one, `code` (a tool's `ErrorKind`), which a script steers by instead of the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thrown {
    pub message: String,
    pub code: Option<String>,
}

impl Thrown {
    /// How the answer crosses into the sandbox, for the prelude to throw (`invoke`), and is saved.
    pub fn answer(&self) -> serde_json::Value {
        match &self.code {
            Some(code) => serde_json::json!({ "error": self.message, "code": code }),
            None => serde_json::json!({ "error": self.message }),
        }
    }
}

impl From<String> for Thrown {
    fn from(message: String) -> Thrown {
        Thrown { message, code: None }
    }
}

impl From<&str> for Thrown {
    fn from(message: &str) -> Thrown {
        message.to_string().into()
    }
}

/// One host call a run made.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// From 0, in the order the calls were made (they may end in another order).
    pub index: usize,
    pub tool: String,
    pub operation: String,
    pub ms: u64,
    pub ok: bool,
}

/// What a run gave back: what it printed, how it ended, the calls it made.
#[derive(Debug, Default)]
pub struct Outcome {
    pub output: String,
    /// The script's uncaught error (with its line), or the limit it hit.
    pub error: Option<String>,
    pub calls: Vec<CallRecord>,
}

/// Shared between the runtime's callbacks and the run.
#[derive(Default)]
struct RunState {
    output: Mutex<String>,
    output_cut: AtomicBool,
    calls: Mutex<Vec<CallRecord>>,
    call_count: AtomicUsize,
    timed_out: AtomicBool,
    stopped: AtomicBool,
    /// Bytes of arguments the host holds for calls not answered yet.
    in_flight: AtomicUsize,
    /// Bytes of answers the host gave that the script has not read yet, and the script's heap
    /// when last measured: together they keep to the run's memory limit.
    answers: AtomicUsize,
    heap: AtomicUsize,
}

impl RunState {
    /// An answer as the text handed to the script, counted from when the host gives it until
    /// the script reads it (`read`). One that would take the heap and the unread answers past
    /// the run's memory limit is let go at once, and the call fails naming the limit.
    fn hold(&self, answer: serde_json::Value, limit: usize) -> Held {
        let text = answer.to_string();
        let bytes = text.len();
        let heap = self.heap.load(Ordering::SeqCst);
        let fits = self
            .answers
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
                (heap + held + bytes <= limit).then_some(held + bytes)
            })
            .is_ok();
        if fits {
            return Held { text, bytes };
        }
        let unread = self.answers.load(Ordering::SeqCst);
        let error = format!(
            "this call's answer ({} KiB) would pass the run's memory limit of {} MiB, which counts the script's heap ({} MiB) and the answers it has not read yet ({} KiB); await fewer calls at once, or ask for less (a limit, a filter, a smaller file)",
            text.len() >> 10,
            limit >> 20,
            heap >> 20,
            unread >> 10
        );
        Held {
            text: serde_json::json!({ "error": error }).to_string(),
            bytes: 0,
        }
    }

    /// The script reads `held`: parsed here, into the heap (so the next answer's count sees
    /// it there), and let go of outside it.
    fn read<'js>(&self, held: Held, ctx: &rquickjs::Ctx<'js>) -> rquickjs::Result<rquickjs::Value<'js>> {
        let value = ctx.json_parse(held.text);
        self.answers.fetch_sub(held.bytes, Ordering::SeqCst);
        self.heap.store(heap_bytes(ctx), Ordering::SeqCst);
        value
    }
}

/// An answer's text and the bytes it counts on the run's memory limit.
struct Held {
    text: String,
    bytes: usize,
}

/// The bytes the script's runtime has allocated (its heap).
fn heap_bytes(ctx: &rquickjs::Ctx) -> usize {
    let mut usage = std::mem::MaybeUninit::<rquickjs::qjs::JSMemoryUsage>::uninit();
    // SAFETY: `ctx` is a live context of the runtime this thread is running (its lock is held
    // while the script's code and callbacks run), and JS_ComputeMemoryUsage fills the whole
    // struct it is given.
    let usage = unsafe {
        let runtime = rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        rquickjs::qjs::JS_ComputeMemoryUsage(runtime, usage.as_mut_ptr());
        usage.assume_init()
    };
    usage.malloc_size.max(0) as usize
}

/// The largest argument one host call takes, and what a run's pending calls may hold in all:
/// measured in the sandbox before anything is copied out of it.
pub const MAX_ARGUMENT_BYTES: usize = 1 << 20;
pub const MAX_IN_FLIGHT_BYTES: usize = 4 << 20;
/// A run's tool calls that work at once; the others wait their turn, holding nothing of a
/// device's output, so what a run's calls hold while they work is bounded too.
pub const MAX_CALLS_AT_ONCE: usize = 8;

/// A task of the server's runtime that is aborted when the run stops waiting for it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The API a script sees, on top of the raw `__call`, which it then cannot reach: each tool as
/// `ns.operation(args)` with the tool's own argument names (`api::definitions`, from the
/// namespaces the host gives).
fn prelude(namespaces: &[super::api::Namespace]) -> String {
    let head = PRELUDE_HEAD.replace("MAX_ARGUMENT", &(MAX_ARGUMENT_BYTES / 4).to_string());
    format!("{head}{}{}}})();\n", http::PRELUDE, super::api::definitions(namespaces))
}

const PRELUDE_HEAD: &str = include_str!("sandbox/prelude.js");

/// The name the script's frames carry in stack traces (the API's own code has another).
const SCRIPT_FILE: &str = "script.js";

/// What the script body is wrapped in, so that top-level `await` works.
const WRAPPER: &str = "(async () => { ";

/// Runs `code` (a script body; top-level `await` allowed) with the global `args` on a thread of
/// its own, and returns what it printed. Dropping this future stops the run; `hold` (the run's
/// slots) is let go once the script has stopped on its thread, not before.
pub async fn run(
    code: &str,
    args: &serde_json::Value,
    limits: &Limits,
    host: Arc<dyn Host>,
    hold: impl Send + 'static,
) -> Outcome {
    let main = tokio::runtime::Handle::current();
    let stop = CancellationToken::new();
    let _stop_when_dropped = stop.clone().drop_guard();
    let (answer, answered) = tokio::sync::oneshot::channel();
    let (code, script_args, limits_in) = (code.to_string(), args.clone(), limits.clone());
    let spawned = std::thread::Builder::new()
        .name("droidmcp-script".into())
        // QuickJS checks its own stack limit; the thread's is well past it.
        .stack_size(limits.stack_bytes + (8 << 20))
        .spawn(move || {
            run_in_the_background();
            let outcome = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime.block_on(run_here(&code, &script_args, &limits_in, host, main, stop)),
                Err(e) => failed(&RunState::default(), format!("cannot start the script's runtime: {e}")),
            };
            // The script has stopped and its runtimes are gone: the slots go before the answer,
            // so the client's next run, sent as soon as this one answers, finds them free.
            drop(hold);
            let _ = answer.send(outcome);
        });
    if let Err(e) = spawned {
        return failed(&RunState::default(), format!("cannot start the script's thread: {e}"));
    }
    answered.await.unwrap_or_else(|_| {
        failed(
            &RunState::default(),
            "the script's thread ended without an answer".into(),
        )
    })
}

/// Scripts are background work: their threads yield the CPU to the server's (nice 10), so two
/// busy loops on a 2-core host slow the other calls little.
fn run_in_the_background() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority takes plain integers; on Linux `who` 0 is the calling thread (nice
    // values are per thread there), so only this script's thread is lowered.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

async fn run_here(
    code: &str,
    args: &serde_json::Value,
    limits: &Limits,
    host: Arc<dyn Host>,
    main: tokio::runtime::Handle,
    stop: CancellationToken,
) -> Outcome {
    let state = Arc::new(RunState::default());
    let runtime = match AsyncRuntime::new() {
        Ok(rt) => rt,
        Err(e) => return failed(&state, format!("cannot start the script runtime: {e}")),
    };
    runtime.set_memory_limit(limits.memory_bytes).await;
    runtime.set_max_stack_size(limits.stack_bytes).await;
    let deadline = Instant::now() + limits.timeout;
    let clock = state.clone();
    let interrupt = stop.clone();
    runtime
        .set_interrupt_handler(Some(Box::new(move || {
            if interrupt.is_cancelled() {
                clock.stopped.store(true, Ordering::SeqCst);
                return true;
            }
            let late = Instant::now() >= deadline;
            if late {
                clock.timed_out.store(true, Ordering::SeqCst);
            }
            late
        })))
        .await;
    let context = match AsyncContext::full(&runtime).await {
        Ok(ctx) => ctx,
        Err(e) => return failed(&state, format!("cannot start the script runtime: {e}")),
    };
    // The body runs inside an async function, on the wrapper's first line so line numbers hold.
    let source = format!("{WRAPPER}{code}\n}})()");
    let run_state = state.clone();
    let limits_in = limits.clone();
    let script_args = args.to_string();
    let limits_cap = limits.max_output_chars;
    let work = context.async_with(async move |ctx| {
        let state = run_state;
        if let Err(e) = install(&ctx, &state, &limits_in, (host, main, deadline), &script_args) {
            return Some(format!("cannot prepare the script's API: {e}"));
        }
        let mut options = rquickjs::context::EvalOptions::default();
        options.filename = Some(SCRIPT_FILE.into());
        let promise: Promise = match ctx.eval_with_options(source, options).catch(&ctx) {
            Ok(p) => p,
            Err(e) => return Some(describe(e)),
        };
        match promise.into_future::<rquickjs::Value>().await.catch(&ctx) {
            // A value the script returns is printed last, as console.log would.
            Ok(value) => {
                if !value.is_undefined() {
                    append(&state, limits_cap, format!("{}\n", show(&value)));
                }
                None
            }
            Err(e) => Some(describe(e)),
        }
    });
    // The outer deadline also cuts a host call that hangs (the interrupt only stops JS code);
    // the stop token cuts a script that waits (on a call, on sleep) when it is stopped.
    let error = tokio::select! {
        ended = tokio::time::timeout(limits.timeout + Duration::from_millis(100), work) => match ended {
            Ok(error) => error,
            Err(_) => {
                state.timed_out.store(true, Ordering::SeqCst);
                Some(String::new())
            }
        },
        _ = stop.cancelled() => {
            state.stopped.store(true, Ordering::SeqCst);
            Some(String::new())
        }
    };
    let error = if state.stopped.load(Ordering::SeqCst) {
        Some("the script was stopped: its call was cancelled, or its session or the server ended".into())
    } else if state.timed_out.load(Ordering::SeqCst) {
        Some(format!(
            "the script ran past its time limit of {} ms and was stopped",
            limits.timeout.as_millis()
        ))
    } else {
        error.map(|e| name_limit(e, limits))
    };
    finish(&state, error)
}

/// `console.log/error/warn/info`, and the raw host call the prelude wraps.
fn install<'js>(
    ctx: &rquickjs::Ctx<'js>,
    state: &Arc<RunState>,
    limits: &Limits,
    (host, main, deadline): (Arc<dyn Host>, tokio::runtime::Handle, Instant),
    script_args: &str,
) -> rquickjs::Result<()> {
    let namespaces = host.namespaces();
    http::install(ctx, host.clone(), main.clone(), deadline)?;
    let console = rquickjs::Object::new(ctx.clone())?;
    for (name, prefix) in [("log", ""), ("info", ""), ("warn", "warn: "), ("error", "error: ")] {
        let state = state.clone();
        let cap = limits.max_output_chars;
        let print = move |args: rquickjs::function::Rest<rquickjs::Value<'js>>| {
            let line: Vec<String> = args.0.iter().map(show).collect();
            append(&state, cap, format!("{prefix}{}\n", line.join(" ")));
        };
        console.set(name, Func::from(print))?;
    }
    ctx.globals().set("console", console)?;

    let local_host = host.clone();
    let local_state = state.clone();
    let max_calls = limits.max_calls;
    let memory = limits.memory_bytes;
    let local = move |ctx: rquickjs::Ctx<'js>, operation: String, args: String| {
        let host = local_host.clone();
        let state = local_state.clone();
        async move {
            // workspace.* and skills.* count as calls: they too make the host work.
            let index = state.call_count.fetch_add(1, Ordering::SeqCst);
            let answer = if index >= max_calls {
                serde_json::json!({ "error": format!("the script made more than {max_calls} calls, its limit") })
            } else {
                let arguments: serde_json::Value = serde_json::from_str(&args).unwrap_or_default();
                match host.local(operation, arguments).await {
                    Ok(value) => serde_json::json!({ "ok": value }),
                    Err(thrown) => thrown.answer(),
                }
            };
            // workspace.read gives files of up to the run's quota: counted like tool answers.
            let held = state.hold(answer, memory);
            state.read(held, &ctx)
        }
    };
    ctx.globals().set("__local", Func::from(Async(local)))?;
    // The only timer. A sleep past the run's deadline is cut by the outer timeout.
    let longest = limits.timeout + Duration::from_secs(1);
    let sleep = move |ms: f64| async move {
        let ms = if ms.is_finite() && ms > 0.0 { ms } else { 0.0 };
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0).min(longest)).await;
    };
    ctx.globals().set("__sleep", Func::from(Async(sleep)))?;
    ctx.globals().set("__args", script_args)?;

    let state = state.clone();
    let at_once = Arc::new(tokio::sync::Semaphore::new(MAX_CALLS_AT_ONCE));
    let raw = move |ctx: rquickjs::Ctx<'js>, tool: String, args: String| {
        let host = host.clone();
        let state = state.clone();
        let main = main.clone();
        let at_once = at_once.clone();
        async move {
            let index = state.call_count.fetch_add(1, Ordering::SeqCst);
            // The prelude measured the argument before it left the sandbox; what pending calls
            // hold outside it is bounded too.
            let held = state.in_flight.fetch_add(args.len(), Ordering::SeqCst) + args.len();
            let held = if index >= max_calls {
                state.hold(
                    serde_json::json!({ "error": format!("the script made more than {max_calls} calls, its limit") }),
                    memory,
                )
            } else if args.len() > MAX_ARGUMENT_BYTES || held > MAX_IN_FLIGHT_BYTES {
                state.hold(serde_json::json!({ "error": format!(
                    "the calls waiting for an answer hold {} bytes of arguments, over the {} MiB a run may hold; await some before making more",
                    held, MAX_IN_FLIGHT_BYTES >> 20
                ) }), memory)
            } else {
                let arguments: serde_json::Value = serde_json::from_str(&args).unwrap_or_default();
                let operation = arguments["operation"].as_str().unwrap_or_default().to_string();
                let call = host.call(index, tool.clone(), arguments);
                let counter = state.clone();
                // On the server's runtime, where the device connections live, once one of the
                // run's turns is free; the answer is counted the moment the tool gives it.
                // Aborted if the run stops waiting for it.
                let work = async move {
                    let _turn = at_once.acquire_owned().await;
                    let started = Instant::now();
                    let result = call.await;
                    let ms = started.elapsed().as_millis() as u64;
                    let ok = result.is_ok();
                    let answer = match result {
                        Ok(value) => serde_json::json!({ "ok": value }),
                        Err(thrown) => thrown.answer(),
                    };
                    let held = counter.hold(answer, memory);
                    (ok && held.bytes > 0, ms, held)
                };
                let mut task = AbortOnDrop(main.spawn(work));
                let (ok, ms, held) = (&mut task.0).await.unwrap_or_else(|e| {
                    let stopped = serde_json::json!({ "error": format!("the tool call was stopped ({e})") });
                    (false, 0, state.hold(stopped, memory))
                });
                state.calls.lock().expect("calls lock").push(CallRecord {
                    index,
                    tool,
                    operation,
                    ms,
                    ok,
                });
                held
            };
            state.in_flight.fetch_sub(args.len(), Ordering::SeqCst);
            state.read(held, &ctx)
        }
    };
    ctx.globals().set("__call", Func::from(Async(raw)))?;
    ctx.eval::<(), _>(prelude(&namespaces))
}

/// Adds to the run's output, up to `cap` chars in all.
fn append(state: &RunState, cap: usize, text: String) {
    let mut out = state.output.lock().expect("output lock");
    if out.chars().count() + text.chars().count() > cap {
        state.output_cut.store(true, Ordering::SeqCst);
        let room = cap.saturating_sub(out.chars().count());
        out.extend(text.chars().take(room));
    } else {
        out.push_str(&text);
    }
}

/// How `console.log` shows a value: strings as they are, everything else as JSON.
fn show(value: &rquickjs::Value) -> String {
    if let Some(s) = value.as_string() {
        return s.to_string().unwrap_or_default();
    }
    let ctx = value.ctx();
    match ctx.json_stringify(value.clone()) {
        Ok(Some(s)) => s.to_string().unwrap_or_default(),
        _ => format!("{value:?}"),
    }
}

/// The error as a person reads it: message and the script line it came from.
fn describe(error: CaughtError) -> String {
    match error {
        CaughtError::Exception(e) => {
            let message = e.message().unwrap_or_default();
            match e.stack().as_deref().and_then(script_position) {
                Some((line, column)) => format!("{message} (line {line}, column {column})"),
                None => message,
            }
        }
        other => other.to_string().trim().to_string(),
    }
}

/// Line and column of the innermost frame in the script itself, `at f (script.js:L:C)`, past
/// frames of the API's own code. The script's first line shares its line with the wrapper's
/// `(async () => { `.
fn script_position(stack: &str) -> Option<(u32, u32)> {
    let marker = format!("{SCRIPT_FILE}:");
    let frame = stack.lines().find(|l| l.contains(&marker))?;
    let at = frame.split(&marker).nth(1)?.trim_end_matches(')');
    let (line, column) = at.split_once(':')?;
    let (line, column): (u32, u32) = (line.parse().ok()?, column.parse().ok()?);
    let column = if line == 1 {
        column.saturating_sub(WRAPPER.len() as u32 - 1).max(1)
    } else {
        column
    };
    Some((line, column))
}

/// Names the limit behind QuickJS's own words for running out of it.
fn name_limit(error: String, limits: &Limits) -> String {
    if error.contains("out of memory") {
        format!(
            "the script ran out of memory: its limit is {} MiB ({error})",
            limits.memory_bytes >> 20
        )
    } else if error.contains("stack overflow") || error.contains("too much recursion") {
        format!(
            "the script overflowed its stack: its limit is {} KiB ({error})",
            limits.stack_bytes >> 10
        )
    } else {
        error
    }
}

fn failed(state: &RunState, error: String) -> Outcome {
    finish(state, Some(error))
}

fn finish(state: &RunState, error: Option<String>) -> Outcome {
    let mut output = state.output.lock().expect("output lock").clone();
    if state.output_cut.load(Ordering::SeqCst) {
        output.push_str("\n…[output cut at its limit]\n");
    }
    let mut calls = state.calls.lock().expect("calls lock").clone();
    calls.sort_by_key(|c| c.index);
    Outcome { output, error, calls }
}

pub mod http;
pub use http::fetch;
#[cfg(test)]
mod tests;
