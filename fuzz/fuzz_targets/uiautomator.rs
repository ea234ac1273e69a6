#![no_main]
//! uiautomator XML: the tree, its elements (refs, labels), and the XML written back.

use droidmcp_pure::android::ui_elements::elements;
use droidmcp_pure::android::uiautomator::parse_ui_dump;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(tree) = parse_ui_dump(&text) {
        let _ = elements(&tree);
        let _ = tree.deepest_at(100, 100, |_| true);
        let xml = tree.to_xml();
        let again = parse_ui_dump(&xml).expect("our own XML parses");
        assert_eq!(
            again.nodes.len(),
            tree.nodes.len(),
            "to_xml then parse_ui_dump lost nodes"
        );
    }
});
