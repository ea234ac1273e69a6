//! Outside attack (attack5) on the device files a replayed flow makes (`commands::device_file`):
//! generated names spelled from the characters a file name flattens alike.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use droidmcp_flow::commands::device_file;
use proptest::prelude::*;

/// Characters that flatten to `_` or to each other, a combining accent, two scripts, and the
/// plain ones they flatten to.
const CONFUSABLE: &[char] = &[
    'a', 'b', 'x', '0', '_', '-', '.', '/', ' ', 'é', 'e', '\u{301}', 'ロ', '設', '\u{200E}', 'Ω',
];

fn name() -> impl Strategy<Value = String> {
    // Up to 80 chars: past the 64 a device file keeps whole.
    proptest::collection::vec(proptest::sample::select(CONFUSABLE), 1..80).prop_map(|c| c.into_iter().collect())
}

static CASES: AtomicUsize = AtomicUsize::new(0);
static NAMES: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Guard. Distinct names get distinct device files (for a screenshot and a recording alike),
    /// the same name the same file, and each file is one the replay's script will quote
    /// (`commands.js`'s `quoted`: `[A-Za-z0-9_./-]` only) in /data/local/tmp, its name short
    /// enough for any device's file system.
    #[test]
    fn distinct_names_get_distinct_device_files_the_script_can_quote(names in proptest::collection::vec(name(), 2..12)) {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for n in &names {
            for ext in ["png", "mp4"] {
                let file = device_file(n, ext);
                prop_assert_eq!(&file, &device_file(n, ext));
                prop_assert!(file.starts_with("/data/local/tmp/droidmcp-") && file.ends_with(&format!(".{ext}")), "{}", file);
                prop_assert!(file.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c)), "{} is no path the script quotes", file);
                let base = file.rsplit('/').next().unwrap();
                prop_assert!(base.len() <= 120, "{}", base);
                if let Some(other) = seen.insert(file.clone(), n) {
                    prop_assert_eq!(other, n.as_str(), "two names, one device file {}", file);
                }
            }
        }
        CASES.fetch_add(1, Ordering::Relaxed);
        NAMES.fetch_add(names.len(), Ordering::Relaxed);
        if CASES.load(Ordering::Relaxed) == 3000 {
            println!(
                "{} generated sets, {} names, each as a screenshot and a recording",
                CASES.load(Ordering::Relaxed),
                NAMES.load(Ordering::Relaxed)
            );
        }
    }
}
