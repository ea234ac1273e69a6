//! The recording: each device's acting calls that succeeded, as steps, the newest
//! `MAX_STEPS` kept (`Recordings::record`, the one way in), and the selectors a step keeps
//! (`selector_at`, `selector_for_query`, beside `flow::selector_for`). A step's outcome is what
//! the first screen reading handed to it after the step shows (`Recordings::saw`), so
//! recording costs no reading of its own. It is also the one door for secrets: which fields
//! hold one (every field a reading showed as a password, known by its identity,
//! `android::identity::FieldKey`, however it shows later; and every field whose identity names a
//! password, `secret_by_name`, even revealed before any reading), the `${NAME}` each is typed as,
//! one per field (`Recording::typed`), the values typed into them (kept per device for every
//! principal, `secrets`), and what a reading may show of them (`Recordings::hidden`: the fields'
//! text, and those values wherever they appear).

mod secrets;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;

use super::{Action, Expect, MAX_VISIBLE, Selector, Step, Target, is_password, placeholder_word, selector_for};
use android::identity::{FieldKey, field_class};
use android::ui_elements::{Element, Field};
use android::uiautomator::{Bounds, UiTree};

/// Steps kept per device; older ones are dropped (and the export says how many).
pub const MAX_STEPS: usize = 500;

pub use secrets::{MIN_VALUE_CHARS, names_a_password};

/// A recording as instances sharing `--state` keep it: its steps (typed secrets only as
/// `${NAME}`), its outcomes and which fields hold a secret, by identity and NAME; never a
/// value typed (those stay in this process: `secrets`).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Recording {
    pub steps: VecDeque<Step>,
    /// Steps dropped from the front since the recording started.
    pub dropped: usize,
    /// The labels of the last screen read, to tell what a step made appear.
    last_labels: Option<BTreeSet<String>>,
    /// The labels seen before the newest step, while its outcome is still to be read.
    pending: Option<Option<BTreeSet<String>>>,
    /// Every field any reading showed as a password, by its identity, with the NAME of the
    /// `${NAME}` typed into it: a field that shows its text for a while (a "show password"
    /// toggle) still holds a secret, and two fields never share a NAME.
    secrets: Vec<(FieldKey, String)>,
}

impl Recording {
    pub fn push(&mut self, mut step: Step) {
        if self.steps.len() == MAX_STEPS {
            self.steps.pop_front();
            self.dropped += 1;
        }
        if step.on.is_none() {
            step.on = self.steps.back().and_then(|s| s.expect.activity.clone());
        }
        self.steps.push_back(step);
        self.pending = Some(self.last_labels.clone());
    }

    /// A screen was read: the password fields it shows, and the newest step's outcome, if it
    /// has none yet, is what this shows.
    pub fn saw(&mut self, activity: Option<&str>, elements: &[Element]) {
        self.learn(elements);
        // A password field's text is never an outcome to assert.
        let shown: Vec<Element> = (0..elements.len())
            .filter(|i| !self.is_secret(elements, *i))
            .map(|i| elements[i].clone())
            .collect();
        let labels: BTreeSet<String> = shown.iter().map(|e| e.label.clone()).collect();
        if let (Some(before), Some(step)) = (self.pending.take(), self.steps.back_mut()) {
            step.expect = outcome(activity, &shown, before.as_ref());
        }
        self.last_labels = Some(labels);
    }

    /// Every password field of a reading (shown as one, or named as one: `secret_by_name`) that
    /// is not known yet becomes a secret field, with a NAME of its own: its resource-id's when no
    /// other element of the reading has that id, else its content-desc's or hint's, else
    /// `SECRET`; `_2`, `_3`… when another field has it.
    fn learn(&mut self, elements: &[Element]) {
        let fields = (0..elements.len()).filter(|i| is_password(&elements[*i]) || secret_by_name(elements, *i));
        for element in fields.map(|i| &elements[i]) {
            let key = FieldKey::of(element);
            if self.secrets.iter().any(|(known, _)| *known == key) {
                continue;
            }
            let identity = &element.identity;
            let id = identity.resource_id.as_str();
            let alone = elements.iter().filter(|e| e.identity.resource_id == id).count() == 1;
            let short = id.split_once(":id/").map_or(id, |(_, short)| short);
            let word = if !id.is_empty() && alone && !id.starts_with("android:id/") {
                short
            } else if !identity.label.trim().is_empty() {
                identity.label.as_str()
            } else {
                short
            };
            let base = placeholder_word(word);
            let taken = |name: &str| self.secrets.iter().any(|(_, n)| n == name);
            let mut name = base.clone();
            for n in 2.. {
                if !taken(&name) {
                    break;
                }
                name = format!("{base}_{n}");
            }
            self.secrets.push((key, name));
        }
    }

    /// The NAME a secret field's text is typed as, if `element` is one.
    fn secret_name(&self, element: &Element) -> Option<&str> {
        let key = FieldKey::of(element);
        self.secrets
            .iter()
            .find(|(known, _)| *known == key)
            .map(|(_, name)| name.as_str())
    }

    /// What typing `text` is recorded as, decided as it is typed: `${NAME}` when `field` (the
    /// field with input focus now, of the reading `screen`) is a password field or one a reading
    /// showed as one, NAME that field's own; when no field has focus, when the screen shows such a
    /// field (the text may go there); else `text` itself.
    pub fn typed(&mut self, text: &str, field: Option<&Element>, screen: &[Element]) -> String {
        written(text, self.typed_into(field, screen))
    }

    /// The NAME of the secret field typing goes to (`typed`), if it goes to one.
    fn typed_into(&mut self, field: Option<&Element>, screen: &[Element]) -> Option<String> {
        self.learn(screen);
        let one = field.map(std::slice::from_ref).unwrap_or_default();
        if field.is_some_and(|f| is_password(f) || secret_by_name(one, 0)) {
            self.learn(one);
        }
        match field {
            Some(field) => self.secret_name(field),
            None => screen.iter().find_map(|e| self.secret_name(e)),
        }
        .map(str::to_string)
    }

    /// `target` as a step may keep it: for a field that holds a secret, only what names it
    /// (its resource-id, content-desc, or the label its identity holds: never its text), else
    /// its point. `flow::selector_for` never takes a field's text; this holds for any other
    /// element a reading showed as a password.
    pub fn guarded(&self, element: &Element, target: Target) -> Target {
        if !self.is_secret(std::slice::from_ref(element), 0) {
            return target;
        }
        let label = &element.identity.label;
        let selector = match target.selector {
            Selector::ResourceId(id) => Selector::ResourceId(id),
            Selector::ContentDesc(desc) => Selector::ContentDesc(desc),
            Selector::Text(text) if text == *label => Selector::Text(text),
            _ => Selector::Point(element.at),
        };
        Target {
            selector,
            label: target.label.filter(|l| l == label),
            ..target
        }
    }

    /// Whether element `i` of a reading holds a secret: shown as a password, named as one, or
    /// a field a reading showed as one.
    fn is_secret(&self, elements: &[Element], i: usize) -> bool {
        let element = &elements[i];
        is_password(element) || secret_by_name(elements, i) || self.secret_name(element).is_some()
    }

    /// What a reading never shows: its secret fields' text (the values typed on its device are
    /// added by `Recordings::hidden`).
    pub fn hidden(&self, elements: &[Element]) -> Hidden {
        Hidden {
            nodes: (0..elements.len())
                .filter(|i| self.is_secret(elements, *i))
                .map(|i| elements[i].node)
                .collect(),
            values: Vec::new(),
        }
    }

    pub fn fragile(&self) -> usize {
        self.steps.iter().filter(|s| s.fragile()).count()
    }

    /// Steps recorded since the recording started, dropped ones too.
    pub fn total(&self) -> usize {
        self.dropped + self.steps.len()
    }

    /// This recording's steps after the first `since` (taken on a copy of another recording
    /// that had `since`), on `theirs`, which changed meanwhile: their steps, then these, within
    /// `MAX_STEPS`; the secret fields of both; and the outcomes this copy gave steps both hold
    /// that theirs has none of yet (a reading here gave its step one while another instance
    /// recorded the next step there).
    pub fn onto(self, since: usize, mut theirs: Recording) -> Recording {
        let new = self.total().saturating_sub(since).min(self.steps.len());
        let newest_theirs = theirs.total().checked_sub(1);
        for (at, step) in self.steps.iter().enumerate() {
            let absolute = self.dropped + at;
            if absolute >= since || step.expect == Expect::default() {
                continue;
            }
            let Some(same) = absolute
                .checked_sub(theirs.dropped)
                .and_then(|i| theirs.steps.get_mut(i))
            else {
                continue;
            };
            if same.expect == Expect::default() && same.action == step.action {
                same.expect = step.expect.clone();
                if Some(absolute) == newest_theirs {
                    // Its outcome is given: theirs waits for none.
                    theirs.pending = None;
                }
            }
        }
        for step in self.steps.into_iter().rev().take(new).rev() {
            theirs.push(step);
        }
        for (key, name) in self.secrets {
            if !theirs.secrets.iter().any(|(known, _)| *known == key) {
                let taken = theirs.secrets.iter().any(|(_, n)| *n == name);
                let name = if taken {
                    format!("{name}_{}", theirs.secrets.len() + 1)
                } else {
                    name
                };
                theirs.secrets.push((key, name));
            }
        }
        theirs
    }
}

/// What typing `text` is recorded as: `${NAME}` into secret field NAME, else the text, as a
/// Maestro template (a `${` typed is written `\${`, typed as it was).
fn written(text: &str, name: Option<String>) -> String {
    name.map_or_else(|| super::maestro::template::escape(text), |name| format!("${{{name}}}"))
}

/// Whether field `i` of a reading is a password field by its name, shown as one or not (a
/// field revealed before any reading): its identity (resource-id, or its content-desc or hint)
/// names a password (`names_a_password`), or the element just before it is a label (no field,
/// nothing to tap, a few words) that does ("Password", "Your PIN").
fn secret_by_name(elements: &[Element], i: usize) -> bool {
    let identity = &elements[i].identity;
    if !field_class(&identity.class) {
        return false;
    }
    let label_before = i.checked_sub(1).map(|b| &elements[b]).is_some_and(|b| {
        !field_class(&b.identity.class)
            && !b.clickable
            && b.identity.label.split_whitespace().count() <= 4
            && names_a_password(&b.identity.label)
    });
    let id = identity
        .resource_id
        .split_once(":id/")
        .map_or(identity.resource_id.as_str(), |(_, id)| id);
    names_a_password(id) || names_a_password(&identity.label) || label_before
}

/// What a reading hides (`Recordings::hidden`): the text of its secret fields' nodes, and the
/// values typed into secret fields of its device wherever they show. Not `Debug`: it holds them.
#[derive(Default)]
pub struct Hidden {
    pub nodes: Vec<usize>,
    values: Vec<String>,
}

/// Hides in `tree` what `hidden` says: a secret field's text (`Recording::hidden`), one `•` per
/// character, as a password field shows it (an empty field's hint, its text then on a phone and
/// in a page, stays); and in every node's text, content-desc and hint, each value typed into a
/// secret field of the device, whole or inside a longer text, whatever field it now shows in
/// (moved, renamed, copied into a label). Whether anything was hidden.
pub fn hide(tree: &mut UiTree, hidden: &Hidden) -> bool {
    let mut hid = false;
    for &i in &hidden.nodes {
        let Some(node) = tree.nodes.get_mut(i) else { continue };
        let text = node.text().to_string();
        let dots = "•".repeat(text.chars().count());
        if text != dots && Some(text.as_str()) != node.attr("hint") {
            node.set_attr("text", &dots);
            hid = true;
        }
    }
    if hidden.values.is_empty() {
        return hid;
    }
    for node in &mut tree.nodes {
        for attr in ["text", "content-desc", "hint"] {
            let Some(shown) = node.attr(attr) else { continue };
            let mut kept = shown.to_string();
            for value in &hidden.values {
                kept = kept.replace(value.as_str(), &"•".repeat(value.chars().count()));
            }
            if kept != shown {
                node.set_attr(attr, &kept);
                hid = true;
            }
        }
    }
    hid
}

/// What a step was seen to do: the activity in front and the stable labels that appeared (on a
/// first look, the first stable labels of the screen).
fn outcome(activity: Option<&str>, elements: &[Element], before: Option<&BTreeSet<String>>) -> Expect {
    let mut visible: Vec<Selector> = Vec::new();
    for e in elements {
        if visible.len() == MAX_VISIBLE {
            break;
        }
        let new = before.is_none_or(|b| !b.contains(&e.label));
        let seen = visible.iter().any(|s| *s == Selector::Text(e.label.clone()));
        if new && !seen && stable_label(&e.label) {
            visible.push(Selector::Text(e.label.clone()));
        }
    }
    Expect {
        activity: activity.map(str::to_string),
        visible,
    }
}

/// A label worth asserting: short, trimmed, and without digits (clocks, counters, percentages
/// and sizes change from run to run).
fn stable_label(label: &str) -> bool {
    let n = label.chars().count();
    (2..=40).contains(&n)
        && label.trim() == label
        && !label.chars().any(|c| c.is_ascii_digit() || c.is_control())
        && !label.contains('•')
}

/// A reading of the screen as the selector builders take it: the tree, its elements, the screen.
pub type Reading<'a> = (&'a UiTree, &'a [Element], Bounds);

/// How a recorded tap at a point finds its element again: the selector of the smallest
/// tappable element under it on `reading` (the last one, when no recorded step came after it),
/// if one names it alone; else the point (fragile).
pub fn selector_at(reading: Option<Reading>, at: [i32; 2]) -> Target {
    let point = Target::bare(Selector::Point(at));
    let Some((tree, elements, screen)) = reading else {
        return point;
    };
    match super::verify::under(elements, at) {
        Some(element) => {
            let mut found = selector_for(tree, elements, screen, element);
            if found.selector.fragile() {
                found.selector = Selector::Point(at);
            }
            found
        }
        None => point,
    }
}

/// How a recorded wait or scroll names what it looked for: the query itself when it is exact
/// (and not a class, nor a framework id such as `android:id/button1`, which names no element
/// alone: unless nothing was found), else the element it found, by its selector or its label.
pub fn selector_for_query(
    field: Field,
    exact: bool,
    value: &str,
    found: Option<(&UiTree, &[Element], Bounds, &Element)>,
) -> Option<Selector> {
    let framework = value.trim().starts_with("android:id/") && found.is_some();
    match (field, exact) {
        (Field::Text, true) => return Some(Selector::Text(value.trim().to_string())),
        (Field::ResourceId, true) if !framework => return Some(Selector::ResourceId(value.trim().to_string())),
        (Field::ContentDesc, true) => return Some(Selector::ContentDesc(value.trim().to_string())),
        _ => {}
    }
    let (tree, elements, screen, element) = found?;
    let target = selector_for(tree, elements, screen, element);
    match target.selector {
        Selector::Point(_) => target.label.filter(|l| !l.trim().is_empty()).map(Selector::Text),
        selector => Some(selector),
    }
}

/// Every device's recording, for one principal.
#[derive(Debug, Default)]
pub struct Recordings(Mutex<HashMap<String, Recording>>);

impl Recordings {
    /// The one way a step enters a recording: what an acting call did, once it worked (ui's
    /// `apply`, adb-app's, adb-device emulator's).
    pub fn record(&self, serial: &str, action: Action) {
        self.lock()
            .entry(serial.to_string())
            .or_default()
            .push(Step::new(action));
    }

    /// A reading of the screen, handed over by whoever took it (ui, flow export): the password
    /// fields it shows, and the newest step's outcome if it has none yet.
    pub fn saw(&self, serial: &str, activity: Option<&str>, elements: &[Element]) {
        self.lock()
            .entry(serial.to_string())
            .or_default()
            .saw(activity, elements);
    }

    /// Whether the last screen reading came after the last recorded step.
    pub fn screen_is_current(&self, serial: &str) -> bool {
        self.lock().get(serial).is_none_or(|r| r.pending.is_none())
    }

    pub fn get(&self, serial: &str) -> Recording {
        self.lock().get(serial).cloned().unwrap_or_default()
    }

    /// Takes `recording` as this device's (the one instances sharing `--state` keep).
    pub fn put(&self, serial: &str, recording: Recording) {
        self.lock().insert(serial.to_string(), recording);
    }

    /// `Recording::typed` on this device's recording; what goes to a secret field is kept for
    /// the device (`secrets::remember`), for every reading of it to hide.
    pub fn typed(&self, serial: &str, text: &str, field: Option<&Element>, screen: &[Element]) -> String {
        let name = self
            .lock()
            .entry(serial.to_string())
            .or_default()
            .typed_into(field, screen);
        if name.is_some() {
            secrets::remember(serial, text);
        }
        written(text, name)
    }

    /// `Recording::guarded` on this device's recording: `target` as a step may keep it.
    pub fn guarded(&self, serial: &str, element: Option<&Element>, target: Target) -> Target {
        match element {
            Some(element) => self
                .lock()
                .entry(serial.to_string())
                .or_default()
                .guarded(element, target),
            None => target,
        }
    }

    /// `Recording::hidden` on this device's recording (the nodes of a reading whose text no
    /// answer shows: a secret field's, even revealed), and the values typed into secret fields
    /// of the device by anyone (`secrets::values`), hidden wherever they show.
    pub fn hidden(&self, serial: &str, elements: &[Element]) -> Hidden {
        let mut hidden = match self.lock().get(serial) {
            Some(recording) => recording.hidden(elements),
            None => Recording::default().hidden(elements),
        };
        hidden.values = secrets::values(serial);
        hidden
    }

    /// Starts a new recording (which still knows the password fields seen); says how many
    /// steps the old one had.
    pub fn reset(&self, serial: &str) -> usize {
        let mut all = self.lock();
        let old = all.remove(serial).unwrap_or_default();
        let steps = old.steps.len();
        all.insert(
            serial.to_string(),
            Recording {
                secrets: old.secrets,
                ..Default::default()
            },
        );
        steps
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Recording>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests;
