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
#[derive(Debug, Clone, PartialEq)]
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

    /// The whole entry as text, for `resources/read`.
    pub fn full_text(&self) -> String {
        match self {
            Data::Map(map) => serde_json::to_string_pretty(map).unwrap_or_default(),
            Data::List(items) => serde_json::to_string_pretty(items).unwrap_or_default(),
            Data::Text(text) => text.clone(),
        }
    }
}
