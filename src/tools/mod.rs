//! One file per MCP tool: its wire arguments become a typed command (`command.rs`, one parse for
//! every tool), which is applied against the device layer, and the answer shaped through the
//! budget; `registry.rs` is the one list of them. What they share (the device layer, the cache, the selected device, the poll loop of
//! every wait in `poll.rs`) is here.

pub mod app;
pub mod cache;
pub mod command;
pub mod device;
pub mod flow;
pub mod handles;
pub mod leases;
pub mod logcat;
pub mod poll;
pub mod registry;
pub mod script;
pub mod shell;
pub mod ui;

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

use rmcp::model::{CallToolResult, ContentBlock};

use crate::adb::{Adb, AdbError};
use crate::context::Cache;

/// The field check the device panel's own tool calls (a tool's way in is `command::parse`).
pub use command::check_fields;

/// The principal of stdio and of an HTTP server that takes no token.
pub const LOCAL_PRINCIPAL: &str = "local";

/// Everything a tool call can reach. One per server.
#[derive(Debug)]
pub struct State {
    /// Shared by every session of a server (one connection pool per device source).
    pub adb: std::sync::Arc<Adb>,
    pub cache: Cache,
    /// Response budget in chars.
    pub budget: usize,
    /// The session's default device: `--device`, `ANDROID_SERIAL`, or `adb-device select`.
    pub selected: RwLock<Option<String>>,
    /// The cache id of the last package list per (serial, kind), so a repeated list is served
    /// from the cache until its TTL or an install/uninstall.
    pub package_lists: Mutex<HashMap<(String, String), String>>,
    /// The newest log timestamp each device's last `adb-logcat read` saw.
    pub log_reads: Mutex<HashMap<String, String>>,
    /// Commands adb-shell refuses (`--shell-deny`).
    pub shell_deny: shell::DenyList,
    /// Each device's last screen reading (for refs and `observe`) and screenshot geometry.
    pub screens: Mutex<HashMap<String, ui::Snapshot>>,
    pub shots: Mutex<HashMap<String, ui::Shot>>,
    /// Each device's display size (`wm size`, natural orientation), read once.
    displays: std::sync::Arc<Mutex<HashMap<String, [u32; 2]>>>,
    /// Each device's input devices (`getevent -lp`, probed once: `ui/input.rs`).
    inputs: std::sync::Arc<Mutex<HashMap<String, ui::Inputs>>>,
    /// The acting calls on every device, by every principal (`State::acting`): whether a
    /// reading is still the screen (`ui/resolve.rs`'s `aim_reading`).
    acts: std::sync::Arc<Mutex<Acts>>,
    /// Each device's refs: element identities and their numbers, across readings.
    pub refs: Mutex<HashMap<String, crate::android::ui_refs::RefBook>>,
    /// One turn per device for calls that must not overlap on it (input, screenshots).
    /// Shared by every session: a device's input is ordered whoever sends it.
    turns: std::sync::Arc<Mutex<HashMap<String, std::sync::Arc<TurnLock>>>>,
    /// Script runs' workspaces and the saved skills (a private temp folder unless `--workspace`).
    pub runs: std::sync::Arc<crate::script::runs::Runs>,
    /// Where `adb-app install` may read APKs from when installs are confined: `--workspace` and
    /// each `--install-dir`, resolved (links followed) at start.
    pub install_dirs: std::sync::Arc<Vec<std::path::PathBuf>>,
    /// Whether this session's installs are confined to `install_dirs` (every HTTP session; a
    /// script's calls always are). A stdio session installs the user's own files from anywhere.
    pub confined_installs: bool,
    /// Whether `adb-device emulator` may send commands that stop or reset the emulator.
    pub emulator_admin: bool,
    /// The environment variables `adb-device unlock {pinEnv}` may read (`--pin-env`): a call
    /// names one, never any variable of the server's.
    pub pin_envs: std::sync::Arc<Vec<String>>,
    /// Long calls run as MCP tasks (for clients that take them), found by their task id.
    pub tasks: Tasks,
    /// Each device's acting calls that succeeded, as flow steps (`flow export`).
    pub flows: crate::flow::Recordings,
    /// Whose state this is: the token's name over HTTP, `local` on stdio or without tokens.
    /// What it stores on disk goes in a folder of its own (flow exports).
    pub principal: std::sync::Arc<str>,
    /// Every device lease, shared by every principal (`leases.rs`, the one door for who may act).
    pub leases: std::sync::Arc<dyn crate::state::Leases>,
    /// Where cache entries are kept for other instances (`--state`; `handles.rs`, the one door).
    pub handles: Option<std::sync::Arc<dyn crate::state::Handles>>,
}

/// The principal's MCP tasks (rmcp's manager: spawn, tasks/get, tasks/cancel, TTL).
#[derive(Clone, Default)]
pub struct Tasks(pub rmcp::task_manager::TaskManager);

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tasks")
    }
}

/// A device's turn: the lock, and what holds it now (for the calls waiting behind it).
#[derive(Debug, Default)]
pub struct TurnLock {
    lock: std::sync::Arc<tokio::sync::Mutex<()>>,
    holder: Mutex<String>,
}

/// The acting calls so far, on any device: how many started, and how many are running now.
/// Counted across devices, not per route: one phone reached by two routes (two adb servers, or
/// one and a direct connection) has two names here, and an acting call through either must
/// stop a reading taken through the other from aiming a tap.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Acts {
    pub started: u64,
    pub running: u32,
}

/// An acting call, counted from its start until dropped.
pub struct Acting {
    acts: std::sync::Arc<Mutex<Acts>>,
}

impl Drop for Acting {
    fn drop(&mut self) {
        let mut acts = self.acts.lock().unwrap_or_else(|p| p.into_inner());
        acts.running = acts.running.saturating_sub(1);
    }
}

/// A device's turn, held until dropped.
pub struct Turn {
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

/// How long a call waits for a device's turn before it is refused.
pub const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl State {
    pub fn new(adb: Adb, cache: Cache, budget: usize, selected: Option<String>) -> State {
        State::sharing(std::sync::Arc::new(adb), cache, budget, selected)
    }

    /// A state on `adb` whose every per-session part starts empty (the one place that lists them).
    fn sharing(adb: std::sync::Arc<Adb>, cache: Cache, budget: usize, selected: Option<String>) -> State {
        State {
            adb,
            cache,
            budget,
            selected: RwLock::new(selected),
            package_lists: Mutex::new(HashMap::new()),
            log_reads: Mutex::new(HashMap::new()),
            shell_deny: shell::DenyList::new(&shell::DenyList::DEFAULT),
            screens: Mutex::new(HashMap::new()),
            shots: Mutex::new(HashMap::new()),
            turns: Default::default(),
            refs: Mutex::new(HashMap::new()),
            displays: Default::default(),
            inputs: Default::default(),
            acts: Default::default(),
            runs: std::sync::Arc::new(crate::script::runs::Runs::new(None, Default::default())),
            install_dirs: Default::default(),
            confined_installs: false,
            emulator_admin: false,
            pin_envs: Default::default(),
            tasks: Default::default(),
            flows: Default::default(),
            principal: LOCAL_PRINCIPAL.into(),
            leases: std::sync::Arc::new(crate::state::InProcess::new(std::sync::Arc::new(
                crate::state::SystemClock,
            ))),
            handles: None,
        }
    }

    /// A principal's state (HTTP): the devices, their connections, turns and display sizes, and
    /// the server's settings are shared; the default device, the cache, the screens and refs,
    /// the recordings, the tasks, the script runs and the skills are the principal's own, so one
    /// can never read, list or overwrite another's (docs/http.md lists them).
    pub fn session(&self, principal: &str) -> State {
        let cache = self.cache.empty_like().in_principal_folder(principal);
        let mut session = State::sharing(self.adb.clone(), cache, self.budget, self.selected());
        session.shell_deny = self.shell_deny.clone();
        session.turns = self.turns.clone();
        session.leases = self.leases.clone();
        session.handles = self.handles.clone();
        session.displays = self.displays.clone();
        session.inputs = self.inputs.clone();
        session.acts = self.acts.clone();
        session.runs = std::sync::Arc::new(self.runs.for_principal(principal));
        session.install_dirs = self.install_dirs.clone();
        session.confined_installs = true;
        session.emulator_admin = self.emulator_admin;
        session.pin_envs = self.pin_envs.clone();
        session.principal = principal.into();
        if tokio::runtime::Handle::try_current().is_ok() {
            session.runs.sweep_on_a_timer();
        }
        session
    }

    /// The device's display size in its natural orientation (`wm size`, the override if set),
    /// read once per device: the screen, for off-screen checks, grid cells and swipe centres, is
    /// the display, never a window's bounds (a dialog's dump is smaller than the screen).
    pub async fn display(&self, serial: &str) -> Result<[u32; 2], String> {
        if let Some(size) = self.displays.lock().unwrap_or_else(|p| p.into_inner()).get(serial) {
            return Ok(*size);
        }
        let out = self.adb.shell(serial, "wm size").await.map_err(|e| e.to_string())?;
        let (w, h) = crate::android::device_state::parse_wm_size(&out.stdout_text()).ok_or_else(|| {
            format!(
                "could not read the screen size: `wm size` said {:?}",
                out.stdout_text().trim()
            )
        })?;
        self.displays
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), [w, h]);
        Ok([w, h])
    }

    /// The app in front, read in one place for every tool: the resumed activity from
    /// `dumpsys activity activities`, reconciled with the app whose window is on the screen when
    /// the caller knows it (see `android::activity::focus_for_screen`).
    pub async fn focused_app(
        &self,
        serial: &str,
        screen_package: Option<&str>,
    ) -> Result<Option<crate::android::activity::Focus>, AdbError> {
        let out = self.adb.shell(serial, "dumpsys activity activities").await?;
        Ok(crate::android::activity::focus_for_screen(
            &out.stdout_text(),
            screen_package,
        ))
    }

    /// Numbers a reading's elements with the device's refs (see `android::ui_refs`).
    pub fn number_refs(&self, serial: &str, elements: &mut [crate::android::ui_elements::Element]) {
        self.refs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(serial.to_string())
            .or_default()
            .number(elements);
    }

    /// A copy of this device's book (empty when no reading numbered one yet).
    pub fn ref_book(&self, serial: &str) -> crate::android::ui_refs::RefBook {
        let books = self.refs.lock().unwrap_or_else(|p| p.into_inner());
        books.get(serial).cloned().unwrap_or_default()
    }

    /// Takes `book` as this device's (the shared store's, numbered by a reading).
    pub fn set_ref_book(&self, serial: &str, book: crate::android::ui_refs::RefBook) {
        let mut books = self.refs.lock().unwrap_or_else(|p| p.into_inner());
        books.insert(serial.to_string(), book);
    }

    /// Whether this device's book ever handed out `reference`.
    pub fn knows_ref(&self, serial: &str, reference: &str) -> bool {
        self.refs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(serial)
            .is_some_and(|book| book.knows(reference))
    }

    /// Waits for this device's turn, at most `TURN_WAIT`; held until the guard drops (a cancel
    /// drops it too). `what` names this call to the ones that wait behind it. The wait is counted
    /// apart from the call's own time (`adb::queue`).
    pub async fn device_turn(&self, serial: &str, what: &str) -> Result<Turn, String> {
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(serial.to_string())
            .or_default()
            .clone();
        let started = std::time::Instant::now();
        let held = crate::adb::queue::waited(tokio::time::timeout(TURN_WAIT, turn.lock.clone().lock_owned())).await;
        let waited = started.elapsed();
        let Ok(guard) = held else {
            let holder = turn.holder.lock().unwrap_or_else(|p| p.into_inner()).clone();
            return Err(format!(
                "waited {} ms for another call on this device ({holder}) to finish; nothing was done. Try again when it has, or cancel it",
                waited.as_millis()
            ));
        };
        *turn.holder.lock().unwrap_or_else(|p| p.into_inner()) = what.to_string();
        Ok(Turn { _guard: guard })
    }

    /// Counts an acting call (any principal's, any tool's, on any device: `registry::built`,
    /// the one place) until the guard drops.
    pub fn acting(&self) -> Acting {
        let mut acts = self.acts.lock().unwrap_or_else(|p| p.into_inner());
        acts.started += 1;
        acts.running += 1;
        Acting {
            acts: self.acts.clone(),
        }
    }

    /// The acting calls so far.
    pub fn acting_calls(&self) -> Acts {
        *self.acts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device's input devices, as probed (`ui/input.rs`).
    pub(crate) fn inputs(&self, serial: &str) -> Option<ui::Inputs> {
        self.inputs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(serial)
            .cloned()
    }

    pub(crate) fn remember_inputs(&self, serial: &str, inputs: ui::Inputs) {
        self.inputs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), inputs);
    }

    pub fn screen(&self, serial: &str) -> Option<ui::Snapshot> {
        self.screens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(serial)
            .cloned()
    }

    pub fn remember_screen(&self, serial: &str, snapshot: ui::Snapshot) {
        self.screens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), snapshot);
    }

    pub fn shot(&self, serial: &str) -> Option<ui::Shot> {
        self.shots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(serial)
            .copied()
    }

    pub fn remember_shot(&self, serial: &str, shot: ui::Shot) {
        self.shots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), shot);
    }

    pub fn last_log_read(&self, serial: &str) -> Option<String> {
        self.log_reads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(serial)
            .cloned()
    }

    pub fn remember_log_read(&self, serial: &str, newest: String) {
        self.log_reads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), newest);
    }

    /// After an install or uninstall, the device's package lists are stale.
    pub fn forget_package_lists(&self, serial: &str) {
        self.package_lists
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(s, _), _| s != serial);
    }

    pub fn selected(&self) -> Option<String> {
        self.selected.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn select(&self, serial: Option<String>) {
        *self.selected.write().unwrap_or_else(|p| p.into_inner()) = serial;
    }

    /// The device for a call: the one named, else the selected one, else the only one online.
    pub async fn device(&self, requested: Option<&str>) -> Result<String, AdbError> {
        let selected = self.selected();
        self.adb.resolve(requested.or(selected.as_deref())).await
    }
}

/// A tool-level error: `isError: true` with a message that says what to do. The server goes on.
pub fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// A tool error a caller steers by, beside its message: a replay waits for an element that is
/// not there yet, and never repeats an act that failed on the device (issue 43).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The element is not on the screen (yet): nothing was done on the device.
    NotFound,
}

impl ErrorKind {
    /// The kind's machine-readable code: the result's `_meta["droidmcp/code"]`, a script's `e.code`.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
        }
    }
}

/// Where an error result carries its kind's code.
pub const CODE_META: &str = "droidmcp/code";

/// `error` of a kind: its code in the result's `_meta` (structuredContent stays the tool's
/// answer schema's alone), the message unchanged.
pub fn error_of(message: impl Into<String>, kind: Option<ErrorKind>) -> CallToolResult {
    let mut result = error(message);
    if let Some(kind) = kind {
        let mut meta = rmcp::model::JsonObject::new();
        meta.insert(CODE_META.into(), kind.code().into());
        result.meta = Some(rmcp::model::MetaObject(meta));
    }
    result
}

/// The code an error result carries (`error_of`), for code mode's host.
pub fn code_of(result: &CallToolResult) -> Option<String> {
    let meta = result.meta.as_ref()?;
    meta.0.get(CODE_META)?.as_str().map(str::to_string)
}
