//! Outside attack (attack5) on the link's re-probe: `Links::probe_due` over generated sequences
//! of frame choices and transfers on three devices, checked against what it promises rather than
//! a copy of its rule.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use droidmcp_adb::link::{Links, MIN_SAMPLE_BYTES, PROBE_AGAIN, Timing};
use proptest::prelude::*;

/// One event on a device: a frame choice (`probe_due`) or a transfer big enough to measure.
#[derive(Debug, Clone, Copy)]
enum Event {
    Choice,
    Transfer,
}

const SERIALS: [&str; 3] = ["usb-phone", "192.168.1.20:5555", "emulator-5554"];

fn events() -> impl Strategy<Value = Vec<(usize, u64, Event)>> {
    // Gaps from 0 to 400 s in ms: several fall inside PROBE_AGAIN (300 s), some past it.
    let event = prop_oneof![3 => Just(Event::Choice), 1 => Just(Event::Transfer)];
    proptest::collection::vec((0..SERIALS.len(), 0..400_000u64, event), 1..60)
}

/// What `probe_due` answered for each choice, given the events, on a fresh `Links`.
fn answers(events: &[(usize, u64, Event)], base: Instant, sample: &Timing) -> Vec<(usize, Instant, bool)> {
    let links = Links::default();
    let mut now = base;
    let mut said = Vec::new();
    for (serial, gap, event) in events {
        now += Duration::from_millis(*gap);
        match event {
            Event::Choice => said.push((*serial, now, links.probe_due(SERIALS[*serial], now))),
            Event::Transfer => links.record(SERIALS[*serial], sample),
        }
    }
    said
}

static CASES: AtomicUsize = AtomicUsize::new(0);
static CHOICES: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Guard. Per device: a probe at most once per PROBE_AGAIN; never longer than PROBE_AGAIN
    /// since its last probe or its first frame choice without one (a slow measure cannot stay
    /// for good); a device nothing measured is probed at its first choice; and another device's
    /// choices and transfers change nothing of its answers.
    #[test]
    fn each_link_is_probed_at_most_once_per_probe_again_and_never_sticks(events in events()) {
        let mut sample = Timing::default();
        std::thread::sleep(Duration::from_millis(1));
        sample.saw(MIN_SAMPLE_BYTES as usize);
        let base = Instant::now();
        let said = answers(&events, base, &sample);
        let mut last: HashMap<usize, Instant> = HashMap::new();
        let mut measured: HashMap<usize, bool> = HashMap::new();
        let mut now = base;
        let mut choices = said.iter();
        for (serial, gap, event) in &events {
            now += Duration::from_millis(*gap);
            match event {
                Event::Transfer => {
                    measured.insert(*serial, true);
                }
                Event::Choice => {
                    let (_, at, due) = *choices.next().unwrap();
                    match last.get(serial) {
                        None => prop_assert!(due || measured.contains_key(serial), "never measured, no probe at {serial}'s first choice"),
                        Some(before) if at.duration_since(*before) < PROBE_AGAIN => prop_assert!(!due, "probed again {:?} after", at.duration_since(*before)),
                        Some(before) => prop_assert!(due, "{:?} since the last probe and no probe", at.duration_since(*before)),
                    }
                    if due || !last.contains_key(serial) {
                        last.insert(*serial, at);
                    }
                }
            }
        }
        // Each device alone, on a Links of its own: the same answers.
        for (serial, name) in SERIALS.iter().enumerate() {
            let own: Vec<(usize, u64, Event)> = {
                let mut gap_since = 0;
                let mut kept = Vec::new();
                for (s, gap, event) in &events {
                    gap_since += gap;
                    if *s == serial {
                        kept.push((*s, gap_since, *event));
                        gap_since = 0;
                    }
                }
                kept
            };
            let alone: Vec<bool> = answers(&own, base, &sample).iter().map(|(_, _, d)| *d).collect();
            let together: Vec<bool> = said.iter().filter(|(s, ..)| *s == serial).map(|(_, _, d)| *d).collect();
            prop_assert_eq!(alone, together, "{}'s answers depend on the other devices", name);
        }
        CASES.fetch_add(1, Ordering::Relaxed);
        CHOICES.fetch_add(said.len(), Ordering::Relaxed);
        if CASES.load(Ordering::Relaxed) == 2000 {
            println!(
                "{} generated sequences, {} frame choices over 3 devices",
                CASES.load(Ordering::Relaxed),
                CHOICES.load(Ordering::Relaxed)
            );
        }
    }
}
