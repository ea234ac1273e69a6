//! Settings read from the environment.

/// A setting from the environment, if it says something: an empty value, or a `${…}` that a
/// launcher left unexpanded (an MCPB bundle's unset option), counts as unset.
pub fn env_setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| is_set(v))
}

/// Whether a value taken from the environment says something (see `env_setting`).
pub fn is_set(value: &str) -> bool {
    let value = value.trim();
    let placeholder = value.starts_with("${") && value.ends_with('}');
    !(value.is_empty() || placeholder)
}
