//! `serve --http` as an OAuth 2.1 resource server (the MCP authorization spec), beside the
//! static tokens: its protected resource metadata (RFC 9728, `metadata.rs`), the 401 and 403
//! challenges that point to it, and access tokens checked (`verify.rs`): a JWT against its
//! issuer's keys (found through RFC 8414 or OpenID discovery), an opaque one through RFC 7662
//! introspection. A token names its principal (`sub`, or the configured claim, with its issuer)
//! and its scopes (`tools::registry::Scope`); the token check in `http/mod.rs` is the one door.
//! Configured by `--oauth-*` flags and a TOML or JSON file (`--oauth-config`); docs/http.md.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::tools::registry::Scope;

pub mod metadata;
pub mod verify;

pub use verify::OAuth;

/// What `--oauth-config FILE` holds (TOML, or JSON for a `.json` file); flags add to it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// This server's MCP endpoint as clients reach it (`https://lab.example.com/mcp`): the
    /// `resource` its metadata publishes and, unless `audiences` says otherwise, the one `aud`
    /// a token must carry.
    #[serde(default)]
    pub resource: Option<String>,
    /// The `aud` values a token may carry instead (e.g. Entra's App ID URI).
    #[serde(default)]
    pub audiences: Vec<String>,
    /// The authorization servers whose tokens are taken.
    #[serde(default)]
    pub issuers: Vec<IssuerConfig>,
    /// How the scopes are spelled at the authorization server: prefix + read|act|shell|install|emulator.
    #[serde(default)]
    pub scope_prefix: Option<String>,
    /// The claim naming the principal (default `sub`).
    #[serde(default)]
    pub principal_claim: Option<String>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 60).
    #[serde(default)]
    pub leeway_secs: Option<u64>,
    /// Opaque tokens: asked of the authorization server (RFC 7662) with these credentials.
    #[serde(default)]
    pub introspection: Option<IntrospectionConfig>,
    /// Static tokens' scopes by principal name (`--token NAME=…`); a name not here holds all.
    #[serde(default)]
    pub static_scopes: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerConfig {
    /// The issuer identifier, exactly as tokens' `iss` say it.
    pub url: String,
    /// Its key set, when its discovery metadata does not say (or should not be asked).
    #[serde(default)]
    pub jwks_uri: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionConfig {
    pub client_id: String,
    /// The secret, or the name of an environment variable holding it (kept out of the file).
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub client_secret_env: Option<String>,
    /// The endpoint, when the first issuer's metadata does not name one.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// How long an answer is kept, in seconds (default 30; never past the token's `exp`).
    #[serde(default)]
    pub cache_secs: Option<u64>,
}

/// The flags, as `main.rs` reads them.
#[derive(Debug, Clone, Default)]
pub struct OAuthFlags {
    pub config_file: Option<(String, String)>,
    pub issuers: Vec<String>,
    pub resource: Option<String>,
    pub audiences: Vec<String>,
}

impl OAuthFlags {
    pub fn is_empty(&self) -> bool {
        self.config_file.is_none() && self.issuers.is_empty() && self.resource.is_none() && self.audiences.is_empty()
    }
}

/// A configuration read and checked: what `OAuth` is built from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `None`: the resource is `http://ADDR/mcp`, known once bound (loopback only).
    pub resource: Option<String>,
    pub audiences: Vec<String>,
    pub issuers: Vec<IssuerConfig>,
    pub prefix: String,
    pub claim: String,
    pub leeway: Duration,
    pub introspection: Option<Introspection>,
    pub static_scopes: BTreeMap<String, Vec<Scope>>,
}

#[derive(Debug, Clone)]
pub struct Introspection {
    pub client_id: String,
    pub client_secret: String,
    pub endpoint: Option<String>,
    pub cache: Duration,
}

/// Reads the file (by its name's ending) and the flags into settings, or says what is wrong.
pub fn settings(flags: &OAuthFlags) -> Result<Option<Settings>, String> {
    if flags.is_empty() {
        return Ok(None);
    }
    let mut config = match &flags.config_file {
        None => OAuthConfig::default(),
        Some((name, text)) if name.ends_with(".json") => {
            serde_json::from_str(text).map_err(|e| format!("--oauth-config {name}: {e}"))?
        }
        Some((name, text)) => toml::from_str(text).map_err(|e| format!("--oauth-config {name}: {e}"))?,
    };
    config.issuers.extend(flags.issuers.iter().map(|url| IssuerConfig {
        url: url.clone(),
        jwks_uri: None,
    }));
    if flags.resource.is_some() {
        config.resource = flags.resource.clone();
    }
    config.audiences.extend(flags.audiences.iter().cloned());
    check(config)
}

fn check(config: OAuthConfig) -> Result<Option<Settings>, String> {
    if config.issuers.is_empty() {
        return Err("OAuth is configured but names no authorization server: add --oauth-issuer URL (the `iss` its tokens carry) or `[[issuers]] url = …` in --oauth-config".into());
    }
    for issuer in &config.issuers {
        url("an issuer", &issuer.url)?;
        if let Some(jwks) = &issuer.jwks_uri {
            url("jwks_uri", jwks)?;
        }
    }
    if let Some(resource) = &config.resource {
        let parsed = url("the resource (--oauth-resource)", resource)?;
        if parsed.fragment().is_some() {
            return Err(format!(
                "the resource {resource} has a fragment; RFC 8707 forbids one: drop it"
            ));
        }
    }
    if config.resource.is_none() && !config.audiences.is_empty() {
        return Err(
            "--oauth-audience needs --oauth-resource: the URL clients reach /mcp at, which the metadata publishes"
                .into(),
        );
    }
    let prefix = config.scope_prefix.unwrap_or_else(|| "droidmcp:".into());
    if prefix.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
        return Err(format!(
            "scope_prefix {prefix:?} holds a space, quote or backslash, which no scope may"
        ));
    }
    let claim = config.principal_claim.unwrap_or_else(|| "sub".into());
    let leeway = Duration::from_secs(config.leeway_secs.unwrap_or(60));
    if leeway > Duration::from_secs(600) {
        return Err(format!(
            "leeway_secs {} is more than 600: a clock that far off needs fixing, not allowing",
            leeway.as_secs()
        ));
    }
    let introspection = match config.introspection {
        None => None,
        Some(i) => {
            let secret = match (i.client_secret, i.client_secret_env) {
                (Some(secret), None) => secret,
                (None, Some(env)) => std::env::var(&env)
                    .map_err(|_| format!("introspection's client_secret_env names {env}, which is not set"))?,
                _ => return Err("introspection needs one of client_secret or client_secret_env".into()),
            };
            if let Some(endpoint) = &i.endpoint {
                url("the introspection endpoint", endpoint)?;
            }
            Some(Introspection {
                client_id: i.client_id,
                client_secret: secret,
                endpoint: i.endpoint,
                cache: Duration::from_secs(i.cache_secs.unwrap_or(30).min(300)),
            })
        }
    };
    let mut static_scopes = BTreeMap::new();
    for (name, scopes) in config.static_scopes {
        let scopes = scopes
            .iter()
            .map(|s| {
                Scope::named(s).ok_or_else(|| {
                    format!("static_scopes.{name}: {s:?} is not a scope; they are read, act, shell, install, emulator")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        static_scopes.insert(name, scopes);
    }
    Ok(Some(Settings {
        resource: config.resource,
        audiences: config.audiences,
        issuers: config.issuers,
        prefix,
        claim,
        leeway,
        introspection,
        static_scopes,
    }))
}

/// An http(s) URL: https, or http on a loopback host (a test's or a laptop's server).
fn url(what: &str, text: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(text).map_err(|e| format!("{what} {text:?} is not a URL ({e})"))?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(format!(
            "{what} {text} is not an https URL (http only on loopback): tokens and keys travel over it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{OAuthFlags, settings};

    fn with(file: &str, text: &str) -> Result<(), String> {
        let flags = OAuthFlags {
            config_file: Some((file.into(), text.into())),
            ..OAuthFlags::default()
        };
        settings(&flags).map(|_| ())
    }

    #[test]
    fn a_bad_configuration_is_refused_saying_what_to_change() {
        let cases = [
            (
                "a.toml",
                "resource = \"https://x/mcp\"",
                "names no authorization server",
            ),
            (
                "a.toml",
                "[[issuers]]\nurl = \"http://idp.example.com\"",
                "not an https URL",
            ),
            (
                "a.toml",
                "resource = \"https://x/mcp#a\"\n[[issuers]]\nurl = \"https://idp\"",
                "fragment",
            ),
            ("a.toml", "issuer = \"https://idp\"", "unknown field `issuer`"),
            (
                "a.json",
                "{\"issuers\": [{\"url\": \"https://idp\"}], \"static_scopes\": {\"ci\": [\"root\"]}}",
                "not a scope",
            ),
            (
                "a.toml",
                "[[issuers]]\nurl = \"https://idp\"\n[introspection]\nclient_id = \"d\"",
                "client_secret",
            ),
            (
                "a.toml",
                "leeway_secs = 3600\n[[issuers]]\nurl = \"https://idp\"",
                "more than 600",
            ),
            (
                "a.toml",
                "audiences = [\"api://x\"]\n[[issuers]]\nurl = \"https://idp\"",
                "needs --oauth-resource",
            ),
        ];
        for (file, text, said) in cases {
            let error = with(file, text).unwrap_err();
            assert!(error.contains(said), "{text}: {error}");
        }
        with(
            "a.toml",
            "[[issuers]]\nurl = \"http://127.0.0.1:9/\"\n[static_scopes]\nci = [\"read\"]",
        )
        .unwrap();
    }
}
