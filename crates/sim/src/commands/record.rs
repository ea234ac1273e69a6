//! `screenrecord FILE` and `pkill`: a recording runs until `pkill -INT screenrecord` (or its
//! `--time-limit`, 180 s by default, as Android's), then writes FILE, as the device's
//! screenrecord finalises its MP4 on SIGINT. The simulator encodes no video: FILE is an MP4
//! container (`ftyp`, then an `mdat` box) whose media data is the screen as PNG when the
//! recording started and when it ended; the replay pulls it like any file, a player does not
//! play it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use crate::Simulator;
use crate::fs::now_secs;
use crate::shell::Output;

/// The recordings running, and the signal that ends them.
#[derive(Default)]
pub struct Recorder {
    running: AtomicUsize,
    interrupt: Notify,
}

/// One running recording, counted until it ends however it ends (its stream closed too).
struct Running<'a>(&'a Recorder);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

pub async fn screenrecord(sim: &Arc<Simulator>, args: &[&str]) -> Output {
    let mut limit = 180u64;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--time-limit" => match it.next().and_then(|n| n.parse::<u64>().ok()) {
                Some(n) if n <= 180 => limit = if n == 0 { 180 } else { n },
                _ => return Output::err(1, "Time limit must be 0-180 seconds\n"),
            },
            "--bit-rate" | "--size" | "--bugreport-format" | "--display-id" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => file = Some(a.to_string()),
        }
    }
    let Some(file) = file else {
        return Output::err(2, "Must specify output file (see --help).\n");
    };
    let recorder = &sim.recorder;
    let interrupted = recorder.interrupt.notified();
    tokio::pin!(interrupted);
    interrupted.as_mut().enable();
    recorder.running.fetch_add(1, Ordering::SeqCst);
    let _running = Running(recorder);
    let first = sim.with_device(|d| crate::render::encode_png(&crate::render::render(d)));
    tokio::select! {
        _ = interrupted => {}
        _ = tokio::time::sleep(Duration::from_secs(limit)) => {}
    }
    sim.with_device(|d| {
        let last = crate::render::encode_png(&crate::render::render(d));
        let mut mp4 = Vec::new();
        mp4.extend_from_slice(&20u32.to_be_bytes());
        mp4.extend_from_slice(b"ftypmp42\0\0\0\0isommp42");
        mp4.extend_from_slice(&((8 + first.len() + last.len()) as u32).to_be_bytes());
        mp4.extend_from_slice(b"mdat");
        mp4.extend_from_slice(&first);
        mp4.extend_from_slice(&last);
        match d.fs.write(&file, mp4, 0o660, now_secs()) {
            Ok(()) => Output::default(),
            Err(e) => Output::err(1, format!("Unable to open '{file}': {e}\n")),
        }
    })
}

/// `pkill [-SIGNAL] NAME`, for `screenrecord` (the one program here that runs until stopped):
/// exit 0 when one was running, 1 otherwise, as toybox's.
pub fn pkill(sim: &Arc<Simulator>, args: &[&str]) -> Output {
    let names: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
    let signal = args.iter().find(|a| a.starts_with('-')).copied().unwrap_or("-TERM");
    if !["-INT", "-SIGINT", "-2", "-TERM", "-SIGTERM", "-15", "-HUP", "-1"].contains(&signal) {
        return Output::err(1, format!("pkill: unknown signal '{}'\n", &signal[1..]));
    }
    let recorder = &sim.recorder;
    if names == ["screenrecord"] && recorder.running.load(Ordering::SeqCst) > 0 {
        recorder.interrupt.notify_waiters();
        return Output::default();
    }
    Output {
        code: 1,
        ..Output::default()
    }
}
