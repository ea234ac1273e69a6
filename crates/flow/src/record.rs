//! The recording: each device's acting calls that succeeded, as steps, the newest
//! `MAX_STEPS` kept (`Recordings::record`, the one way in), and the selectors a step keeps
//! (`selector_at`, `selector_for_query`, beside `flow::selector_for`). A step's outcome is what
//! the first screen reading handed to it after the step shows (`Recordings::saw`), so
//! recording costs no reading of its own. It also decides what typed text is kept: a secret
//! typed into a password field becomes `${NAME}` (`Recording::typed`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;

use super::{Action, Expect, MAX_VISIBLE, Selector, Step, Target, is_password, placeholder_for, selector_for};
use android::ui_elements::{Element, Field};
use android::uiautomator::{Bounds, UiTree};

/// Steps kept per device; older ones are dropped (and the export says how many).
pub const MAX_STEPS: usize = 500;

#[derive(Debug, Default, Clone)]
pub struct Recording {
    pub steps: VecDeque<Step>,
    /// Steps dropped from the front since the recording started.
    pub dropped: usize,
    /// The labels of the last screen read, to tell what a step made appear.
    last_labels: Option<HashSet<String>>,
    /// The labels seen before the newest step, while its outcome is still to be read.
    pending: Option<Option<HashSet<String>>>,
    /// The resource-ids of every field any reading showed as a password field: a field that
    /// shows its text for a while (a "show password" toggle) still holds a secret.
    passwords: HashSet<String>,
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

    /// A screen was read: the newest step's outcome, if it has none yet, is what this shows.
    pub fn saw(&mut self, activity: Option<&str>, elements: &[Element]) {
        self.passwords
            .extend(elements.iter().filter(|e| is_password(e)).filter_map(|e| e.id.clone()));
        // A password field's text is never an outcome to assert.
        let shown: Vec<Element> = elements.iter().filter(|e| !self.is_secret(e)).cloned().collect();
        let labels: HashSet<String> = shown.iter().map(|e| e.label.clone()).collect();
        if let (Some(before), Some(step)) = (self.pending.take(), self.steps.back_mut()) {
            step.expect = outcome(activity, &shown, before.as_ref());
        }
        self.last_labels = Some(labels);
    }

    /// What typing `text` is recorded as, decided as it is typed: `${NAME}` when `field` (the
    /// field with input focus now) is a password field or one a reading showed as one; when no
    /// field has focus, when the screen shows such a field (the text may go there); else
    /// `text` itself.
    pub fn typed(&self, text: &str, field: Option<&Element>, screen: &[Element]) -> String {
        let secret = match field {
            Some(field) => self.is_secret(field).then_some(field),
            None => screen.iter().find(|e| self.is_secret(e)),
        };
        // A flow's text is a Maestro template: a `${` typed is written `\${`, typed as it was.
        secret.map_or_else(|| text.replace("${", "\\${"), placeholder_for)
    }

    /// `target` as a step may keep it: for a field that holds a secret, neither its text nor
    /// its label (a "show password" field shows the secret): its resource-id, else its point.
    pub fn guarded(&self, element: &Element, target: Target) -> Target {
        // A web field's label is its accessible name (its <label>), never its value: the page is
        // read without a password's value (`tools/ui/web.rs`), so its selector may stay.
        if !self.is_secret(element) || element.kind.starts_with("web:") {
            return target;
        }
        let selector = match target.selector {
            Selector::ResourceId(id) => Selector::ResourceId(id),
            _ => Selector::Point(element.at),
        };
        // Class and id hold no secret and still let a replay verify the field before typing.
        Target {
            selector,
            label: None,
            class: target.class,
            id: target.id,
        }
    }

    fn is_secret(&self, element: &Element) -> bool {
        is_password(element) || element.id.as_ref().is_some_and(|id| self.passwords.contains(id))
    }

    pub fn fragile(&self) -> usize {
        self.steps.iter().filter(|s| s.fragile()).count()
    }
}

/// What a step was seen to do: the activity in front and the stable labels that appeared (on a
/// first look, the first stable labels of the screen).
fn outcome(activity: Option<&str>, elements: &[Element], before: Option<&HashSet<String>>) -> Expect {
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
        Selector::Point(_) => target.label.map(Selector::Text),
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

    /// `Recording::typed` on this device's recording.
    pub fn typed(&self, serial: &str, text: &str, field: Option<&Element>, screen: &[Element]) -> String {
        self.lock()
            .entry(serial.to_string())
            .or_default()
            .typed(text, field, screen)
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

    /// Starts a new recording (which still knows the password fields seen); says how many
    /// steps the old one had.
    pub fn reset(&self, serial: &str) -> usize {
        let mut all = self.lock();
        let old = all.remove(serial).unwrap_or_default();
        let steps = old.steps.len();
        all.insert(
            serial.to_string(),
            Recording {
                passwords: old.passwords,
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
mod tests {
    use super::*;
    use crate::Action;

    fn labelled(labels: &[&str]) -> Vec<Element> {
        labels
            .iter()
            .map(|l| Element {
                reference: String::new(),
                label: l.to_string(),
                kind: "TextView".into(),
                id: None,
                at: [0, 0],
                flags: vec![],
                node: 0,
                bounds: Default::default(),
                clickable: false,
            })
            .collect()
    }

    fn field(id: &str, label: &str, flags: &[&str]) -> Element {
        Element {
            id: Some(id.into()),
            kind: "EditText".into(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            ..labelled(&[label]).remove(0)
        }
    }

    #[test]
    fn typing_into_a_password_field_or_one_seen_as_one_is_recorded_as_a_placeholder() {
        let mut r = Recording::default();
        let user = field("username", "ada", &["focused"]);
        let pass = field("password", "••••", &["password", "focused"]);
        assert_eq!(r.typed("ada", Some(&user), &[]), "ada");
        assert_eq!(r.typed("hunter2", Some(&pass), &[]), "${PASSWORD}");
        // No field has focus: a password field on the screen may get the text.
        assert_eq!(r.typed("hunter2", None, &[user.clone(), pass.clone()]), "${PASSWORD}");
        assert_eq!(r.typed("ada", None, std::slice::from_ref(&user)), "ada");
        // A field once shown as a password, now showing its text ("show password").
        r.saw(None, &[user.clone(), pass]);
        let shown = field("password", "hunter2", &["focused"]);
        assert_eq!(r.typed("hunter2", Some(&shown), &[]), "${PASSWORD}");
        // Its text is never an outcome to assert.
        r.push(Step::new(Action::Key { name: "TAB".into() }));
        r.saw(None, &[user.clone(), shown.clone()]);
        assert!(!r.steps[0].expect.visible.contains(&Selector::Text("hunter2".into())));
        // Nor its label, nor its text as a selector.
        let by_text = Target {
            selector: Selector::Text("hunter2".into()),
            label: Some("hunter2".into()),
            class: Some("android.widget.EditText".into()),
            id: None,
        };
        let kept = r.guarded(&shown, by_text.clone());
        assert_eq!(
            kept,
            Target {
                selector: Selector::Point([0, 0]),
                label: None,
                class: Some("android.widget.EditText".into()),
                id: None,
            }
        );
        assert_eq!(r.guarded(&user, by_text.clone()), by_text);
        // A new recording still knows the field.
        let all = Recordings::default();
        all.saw("s", None, &[field("password", "", &["password"])]);
        all.reset("s");
        assert_eq!(all.typed("s", "hunter2", Some(&shown), &[]), "${PASSWORD}");
    }

    #[test]
    fn a_step_expects_what_the_next_reading_shows_that_was_not_there_before() {
        let mut r = Recording::default();
        r.saw(
            Some(".Settings"),
            &labelled(&["Settings", "Network & internet", "Battery"]),
        );
        r.push(Step::new(Action::Key { name: "BACK".into() }));
        r.saw(
            Some(".SubSettings"),
            &labelled(&["Settings", "Wi-Fi", "12:30", "Airplane mode", "VPN"]),
        );
        let step = &r.steps[0];
        assert_eq!(step.expect.activity.as_deref(), Some(".SubSettings"));
        assert_eq!(
            step.expect.visible,
            vec![Selector::Text("Wi-Fi".into()), Selector::Text("Airplane mode".into())]
        );
        // A later reading does not rewrite it.
        r.saw(Some(".Other"), &labelled(&["Other"]));
        assert_eq!(r.steps[0].expect.activity.as_deref(), Some(".SubSettings"));
    }

    #[test]
    fn the_recording_keeps_the_newest_steps_and_counts_the_dropped() {
        let mut r = Recording::default();
        for i in 0..MAX_STEPS + 7 {
            r.push(Step::new(Action::Key { name: format!("{i}") }));
        }
        assert_eq!(r.steps.len(), MAX_STEPS);
        assert_eq!(r.dropped, 7);
        assert_eq!(r.steps[0].action, Action::Key { name: "7".into() });
    }
}
