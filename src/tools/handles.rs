//! Handles that outlive an instance (`--state`): the one door between a principal's state and
//! the store instances share (`state::Handles`, by `state::Kind`). Without `--state` each
//! function is this process's own behaviour (the cache, the refs, the run folders, the skills
//! folder) and the store is never asked.
//!
//! - Cache entries: every entry a call made is kept there before the call's answer leaves
//!   (`publish`, from `DroidMcp::dispatch`), so its `cacheId` reads through any instance at
//!   once; an id this instance does not hold is looked up under the caller's principal
//!   (`find`), so another's id answers as a made-up one.
//! - Refs: the store's book of a device is the one book: each reading numbers its elements on
//!   it and writes it back by compare and set, numbering again when another instance wrote
//!   first (`number_refs`); a ref is looked up in it (`refs_in`), so a ref one instance gave
//!   taps through another and never names two elements. The last reading itself (`State::screens`) is not
//!   shared: an instance without one reads the device again (the device is the truth).
//! - Skills: kept in the store, the skills quota counted there as each is saved (`save_skill`,
//!   `state::Handles::put_within`), so it holds across instances; listed from it, and a skill
//!   read from it is copied into this instance's skills folder for the run's `workspace` calls;
//!   removed from it (`remove_skill`), its place freed, and this instance's copy with it (a
//!   copy of a skill another instance removed goes when the skills are listed, and as a run starts).
//! - Recordings: the store's recording of a device is the one recording: taken before a call
//!   that may change it (`recording_in`) and written back by compare and set (`recording_out`),
//!   this call's steps after another instance's when it wrote first. Only steps and which fields
//!   hold a secret are kept there; values typed into those stay with the instance that typed them.
//! - Runs: a run's record (which instance runs it, whether it is still running, how it ended)
//!   and, once it ends, its saved results. A run's live process belongs to the instance running
//!   it; another instance lists it, names that instance, and serves its results once it ended.

use crate::android::ui_elements::Element;
use crate::android::ui_refs::RefBook;
use crate::context::cache::{Cache, parse_id};
use crate::flow::Recording;
use crate::script::runs::RunInfo;
use crate::script::skills::{SkillInfo, no_skill, skill_info, skill_text};
use crate::state::{Bound, Kind};

use super::State;

/// How long a device's ref book (and its recording) is kept after its last reading (change).
const REFS_TTL_MS: u64 = 24 * 3600 * 1000;

/// How often a reading numbers again after another instance's reading changed the book first.
const REFS_ATTEMPTS: usize = 32;

/// Keeps the entries this principal's calls made since the last time in the shared store. A
/// store out of reach does not undo the answer, and this instance still serves the ids: what it
/// could not keep is said (`Err`), for the answer to carry.
pub async fn publish(state: &State) -> Result<(), String> {
    let Some(handles) = &state.handles else {
        return Ok(());
    };
    let mut kept_here = Vec::new();
    let mut why = String::new();
    for entry in state.cache.unpublished() {
        let (json, ttl_ms) = Cache::export(&entry);
        if let Err(e) = handles
            .put(&state.principal, Kind::Cache, &entry.id, &json, Some(ttl_ms))
            .await
        {
            tracing::warn!(id = %entry.id, "a cache entry is served by this instance only: {e}");
            kept_here.push(entry.id.clone());
            why = e.to_string();
        }
    }
    match kept_here.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "note: {} read through this instance only: the store instances share could not keep them ({why})",
            kept_here.join(", ")
        )),
    }
}

/// Brings `id` into this principal's cache from the shared store when another instance made it.
/// A store out of reach is the answer for an id this instance does not hold (`Err`: why, for the
/// caller to say instead of calling the id made up).
pub async fn find(state: &State, id: &str) -> Result<(), String> {
    let Some(handles) = &state.handles else {
        return Ok(());
    };
    if parse_id(id).is_err() || state.cache.peek(id).is_some() {
        return Ok(());
    }
    match handles.get(&state.principal, Kind::Cache, id).await {
        Ok(Some(json)) => {
            state.cache.adopt(id, &json);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(format!(
            "cache id `{}` is not held by this instance, and the store instances share could not be asked for it ({e}); it may have been made through another instance: ask again once the store is back",
            crate::android::text::echoed(id)
        )),
    }
}

/// Takes the shared book of `serial`'s refs as this instance's (another instance may have
/// numbered newer readings). A store out of reach keeps this instance's book.
pub async fn refs_in(state: &State, serial: &str) {
    let Some(handles) = &state.handles else {
        return;
    };
    let device = state.adb.route_name(serial);
    match handles.get(&state.principal, Kind::Refs, &device).await {
        Ok(Some(json)) => match serde_json::from_str(&json) {
            Ok(book) => {
                state
                    .refs
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(serial.to_string(), book);
            }
            Err(e) => tracing::warn!(device, "the shared ref book is unreadable: {e}"),
        },
        Ok(None) => {}
        Err(e) => tracing::warn!(device, "the shared ref book could not be read: {e}"),
    }
}

/// Numbers a reading's elements by `serial`'s book (`RefBook::number`, bounded by its own
/// bounds). With a shared store the store's book is the one book: fetched, numbered, and
/// written back only over the version fetched (`Handles::put_if`); when another instance wrote
/// it meanwhile, fetched and numbered again, so two readings at once never give one number to
/// two elements. A store out of reach numbers by this instance's book.
pub async fn number_refs(state: &State, serial: &str, elements: &mut [Element]) -> Result<(), String> {
    let Some(handles) = &state.handles else {
        state.number_refs(serial, elements);
        return Ok(());
    };
    let device = state.adb.route_name(serial);
    for _ in 0..REFS_ATTEMPTS {
        let fetched = match handles.fetch(&state.principal, Kind::Refs, &device).await {
            Ok(fetched) => fetched,
            Err(e) => {
                tracing::warn!(device, "refs from this reading tap through this instance only: {e}");
                state.number_refs(serial, elements);
                return Ok(());
            }
        };
        let mut book: RefBook = match &fetched {
            Some(kept) => serde_json::from_str(&kept.value).unwrap_or_else(|e| {
                tracing::warn!(device, "the shared ref book is unreadable, numbering anew: {e}");
                RefBook::default()
            }),
            None => state.ref_book(serial),
        };
        book.number(elements);
        let json = serde_json::to_string(&book).map_err(|e| e.to_string())?;
        let version = fetched.as_ref().map(|k| k.version.as_str());
        match handles
            .put_if(&state.principal, Kind::Refs, &device, version, &json, Some(REFS_TTL_MS))
            .await
        {
            Ok(true) => {
                state.set_ref_book(serial, book);
                return Ok(());
            }
            // Another instance numbered a reading of this device meanwhile: number on its book.
            Ok(false) => tokio::task::yield_now().await,
            Err(e) => {
                tracing::warn!(device, "refs from this reading tap through this instance only: {e}");
                state.set_ref_book(serial, book);
                return Ok(());
            }
        }
    }
    Err(format!(
        "this device's refs changed under this reading {REFS_ATTEMPTS} times (other readings of it, through other instances, at the same moment); nothing was numbered: read the screen again"
    ))
}

/// Saves a skill: in the shared store (the quota counted there, across instances) and this
/// instance's folder; without one, the folder alone (its quota counted there).
pub async fn save_skill(state: &State, name: &str, code: &str, description: &str) -> Result<SkillInfo, String> {
    let Some(handles) = &state.handles else {
        return state.runs.save_skill(name, code, description);
    };
    let text = skill_text(name, code, description)?;
    let limits = state.runs.limits();
    let bound = Bound {
        items: limits.max_skills,
        bytes: limits.skills_bytes,
    };
    match handles
        .put_within(&state.principal, Kind::Skill, name, &text, bound)
        .await
    {
        Ok(Ok(())) => state.runs.adopt_skill(name, &text),
        Ok(Err(full)) => Err(format!(
            "{} (counted across every instance sharing --state)",
            state.runs.skills_full(full.items, full.bytes)
        )),
        Err(e) => Err(format!("the skill was not saved: {e}")),
    }
}

/// This principal's saved skills, by name. With a shared store, this instance's copies of
/// skills removed through another instance are removed here too (a run reads the folder).
pub async fn skills(state: &State) -> Result<Vec<SkillInfo>, String> {
    let Some(handles) = &state.handles else {
        return Ok(state.runs.skills());
    };
    let kept = handles
        .list(&state.principal, Kind::Skill)
        .await
        .map_err(|e| e.to_string())?;
    for copy in state.runs.skills() {
        if !kept.iter().any(|(name, _)| *name == copy.name) {
            let _ = state.runs.remove_skill(&copy.name);
        }
    }
    Ok(kept.iter().filter_map(|(name, text)| skill_info(name, text)).collect())
}

/// Removes a saved skill: from the shared store (every instance, its place in the quota freed)
/// and this instance's folder; without one, from the folder.
pub async fn remove_skill(state: &State, name: &str) -> Result<(), String> {
    let mut removed = state.runs.remove_skill(name)?;
    if let Some(handles) = &state.handles {
        removed = handles
            .remove(&state.principal, Kind::Skill, name)
            .await
            .map_err(|e| format!("the skill was not removed: {e}"))?;
    }
    if removed {
        return Ok(());
    }
    let known: Vec<String> = skills(state).await?.into_iter().map(|s| s.name).collect();
    Err(no_skill(name, &known))
}

/// A skill's code, from the shared store when there is one (copied into this instance's
/// folder, where a run's `workspace` calls read it).
pub async fn skill(state: &State, name: &str) -> Result<String, String> {
    let Some(handles) = &state.handles else {
        return state.runs.skill(name);
    };
    match handles.get(&state.principal, Kind::Skill, name).await {
        Ok(Some(text)) => {
            state.runs.adopt_skill(name, &text)?;
            Ok(text)
        }
        Ok(None) => {
            // Removed through another instance: this instance's copy goes too.
            let _ = state.runs.remove_skill(name);
            let known: Vec<String> = skills(state).await?.into_iter().map(|s| s.name).collect();
            Err(no_skill(name, &known))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A device's recording as this instance took it from the shared store, to write it back over.
pub struct RecordingBase {
    /// The version fetched (`None`: the store held none).
    version: Option<String>,
    /// What was fetched (or this instance's, when the store held none), as JSON: unchanged,
    /// nothing is written back.
    json: String,
    /// Its steps in all (`Recording::total`).
    total: usize,
}

/// Takes the shared recording of `serial` as this instance's, before a call that may change it
/// (an acting call records, a reading gives the newest step its outcome): `None` without a
/// store, or when it is out of reach (this instance records on its own).
pub async fn recording_in(state: &State, serial: &str) -> Option<RecordingBase> {
    let handles = state.handles.as_ref()?;
    let device = state.adb.route_name(serial);
    let fetched = match handles.fetch(&state.principal, Kind::Recording, &device).await {
        Ok(fetched) => fetched,
        Err(e) => {
            tracing::warn!(device, "this device's recording is this instance's only: {e}");
            return None;
        }
    };
    let recording = match &fetched {
        Some(kept) => match serde_json::from_str::<Recording>(&kept.value) {
            Ok(recording) => recording,
            Err(e) => {
                tracing::warn!(device, "the shared recording is unreadable, recording anew: {e}");
                Recording::default()
            }
        },
        None => state.flows.get(serial),
    };
    let base = RecordingBase {
        version: fetched.as_ref().map(|k| k.version.clone()),
        json: fetched.map_or_else(|| serde_json::to_string(&recording).unwrap_or_default(), |k| k.value),
        total: recording.total(),
    };
    state.flows.put(serial, recording);
    Some(base)
}

/// Writes this instance's recording of `serial` back over `base` by compare and set, when the
/// call changed it; when another instance wrote it meanwhile, this call's steps go after theirs
/// (`Recording::onto`) and are written again. Only steps and which fields hold a secret are
/// written: a value typed into one never is (it is typed as `${NAME}`).
pub async fn recording_out(state: &State, serial: &str, base: Option<RecordingBase>) {
    let (Some(handles), Some(mut base)) = (&state.handles, base) else {
        return;
    };
    let device = state.adb.route_name(serial);
    let mut recording = state.flows.get(serial);
    for _ in 0..REFS_ATTEMPTS {
        let json = match serde_json::to_string(&recording) {
            Ok(json) => json,
            Err(e) => {
                tracing::warn!(device, "this recording is this instance's only: {e}");
                return;
            }
        };
        if json == base.json {
            return;
        }
        match handles
            .put_if(
                &state.principal,
                Kind::Recording,
                &device,
                base.version.as_deref(),
                &json,
                Some(REFS_TTL_MS),
            )
            .await
        {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(device, "this call's steps are recorded by this instance only: {e}");
                return;
            }
        }
        // Another instance recorded on this device meanwhile: this call's steps after theirs.
        let Ok(Some(kept)) = handles.fetch(&state.principal, Kind::Recording, &device).await else {
            continue;
        };
        let Ok(theirs) = serde_json::from_str::<Recording>(&kept.value) else {
            return;
        };
        let total = theirs.total();
        recording = recording.onto(base.total, theirs);
        base = RecordingBase {
            version: Some(kept.version),
            json: kept.value,
            total,
        };
        state.flows.put(serial, recording.clone());
    }
    tracing::warn!(
        device,
        "this call's steps are recorded by this instance only: the recording kept changing"
    );
}

/// A run's record in the shared store.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Record {
    instance: String,
    running: bool,
    files: usize,
    bytes: u64,
}

/// This instance, as another names it.
fn instance() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into());
    format!("pid {} on {host}", std::process::id())
}

fn run_ttl_ms(state: &State) -> u64 {
    u64::try_from(state.runs.limits().ttl.as_millis()).unwrap_or(u64::MAX)
}

async fn put_record(state: &State, id: &str, record: &Record) {
    let Some(handles) = &state.handles else {
        return;
    };
    let Ok(json) = serde_json::to_string(record) else {
        return;
    };
    if let Err(e) = handles
        .put(&state.principal, Kind::Run, id, &json, Some(run_ttl_ms(state)))
        .await
    {
        tracing::warn!(id, "this run is known to this instance only: {e}");
    }
}

/// A run started here: other instances list it as running here.
pub async fn run_started(state: &State, id: &str) {
    let record = Record {
        instance: instance(),
        running: true,
        files: 0,
        bytes: 0,
    };
    put_record(state, id, &record).await;
}

/// A run ended here: its saved results (`results/…`, bounded by the run's quota) and its record.
pub async fn run_ended(state: &State, run: &crate::script::runs::Run) {
    let Some(handles) = &state.handles else {
        return;
    };
    let results = run.list(Some("results")).unwrap_or_default();
    let (mut files, mut bytes) = (0, 0);
    for (path, size) in &results {
        let Ok(text) = run.read(path) else { continue };
        let id = format!("{}/{path}", run.id);
        match handles
            .put(&state.principal, Kind::RunResult, &id, &text, Some(run_ttl_ms(state)))
            .await
        {
            Ok(()) => (files, bytes) = (files + 1, bytes + size),
            Err(e) => tracing::warn!(id, "a run's result is served by this instance only: {e}"),
        }
    }
    let record = Record {
        instance: instance(),
        running: false,
        files,
        bytes,
    };
    put_record(state, &run.id, &record).await;
}

async fn record(state: &State, id: &str) -> Option<Record> {
    let handles = state.handles.as_ref()?;
    let json = handles.get(&state.principal, Kind::Run, id).await.ok()??;
    serde_json::from_str(&json).ok()
}

/// This principal's runs: this instance's folders, then the ones other instances ran (named).
pub async fn runs(state: &State) -> Vec<RunInfo> {
    let mut runs = state.runs.list();
    let Some(handles) = &state.handles else {
        return runs;
    };
    let kept = handles.list(&state.principal, Kind::Run).await.unwrap_or_default();
    let ttl = state.runs.limits().ttl;
    for (id, json) in kept {
        if runs.iter().any(|r| r.id == id) {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Record>(&json) else {
            continue;
        };
        let age = ulid::Ulid::from_string(&id)
            .ok()
            .and_then(|u| std::time::SystemTime::now().duration_since(u.datetime()).ok())
            .unwrap_or_default();
        runs.push(RunInfo {
            id,
            files: record.files,
            bytes: record.bytes,
            age_s: age.as_secs(),
            expires_in_s: ttl.saturating_sub(age).as_secs(),
            running: record.running,
            instance: Some(record.instance),
        });
    }
    runs.sort_by(|a, b| a.id.cmp(&b.id));
    runs
}

/// A run's saved result (`RUNID/results/FILE`): from this instance's folder, else the store;
/// a run still running on another instance is named as such, never an unknown id.
pub async fn run_result(state: &State, reference: &str) -> Result<String, String> {
    let local = state.runs.read_result(reference);
    let (Err(why), Some(handles)) = (&local, &state.handles) else {
        return local;
    };
    if let Ok(Some(text)) = handles.get(&state.principal, Kind::RunResult, reference).await {
        return Ok(text);
    }
    let id = reference.split('/').next().unwrap_or_default();
    match record(state, id).await {
        Some(r) if r.running => Err(format!(
            "run {id} is still running on another instance ({}); its results are shared when it ends: ask again then",
            r.instance
        )),
        Some(r) => {
            let prefix = format!("{id}/");
            let kept = handles
                .list(&state.principal, Kind::RunResult)
                .await
                .unwrap_or_default();
            let saved: Vec<&str> = kept.iter().filter_map(|(r, _)| r.strip_prefix(&prefix)).collect();
            Err(format!(
                "run {id} ran on another instance ({}) and saved no {reference:?}; its saved results: {}",
                r.instance,
                if saved.is_empty() {
                    "none".to_string()
                } else {
                    saved.join(", ")
                }
            ))
        }
        None => Err(why.clone()),
    }
}

/// Clears a run: this instance's folder and the shared record and results. A run running on
/// another instance is refused, naming it.
pub async fn clear_run(state: &State, id: &str) -> Result<(), String> {
    let local = state.runs.clear(id);
    let Some(handles) = &state.handles else {
        return local;
    };
    let shared = record(state, id).await;
    match (&local, &shared) {
        (Err(why), Some(r)) if r.instance == instance() => return Err(why.clone()),
        (Err(_), Some(r)) if r.running => {
            return Err(format!(
                "run {id} is still running on another instance ({}); clear it once it ends",
                r.instance
            ));
        }
        (Err(why), None) => return Err(why.clone()),
        _ => {}
    }
    let prefix = format!("{id}/");
    let results = handles
        .list(&state.principal, Kind::RunResult)
        .await
        .map_err(|e| e.to_string())?;
    for (reference, _) in results.iter().filter(|(r, _)| r.starts_with(&prefix)) {
        handles
            .remove(&state.principal, Kind::RunResult, reference)
            .await
            .map_err(|e| e.to_string())?;
    }
    handles
        .remove(&state.principal, Kind::Run, id)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}
