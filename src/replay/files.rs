//! Files between the host and the device around a replayed flow's run: what its `addMedia`
//! steps add, pushed before the run (a script cannot push a host file), and what it made on the
//! device (Maestro's `takeScreenshot`, `startRecording`), pulled after the run to where Maestro writes them:
//! beside the report (the `--junit` file's folder, else the current folder), under the name the
//! flow gave. The script lists those in the run's `flow-files.json` (`flow::commands`); each is
//! read with `exec:cat`, checked, written, and removed from the device.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::android::text::quote;
use crate::tools::State;

/// One file the script made: the device that holds it, its path there, its name beside the
/// report.
#[derive(Debug, Deserialize)]
struct Made {
    device: String,
    path: String,
    name: String,
}

/// Pushes each host file to its place on the device (`flow::commands::media`): its bytes from
/// the stream into the file, its folder made first.
pub async fn push(state: &State, media: &[crate::flow::commands::Media]) -> anyhow::Result<()> {
    if media.is_empty() {
        return Ok(());
    }
    let serial = state.device(None).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    for (host, device) in media {
        let folder = device.rsplit_once('/').map_or("/sdcard", |(f, _)| f);
        state
            .adb
            .shell(&serial, &format!("mkdir -p {}", quote(folder)))
            .await
            .map_err(|e| anyhow::anyhow!("addMedia: cannot make {folder}: {e}"))?;
        // `head -c SIZE` ends once the file has come: exec's stream has no end-of-input of its own.
        let size = std::fs::metadata(host)
            .map_err(|e| anyhow::anyhow!("addMedia: cannot read {host}: {e}"))?
            .len();
        let command = format!("head -c {size} > {}", quote(device));
        let said = state
            .adb
            .exec(
                &serial,
                &command,
                Some(Path::new(host)),
                state.adb.timeout() * 4,
                &|_| {},
            )
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

/// Pulls every file the run `run` listed; returns the host paths written, and a line per file
/// that could not be (the run's report prints them).
pub async fn pull(state: &State, run: &str, report: Option<&Path>) -> (Vec<PathBuf>, Vec<String>) {
    let Ok(folder) = state.runs.folder() else {
        return (Vec::new(), Vec::new());
    };
    let listed = folder.join("runs").join(run).join(crate::flow::commands::FILES_FILE);
    let made: Vec<Made> = std::fs::read_to_string(listed)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let beside = match report.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (mut written, mut failed) = (Vec::new(), Vec::new());
    for file in made {
        match pull_one(state, &file, &beside).await {
            Ok(path) => written.push(path),
            Err(e) => failed.push(format!("{}: {e}", file.name)),
        }
    }
    (written, failed)
}

async fn pull_one(state: &State, file: &Made, beside: &Path) -> Result<PathBuf, String> {
    // The script wrote the name (checked as the flow was read); checked again, as it came back
    // through a file: plain names, no `..` (an absolute one is written where it says).
    let relative = Path::new(&file.name);
    if relative
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_) | std::path::Component::RootDir))
    {
        return Err("not a plain file name".into());
    }
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
    let path = beside.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    // The device keeps no copy, as Maestro leaves none there.
    let _ = state
        .adb
        .shell(&file.device, &format!("rm -f {}", quote(&file.path)))
        .await;
    Ok(path)
}
