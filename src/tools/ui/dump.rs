//! `ui dump`: the screen's elements with their refs, paged and filtered; the whole window dump
//! kept behind a cacheId.

use serde_json::{Value, json};

use super::answer::{Done, Outcome, UiOutput, output};
use super::args::UiOperation;
use super::phone::{describe, grid_instead};
use super::read::{ReadError, read_current};
use crate::android::ui_elements::Element;
use crate::context::{Data, Kind};
use crate::tools::State;

pub(super) async fn dump(state: &State, serial: &str, limit: usize, offset: usize, filter: Option<&str>) -> Outcome {
    let snap = match read_current(state, serial).await {
        Err(ReadError::NeverIdle(waited)) => return grid_instead(state, serial, UiOperation::Dump, waited).await,
        read => read?,
    };
    let needle = filter.map(str::to_lowercase);
    let matching: Vec<Element> = snap
        .elements
        .iter()
        .filter(|e| {
            needle.as_ref().is_none_or(|n| {
                e.label.to_lowercase().contains(n) || e.id.as_deref().is_some_and(|i| i.to_lowercase().contains(n))
            })
        })
        .cloned()
        .collect();
    let total = matching.len();
    if offset > 0 && offset >= total {
        return Err(format!("offset {offset} is past the end: {total} elements. Use an offset below {total}").into());
    }
    let page: Vec<Element> = matching.into_iter().skip(offset).take(limit).collect();
    let end = offset + page.len();
    let tree_items: Vec<Value> = snap
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut o = serde_json::Map::new();
            o.insert("i".into(), json!(i));
            o.insert("depth".into(), json!(n.depth));
            for (k, v) in &n.attrs {
                o.insert(k.clone(), json!(v));
            }
            Value::Object(o)
        })
        .collect();
    let entry = state
        .cache
        .put(Kind::Ui, format!("window dump of {serial}"), Data::List(tree_items));
    let hint = match snap.window {
        Some(w) => format!(
            "the dump is a window of {}×{} at ({}, {}) over the {}×{} screen: a dialog or popup; tap {{ref}} acts on its elements",
            w.right - w.left,
            w.bottom - w.top,
            w.left,
            w.top,
            snap.screen[0],
            snap.screen[1]
        ),
        None => "tap {ref} acts on an element; a ref names its element while it is on the screen".into(),
    };
    Ok(Done::answer(
        UiOutput {
            focused: snap.focused.clone(),
            state: describe(&snap.state, &snap.elements),
            screen: Some(snap.screen),
            window: snap.window.map(|w| [w.left, w.top, w.right, w.bottom]),
            count: Some(page.len()),
            elements: Some(page),
            total_count: Some(total),
            has_more: Some(end < total),
            next_offset: (end < total).then_some(end),
            cache_id: Some(entry.id.clone()),
            web: snap.web.clone(),
            hint: Some(hint),
            ..output(UiOperation::Dump, serial)
        },
        None,
    ))
}
