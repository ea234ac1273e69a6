//! The copied text (the script's `maestro.copiedText`): `copyTextFrom` copies an element's,
//! `setClipboard` sets it, `pasteText` types it.

use super::super::args::{no_argument, scalar_or_field};
use super::super::compat::Status;
use super::super::fields::{COMMAND_SELECTOR, MAESTRO_KEYS, NO_ARGUMENT};
use super::super::read::Reader;
use super::super::selectors::command_selector;
use super::super::write::{quoted, selector_fields};
use super::super::yaml::string;
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Selector, Step, quoted as lit};

pub(in crate::maestro) const COPY_TEXT_FROM: Spec = Spec {
    name: "copyTextFrom",
    status: Status::Replayed,
    note: "the element's whole text, else its hint, else its content-desc, into the script's maestro.copiedText",
    own: &[],
    aimed: &[COMMAND_SELECTOR, MAESTRO_KEYS],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Command(Command::CopyText(CopyText {
            selector: command_selector(given.needed()?)?,
        }))))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const PASTE_TEXT: Spec = Spec {
    name: "pasteText",
    status: Status::Replayed,
    note: "types maestro.copiedText into the focused field (nothing when none was copied)",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Command(Command::Paste(Paste))))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const SET_CLIPBOARD: Spec = Spec {
    name: "setClipboard",
    status: Status::Replayed,
    note: "sets maestro.copiedText, which pasteText types",
    own: &["text", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Command(Command::SetClipboard(SetClipboard {
            text: string(scalar_or_field(given.needed()?, given.name)?, given.name)?,
        }))))
    }),
    with_the_flow: false,
};

/// `copyTextFrom`: the element's text (else its hint, else its content-desc, Maestro's order)
/// into the script's `maestro.copiedText`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyText {
    pub(crate) selector: Selector,
}

impl Run for CopyText {
    fn describe(&self) -> String {
        format!("copy the text of {}", self.selector.describe())
    }

    /// `copyTextFrom` (below), given how `js` writes a selector.
    fn body(&self, aim: &Aim) -> Vec<String> {
        vec![format!("await copyTextFrom({});", (aim.selector)(&self.selector))]
    }

    fn write(&self) -> String {
        format!("- copyTextFrom:\n{}", selector_fields(&self.selector, "    "))
    }
}

/// `pasteText`: types `maestro.copiedText` (nothing when none was copied, as Maestro).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paste;

impl Run for Paste {
    fn describe(&self) -> String {
        "paste the copied text".into()
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec!["if (maestro.copiedText != null) await ui.type({ text: String(maestro.copiedText) });".into()]
    }

    fn write(&self) -> String {
        "- pasteText\n".into()
    }
}

/// `setClipboard`: `maestro.copiedText`, which `pasteText` types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetClipboard {
    pub(crate) text: String,
}

impl Run for SetClipboard {
    fn describe(&self) -> String {
        format!("copy {:?}", self.text)
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec![format!("maestro.copiedText = {};", lit(&self.text))]
    }

    fn write(&self) -> String {
        format!("- setClipboard: {}\n", quoted(&self.text))
    }
}

/// copyTextFrom's run: the found element's whole text, else its hint, else its content-desc,
/// read from the screen's nodes (a listed label is cut at 60 characters): the deepest node the
/// selector matches, at the element's point when several do (Maestro takes the deepest match).
pub(super) const RUN: &str = r#"
// Maestro's own object in a flow's scripts: what copyTextFrom copied, the platform.
globalThis.maestro = globalThis.maestro || { copiedText: null, platform: "android" };

async function copyTextFrom(selector) {
  const found = await ui.wait({ match: "exact", ...selector, timeoutMs: TIMEOUT });
  const [x, y] = found.target.at;
  const dump = await ui.dump({ limit: 1 });
  const value = selector.text ?? selector.resourceId ?? selector.contentDesc;
  const literal = selector.match === "regex" ? null : value;
  const nodes = (await cache.get({ id: dump.cacheId, ...(literal ? { filter: literal } : {}), limit: 500 })).items || [];
  const pattern = literal ? null : new RegExp(value.replace(/^\(\?s\)/, ""), "si");
  const is = (v) => typeof v === "string" && v !== "" && (pattern ? pattern.test(v) : v === literal);
  const matches = (n) => "resourceId" in selector
    ? is(n["resource-id"]) || is(String(n["resource-id"]).split("/").pop())
    : is(n.text) || is(n["content-desc"]) || ("text" in selector && is(n.hint));
  const within = (n) => {
    const [l, t, r, b] = (String(n.bounds).match(/-?\d+/g) || []).map(Number);
    return x >= l && x <= r && y >= t && y <= b;
  };
  const all = nodes.filter(matches);
  const node = all.filter(within).pop() || all.pop();
  const text = node && (node.text || node.hint || node["content-desc"]);
  if (!text) throw new Error(`${JSON.stringify(selector)} shows no text to copy`);
  maestro.copiedText = text;
}
"#;
