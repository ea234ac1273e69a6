//! A replay of many flows as `maestro test` runs them: the plan (`flow::workspace`), the devices
//! the shards run on, and the flows shared among them (`share`). Maestro's shards
//! (`TestCommand.handleSessions`, `makeChunkPlans`): `--shard-split N` deals the flows out in
//! turn over N devices (`index % N`), `--shard-all N` gives every flow to each of N devices,
//! each device running its own flows one after another. Where droidmcp adds to it: a device
//! that drops mid-run fails its current flow and its remaining flows move to the devices still
//! running (Maestro's shard then simply fails).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::flow::workspace::{self, Plan, Tags};
use crate::tools::State;

use super::Options;

/// The flows the options choose, in Maestro's order; each note printed.
pub fn plan(options: &Options) -> Result<Plan, String> {
    let mut tags = Tags::default();
    for given in &options.include_tags {
        tags.include.extend(workspace::parse_tags("--include-tags", given)?);
    }
    for given in &options.exclude_tags {
        tags.exclude.extend(workspace::parse_tags("--exclude-tags", given)?);
    }
    // Maestro's `--include-tags ""` includes the tag "", which no flow has: it runs nothing.
    if !options.include_tags.is_empty() && tags.include.is_empty() {
        return Err(format!(
            "--include-tags {:?} names no tag, so no flow would run: name the tags to run, e.g. --include-tags smoke,login, or leave the option out to run every flow",
            options.include_tags.join(",")
        ));
    }
    let (files, config, single) = workspace::read(&options.files, options.config.as_deref())?;
    let plan = workspace::plan(&files, &config, &tags, single)?;
    for note in &plan.notes {
        println!("note    {note}");
    }
    Ok(Plan {
        test_output_dir: config.test_output_dir.map(PathBuf::from),
        ..plan
    })
}

/// The devices `--device A,B` names, as Maestro's `--device` takes them.
pub fn named_devices(given: Option<&str>) -> Vec<String> {
    given
        .into_iter()
        .flat_map(|g| g.split(','))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(String::from)
        .collect()
}

/// The devices a run uses, in order: those named (`--device A,B`), else for one shard the
/// selected or only device, else every device online on every source (`--adb`), at least
/// `shards` of them.
pub async fn devices(state: &State, named: &[String], shards: usize) -> Result<Vec<String>, String> {
    let option = if shards > 1 { "the shards" } else { "the replay" };
    let found: Vec<String> = if !named.is_empty() {
        let mut found = Vec::new();
        for name in named {
            let serial = state
                .adb
                .resolve(Some(name))
                .await
                .map_err(|e| format!("--device {name}: {e}"))?;
            if found.contains(&serial) {
                return Err(format!("--device names {name} twice: name each device once"));
            }
            found.push(serial);
        }
        found
    } else if shards == 1 {
        vec![state.device(None).await.map_err(|e| format!("{option}: {e}"))?]
    } else {
        let listing = state.adb.devices().await.map_err(|e| format!("{option}: {e}"))?;
        listing
            .devices
            .into_iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial)
            .collect()
    };
    if found.len() < shards {
        return Err(format!(
            "{shards} shards need {shards} devices and {} {} online{}: start or connect more (several adb servers with --adb NAME=server:HOST:PORT, repeated), or ask for fewer shards",
            found.len(),
            if found.len() == 1 { "is" } else { "are" },
            if found.is_empty() {
                String::new()
            } else {
                format!(" ({})", found.join(", "))
            },
        ));
    }
    Ok(found)
}

/// Each device's flows (indices into the plan's `flows`): dealt out in turn, or all to each.
pub fn deal(flows: usize, devices: usize, all: bool) -> Vec<VecDeque<usize>> {
    let mut queues = vec![VecDeque::new(); devices];
    for flow in 0..flows {
        if all {
            queues.iter_mut().for_each(|q| q.push_back(flow));
        } else {
            queues[flow % devices].push_back(flow);
        }
    }
    queues
}

struct Board {
    queues: Vec<VecDeque<usize>>,
    /// Flows of a device that dropped, for whichever device is free first.
    orphans: VecDeque<usize>,
    running: usize,
}

/// Runs every device's flows at once, each device its own flows one at a time: `run(device,
/// flow)` gives its result and whether the device dropped. A dropped device runs nothing more;
/// its remaining flows go to the devices still running. Returns the results in the order they
/// ended, and the flows no device was left to run.
pub async fn share<R, F, Fut>(queues: Vec<VecDeque<usize>>, run: F) -> (Vec<R>, Vec<usize>)
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = (R, bool)>,
{
    let devices = queues.len();
    let board = Mutex::new(Board {
        queues,
        orphans: VecDeque::new(),
        running: 0,
    });
    let changed = tokio::sync::Notify::new();
    let results = Mutex::new(Vec::new());
    let lock = || board.lock().unwrap_or_else(|p| p.into_inner());
    let worker = |device: usize| {
        let (run, changed, results) = (&run, &changed, &results);
        async move {
            loop {
                let next = loop {
                    let notified = changed.notified();
                    tokio::pin!(notified);
                    notified.as_mut().enable();
                    {
                        let mut b = lock();
                        if let Some(flow) = b.queues[device].pop_front().or_else(|| b.orphans.pop_front()) {
                            b.running += 1;
                            break Some(flow);
                        }
                        // Nothing left, and no running device can drop and leave flows.
                        if b.running == 0 && b.orphans.is_empty() && b.queues.iter().all(VecDeque::is_empty) {
                            break None;
                        }
                    }
                    notified.await;
                };
                let Some(flow) = next else { return };
                let (result, dropped) = run(device, flow).await;
                results.lock().unwrap_or_else(|p| p.into_inner()).push(result);
                {
                    let mut b = lock();
                    b.running -= 1;
                    if dropped {
                        let left = std::mem::take(&mut b.queues[device]);
                        b.orphans.extend(left);
                    }
                }
                changed.notify_waiters();
                if dropped {
                    return;
                }
            }
        }
    };
    futures::future::join_all((0..devices).map(worker)).await;
    let left = lock().orphans.drain(..).collect();
    (results.into_inner().unwrap_or_else(|p| p.into_inner()), left)
}

#[cfg(test)]
mod tests {
    use super::{deal, share};

    /// Every flow runs once (split) or once per device (all), whichever device drops and when:
    /// a dropped device runs nothing after its drop, and the flows it had go to the others; with
    /// every device dropped, what is left is returned unrun.
    #[tokio::test]
    async fn a_dropped_devices_flows_run_on_the_others() {
        let mut cases = 0;
        for flows in [1, 5, 12] {
            for devices in 1..=4 {
                for all in [false, true] {
                    // Device `d` drops on its `drop_at[d]`-th flow (0: never).
                    for drop_at in [vec![0; devices], vec![2, 0, 0, 0], vec![1, 1, 1, 1]] {
                        let drop_at = &drop_at[..devices];
                        let queues = deal(flows, devices, all);
                        let ran = std::sync::Mutex::new(vec![0usize; devices]);
                        let (results, left) = share(queues, |device, flow| {
                            let ran = &ran;
                            async move {
                                tokio::task::yield_now().await;
                                let mut ran = ran.lock().unwrap();
                                ran[device] += 1;
                                ((device, flow), ran[device] == drop_at[device])
                            }
                        })
                        .await;
                        let mut seen: Vec<usize> =
                            results.iter().map(|(_, f)| *f).chain(left.iter().copied()).collect();
                        seen.sort();
                        let want: Vec<usize> = (0..flows)
                            .flat_map(|f| vec![f; if all { devices } else { 1 }])
                            .collect();
                        assert_eq!(
                            seen, want,
                            "{flows} flows, {devices} devices, all {all}, drops {drop_at:?}"
                        );
                        for (d, at) in drop_at.iter().enumerate() {
                            let count = results.iter().filter(|(device, _)| *device == d).count();
                            assert!(
                                *at == 0 || count <= *at,
                                "device {d} ran {count} flows after dropping at {at}"
                            );
                        }
                        if drop_at.contains(&0) {
                            assert!(left.is_empty(), "{left:?} left with a device still up");
                        }
                        cases += 1;
                    }
                }
            }
        }
        println!("{cases} share cases");
    }
}
