//! `adb-app install`: the APK streams from disk over `exec:cmd package install -S SIZE` in
//! chunks, with progress; the installed package is the one whose APK path is new.

use super::{
    AppOutput, Duration, HashSet, Install, MAX_APK_BYTES, Outcome, RequestContext, RoleServer, State, adb_error,
    output, parse_package_dump, parse_package_list, quote,
};

/// Where this call may read an APK from. A stdio session installs the user's own files from
/// anywhere; a script's call and an HTTP session only from under `--workspace` or an
/// `--install-dir` (links followed first), with one refusal whether the path exists or not, so
/// that it tells a remote client or a script nothing about the host's files.
fn confined(state: &State, path: &std::path::Path) -> Result<std::path::PathBuf, String> {
    if !state.confined_installs && !crate::context::budget::in_script_call() {
        return Ok(path.to_path_buf());
    }
    let refused = || {
        let dirs: Vec<String> = state.install_dirs.iter().map(|d| d.display().to_string()).collect();
        format!(
            "`path` {} is not under an install folder: a script or an HTTP client installs APKs only from {}; put the APK there",
            shown(path),
            if dirs.is_empty() {
                "--workspace or an --install-dir, and this server was given none".to_string()
            } else {
                dirs.join(", ")
            }
        )
    };
    crate::confine::within(path, &state.install_dirs).ok_or_else(refused)
}

pub(super) async fn install(state: &State, serial: &str, args: &Install, ctx: &RequestContext<RoleServer>) -> Outcome {
    let path = std::path::Path::new(&args.path);
    if !path.is_absolute() {
        return Err(format!(
            "`path` {} is not an absolute path; the server's working directory is not yours, so give the whole path",
            shown(path)
        ));
    }
    let resolved = confined(state, path)?;
    let path = resolved.as_path();
    let unreadable = |e: std::io::Error| format!("cannot read `path` {}: {e}", shown(path));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() || meta.len() == 0 || meta.len() > MAX_APK_BYTES {
        return Err(format!(
            "`path` {} is not an APK file (size {} bytes)",
            shown(path),
            meta.len()
        ));
    }
    // Only the zip magic is read here; the upload streams the file from disk in chunks.
    let mut magic = [0u8; 4];
    std::io::Read::read_exact(&mut std::fs::File::open(path).map_err(unreadable)?, &mut magic).map_err(unreadable)?;
    if &magic != b"PK\x03\x04" {
        return Err(format!("`path` {} is not an APK: it is not a zip file", shown(path)));
    }

    let before = installed_paths(state, serial).await?;
    let mut flags = String::new();
    if args.replace {
        flags.push_str(" -r");
    }
    if args.grant_permissions {
        flags.push_str(" -g");
    }
    if args.downgrade {
        flags.push_str(" -d");
    }
    let total = meta.len();
    let command = format!("cmd package install -S {total}{flags}");

    // Progress: the upload callback feeds a channel; a task turns it into notifications.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    let forwarder = ctx.meta.get_progress_token().map(|token| {
        let (peer, budget) = (ctx.peer.clone(), state.budget);
        tokio::spawn(async move {
            let mut last_percent = None;
            while let Some(sent) = rx.recv().await {
                let percent = sent * 100 / total.max(1);
                if last_percent == Some(percent) {
                    continue;
                }
                last_percent = Some(percent);
                let message = format!("uploaded {sent} of {total} bytes");
                let note =
                    crate::context::budget::progress(token.clone(), sent as f64, Some(total as f64), &message, budget);
                let _ = peer.notify_progress(note).await;
            }
        })
    });
    let sent = move |n: u64| {
        let _ = tx.send(n);
    };
    // Allow for a slow link: the usual timeout plus a second per MiB.
    let limit = state.adb.timeout() + Duration::from_secs(total / (1 << 20));
    let result = tokio::select! {
        r = state.adb.exec(serial, &command, Some(path), limit, &sent) => r.map_err(adb_error),
        _ = ctx.ct.cancelled() => Err("install cancelled by the client; nothing was installed unless the upload had finished".to_string()),
    };
    drop(sent);
    if let Some(task) = forwarder {
        let _ = task.await;
    }
    let said = String::from_utf8_lossy(&result?).into_owned();
    if !said.lines().any(|l| l.trim() == "Success") {
        return Err(format!("install failed: {}", said.trim()));
    }
    state.forget_package_lists(serial);

    // The installed package is the one whose APK path is new.
    let after = installed_paths(state, serial).await?;
    let package = after
        .iter()
        .find(|(name, path)| !before.contains(&(name.clone(), path.clone())))
        .map(|(name, _)| name.clone())
        .ok_or("the device said Success, but no package has a new APK path; adb-app list {refresh: true} shows what is installed")?;
    let out = state
        .adb
        .shell(serial, &format!("dumpsys package {}", quote(&package)))
        .await
        .map_err(adb_error)?;
    let dump = parse_package_dump(&out.stdout_text(), &package);
    Ok(AppOutput {
        version_name: dump.as_ref().and_then(|d| d.version_name.clone()),
        version_code: dump.as_ref().and_then(|d| d.version_code),
        package: Some(package),
        ..output("install", serial)
    })
}

/// (name, APK path) of every package, to tell which one an install touched.
pub(super) async fn installed_paths(state: &State, serial: &str) -> Result<HashSet<(String, String)>, String> {
    let out = state
        .adb
        .shell(serial, "pm list packages -f")
        .await
        .map_err(adb_error)?;
    Ok(parse_package_list(&out.stdout_text())
        .into_iter()
        .filter_map(|p| Some((p.name, p.path?)))
        .collect())
}

/// A path as an error quotes it: cut, as it may be anything a caller sent.
fn shown(path: &std::path::Path) -> String {
    crate::android::text::echoed(&path.display().to_string())
}
