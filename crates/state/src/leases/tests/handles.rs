//! Handles on both stores: kept, isolated, ended; any sequence of operations against a model;
//! bounded puts and compare-and-sets racing.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use proptest::prelude::{Just, Strategy, prop_oneof};

use super::{Stores, Which};
use crate::clock::{Clock, ManualClock};
use crate::handles::{Bound, Full, Handles, InProcessHandles, Kind};
use crate::in_redis::Redis;

/// A fresh, empty handle store of `which` kind on `clock`.
fn handle_store(stores: &Stores, which: Which, clock: Arc<ManualClock>) -> Arc<dyn Handles> {
    match which {
        Which::InProcess => Arc::new(InProcessHandles::new(clock)),
        Which::Redis => {
            let url = stores
                .redis
                .as_ref()
                .expect("each() offers Redis only with its server")
                .url(0);
            let prefix = format!("handles{}", stores.next.fetch_add(1, Ordering::SeqCst));
            Arc::new(stores.rt.block_on(Redis::connect(&url, &prefix, clock)).unwrap())
        }
    }
}

/// Handles, on both stores: a principal's id is found again until its time is up, never by
/// another principal, under another kind, nor under a near name (the principal and the id are
/// one key together).
#[test]
fn a_handle_is_its_principals_alone_and_lives_its_time() {
    let stores = Stores::new();
    for which in stores.each() {
        let clock = Arc::new(ManualClock::at(1_000_000));
        let handles = handle_store(&stores, which, clock.clone());
        stores.now(handles.put("alice", Kind::Cache, "props-1", "{\"a\":1}", Some(60_000)));
        stores.now(handles.put("a", Kind::Cache, "lice:props-1", "the other", Some(60_000)));
        assert_eq!(
            stores.now(handles.get("alice", Kind::Cache, "props-1")).as_deref(),
            Some("{\"a\":1}"),
            "{which:?}"
        );
        assert_eq!(
            stores.now(handles.get("a", Kind::Cache, "lice:props-1")).as_deref(),
            Some("the other")
        );
        assert_eq!(
            stores.now(handles.get("bob", Kind::Cache, "props-1")),
            None,
            "{which:?}: another's id"
        );
        assert_eq!(
            stores.now(handles.get("alice", Kind::Skill, "props-1")),
            None,
            "{which:?}: another kind"
        );
        assert_eq!(stores.now(handles.get("alice", Kind::Cache, "props-2")), None);
        clock.advance(59_999);
        assert!(stores.now(handles.get("alice", Kind::Cache, "props-1")).is_some());
        clock.advance(1);
        assert_eq!(
            stores.now(handles.get("alice", Kind::Cache, "props-1")),
            None,
            "{which:?}: at its end it is gone"
        );
        println!("{which:?}: handles kept, isolated and ended");
    }
}

/// Every sequence of puts (with and without a time to live), bounded puts, gets, lists,
/// removes and waits, by two principals on two kinds, against a model written out plainly: the
/// store answers as the model does, a bounded put is refused exactly when the others and it
/// would pass the bound, and one principal never sees another's.
#[test]
fn any_sequence_of_handle_operations_answers_as_the_model_says() {
    let stores = Stores::new();
    for which in stores.each() {
        handle_sequences(&stores, which);
    }
}

fn handle_sequences(stores: &Stores, which: Which) {
    #[derive(Debug, Clone)]
    enum Op {
        Put(usize, usize, usize, usize, Option<u64>),
        Within(usize, usize, usize, usize),
        Get(usize, usize, usize),
        List(usize, usize),
        Remove(usize, usize, usize),
        Fetch(usize, usize, usize),
        /// Over the version the last fetch of that handle saw (`true`), or over none.
        PutIf(usize, usize, usize, usize, bool),
        Wait(u64),
    }
    let principals = ["alice", "bob"];
    let kinds = [Kind::Skill, Kind::Run];
    let ids = ["a", "b", "c", "a:b"];
    let values = ["", "x", "twelve bytes", "ünïcode ✓"];
    let bound = Bound { items: 2, bytes: 16 };
    let (p, k, i) = (0..2usize, 0..2usize, 0..4usize);
    let op = prop_oneof![
        (
            p.clone(),
            k.clone(),
            i.clone(),
            0..4usize,
            proptest::option::of(1..4u64)
        )
            .prop_map(|(p, k, i, v, t)| Op::Put(p, k, i, v, t.map(|t| t * 1000))),
        (p.clone(), k.clone(), i.clone(), 0..4usize).prop_map(|(p, k, i, v)| Op::Within(p, k, i, v)),
        (p.clone(), k.clone(), i.clone()).prop_map(|(p, k, i)| Op::Get(p, k, i)),
        (p.clone(), k.clone()).prop_map(|(p, k)| Op::List(p, k)),
        (p.clone(), k.clone(), i.clone()).prop_map(|(p, k, i)| Op::Remove(p, k, i)),
        (p.clone(), k.clone(), i.clone()).prop_map(|(p, k, i)| Op::Fetch(p, k, i)),
        (p, k, i, 0..4usize, proptest::bool::ANY).prop_map(|(p, k, i, v, seen)| Op::PutIf(p, k, i, v, seen)),
        prop_oneof![Just(1u64), Just(999), Just(1000), Just(2500)].prop_map(Op::Wait),
    ];
    let cases = std::cell::Cell::new(0);
    let refused = std::cell::Cell::new(0);
    let (cas_wrote, cas_lost) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&proptest::collection::vec(op, 1..40), |ops| {
            cases.set(cases.get() + 1);
            let clock = Arc::new(ManualClock::at(1_000_000));
            let handles = handle_store(stores, which, clock.clone());
            // (principal, kind, id) → (value, until, the write that made it)
            let mut model: std::collections::BTreeMap<(usize, usize, &str), (String, u64, usize)> = Default::default();
            // What the last fetch of a handle saw: the write it was at and the version the store named.
            let mut seen: std::collections::BTreeMap<(usize, usize, &str), (usize, String)> = Default::default();
            let mut writes = 0;
            for op in ops {
                writes += 1;
                let now = clock.now_ms();
                model.retain(|_, (_, until, _)| *until > now);
                match op {
                    Op::Wait(ms) => clock.advance(ms),
                    Op::Put(p, k, i, v, ttl) => {
                        stores.now(handles.put(principals[p], kinds[k], ids[i], values[v], ttl));
                        let until = ttl.map_or(u64::MAX, |t| now + t);
                        model.insert((p, k, ids[i]), (values[v].to_string(), until, writes));
                    }
                    Op::Within(p, k, i, v) => {
                        let got = stores.now(handles.put_within(principals[p], kinds[k], ids[i], values[v], bound));
                        let others: Vec<&String> = model
                            .iter()
                            .filter(|((mp, mk, mi), _)| *mp == p && *mk == k && *mi != ids[i])
                            .map(|(_, (value, _, _))| value)
                            .collect();
                        let full = Full {
                            items: others.len(),
                            bytes: others.iter().map(|v| v.len() as u64).sum(),
                        };
                        let want =
                            match full.items + 1 > bound.items || full.bytes + values[v].len() as u64 > bound.bytes {
                                true => Err(full),
                                false => {
                                    model.insert((p, k, ids[i]), (values[v].to_string(), u64::MAX, writes));
                                    Ok(())
                                }
                            };
                        if want.is_err() {
                            refused.set(refused.get() + 1);
                        }
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::Get(p, k, i) => {
                        let got = stores.now(handles.get(principals[p], kinds[k], ids[i]));
                        let want = model.get(&(p, k, ids[i])).map(|(v, _, _)| v.clone());
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::List(p, k) => {
                        let got = stores.now(handles.list(principals[p], kinds[k]));
                        let want: Vec<(String, String)> = model
                            .iter()
                            .filter(|((mp, mk, _), _)| *mp == p && *mk == k)
                            .map(|((_, _, id), (v, _, _))| (id.to_string(), v.clone()))
                            .collect();
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::Remove(p, k, i) => {
                        let got = stores.now(handles.remove(principals[p], kinds[k], ids[i]));
                        proptest::prop_assert_eq!(got, model.remove(&(p, k, ids[i])).is_some());
                    }
                    Op::Fetch(p, k, i) => {
                        let got = stores.now(handles.fetch(principals[p], kinds[k], ids[i]));
                        let want = model.get(&(p, k, ids[i]));
                        proptest::prop_assert_eq!(
                            got.as_ref().map(|g| &g.value),
                            want.map(|(v, _, _)| v),
                            "{:?}",
                            which
                        );
                        if let (Some(got), Some((_, _, write))) = (got, want) {
                            // A write the last fetch did not see has a version of its own.
                            if let Some((was, version)) = seen.get(&(p, k, ids[i])) {
                                proptest::prop_assert_eq!(was == write, *version == got.version);
                            }
                            seen.insert((p, k, ids[i]), (*write, got.version));
                        }
                    }
                    Op::PutIf(p, k, i, v, over_seen) => {
                        let key = (p, k, ids[i]);
                        let over = seen.get(&key).filter(|_| over_seen);
                        let ttl = Some(2000);
                        let got = stores.now(handles.put_if(
                            principals[p],
                            kinds[k],
                            ids[i],
                            over.map(|(_, version)| version.as_str()),
                            values[v],
                            ttl,
                        ));
                        let want = match (over, model.get(&key)) {
                            (None, None) => true,
                            (Some((was, _)), Some((_, _, write))) => was == write,
                            _ => false,
                        };
                        if want {
                            model.insert(key, (values[v].to_string(), now + 2000, writes));
                            cas_wrote.set(cas_wrote.get() + 1);
                        } else {
                            cas_lost.set(cas_lost.get() + 1);
                        }
                        proptest::prop_assert_eq!(got, want, "{:?} {:?}", which, op);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    println!(
        "{which:?}: {} generated sequences of handle operations (2 principals, 2 kinds, 4 ids), {} bounded puts refused, {} compare-and-sets wrote, {} refused as stale",
        cases.get(),
        refused.get(),
        cas_wrote.get(),
        cas_lost.get()
    );
}

/// Eight instances (connections of their own on Redis) save at once into a bound of three: of
/// every round's racers exactly three land, whatever the order.
#[test]
fn of_bounded_puts_racing_exactly_the_bound_lands() {
    let stores = Stores::new();
    for which in stores.each() {
        let clock = Arc::new(ManualClock::at(1_000_000));
        let rounds = 50;
        let writers: Vec<Arc<dyn Handles>> = match which {
            Which::InProcess => {
                let shared = handle_store(&stores, which, clock.clone());
                (0..8).map(|_| shared.clone()).collect()
            }
            Which::Redis => {
                let prefix = format!("within{}", stores.next.fetch_add(1, Ordering::SeqCst));
                let url = stores.redis.as_ref().unwrap().url(0);
                (0..8)
                    .map(|_| {
                        let store = stores
                            .rt
                            .block_on(Redis::connect(&url, &prefix, clock.clone()))
                            .unwrap();
                        Arc::new(store) as Arc<dyn Handles>
                    })
                    .collect()
            }
        };
        for round in 0..rounds {
            let principal = format!("p{round}");
            let barrier = Arc::new(std::sync::Barrier::new(8));
            let threads: Vec<_> = writers
                .iter()
                .enumerate()
                .map(|(i, handles)| {
                    let (handles, barrier, principal) = (handles.clone(), barrier.clone(), principal.clone());
                    let rt = stores.rt.handle().clone();
                    std::thread::spawn(move || {
                        barrier.wait();
                        let bound = Bound {
                            items: 3,
                            bytes: 1 << 20,
                        };
                        let id = format!("s{i}");
                        let put = handles.put_within(&principal, Kind::Skill, &id, "code", bound);
                        rt.block_on(put).expect("the store answers").is_ok()
                    })
                })
                .collect();
            let landed = threads.into_iter().map(|t| t.join().unwrap()).filter(|w| *w).count();
            assert_eq!(landed, 3, "{which:?}, round {round}");
            assert_eq!(stores.now(writers[0].list(&principal, Kind::Skill)).len(), 3);
        }
        println!("{which:?}: {rounds} races of 8 bounded puts into 3 places: 3 landed each");
    }
}

/// Eight writers (connections of their own on Redis, as eight instances) each add to one
/// counter many times, by fetch, add, compare and set, fetching again when they lose: no
/// addition is lost.
#[test]
fn of_writers_racing_to_change_one_value_none_loses_its_change() {
    let stores = Stores::new();
    for which in stores.each() {
        let clock = Arc::new(ManualClock::at(1_000_000));
        let (writers_n, adds) = (8, 50);
        let writers: Vec<Arc<dyn Handles>> = match which {
            Which::InProcess => {
                let shared = handle_store(&stores, which, clock.clone());
                (0..writers_n).map(|_| shared.clone()).collect()
            }
            Which::Redis => {
                let prefix = format!("cas{}", stores.next.fetch_add(1, Ordering::SeqCst));
                let url = stores.redis.as_ref().unwrap().url(0);
                (0..writers_n)
                    .map(|_| {
                        let store = stores
                            .rt
                            .block_on(Redis::connect(&url, &prefix, clock.clone()))
                            .unwrap();
                        Arc::new(store) as Arc<dyn Handles>
                    })
                    .collect()
            }
        };
        let barrier = Arc::new(std::sync::Barrier::new(writers_n));
        let threads: Vec<_> = writers
            .iter()
            .map(|handles| {
                let (handles, barrier) = (handles.clone(), barrier.clone());
                let rt = stores.rt.handle().clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut lost = 0;
                    for _ in 0..adds {
                        loop {
                            let read = rt.block_on(handles.fetch("alice", Kind::Refs, "lab/x")).unwrap();
                            let n: u64 = read.as_ref().map_or(0, |r| r.value.parse().unwrap());
                            let version = read.as_ref().map(|r| r.version.as_str());
                            let next = (n + 1).to_string();
                            let put = handles.put_if("alice", Kind::Refs, "lab/x", version, &next, Some(60_000));
                            if rt.block_on(put).unwrap() {
                                break;
                            }
                            lost += 1;
                        }
                    }
                    lost
                })
            })
            .collect();
        let lost: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        let total = stores.now(writers[0].get("alice", Kind::Refs, "lab/x"));
        assert_eq!(
            total.as_deref(),
            Some((writers_n * adds).to_string().as_str()),
            "{which:?}: no change lost"
        );
        println!(
            "{which:?}: {writers_n} writers × {adds} compare-and-sets on one value: none lost ({lost} races lost and redone)"
        );
    }
}
