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
        match state.device(None).await {
            Ok(serial) => vec![serial],
            Err(e) => return Err(which_device(state, e).await),
        }
    } else {
        let listing = state.adb.devices().await.map_err(|e| format!("the shards: {e}"))?;
        listing
            .devices
            .into_iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial)
            .collect()
    };
    let (found, again) = one_route_a_phone(state, found).await;
    if found.len() < shards {
        return Err(format!(
            "{shards} shards need {shards} devices and {} {} online{}{}: start or connect more (several adb servers with --adb NAME=server:HOST:PORT, repeated), or ask for fewer shards",
            found.len(),
            if found.len() == 1 { "is" } else { "are" },
            if found.is_empty() {
                String::new()
            } else {
                format!(" ({})", found.join(", "))
            },
            if again.is_empty() {
                String::new()
            } else {
                format!("; {again}")
            },
        ));
    }
    if !again.is_empty() {
        println!("note   {again}");
    }
    Ok(found)
}

/// `serials` with one route to each phone: a phone adb lists twice (by USB and by Wi-Fi, or
/// through two adb servers) would be two shards running flows at once on one screen. The phone
/// is told by `leases::key` (its identity); one that cannot say keeps its route. Also says
/// which routes were left out, for the caller's line.
async fn one_route_a_phone(state: &State, serials: Vec<String>) -> (Vec<String>, String) {
    let mut kept: Vec<(String, Option<String>)> = Vec::new();
    let mut again = Vec::new();
    for serial in serials {
        let key = crate::tools::leases::key(state, &serial).await.ok();
        match kept.iter().find(|(_, k)| key.is_some() && *k == key) {
            Some((first, _)) => again.push(format!("{serial} is {first} again (one phone, two routes): not used")),
            None => kept.push((serial, key)),
        }
    }
    (kept.into_iter().map(|(s, _)| s).collect(), again.join("; "))
}

/// Why no device was chosen, in the command line's words: with several online, the options
/// that choose (the tool's own error names its `device` field and `adb-device select`).
async fn which_device(state: &State, e: impl std::fmt::Display) -> String {
    let online: Vec<String> = match state.adb.devices().await {
        Ok(listing) => listing
            .devices
            .into_iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial)
            .collect(),
        Err(_) => Vec::new(),
    };
    match online.len() {
        0 | 1 => format!("the replay: {e}"),
        n => format!(
            "the replay: {n} devices are online ({}): name one with --device SERIAL, or use them all with --shard-split {n} (or --shard-all {n})",
            online.join(", ")
        ),
    }
}

/// The devices of Maestro's effective shards (`TestCommand.handleSessions`): split, no more
/// than the flows, saying so as its warning does; all, as many as asked. At least one.
pub fn used(devices: &[String], shards: usize, flows: usize, all: bool) -> &[String] {
    let used = if all { shards } else { shards.min(flows) }.max(1);
    if used < shards {
        println!(
            "note    {shards} shards asked for {flows} flows: {used} used ({})",
            devices[..used].join(", ")
        );
    }
    &devices[..used]
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
    /// Flows a dropped device keeps unrun (no requeue).
    unrun: Vec<(Option<usize>, usize)>,
    running: usize,
}

/// Runs every device's flows at once, each device its own flows one at a time: `run(device,
/// flow)` gives its result and whether the device dropped. A dropped device runs nothing more;
/// with `requeue` its remaining flows go to the devices still running, without (`--shard-all`,
/// where every device runs every flow already) they stay its own, unrun. Returns the results in
/// the order they ended, and the flows not run (with the device they were left on, if kept).
pub async fn share<R, F, Fut>(
    queues: Vec<VecDeque<usize>>,
    requeue: bool,
    run: F,
) -> (Vec<R>, Vec<(Option<usize>, usize)>)
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = (R, bool)>,
{
    let devices = queues.len();
    let board = Mutex::new(Board {
        queues,
        orphans: VecDeque::new(),
        unrun: Vec::new(),
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
                        match requeue {
                            true => b.orphans.extend(left),
                            false => b.unrun.extend(left.into_iter().map(|f| (Some(device), f))),
                        }
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
    let mut b = lock();
    let mut left = std::mem::take(&mut b.unrun);
    left.extend(b.orphans.drain(..).map(|f| (None, f)));
    drop(b);
    (results.into_inner().unwrap_or_else(|p| p.into_inner()), left)
}

#[cfg(test)]
mod tests {
    use super::{deal, share};

    /// Every flow runs once (split) or once per device (all), whichever device drops and when:
    /// a dropped device runs nothing after its drop; split, the flows it had go to the others
    /// (with every device dropped, what is left is returned unrun); all, they stay its own,
    /// returned unrun, and no device runs a flow twice.
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
                        let (results, left) = share(queues, !all, |device, flow| {
                            let ran = &ran;
                            async move {
                                tokio::task::yield_now().await;
                                let mut ran = ran.lock().unwrap();
                                ran[device] += 1;
                                ((device, flow), ran[device] == drop_at[device])
                            }
                        })
                        .await;
                        let mut seen: Vec<usize> = results
                            .iter()
                            .map(|(_, f)| *f)
                            .chain(left.iter().map(|(_, f)| *f))
                            .collect();
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
                        if drop_at.contains(&0) && !all {
                            assert!(left.is_empty(), "{left:?} left with a device still up");
                        }
                        // All: each device runs each flow at most once; what a dropped device
                        // had left stays its own, unrun.
                        if all {
                            for d in 0..devices {
                                let mut mine: Vec<usize> = results
                                    .iter()
                                    .filter(|(device, _)| *device == d)
                                    .map(|(_, f)| *f)
                                    .chain(left.iter().filter(|(k, _)| *k == Some(d)).map(|(_, f)| *f))
                                    .collect();
                                mine.sort();
                                assert_eq!(mine, (0..flows).collect::<Vec<_>>(), "device {d}, drops {drop_at:?}");
                            }
                        }
                        cases += 1;
                    }
                }
            }
        }
        println!("{cases} share cases");
    }
}
