//! The `sync:` service (AOSP `SYNC.TXT`, `file_sync_protocol.h`): STAT, STA2/LST2, LIST/LIS2,
//! RECV, SEND and QUIT over the simulated file system.

use super::Simulator;
use super::fs::{Entry, now_secs};
use super::transport::StreamIo;

/// adbd sends file data in chunks of at most 64 KiB.
const SYNC_DATA_MAX: usize = 64 * 1024;
const ENOENT: u32 = 2;

fn id(s: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*s)
}

pub async fn serve(sim: &Simulator, io: &mut StreamIo) {
    loop {
        let Some(header) = io.read_exact(8).await else { return };
        let request: [u8; 4] = header[..4].try_into().expect("4 bytes");
        let len = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes")) as usize;
        if &request == b"QUIT" {
            return;
        }
        if len > 4096 {
            let _ = io.write(&fail(&format!("path too long ({len} bytes)"))).await;
            return;
        }
        let Some(path) = io.read_exact(len).await else { return };
        let path = String::from_utf8_lossy(&path).into_owned();
        let reply = match &request {
            b"STAT" => stat_v1(sim, &path),
            b"STA2" | b"LST2" => stat_v2(sim, &request, &path),
            b"LIST" => list(sim, &path, false),
            b"LIS2" => list(sim, &path, true),
            b"RECV" => recv(sim, &path),
            b"SEND" => match send(sim, io, &path).await {
                Some(reply) => reply,
                None => return,
            },
            other => {
                let _ = io
                    .write(&fail(&format!(
                        "unknown sync request {:?}",
                        String::from_utf8_lossy(other)
                    )))
                    .await;
                return;
            }
        };
        if io.write(&reply).await.is_err() {
            return;
        }
    }
}

fn fail(message: &str) -> Vec<u8> {
    let mut out = b"FAIL".to_vec();
    out.extend_from_slice(&(message.len() as u32).to_le_bytes());
    out.extend_from_slice(message.as_bytes());
    out
}

fn words(out: &mut Vec<u8>, ws: &[u32]) {
    for w in ws {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn lookup(sim: &Simulator, path: &str) -> Option<Entry> {
    sim.with_device(|d| d.fs.get(path).cloned())
}

fn stat_v1(sim: &Simulator, path: &str) -> Vec<u8> {
    let mut out = b"STAT".to_vec();
    match lookup(sim, path) {
        Some(e) => words(&mut out, &[e.mode(), e.size() as u32, e.mtime()]),
        None => words(&mut out, &[0, 0, 0]),
    }
    out
}

/// The 68 bytes after the id of a stat_v2 record (and of a dent_v2, before its name length).
fn stat_v2_body(entry: Option<&Entry>) -> Vec<u8> {
    let mut out = Vec::with_capacity(68);
    match entry {
        Some(e) => {
            words(&mut out, &[0]);
            out.extend_from_slice(&2049u64.to_le_bytes()); // dev
            out.extend_from_slice(&1u64.to_le_bytes()); // ino
            words(&mut out, &[e.mode(), 1, 2000, 2000]);
            out.extend_from_slice(&e.size().to_le_bytes());
            for _ in 0..3 {
                out.extend_from_slice(&i64::from(e.mtime()).to_le_bytes());
            }
        }
        None => {
            words(&mut out, &[ENOENT]);
            out.resize(68, 0);
        }
    }
    out
}

fn stat_v2(sim: &Simulator, request: &[u8; 4], path: &str) -> Vec<u8> {
    let mut out = request.to_vec();
    out.extend(stat_v2_body(lookup(sim, path).as_ref()));
    out
}

fn list(sim: &Simulator, path: &str, v2: bool) -> Vec<u8> {
    let entries = sim.with_device(|d| {
        let dir = d.fs.get(path).cloned();
        d.fs.list(path).map(|l| {
            let mut all: Vec<(String, Entry)> = Vec::new();
            if let Some(dir) = dir {
                all.push((".".into(), dir.clone()));
                all.push(("..".into(), dir));
            }
            all.extend(l.into_iter().map(|(n, e)| (n, e.clone())));
            all
        })
    });
    let mut out = Vec::new();
    for (name, e) in entries.unwrap_or_default() {
        if v2 {
            out.extend_from_slice(b"DNT2");
            out.extend(stat_v2_body(Some(&e)));
        } else {
            out.extend_from_slice(b"DENT");
            words(&mut out, &[e.mode(), e.size() as u32, e.mtime()]);
        }
        words(&mut out, &[name.len() as u32]);
        out.extend_from_slice(name.as_bytes());
    }
    out.extend_from_slice(b"DONE");
    out.resize(out.len() + if v2 { 72 } else { 16 }, 0);
    out
}

fn recv(sim: &Simulator, path: &str) -> Vec<u8> {
    let data = match sim.with_device(|d| d.fs.read(path).map(<[u8]>::to_vec)) {
        Ok(data) => data,
        Err(e) => return fail(&format!("open failed: {e}")),
    };
    let mut out = Vec::with_capacity(data.len() + data.len() / SYNC_DATA_MAX * 8 + 16);
    for chunk in data.chunks(SYNC_DATA_MAX) {
        out.extend_from_slice(b"DATA");
        words(&mut out, &[chunk.len() as u32]);
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(b"DONE");
    words(&mut out, &[0]);
    out
}

/// SEND `path,mode`: DATA chunks then DONE with the mtime. `None` when the host went away.
async fn send(sim: &Simulator, io: &mut StreamIo, spec: &str) -> Option<Vec<u8>> {
    let (path, mode) = match spec.rsplit_once(',') {
        Some((p, m)) => (p, m.parse::<u32>().unwrap_or(0o644)),
        None => (spec, 0o644),
    };
    let mut data = Vec::new();
    loop {
        let header = io.read_exact(8).await?;
        let n = u32::from_le_bytes(header[4..8].try_into().ok()?);
        match &header[..4] {
            b"DATA" if n as usize <= SYNC_DATA_MAX => data.extend(io.read_exact(n as usize).await?),
            b"DATA" => return Some(fail(&format!("DATA chunk of {n} bytes is over 64 KiB"))),
            b"DONE" => {
                let mtime = if n == 0 { now_secs() } else { n };
                let written = sim.with_device(|d| d.fs.write(path, data, mode, mtime));
                let mut out = match written {
                    Ok(()) => b"OKAY".to_vec(),
                    Err(e) => return Some(fail(&format!("{path}: {e}"))),
                };
                words(&mut out, &[0]);
                return Some(out);
            }
            other if id(other.try_into().ok()?) == id(b"QUIT") => return None,
            _ => return Some(fail("expected DATA or DONE during SEND")),
        }
    }
}
