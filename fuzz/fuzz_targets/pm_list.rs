#![no_main]
//! `pm list packages -f -U …` output, and the package-name grammar that guards the shell.

use droidmcp_pure::android::packages::{is_valid_package_name, parse_package_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in parse_package_list(&text) {
        let _ = is_valid_package_name(&line.name);
    }
    let _ = is_valid_package_name(&text);
});
