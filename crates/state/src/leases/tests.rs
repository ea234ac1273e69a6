//! The store's contract, on a clock the tests move: take, use, release, expiry, the one rule,
//! and that of many takers racing one wins.

use std::sync::Arc;

use proptest::prelude::{Just, Strategy, prop_oneof};

use super::{Holder, InProcess, Lease, Leases, Taken};
use crate::clock::{Clock, ManualClock};

fn holder(principal: &str, person: bool) -> Holder {
    Holder {
        principal: principal.into(),
        person,
    }
}

fn now<T>(pending: super::Pending<'_, T>) -> T {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut pending = pending;
    match pending.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(answer) => answer.expect("the in-process store never fails"),
        std::task::Poll::Pending => panic!("the in-process store answers at once"),
    }
}

fn store() -> (Arc<ManualClock>, InProcess) {
    let clock = Arc::new(ManualClock::at(1_000_000));
    (clock.clone(), InProcess::new(clock))
}

#[test]
fn a_lease_is_taken_refused_to_another_renewed_by_use_released_and_ends_when_its_time_is_up() {
    let (clock, leases) = store();
    let (alice, bob) = (holder("alice", false), holder("bob", false));
    let Taken::Yours(lease) = now(leases.take("lab/a", &alice, 60_000)) else {
        panic!("a free device is taken")
    };
    assert_eq!(lease.until_ms, 1_060_000);
    assert_eq!(now(leases.take("lab/a", &bob, 60_000)), Taken::Theirs(lease.clone()));
    assert_eq!(now(leases.touch("lab/a", &bob)), Some(Taken::Theirs(lease.clone())));
    assert_eq!(now(leases.release("lab/a", &bob)), Some(Taken::Theirs(lease.clone())));
    assert_eq!(now(leases.touch("lab/b", &bob)), None, "nobody holds lab/b");

    clock.advance(30_000);
    let Some(Taken::Yours(renewed)) = now(leases.touch("lab/a", &alice)) else {
        panic!("the holder's use renews")
    };
    assert_eq!(renewed.until_ms, 1_090_000);
    clock.advance(59_999);
    assert_eq!(now(leases.list()).len(), 1, "a millisecond before its end it holds");
    clock.advance(1);
    assert!(now(leases.list()).is_empty(), "at its end it is gone");
    assert!(matches!(now(leases.take("lab/a", &bob, 1_000)), Taken::Yours(_)));
    assert!(matches!(now(leases.release("lab/a", &bob)), Some(Taken::Yours(_))));
    assert_eq!(now(leases.release("lab/a", &bob)), None);
}

#[test]
fn a_person_takes_over_from_their_own_assistant_and_the_assistant_waits_for_them() {
    let (_, leases) = store();
    let (agent, person) = (holder("alice", false), holder("alice", true));
    assert!(matches!(now(leases.take("d", &agent, 60_000)), Taken::Yours(_)));
    assert!(matches!(now(leases.touch("d", &person)), Some(Taken::Yours(_))));
    let Taken::Yours(held) = now(leases.take("d", &person, 60_000)) else {
        panic!("the person takes over")
    };
    assert_eq!(now(leases.touch("d", &agent)), Some(Taken::Theirs(held.clone())));
    assert_eq!(now(leases.take("d", &agent, 60_000)), Taken::Theirs(held.clone()));
    assert_eq!(now(leases.release("d", &agent)), Some(Taken::Theirs(held)));
    assert!(matches!(
        now(leases.take("d", &holder("bob", true), 1)),
        Taken::Theirs(_)
    ));
}

/// Every sequence of operations by four holders on two devices, against a model of the rule
/// written out case by case: the store answers as the model does, and never holds two leases
/// on a device or a lease past its end.
#[test]
fn any_sequence_of_operations_answers_as_the_rule_says() {
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
            let (clock, leases) = store();
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
                        let got = now(leases.take(devices[d], &holders[h], ttl));
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
                        let got = now(leases.touch(devices[d], &holders[h]));
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
                        let got = now(leases.release(devices[d], &holders[h]));
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
                proptest::prop_assert_eq!(now(leases.list()), live);
            }
            Ok(())
        })
        .unwrap();
    println!(
        "{} generated sequences of lease operations (4 holders, 2 devices)",
        cases.get()
    );
}

/// Eight threads take one free device at once, many times: each time exactly one wins.
#[test]
fn of_takers_racing_for_one_device_exactly_one_wins() {
    let rounds = 200;
    for round in 0..rounds {
        let (_, leases) = store();
        let leases = Arc::new(leases);
        let barrier = Arc::new(std::sync::Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (leases, barrier) = (leases.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    matches!(
                        now(leases.take("d", &holder(&format!("p{i}"), false), 1000)),
                        Taken::Yours(_)
                    )
                })
            })
            .collect();
        let winners = threads.into_iter().map(|t| t.join().unwrap()).filter(|w| *w).count();
        assert_eq!(winners, 1, "round {round}");
    }
    println!("{rounds} races of 8 takers: one winner each");
}
