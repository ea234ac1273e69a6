//! The cache's bounds, shared pool and error answers.

use std::time::{Duration, SystemTime};

use ulid::Ulid;

use super::{Cache, CacheError, Data, Kind, Limits};

fn text(n: usize) -> Data {
    Data::Text("x".repeat(n))
}

#[test]
fn sessions_stay_within_their_shared_bound_and_an_ended_one_frees_its_share() {
    let first = Cache::new(Limits {
        max_entries: 100,
        max_bytes: 1000,
    })
    .with_sessions_bound(1500);
    let second = first.empty_like();
    let pool = || first.pool.bytes.load(std::sync::atomic::Ordering::Relaxed);
    for _ in 0..3 {
        first.put(Kind::Shell, "first", text(400));
    }
    assert_eq!((first.stats().entries, pool()), (2, 800), "its own bound");
    second.put(Kind::Shell, "second", text(400));
    let kept = second.put(Kind::Shell, "second", text(400));
    // Over the shared bound: the session that stored makes room from its own entries.
    assert_eq!((first.stats().entries, second.stats().entries, pool()), (2, 1, 1200));
    assert!(second.get(&kept.id).is_ok());
    // An entry the user just asked for stays readable; past the shared bound (the other
    // session holds 800 of 1500) it keeps its head and tail, within the bound.
    let big = second.put(Kind::Shell, "second", text(900));
    assert_eq!(second.stats().entries, 1);
    assert!(pool() <= 1500, "{}", pool());
    let Data::Text(kept) = &second.get(&big.id).unwrap().data else {
        panic!()
    };
    assert!(kept.contains("bytes dropped here") && kept.starts_with("xxx") && kept.ends_with("xxx"));
    let cut_bytes = big.bytes;
    drop(first);
    let pool = second.pool.clone();
    second.put(Kind::Shell, "second", text(100));
    assert_eq!(second.stats().entries, 2);
    assert_eq!(pool.bytes.load(std::sync::atomic::Ordering::Relaxed), cut_bytes + 100);
    second.clear();
    assert_eq!(pool.bytes.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn entries_are_evicted_by_count_then_by_size() {
    let cache = Cache::new(Limits {
        max_entries: 2,
        max_bytes: 1000,
    });
    let a = cache.put(Kind::Shell, "a", text(100));
    let b = cache.put(Kind::Shell, "b", text(100));
    cache.get(&a.id).unwrap();
    let c = cache.put(Kind::Shell, "c", text(100));
    assert!(
        matches!(cache.get(&b.id), Err(CacheError::Evicted { .. })),
        "b was least recently used, and the answer says it was evicted"
    );
    assert!(cache.get(&a.id).is_ok() && cache.get(&c.id).is_ok());
    let d = cache.put(Kind::Shell, "d", text(950));
    assert!(cache.get(&d.id).is_ok());
    let stats = cache.stats();
    assert_eq!((stats.entries, stats.bytes), (1, 950));
    assert_eq!((stats.evicted_for_count, stats.evicted_for_size), (2, 1));
}

#[test]
fn expired_unknown_and_malformed_ids_get_distinct_errors_naming_the_refresh() {
    let cache = Cache::new(Limits::default());
    let old = SystemTime::now() - Duration::from_secs(2 * 3600);
    let id = cache.put_made_at(Kind::Props, Data::Text("x".into()), old);
    match cache.get(&id) {
        Err(e @ CacheError::Expired { .. }) => assert!(e.to_string().contains("adb-device properties")),
        other => panic!("expected expired, got {other:?}"),
    }
    assert_eq!(cache.stats().entries, 0);
    let unknown = format!("ui-{}", Ulid::generate());
    assert!(matches!(cache.get(&unknown), Err(CacheError::Unknown { .. })));
    // Another client's cache, made later in the same run: a fresh id from it is unknown
    // here, never "from an earlier run".
    let other = cache.empty_like();
    std::thread::sleep(Duration::from_millis(5));
    let theirs = other.put(Kind::Props, "theirs", Data::Text("x".into()));
    assert!(matches!(cache.get(&theirs.id), Err(CacheError::Unknown { .. })));
    let later = cache.empty_like();
    assert!(matches!(later.get(&theirs.id), Err(CacheError::Unknown { .. })));
    for bad in [
        "",
        "props",
        "props-123",
        "nope-01JD3V6M8Q9ZK4X2B7T5R1N0PA",
        "props-01JD3V6M8Q9ZK4X2B7T5R1N0P!",
    ] {
        assert!(matches!(cache.get(bad), Err(CacheError::Malformed(_))), "{bad}");
    }
}

/// An entry exported by one instance's cache is adopted by another's with its kind, data and
/// age; a shared cache's new entries wait for the store once; a shared cache never calls an id
/// it does not hold "from an earlier run" (another instance may have made it).
#[test]
fn an_exported_entry_is_adopted_whole_and_each_new_one_is_published_once() {
    let made = Cache::new(Limits::default()).shared();
    let entry = made.put(Kind::Props, "getprop", Data::Text("ro.x=1".into()));
    assert_eq!(made.unpublished().len(), 1);
    assert!(made.unpublished().is_empty(), "published once");
    let (json, ttl_ms) = Cache::export(&entry);
    assert!(ttl_ms > 0 && ttl_ms <= Kind::Props.ttl().as_millis() as u64);
    let other = Cache::new(Limits::default()).shared();
    let adopted = other.adopt(&entry.id, &json).expect("adopted");
    assert_eq!(
        (adopted.kind, &adopted.data, &adopted.about),
        (Kind::Props, &entry.data, &entry.about)
    );
    assert!(other.get(&entry.id).is_ok());
    assert!(
        other.unpublished().is_empty(),
        "an adopted entry is not published again"
    );
    assert!(other.adopt("props-nope", &json).is_none());
    let older = format!(
        "props-{}",
        Ulid::from_datetime(SystemTime::now() - Duration::from_secs(60))
    );
    let later = Cache::new(Limits::default()).shared();
    assert!(matches!(later.get(&older), Err(CacheError::Unknown { .. })));
}
