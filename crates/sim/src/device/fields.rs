//! The simulated device's text fields: focus, what `input text` and DEL do to the focused one,
//! and "show password" toggles (the profile's `[[reveal]]`), each shown as uiautomator shows a
//! field: a password as dots, an empty field's hint as its text.

use super::{Device, selector_matches};

impl Device {
    pub(super) fn focus(&mut self, id: usize) {
        let screen = self.screen_mut();
        for (i, n) in screen.tree.nodes.iter_mut().enumerate() {
            if n.attr("focused").is_some() || i == id {
                n.set_attr("focused", if i == id { "true" } else { "false" });
            }
        }
    }

    pub fn focused_edit(&self) -> Option<usize> {
        let tree = &self.screen().tree;
        (0..tree.nodes.len()).find(|&i| tree.nodes[i].flag("focused") && tree.nodes[i].class().contains("EditText"))
    }

    /// What `input text` does: appends to the focused EditText (lost when nothing is focused).
    pub fn type_text(&mut self, text: &str) {
        let Some(id) = self.focused_edit() else { return };
        self.edit_focused(id, |value| value.push_str(text));
    }

    pub(super) fn edit_focused(&mut self, id: usize, change: impl FnOnce(&mut String)) {
        self.edit_field(id, |value, _| change(value));
    }

    /// Changes what field `id` holds, or whether it is a password field (a reveal toggle), and
    /// shows it as uiautomator does: a password as dots, an empty field's hint as its text.
    fn edit_field(&mut self, id: usize, change: impl FnOnce(&mut String, &mut bool)) {
        let screen = self.screen_mut();
        let node = &screen.tree.nodes[id];
        let mut password = node.flag("password");
        let hint = node.attr("hint").unwrap_or_default().to_string();
        // A field never edited holds its text, unless that text is only its hint (uiautomator
        // reports an empty field's hint as its text).
        let mut value = screen.values.get(&id).cloned().unwrap_or_else(|| {
            let text = node.text();
            if password || (!hint.is_empty() && text == hint) {
                String::new()
            } else {
                text.to_string()
            }
        });
        change(&mut value, &mut password);
        let shown = if value.is_empty() && !hint.is_empty() {
            hint
        } else if password {
            "•".repeat(value.chars().count())
        } else {
            value.clone()
        };
        let node = &mut screen.tree.nodes[id];
        node.set_attr("text", &shown);
        node.set_attr("password", if password { "true" } else { "false" });
        screen.values.insert(id, value);
    }

    /// The password fields a tap on the elements `within` reveals or hides (the profile's
    /// `[[reveal]]` rules of this screen whose toggle is among them).
    pub(super) fn revealed_by(&self, within: &[usize]) -> Vec<usize> {
        let screen = &self.screens[self.current];
        let tree = &screen.tree;
        self.reveals
            .iter()
            .filter(|r| r.screen == screen.name && within.iter().any(|&i| selector_matches(&r.toggle, &tree.nodes[i])))
            .filter_map(|r| (0..tree.nodes.len()).find(|&i| selector_matches(&r.field, &tree.nodes[i])))
            .collect()
    }

    /// Shows the text of each of `fields` if it is a password field, else hides it again.
    pub(super) fn reveal(&mut self, fields: &[usize]) {
        for &field in fields {
            self.edit_field(field, |_, password| *password = !*password);
        }
    }
}
