//! What `record` knows of secrets beside the fields it saw as passwords: the words that name a
//! password field (`names_a_password`), and the values typed into secret fields, per device
//! (`remember`, `values`): one place in the process, whoever typed them, so any principal's
//! reading of that device hides them wherever they show. Kept in memory only: never written,
//! never logged (nothing here is `Debug`), never said to be anyone's.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// A value shorter than this is not looked for elsewhere on a screen: a PIN typed a digit at a
/// time would hide every digit of every reading. Its field is still hidden (by identity).
pub const MIN_VALUE_CHARS: usize = 4;

/// Values kept per device; the oldest go first.
const MAX_VALUES: usize = 64;

/// serial → the values typed into its secret fields.
static TYPED: Mutex<Option<HashMap<String, Vec<String>>>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<HashMap<String, Vec<String>>>> {
    TYPED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `value` was typed into a secret field of `serial`.
pub(super) fn remember(serial: &str, value: &str) {
    if value.chars().count() < MIN_VALUE_CHARS {
        return;
    }
    let mut all = lock();
    let values = all
        .get_or_insert_with(HashMap::new)
        .entry(serial.to_string())
        .or_default();
    values.retain(|v| v != value);
    if values.len() == MAX_VALUES {
        values.remove(0);
    }
    values.push(value.to_string());
}

/// The values typed into `serial`'s secret fields, longest first (a value inside another is
/// hidden with it).
pub(super) fn values(serial: &str) -> Vec<String> {
    let mut values = lock()
        .as_ref()
        .and_then(|all| all.get(serial).cloned())
        .unwrap_or_default();
    values.sort_by_key(|v| std::cmp::Reverse(v.chars().count()));
    values
}

/// The words of `text` as a person reads them: split at anything not a letter or digit, between
/// a lower-case letter and an upper-case one (`pinCode`), before the last capital of a run
/// followed by a lower-case one (`PINCode`), and between letters and digits; lower-cased.
fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            continue;
        }
        if let Some(&before) = i.checked_sub(1).map(|p| &chars[p]) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let split = (before.is_lowercase() && c.is_uppercase())
                || (before.is_uppercase() && c.is_uppercase() && next_lower)
                || (before.is_alphabetic() != c.is_alphabetic() && before.is_alphanumeric());
            if split && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// Whether `text` (a resource-id, a content-desc, a hint, a label) names a password: a word
/// holding `password`, `passwd` or `passcode`, or the word `pin` (not `spinner`, `pinned`).
pub fn names_a_password(text: &str) -> bool {
    words(text)
        .iter()
        .any(|w| w == "pin" || ["password", "passwd", "passcode"].iter().any(|p| w.contains(p)))
}

#[cfg(test)]
mod tests {
    use super::{names_a_password, remember, values};

    /// Generated from a table: each name that is a password's, with prefixes, suffixes and
    /// separators around it, and each that is not.
    #[test]
    fn a_password_is_named_by_its_words() {
        let yes = [
            "password",
            "Password",
            "PASSWORD",
            "passwd",
            "passcode",
            "pin",
            "PIN",
            "Pin",
            "newPassword",
            "PasswordConfirm",
            "userPasswd",
            "PINCode",
            "pinCode",
        ];
        let no = [
            "spinner",
            "pinned",
            "Pinterest",
            "spin",
            "opinion",
            "shipping",
            "pine",
            "username",
            "email",
            "pass",
            "code",
            "Show",
            "",
        ];
        let shapes = [
            "{}",
            "com.app:id/{}",
            "com.app:id/input_{}",
            "{}_field",
            "{} input",
            "Enter your {}",
            "input-{}, Wrong value",
            "RNE__{}__text-input",
            "{}1",
            "{}:",
        ];
        let mut cases = 0;
        for (words, expected) in [(&yes, true), (&no, false)] {
            for word in words.iter() {
                for shape in shapes {
                    let text = shape.replace("{}", word);
                    // A shape's own words are no password's.
                    assert_eq!(names_a_password(&text), expected, "{text:?}");
                    cases += 1;
                }
            }
        }
        println!(
            "{cases} names: {} that name a password, {} that do not, each in {} shapes",
            yes.len(),
            no.len(),
            shapes.len()
        );
    }

    #[test]
    fn a_device_keeps_the_values_typed_into_its_secret_fields_longest_first() {
        remember("unit-serial-a", "abc");
        remember("unit-serial-a", "hunter2");
        remember("unit-serial-a", "hunter2-and-more");
        remember("unit-serial-a", "hunter2");
        assert_eq!(values("unit-serial-a"), ["hunter2-and-more", "hunter2"]);
        assert!(values("unit-serial-b").is_empty());
    }
}
