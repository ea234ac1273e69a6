//! `ui`'s own resolution (resolve.rs: a ref, a query, a recorded point, each verified before it
//! acts) and the recording's secrets, on generated screens: the code under test is the code a
//! call runs, fed readings made the way `read_screen` makes them (`elements_of`), with no device.
//! identity.rs: one element identity (refs, verify before act, the recorded selectors, web
//! elements); secrets.rs: secrets by the field.

mod identity;
mod secrets;

use serde_json::Value;

use super::Snapshot;
use super::read::elements_of;
use super::resolve::{point_on, query_on, ref_on, step_selector};
use super::web;
use crate::android::screen_state::ScreenState;
use crate::android::ui_elements::{Element, Field, Matcher};
use crate::android::ui_refs::RefBook;
use crate::android::uiautomator::{Bounds, UiTree, parse_ui_dump};
use crate::flow::{Recorded, Recording, Selector, Target};
use crate::tools::ui::Query;

const SCREEN: [u32; 2] = [1080, 2400];

/// Where generated screens put their WebView (its page's elements go inside it).
const WEBVIEW: Bounds = Bounds {
    left: 0,
    top: 1700,
    right: 1080,
    bottom: 2400,
};

/// A screen's XML: a frame holding `body`, and a WebView below it when `web` has elements.
fn screen_xml(body: &str) -> String {
    format!(
        r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">{body}<node index="99" text="" class="android.webkit.WebView" package="p" bounds="[0,1700][1080,2400]"/></node></hierarchy>"#
    )
}

/// A web element as the page script (`web.rs`'s COLLECT) reports one, at row `row` of the page.
fn web_element(role: &str, name: &str, value: &str, password: bool, row: usize, checked: bool) -> Value {
    serde_json::json!({
        "role": role, "name": name, "value": value, "password": password, "checked": checked,
        "x": 10, "y": 10 + 60 * row, "w": 340, "h": 50, "sel": format!("#el{row}"),
    })
}

/// A reading as `read_screen` makes one: the dump, the page's elements merged under its
/// WebView by `web::node`, a secret field the recording knows hidden (`elements_of`), refs
/// numbered by `book`.
fn reading(xml: &str, page: &[Value], book: &mut RefBook, recording: &Recording) -> Snapshot {
    let mut tree: UiTree = parse_ui_dump(xml).expect("a generated screen parses");
    let at = tree
        .nodes
        .iter()
        .position(|n| n.class() == "android.webkit.WebView")
        .expect("a WebView");
    let depth = tree.nodes[at].depth + 1;
    for e in page {
        let index = tree.nodes.len();
        // One CSS pixel per device pixel: the page is as wide as the WebView.
        tree.nodes.push(web::node(e, "p", WEBVIEW, 1.0, at, depth));
        tree.nodes[at].children.push(index);
    }
    let mut elements = elements_of(&mut tree, |els| recording.hidden(els));
    book.number(&mut elements);
    Snapshot {
        tree,
        elements,
        focused: None,
        screen: SCREEN,
        window: None,
        signature: 0,
        state: ScreenState::Ready,
        web: None,
        taken: std::time::Instant::now(),
        acts: Default::default(),
    }
}

/// What `ui` acts on for a target a flow gives it (a selector with what the recording saw of
/// the element), as `ui tap` resolves it: a query matched exactly, a point verified when
/// something was recorded (a bare point is tapped wherever it is: `None` here).
fn acted_on(snap: &Snapshot, selector: &Selector, recorded: Option<&Recorded>) -> Option<Result<Element, String>> {
    let query = |field: Field, value: &str| Query::Field {
        field,
        matcher: Matcher::Exact(value.to_string()),
        value: value.to_string(),
    };
    let query = match selector {
        Selector::ResourceId(v) => query(Field::ResourceId, v),
        Selector::Text(v) => query(Field::Text, v),
        Selector::ContentDesc(v) => query(Field::ContentDesc, v),
        Selector::Point(at) => return recorded.map(|r| point_on(snap, *at, r).cloned()),
        other => panic!("not generated: {other:?}"),
    };
    Some(query_on(snap, &query, recorded).map_err(|f| f.message))
}

/// How a replayed step found what it acted on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Found {
    /// By its selector.
    Selector,
    /// Healed: by its recorded label, the selector matching nothing.
    Healed,
}

/// `acted_on` as a replayed script's `target` does it: the selector, and when it no longer
/// matches, healed by the recorded label when exactly one element has it (the prelude's
/// `ui.find` count), verified by that label and the class.
fn replayed(snap: &Snapshot, target: &Target) -> Option<(Result<Element, String>, Found)> {
    let recorded = target.checks();
    let first = acted_on(snap, &target.selector, recorded.as_ref())?;
    let unmatched = first
        .as_ref()
        .is_err_and(|e| e.starts_with("nothing on the screen matches"));
    let heal_by = target.label.as_ref().filter(|l| {
        unmatched
            && !l.trim().is_empty()
            && !target.selector.fragile()
            && target.selector != Selector::Text((*l).clone())
    });
    let Some(label) = heal_by else {
        return Some((first, Found::Selector));
    };
    let find = Query::Field {
        field: Field::Text,
        matcher: Matcher::Exact(label.clone()),
        value: label.clone(),
    };
    if find.find(snap).len() != 1 {
        return Some((first, Found::Selector));
    }
    let healed = Recorded {
        label: Some(label.clone()),
        class: target.class.clone(),
        id: None,
    };
    acted_on(snap, &Selector::Text(label.clone()), Some(&healed)).map(|r| (r, Found::Healed))
}

/// How a recording keeps a tap on `element` of `snap` (as `ui`'s `land` does): its selector,
/// as the recording lets a step keep it.
fn recorded_tap(snap: &Snapshot, element: &Element, recording: &Recording) -> Target {
    recording.guarded(element, step_selector(snap, element))
}

/// The element of `snap` a ref names, as `ui tap {ref}` resolves it.
fn by_ref<'a>(snap: &'a Snapshot, reference: &str) -> Result<&'a Element, String> {
    ref_on(snap, reference, None).map_err(|f| f.message)
}
