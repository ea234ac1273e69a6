//! The store's contract, on a clock the tests move: take, use, release, expiry, the one rule,
//! and that of many takers racing one wins (handles: `handles.rs`). Every test runs against
//! both stores: the in-process one and Redis (a `redis-server` of the test's own; its absence is the skip rule's).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::{Just, Strategy, prop_oneof};

use super::{Holder, InProcess, Lease, Leases, Taken};
use crate::clock::{Clock, ManualClock};
use crate::in_redis::Redis;

fn holder(principal: &str, person: bool) -> Holder {
    Holder {
        principal: principal.into(),
        person,
    }
}

/// Where the tests' stores live: a runtime for the Redis one's network, and its server.
struct Stores {
    rt: tokio::runtime::Runtime,
    redis: Option<testkit::RedisServer>,
    /// Each Redis store gets keys of its own, so every case starts empty.
    next: AtomicUsize,
}

#[derive(Clone, Copy, Debug)]
enum Which {
    InProcess,
    Redis,
}

impl Stores {
    fn new() -> Stores {
        Stores {
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
            redis: testkit::redis_server(),
            next: AtomicUsize::new(0),
        }
    }

    /// The stores this run can test: the in-process one, and Redis when its server runs.
    fn each(&self) -> Vec<Which> {
        match self.redis {
            Some(_) => vec![Which::InProcess, Which::Redis],
            None => vec![Which::InProcess],
        }
    }

    /// A fresh, empty store of `which` kind on `clock`.
    fn store(&self, which: Which, clock: Arc<ManualClock>) -> Arc<dyn Leases> {
        match which {
            Which::InProcess => Arc::new(InProcess::new(clock)),
            Which::Redis => {
                let server = self.redis.as_ref().expect("each() offers Redis only with its server");
                let prefix = format!("test{}", self.next.fetch_add(1, Ordering::SeqCst));
                Arc::new(
                    self.rt
                        .block_on(Redis::connect(&server.url(0), &prefix, clock))
                        .unwrap(),
                )
            }
        }
    }

    /// A fresh store and the clock it reads.
    fn fresh(&self, which: Which) -> (Arc<ManualClock>, Arc<dyn Leases>) {
        let clock = Arc::new(ManualClock::at(1_000_000));
        (clock.clone(), self.store(which, clock))
    }

    fn now<T>(&self, pending: super::Pending<'_, T>) -> T {
        self.rt.block_on(pending).expect("the store answers")
    }
}

#[test]
fn a_lease_is_taken_refused_to_another_renewed_by_use_released_and_ends_when_its_time_is_up() {
    let stores = Stores::new();
    for which in stores.each() {
        lifecycle(&stores, which);
    }
}

fn lifecycle(stores: &Stores, which: Which) {
    let (clock, leases) = stores.fresh(which);
    let (alice, bob) = (holder("alice", false), holder("bob", false));
    let Taken::Yours(lease) = stores.now(leases.take("lab/a", &alice, 60_000)) else {
        panic!("a free device is taken")
    };
    assert_eq!(lease.until_ms, 1_060_000);
    assert_eq!(
        stores.now(leases.take("lab/a", &bob, 60_000)),
        Taken::Theirs(lease.clone())
    );
    assert_eq!(
        stores.now(leases.touch("lab/a", &bob)),
        Some(Taken::Theirs(lease.clone()))
    );
    assert_eq!(
        stores.now(leases.release("lab/a", &bob)),
        Some(Taken::Theirs(lease.clone()))
    );
    assert_eq!(stores.now(leases.touch("lab/b", &bob)), None, "nobody holds lab/b");

    clock.advance(30_000);
    let Some(Taken::Yours(renewed)) = stores.now(leases.touch("lab/a", &alice)) else {
        panic!("the holder's use renews")
    };
    assert_eq!(renewed.until_ms, 1_090_000);
    clock.advance(59_999);
    assert_eq!(
        stores.now(leases.list()).len(),
        1,
        "a millisecond before its end it holds"
    );
    clock.advance(1);
    assert!(stores.now(leases.list()).is_empty(), "at its end it is gone");
    assert!(matches!(stores.now(leases.take("lab/a", &bob, 1_000)), Taken::Yours(_)));
    assert!(matches!(
        stores.now(leases.release("lab/a", &bob)),
        Some(Taken::Yours(_))
    ));
    assert_eq!(stores.now(leases.release("lab/a", &bob)), None);
}

#[test]
fn a_person_takes_over_from_their_own_assistant_and_the_assistant_waits_for_them() {
    let stores = Stores::new();
    for which in stores.each() {
        take_over(&stores, which);
    }
}

fn take_over(stores: &Stores, which: Which) {
    let (_, leases) = stores.fresh(which);
    let (agent, person) = (holder("alice", false), holder("alice", true));
    assert!(matches!(stores.now(leases.take("d", &agent, 60_000)), Taken::Yours(_)));
    assert!(matches!(stores.now(leases.touch("d", &person)), Some(Taken::Yours(_))));
    let Taken::Yours(held) = stores.now(leases.take("d", &person, 60_000)) else {
        panic!("the person takes over")
    };
    assert_eq!(stores.now(leases.touch("d", &agent)), Some(Taken::Theirs(held.clone())));
    assert_eq!(
        stores.now(leases.take("d", &agent, 60_000)),
        Taken::Theirs(held.clone())
    );
    assert_eq!(stores.now(leases.release("d", &agent)), Some(Taken::Theirs(held)));
    assert!(matches!(
        stores.now(leases.take("d", &holder("bob", true), 1)),
        Taken::Theirs(_)
    ));
}

/// Every sequence of operations by four holders on two devices, against a model of the rule
/// written out case by case: the store answers as the model does, and never holds two leases
/// on a device or a lease past its end.
#[test]
fn any_sequence_of_operations_answers_as_the_rule_says() {
    let stores = Stores::new();
    for which in stores.each() {
        sequences(&stores, which);
    }
}

fn sequences(stores: &Stores, which: Which) {
    #[derive(Debug, Clone)]
    enum Op {
        Take(usize, usize, u64),
        Touch(usize, usize),
        Release(usize, usize),
        Wait(u64),
    }
    let holders = [
        holder("alice", false),
        holder("alice", true),
        holder("bob", false),
        holder("bob", true),
    ];
    let devices = ["labA/x", "labB/x"];
    let op = prop_oneof![
        (0..4usize, 0..2usize, 1..5u64).prop_map(|(h, d, t)| Op::Take(h, d, t * 1000)),
        (0..4usize, 0..2usize).prop_map(|(h, d)| Op::Touch(h, d)),
        (0..4usize, 0..2usize).prop_map(|(h, d)| Op::Release(h, d)),
        prop_oneof![Just(1u64), Just(999), Just(1000), Just(2500)].prop_map(Op::Wait),
    ];
    let cases = std::cell::Cell::new(0);
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&proptest::collection::vec(op, 1..40), |ops| {
            cases.set(cases.get() + 1);
            let (clock, leases) = stores.fresh(which);
            let mut model: [Option<Lease>; 2] = [None, None];
            let may = |lease: &Lease, who: &Holder| {
                lease.holder.principal == who.principal && (who.person || !lease.holder.person)
            };
            for op in ops {
                let t = clock.now_ms();
                for slot in model.iter_mut() {
                    if slot.as_ref().is_some_and(|l| l.until_ms <= t) {
                        *slot = None;
                    }
                }
                match op {
                    Op::Wait(ms) => clock.advance(ms),
                    Op::Take(h, d, ttl) => {
                        let got = stores.now(leases.take(devices[d], &holders[h], ttl));
                        let want = match &model[d] {
                            Some(l) if !may(l, &holders[h]) => Taken::Theirs(l.clone()),
                            _ => {
                                let l = Lease {
                                    device: devices[d].into(),
                                    holder: holders[h].clone(),
                                    until_ms: t + ttl,
                                    ttl_ms: ttl,
                                };
                                model[d] = Some(l.clone());
                                Taken::Yours(l)
                            }
                        };
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::Touch(h, d) => {
                        let got = stores.now(leases.touch(devices[d], &holders[h]));
                        let want = match &mut model[d] {
                            None => None,
                            Some(l) if !may(l, &holders[h]) => Some(Taken::Theirs(l.clone())),
                            Some(l) => {
                                l.until_ms = t + l.ttl_ms;
                                Some(Taken::Yours(l.clone()))
                            }
                        };
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::Release(h, d) => {
                        let got = stores.now(leases.release(devices[d], &holders[h]));
                        let want = match model[d].clone() {
                            None => None,
                            Some(l) if !may(&l, &holders[h]) => Some(Taken::Theirs(l)),
                            Some(l) => {
                                model[d] = None;
                                Some(Taken::Yours(l))
                            }
                        };
                        proptest::prop_assert_eq!(got, want);
                    }
                }
                let t = clock.now_ms();
                let live: Vec<Lease> = model.iter().flatten().filter(|l| l.until_ms > t).cloned().collect();
                proptest::prop_assert_eq!(stores.now(leases.list()), live);
            }
            Ok(())
        })
        .unwrap();
    println!(
        "{which:?}: {} generated sequences of lease operations (4 holders, 2 devices)",
        cases.get()
    );
}

/// Eight takers (threads on one in-process store; connections of their own, as eight instances
/// would be, on Redis) take one free device at once, many times: each time exactly one wins.
#[test]
fn of_takers_racing_for_one_device_exactly_one_wins() {
    let stores = Stores::new();
    for which in stores.each() {
        race(&stores, which);
    }
}

fn race(stores: &Stores, which: Which) {
    let rounds = 200;
    let clock = Arc::new(ManualClock::at(1_000_000));
    let shared = stores.store(which, clock.clone());
    // Each taker's own view of the store: the one map, or a connection of its own.
    let takers: Vec<Arc<dyn Leases>> = match which {
        Which::InProcess => (0..8).map(|_| shared.clone()).collect(),
        Which::Redis => {
            let prefix = format!("race{}", stores.next.fetch_add(1, Ordering::SeqCst));
            let url = stores.redis.as_ref().unwrap().url(0);
            (0..8)
                .map(|_| {
                    let store = stores
                        .rt
                        .block_on(Redis::connect(&url, &prefix, clock.clone()))
                        .unwrap();
                    Arc::new(store) as Arc<dyn Leases>
                })
                .collect()
        }
    };
    for round in 0..rounds {
        let device = format!("d{round}");
        let barrier = Arc::new(std::sync::Barrier::new(8));
        let threads: Vec<_> = takers
            .iter()
            .enumerate()
            .map(|(i, leases)| {
                let (leases, barrier, device) = (leases.clone(), barrier.clone(), device.clone());
                let rt = stores.rt.handle().clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let taken = rt.block_on(leases.take(&device, &holder(&format!("p{i}"), false), 1000));
                    matches!(taken.expect("the store answers"), Taken::Yours(_))
                })
            })
            .collect();
        let winners = threads.into_iter().map(|t| t.join().unwrap()).filter(|w| *w).count();
        assert_eq!(winners, 1, "{which:?}, round {round}");
    }
    println!("{which:?}: {rounds} races of 8 takers: one winner each");
}

mod handles;
