//! What a cache entry holds: its kind (TTL, id prefix, the call that refreshes it) and its data.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// What an entry holds, which decides its TTL, its id prefix and which call refreshes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Props,
    Packages,
    Package,
    Ui,
    Logcat,
    Shell,
    Output,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Props,
        Kind::Packages,
        Kind::Package,
        Kind::Ui,
        Kind::Logcat,
        Kind::Shell,
        Kind::Output,
    ];

    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Props => "props",
            Kind::Packages => "pkgs",
            Kind::Package => "pkg",
            Kind::Ui => "ui",
            Kind::Logcat => "log",
            Kind::Shell => "sh",
            Kind::Output => "out",
        }
    }

    /// Properties barely change; a screen is stale in moments.
    pub fn ttl(self) -> Duration {
        let minutes = match self {
            Kind::Props => 60,
            Kind::Packages | Kind::Package => 15,
            Kind::Ui => 5,
            Kind::Logcat | Kind::Shell | Kind::Output => 30,
        };
        Duration::from_secs(minutes * 60)
    }

    /// The call that makes fresh data of this kind, for error messages.
    pub fn refreshed_by(self) -> &'static str {
        match self {
            Kind::Props => "adb-device properties",
            Kind::Packages => "adb-app list",
            Kind::Package => "adb-app info",
            Kind::Ui => "ui dump",
            Kind::Logcat => "adb-logcat read",
            Kind::Shell => "adb-shell run",
            Kind::Output => "the call that made it",
        }
    }

    pub(super) fn from_prefix(prefix: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.prefix() == prefix)
    }
}

/// The stored data, in the three shapes `cache get` knows how to page.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub enum Data {
    /// Keyed values (properties): paged by key, filtered by key prefix or substring.
    Map(BTreeMap<String, String>),
    /// Items (packages, elements, log records): paged by index, filtered by substring.
    List(Vec<Value>),
    /// Text (shell output, dumps): paged by line, grepped by substring.
    Text(String),
}

impl Data {
    /// Approximate heap size, for the byte bound.
    pub fn bytes(&self) -> usize {
        match self {
            Data::Map(map) => map.iter().map(|(k, v)| k.len() + v.len() + 48).sum(),
            Data::List(items) => items.iter().map(|v| v.to_string().len() + 32).sum(),
            Data::Text(text) => text.len(),
        }
    }

    pub fn shape(&self) -> &'static str {
        match self {
            Data::Map(_) => "map",
            Data::List(_) => "list",
            Data::Text(_) => "text",
        }
    }

    /// Keys, items or lines.
    pub fn len(&self) -> usize {
        match self {
            Data::Map(map) => map.len(),
            Data::List(items) => items.len(),
            Data::Text(text) => text.lines().count(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte length of `full_text`, without copying a text entry.
    pub fn full_text_bytes(&self) -> usize {
        match self {
            Data::Text(text) => text.len(),
            _ => self.full_text().len(),
        }
    }

    /// The MIME type of `full_text`.
    pub fn mime(&self) -> &'static str {
        match self {
            Data::Text(_) => "text/plain",
            _ => "application/json",
        }
    }

    /// The data cut to about `room` bytes: a text keeps its head and tail around a marker line,
    /// a list its first and last items around a marker item, a map its first keys and a marker
    /// key. `why` says what cut it. Unchanged when it fits.
    pub fn trimmed_to(&self, room: usize, why: &str) -> Data {
        if self.bytes() <= room {
            return self.clone();
        }
        // The marker takes its own room.
        let half = room.saturating_sub(why.len() + 64) / 2;
        match self {
            Data::Text(text) => {
                let head_end = floor_char(text, half);
                let tail_start = ceil_char(text, text.len().saturating_sub(half).max(head_end));
                let dropped = tail_start - head_end;
                Data::Text(format!(
                    "{}\n[… {dropped} bytes dropped here: {why}]\n{}",
                    &text[..head_end],
                    &text[tail_start..]
                ))
            }
            Data::List(items) => {
                let mut head = Vec::new();
                let mut used = 0;
                for item in items {
                    let size = item.to_string().len() + 32;
                    if used + size > half {
                        break;
                    }
                    used += size;
                    head.push(item.clone());
                }
                let mut tail = Vec::new();
                let mut used = 0;
                for item in items[head.len()..].iter().rev() {
                    let size = item.to_string().len() + 32;
                    if used + size > half {
                        break;
                    }
                    used += size;
                    tail.push(item.clone());
                }
                tail.reverse();
                let dropped = items.len() - head.len() - tail.len();
                head.push(Value::String(format!("[… {dropped} items dropped here: {why}]")));
                head.extend(tail);
                Data::List(head)
            }
            Data::Map(map) => {
                let mut kept = BTreeMap::new();
                let mut used = 0;
                for (k, v) in map {
                    let size = k.len() + v.len() + 48;
                    if used + size > room {
                        break;
                    }
                    used += size;
                    kept.insert(k.clone(), v.clone());
                }
                let dropped = map.len() - kept.len();
                kept.insert("~dropped".into(), format!("{dropped} keys dropped: {why}"));
                Data::Map(kept)
            }
        }
    }

    /// The whole entry as text, for `resources/read`.
    pub fn full_text(&self) -> String {
        match self {
            Data::Map(map) => serde_json::to_string_pretty(map).unwrap_or_default(),
            Data::List(items) => serde_json::to_string_pretty(items).unwrap_or_default(),
            Data::Text(text) => text.clone(),
        }
    }
}

/// The largest char boundary at or below `at`.
fn floor_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary at or above `at`.
fn ceil_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_keeps_head_and_tail_within_the_room_and_says_why() {
        let text: String = (0..10_000).map(|i| format!("line {i} é\n")).collect();
        let Data::Text(cut) = Data::Text(text.clone()).trimmed_to(10_000, "the bound") else {
            panic!()
        };
        assert!(cut.len() < 10_200, "{}", cut.len());
        assert!(cut.starts_with("line 0 é\n") && cut.ends_with("line 9999 é\n"));
        assert!(cut.contains("bytes dropped here: the bound"));
        let items: Vec<Value> = (0..1000).map(Value::from).collect();
        let Data::List(kept) = Data::List(items).trimmed_to(3200, "b") else {
            panic!()
        };
        assert_eq!(kept.first(), Some(&Value::from(0)));
        assert_eq!(kept.last(), Some(&Value::from(999)));
        assert!(Data::List(kept).bytes() <= 3200 + 100);
        let small = Data::Text("fits".into());
        assert_eq!(small.trimmed_to(100, "b"), small);
    }
}
