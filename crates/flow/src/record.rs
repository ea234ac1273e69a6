//! The recording: each device's acting calls that succeeded, as steps, the newest
//! `MAX_STEPS` kept (`Recordings::record`, the one way in), and the selectors a step keeps
//! (`selector_at`, `selector_for_query`, beside `flow::selector_for`). A step's outcome is what
//! the first screen reading handed to it after the step shows (`Recordings::saw`), so
//! recording costs no reading of its own. It is also the one door for secrets: which fields
//! hold one (every field a reading showed as a password, known by its identity,
//! `android::identity::FieldKey`, however it shows later), the `${NAME}` each is typed as, one
//! per field (`Recording::typed`), and what a reading may show of them (`Recordings::hidden`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;

use super::{Action, Expect, MAX_VISIBLE, Selector, Step, Target, is_password, placeholder_word, selector_for};
use android::identity::FieldKey;
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
        let shown: Vec<Element> = elements.iter().filter(|e| !self.is_secret(e)).cloned().collect();
        let labels: HashSet<String> = shown.iter().map(|e| e.label.clone()).collect();
        if let (Some(before), Some(step)) = (self.pending.take(), self.steps.back_mut()) {
            step.expect = outcome(activity, &shown, before.as_ref());
        }
        self.last_labels = Some(labels);
    }

    /// Every password field of a reading that is not known yet becomes a secret field, with a
    /// NAME of its own: its resource-id's when no other element of the reading has that id,
    /// else its content-desc's or hint's, else `SECRET`; `_2`, `_3`… when another field has it.
    fn learn(&mut self, elements: &[Element]) {
        for element in elements.iter().filter(|e| is_password(e)) {
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
        self.learn(screen);
        if let Some(field) = field.filter(|f| is_password(f)) {
            self.learn(std::slice::from_ref(field));
        }
        let name = match field {
            Some(field) => self.secret_name(field),
            None => screen.iter().find_map(|e| self.secret_name(e)),
        };
        // A flow's text is a Maestro template: a `${` typed is written `\${`, typed as it was.
        name.map_or_else(|| super::maestro::template::escape(text), |name| format!("${{{name}}}"))
    }

    /// `target` as a step may keep it: for a field that holds a secret, only what names it
    /// (its resource-id, content-desc, or the label its identity holds: never its text), else
    /// its point. `flow::selector_for` never takes a field's text; this holds for any other
    /// element a reading showed as a password.
    pub fn guarded(&self, element: &Element, target: Target) -> Target {
        if !self.is_secret(element) {
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

    fn is_secret(&self, element: &Element) -> bool {
        is_password(element) || self.secret_name(element).is_some()
    }

    /// The nodes of a reading's secret fields: what a reading never shows the text of.
    pub fn hidden(&self, elements: &[Element]) -> Vec<usize> {
        elements.iter().filter(|e| self.is_secret(e)).map(|e| e.node).collect()
    }

    pub fn fragile(&self) -> usize {
        self.steps.iter().filter(|s| s.fragile()).count()
    }
}

/// Hides the text of `nodes` in `tree` (a secret field's, `Recording::hidden`): one `•` per
/// character, as a password field shows it; an empty field's hint (its text then, on a phone
/// and in a page) stays. Whether anything was hidden.
pub fn hide(tree: &mut UiTree, nodes: &[usize]) -> bool {
    let mut hid = false;
    for &i in nodes {
        let Some(node) = tree.nodes.get_mut(i) else { continue };
        let text = node.text().to_string();
        let dots = "•".repeat(text.chars().count());
        if text != dots && Some(text.as_str()) != node.attr("hint") {
            node.set_attr("text", &dots);
            hid = true;
        }
    }
    hid
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

    /// `Recording::hidden` on this device's recording: the nodes of a reading whose text no
    /// answer shows (a secret field's, even revealed).
    pub fn hidden(&self, serial: &str, elements: &[Element]) -> Vec<usize> {
        self.lock().get(serial).map(|r| r.hidden(elements)).unwrap_or_default()
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
mod tests {
    use super::{MAX_STEPS, Recording, Recordings, Selector, Step, Target};
    use crate::Action;
    use android::identity::Identity;
    use android::ui_elements::{Element, elements};
    use android::uiautomator::parse_ui_dump;

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
                identity: Identity {
                    class: "android.widget.TextView".into(),
                    label: l.to_string(),
                    ..Identity::default()
                },
                twin: 0,
            })
            .collect()
    }

    /// A form's fields as a reading lists them: (resource-id, content-desc, text, password,
    /// focused) each.
    fn form(fields: &[(&str, &str, &str, bool, bool)]) -> Vec<Element> {
        let mut xml = r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">"#.to_string();
        for (i, (id, desc, text, password, focused)) in fields.iter().enumerate() {
            let top = 200 + 200 * i;
            xml.push_str(&format!(
                r#"<node index="{i}" text="{text}" resource-id="{id}" content-desc="{desc}" class="android.widget.EditText" package="p" clickable="true" focusable="true" focused="{focused}" password="{password}" bounds="[40,{top}][1040,{}]"/>"#,
                top + 150
            ));
        }
        xml.push_str("</node></hierarchy>");
        elements(&parse_ui_dump(&xml).unwrap())
    }

    #[test]
    fn typing_into_a_password_field_or_one_seen_as_one_is_recorded_as_a_placeholder() {
        let mut r = Recording::default();
        let login = form(&[
            ("p:id/username", "", "ada", false, false),
            ("p:id/password", "", "••••", true, true),
        ]);
        let (user, pass) = (&login[0], &login[1]);
        assert_eq!(r.typed("ada", Some(user), &login), "ada");
        assert_eq!(r.typed("hunter2", Some(pass), &login), "${PASSWORD}");
        // No field has focus: a password field on the screen may get the text.
        assert_eq!(r.typed("hunter2", None, &login), "${PASSWORD}");
        assert_eq!(r.typed("ada", None, &login[..1]), "ada");
        // The field once shown as a password, now showing its text ("show password").
        r.saw(None, &login);
        let revealed = form(&[
            ("p:id/username", "", "ada", false, false),
            ("p:id/password", "", "hunter2", false, true),
        ]);
        let shown = &revealed[1];
        assert_eq!(r.typed("hunter2", Some(shown), &revealed), "${PASSWORD}");
        assert_eq!(r.hidden(&revealed), vec![shown.node]);
        // Its text is never an outcome to assert.
        r.push(Step::new(Action::Key { name: "TAB".into() }));
        r.saw(None, &revealed);
        assert!(!r.steps[0].expect.visible.contains(&Selector::Text("hunter2".into())));
        // Nor a selector.
        let by_text = Target {
            selector: Selector::Text("hunter2".into()),
            label: Some("hunter2".into()),
            class: Some("EditText".into()),
            id: None,
        };
        let kept = r.guarded(shown, by_text.clone());
        assert_eq!(
            kept,
            Target {
                selector: Selector::Point(shown.at),
                label: None,
                class: Some("EditText".into()),
                id: None,
            }
        );
        assert_eq!(r.guarded(&revealed[0], by_text.clone()), by_text);
        // A new recording still knows the field.
        let all = Recordings::default();
        all.saw("s", None, &login);
        all.reset("s");
        assert_eq!(all.typed("s", "hunter2", Some(shown), &revealed), "${PASSWORD}");
    }

    /// React Native Elements gives every input one resource-id: the fields are told apart by
    /// their content-descs, and a form's unnamed fields by their order.
    #[test]
    fn fields_that_share_an_id_or_have_none_are_each_their_own() {
        let mut r = Recording::default();
        let shared = "RNE__Input__text-input";
        let rn = form(&[
            (shared, "Email input", "", false, false),
            (shared, "Password input", "", true, false),
            (shared, "PIN input", "", true, false),
        ]);
        r.saw(None, &rn);
        assert_eq!(r.typed("pw", Some(&rn[1]), &rn), "${PASSWORD_INPUT}");
        assert_eq!(r.typed("1234", Some(&rn[2]), &rn), "${PIN_INPUT}");
        assert_eq!(r.typed("ada@example.com", Some(&rn[0]), &rn), "ada@example.com");
        let anonymous = form(&[
            ("", "", "", false, false),
            ("", "", "", true, false),
            ("", "", "", true, false),
        ]);
        r.saw(None, &anonymous);
        assert_eq!(r.typed("ada", Some(&anonymous[0]), &anonymous), "ada");
        assert_eq!(r.typed("pw", Some(&anonymous[1]), &anonymous), "${SECRET}");
        assert_eq!(r.typed("pw2", Some(&anonymous[2]), &anonymous), "${SECRET_2}");
        // Revealed, each keeps its own name; the plain field stays plain.
        let revealed = form(&[
            ("", "", "ada", false, false),
            ("", "", "pw", false, false),
            ("", "", "", true, false),
        ]);
        assert_eq!(r.typed("pw", Some(&revealed[1]), &revealed), "${SECRET}");
        assert_eq!(r.typed("ada", Some(&revealed[0]), &revealed), "ada");
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
