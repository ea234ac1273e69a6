//! Files between the host and the device around a replayed flow's run: what its `addMedia`
//! steps add, pushed before the run (a script cannot push a host file), and what it made on the
//! device (Maestro's `takeScreenshot`, `startRecording`), pulled after the run to where Maestro writes them:
//! beside the report (the `--junit` file's folder, else the current folder), under the name the
//! flow gave, through the one door (`crate::confine`): a path of plain names inside that folder,
//! no link followed. The script lists those in the run's `flow-files.json` (`flow::commands`);
//! each is read with `exec:cat`, checked, written, and removed from the device.

use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::android::text::quote;
use crate::confine::Folder;
use crate::flow::commands::Media;
use crate::tools::State;

/// One file the script made: the device that holds it, its path there, its name beside the
/// report.
#[derive(Debug, Deserialize)]
struct Made {
    device: String,
    path: String,
    name: String,
}

/// Pushes each host file to its place on the device (`flow::commands::media`): opened through
/// the one door in the flow's folder (no link followed), checked again by its first bytes, and
/// that same open file streamed into the device's, its folder made first.
pub async fn push(state: &State, media: &[crate::flow::commands::Media]) -> anyhow::Result<()> {
    if media.is_empty() {
        return Ok(());
    }
    let serial = state.device(None).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    for Media { folder, file, device } in media {
        let host = file;
        let parts = crate::confine::inside(file).map_err(|e| anyhow::anyhow!("addMedia: {e}"))?;
        let (mut input, size) = Folder::chosen(Path::new(folder))
            .and_then(|beside| beside.open_existing(&parts))
            .map_err(|e| anyhow::anyhow!("addMedia: cannot read {host}: {e}"))?;
        crate::flow::commands::check_media(host, &mut input).map_err(|e| anyhow::anyhow!("addMedia: {e}"))?;
        input
            .seek(SeekFrom::Start(0))
            .map_err(|e| anyhow::anyhow!("addMedia: cannot read {host}: {e}"))?;
        let folder = device.rsplit_once('/').map_or("/sdcard", |(f, _)| f);
        state
            .adb
            .shell(&serial, &format!("mkdir -p {}", quote(folder)))
            .await
            .map_err(|e| anyhow::anyhow!("addMedia: cannot make {folder}: {e}"))?;
        // `head -c SIZE` ends once the file has come: exec's stream has no end-of-input of its own.
        let command = format!("head -c {size} > {}", quote(device));
        let said = state
            .adb
            .exec_file(&serial, &command, input, state.adb.timeout() * 4, &|_| {})
            .await
            .map_err(|e| anyhow::anyhow!("addMedia: cannot push {host} to {device}: {e}"))?;
        if !said.is_empty() {
            anyhow::bail!(
                "addMedia: cannot push {host} to {device}: {}",
                crate::android::text::echoed(&String::from_utf8_lossy(&said))
            );
        }
    }
    Ok(())
}

/// The name a pulled file is written under (`output::Outputs::name_made_file`), and why when not its own.
pub type Claim<'a> = dyn Fn(Vec<String>) -> (Vec<String>, Option<String>) + Send + Sync + 'a;

/// Pulls every file the run `run` listed into `beside` (the report's folder), each under the
/// name `claim` gives; returns the host paths written, a line per file that could not be (the
/// run's report prints them), and a line per file written under another name.
pub async fn pull(
    state: &State,
    run: &str,
    beside: Result<Folder, String>,
    claim: &Claim<'_>,
) -> (Vec<PathBuf>, Vec<String>, Vec<String>) {
    let mut made: Vec<Made> = state
        .runs
        .read_run_file(run, crate::flow::commands::FILES_FILE)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let (mut written, mut failed, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    // A name the flow took twice is one file on the device, holding the later screenshot (as
    // Maestro's later one replaces the earlier): pulled once, under the later entry's name.
    let mut later: std::collections::HashMap<(String, String), String> = Default::default();
    made.reverse();
    made.retain(|file| match later.get(&(file.device.clone(), file.path.clone())) {
        None => {
            later.insert((file.device.clone(), file.path.clone()), file.name.clone());
            true
        }
        Some(name) => {
            if *name != file.name {
                notes.push(format!(
                    "{} was replaced on the device by {} before it was pulled (both are {} there)",
                    crate::android::text::echoed(&file.name),
                    crate::android::text::echoed(name),
                    file.path
                ));
            }
            false
        }
    });
    made.reverse();
    for file in made {
        let pulled = match &beside {
            Ok(beside) => pull_one(state, &file, beside, claim).await,
            Err(e) => Err(e.clone()),
        };
        match pulled {
            Ok((path, note)) => {
                written.push(path);
                notes.extend(note);
            }
            Err(e) => failed.push(format!("{}: {e}", crate::android::text::echoed(&file.name))),
        }
    }
    (written, failed, notes)
}

async fn pull_one(
    state: &State,
    file: &Made,
    beside: &Folder,
    claim: &Claim<'_>,
) -> Result<(PathBuf, Option<String>), String> {
    let pulled = copy(state, file, beside, claim).await;
    // The device keeps no copy, pulled or not, as Maestro leaves none there.
    let _ = state
        .adb
        .shell(&file.device, &format!("rm -f {}", quote(&file.path)))
        .await;
    pulled
}

async fn copy(
    state: &State,
    file: &Made,
    beside: &Folder,
    claim: &Claim<'_>,
) -> Result<(PathBuf, Option<String>), String> {
    // The name came back through a file the script wrote (a `${…}` in it made as the step ran):
    // checked before the device is asked, and again by the door as it is written.
    let parts = crate::confine::relative(&file.name)?;
    let bytes = state
        .adb
        .exec(
            &file.device,
            &format!("cat {}", quote(&file.path)),
            None,
            state.adb.timeout(),
            &|_| {},
        )
        .await
        .map_err(|e| format!("cannot read {} on the device: {e}", file.path))?;
    let png = file.name.ends_with(".png") && bytes.starts_with(b"\x89PNG");
    let mp4 = file.name.ends_with(".mp4") && bytes.get(4..8) == Some(b"ftyp".as_slice());
    if !png && !mp4 {
        return Err(format!(
            "{} on the device is no PNG or MP4: {}",
            file.path,
            crate::android::text::echoed(&String::from_utf8_lossy(&bytes[..bytes.len().min(200)]))
        ));
    }
    // Claimed once read, so that a file that could not be read takes no name.
    let (parts, note) = claim(parts);
    beside.write(&parts, &bytes).map(|path| (path, note))
}
