//! An access token checked: a JWT by its signature (the issuer's JWKS, found through its
//! discovery metadata, kept, and fetched again for an unknown `kid` at most every
//! `REFRESH_EVERY`), `iss`, `aud` (this server's resource) and `exp`/`nbf` within the leeway; an
//! opaque token by RFC 7662 introspection, its answer kept briefly. jsonwebtoken does the
//! cryptography; an `HS*` or `none` token is refused before a key is looked at.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::{IssuerConfig, Settings};
use crate::principals::Principal;
use crate::tools::registry::{Grant, Scope};

mod introspect;

/// An unknown `kid` fetches the keys again at most this often (a stream of made-up kids costs
/// the authorization server one request per period).
pub const REFRESH_EVERY: Duration = Duration::from_secs(30);
/// Keys older than this are fetched again before use (a key the issuer withdrew stops working).
const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);
/// Introspection answers kept at most (the oldest dropped past it), and asked at once.
const KEPT_ANSWERS: usize = 10_000;
const ASKING_AT_ONCE: usize = 8;
/// What the authorization server may answer at most, and within how long.
const MAX_ANSWER: usize = 1 << 20;
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// The asymmetric algorithms taken: never `HS*` (anyone holding the public key could sign).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The resource server: its settings, each issuer's keys, introspection's answers.
pub struct OAuth {
    pub settings: Settings,
    /// This server's resource URI (`settings.resource`, or `http://ADDR/mcp` on loopback).
    pub resource: String,
    audiences: Vec<String>,
    issuers: Vec<Issuer>,
    http: reqwest::Client,
    answers: Mutex<HashMap<Vec<u8>, Kept>>,
    asking: tokio::sync::Semaphore,
}

/// An introspection answer, kept until then.
type Kept = (Instant, Result<Verified, Refused>);

struct Issuer {
    config: IssuerConfig,
    /// How its principals are named: `CLAIM@` this (the issuer without its scheme).
    label: String,
    /// What is known of its keys, held only to read or write it.
    keys: Mutex<Keys>,
    /// Held while its metadata or keys are fetched: one fetch at a time, which only calls whose
    /// key is not at hand wait on (a made-up kid's fetch, however slow, holds no other token).
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Keys {
    metadata: Option<Value>,
    set: Option<JwkSet>,
    fetched: Option<Instant>,
    /// Fetches of the set, and of the metadata, that ended, and why the last one failed: a call
    /// that waited on `fetching` while one ended takes its answer, failed or not, rather than
    /// asking again (callers queued behind a fetch that hangs would each wait its timeout).
    keys_tried: u64,
    keys_error: Option<String>,
    metadata_tried: u64,
    metadata_error: Option<String>,
}

/// Who a token names and what it may do.
#[derive(Debug, Clone)]
pub struct Verified {
    pub principal: Principal,
    pub grant: Grant,
}

/// Why a token is refused: 401 `invalid_token` with this description, or (`unavailable`) 503
/// when the authorization server could not be asked.
#[derive(Debug, Clone)]
pub struct Refused {
    pub why: String,
    pub unavailable: bool,
}

fn refused(why: impl Into<String>) -> Refused {
    Refused {
        why: why.into(),
        unavailable: false,
    }
}

fn unavailable(why: impl Into<String>) -> Refused {
    Refused {
        why: why.into(),
        unavailable: true,
    }
}

impl OAuth {
    /// The resource server for `settings`, serving at `bound`.
    pub fn new(settings: Settings, bound: SocketAddr) -> Result<OAuth, String> {
        let resource = match &settings.resource {
            Some(resource) => resource.clone(),
            None if bound.ip().is_loopback() => format!("http://{bound}{}", crate::http::PATH),
            None => {
                return Err(format!(
                    "{bound} is not loopback: say the URL clients reach this server's /mcp at (--oauth-resource https://…/mcp), which tokens must be issued for"
                ));
            }
        };
        let audiences = match settings.audiences.is_empty() {
            true => vec![resource.clone()],
            false => settings.audiences.clone(),
        };
        let tls = script::sandbox::http::tls_config()?;
        let http = reqwest::Client::builder()
            .timeout(ASK_TIMEOUT)
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("the OAuth client: {e}"))?;
        let issuers = settings
            .issuers
            .iter()
            .map(|config| Issuer {
                label: config
                    .url
                    .split_once("://")
                    .map_or(config.url.as_str(), |(_, rest)| rest)
                    .trim_end_matches('/')
                    .to_string(),
                config: config.clone(),
                keys: Mutex::new(Keys::default()),
                fetching: tokio::sync::Mutex::new(()),
            })
            .collect::<Vec<Issuer>>();
        // Two issuers one label (`http://idp` and `https://idp/`) would make their users with
        // one `sub` one principal.
        for (i, a) in issuers.iter().enumerate() {
            if let Some(b) = issuers[..i].iter().find(|b| b.label == a.label) {
                return Err(format!(
                    "the issuers {} and {} would name their principals alike ({}): configure one of them",
                    b.config.url, a.config.url, a.label
                ));
            }
        }
        Ok(OAuth {
            settings,
            resource,
            audiences,
            issuers,
            http,
            answers: Mutex::new(HashMap::new()),
            asking: tokio::sync::Semaphore::new(ASKING_AT_ONCE),
        })
    }

    /// Every scope on the wire, as the metadata lists them.
    pub fn scopes_supported(&self) -> Vec<String> {
        Scope::ALL.iter().map(|s| self.wire(*s)).collect()
    }

    pub fn wire(&self, scope: Scope) -> String {
        format!("{}{}", self.settings.prefix, scope.name())
    }

    /// What a static token's principal may do: all, unless `static_scopes` names it.
    pub fn static_grant(&self, name: &str) -> Grant {
        Grant {
            scopes: self
                .settings
                .static_scopes
                .get(name)
                .cloned()
                .unwrap_or_else(|| Scope::ALL.to_vec()),
            prefix: self.settings.prefix.as_str().into(),
        }
    }

    /// The token's principal and grant, or why not.
    pub async fn verify(&self, token: &str) -> Result<Verified, Refused> {
        match jsonwebtoken::decode_header(token) {
            Ok(header) => self.jwt(token, header).await,
            // A JWS jsonwebtoken cannot read (`alg: none`, an algorithm it lacks) is a JWT
            // refused, never an opaque token sent to introspection (RFC 8725 §3.1).
            Err(_) if let Some(alg) = jws_alg(token) => Err(refused(format!(
                "signed with {}, which this server does not take",
                text(&alg)
            ))),
            Err(_) if self.settings.introspection.is_some() => self.introspected(token).await,
            Err(e) => Err(refused(format!(
                "not a JWT access token ({e}), and this server introspects none"
            ))),
        }
    }

    async fn jwt(&self, token: &str, header: jsonwebtoken::Header) -> Result<Verified, Refused> {
        if !ALGORITHMS.contains(&header.alg) {
            return Err(refused(format!(
                "signed with {:?}, which this server does not take",
                header.alg
            )));
        }
        // Which issuer's keys to check it with: the `iss` it claims, checked again below.
        let claimed: Value = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| refused(format!("unreadable claims ({e})")))?;
        let iss = claimed["iss"].as_str().unwrap_or_default();
        let Some(issuer) = self.issuers.iter().find(|i| i.config.url == iss) else {
            return Err(refused(format!(
                "issued by {}, not an authorization server this server takes",
                text(iss)
            )));
        };
        let keys = self.keys(issuer, header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&self.audiences);
        validation.set_issuer(&[&issuer.config.url]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        // A kid the set has twice (RFC 7517 §4.5 says SHOULD NOT; a rotation does it): the
        // token is the key's that verifies it.
        let mut decoded = Err(jsonwebtoken::errors::ErrorKind::InvalidSignature.into());
        for key in &keys {
            decoded = jsonwebtoken::decode::<Value>(token, key, &validation);
            if !matches!(&decoded, Err(e) if *e.kind() == jsonwebtoken::errors::ErrorKind::InvalidSignature) {
                break;
            }
        }
        let data = decoded.map_err(|e: jsonwebtoken::errors::Error| {
            use jsonwebtoken::errors::ErrorKind;
            refused(match e.kind() {
                ErrorKind::InvalidSignature => "the signature does not verify".to_string(),
                ErrorKind::ExpiredSignature => "expired".to_string(),
                ErrorKind::ImmatureSignature => "not valid yet (nbf)".to_string(),
                ErrorKind::InvalidAudience => format!(
                    "issued for another resource (aud {}), not {}",
                    text(&claimed["aud"].to_string()),
                    self.audiences.join(" ")
                ),
                ErrorKind::InvalidIssuer => "issued by another authorization server".to_string(),
                ErrorKind::MissingRequiredClaim(claim) => format!("no `{claim}` claim"),
                _ => format!("refused ({e})"),
            })
        })?;
        self.verified(issuer, &data.claims)
    }

    /// The principal and grant a verified token's claims (or introspection's answer) name.
    fn verified(&self, issuer: &Issuer, claims: &Value) -> Result<Verified, Refused> {
        let claim = &self.settings.claim;
        // A client's own token (client credentials) may name no user: the client is the principal.
        // A client's own token names no user, or itself as `sub` (RFC 9068 §2.2): marked, so a
        // user whose `sub` is a client's id is not that client (no URL holds a space).
        let (named, client) = match (&claims[claim.as_str()], claim.as_str()) {
            (Value::Null, "sub") => (&claims["client_id"], " (client)"),
            (sub, "sub") if claims["client_id"] == *sub => (sub, " (client)"),
            (named, _) => (named, ""),
        };
        let Some(name) = named.as_str().filter(|n| !n.is_empty()) else {
            return Err(refused(format!("no `{claim}` claim naming its principal")));
        };
        // A principal names folders on disk: a bound, said as one.
        if name.len() > 256 {
            return Err(refused(format!(
                "its `{claim}` is {} bytes; a principal's name is at most 256",
                name.len()
            )));
        }
        // `scope` (RFC 9068, 7662) or `scp` (Entra: a string, or a list).
        let words: Vec<&str> = match (&claims["scope"], &claims["scp"]) {
            (Value::String(s), _) | (_, Value::String(s)) => s.split_whitespace().collect(),
            (_, Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut scopes: Vec<Scope> = words
            .iter()
            .filter_map(|w| w.strip_prefix(self.settings.prefix.as_str()).and_then(Scope::named))
            .collect();
        scopes.sort();
        scopes.dedup();
        Ok(Verified {
            principal: Principal(format!("{name}@{}{client}", issuer.label).into()),
            grant: Grant {
                scopes,
                prefix: self.settings.prefix.as_str().into(),
            },
        })
    }

    /// The keys `kid` names in the issuer's set (the set fetched when it has none, is old, or
    /// lacks the kid and was not fetched within `REFRESH_EVERY`).
    async fn keys(&self, issuer: &Issuer, kid: Option<&str>, alg: Algorithm) -> Result<Vec<DecodingKey>, Refused> {
        let find = |set: &JwkSet| -> Option<Vec<jsonwebtoken::jwk::Jwk>> {
            let named: Vec<_> = match kid {
                Some(kid) => set
                    .keys
                    .iter()
                    .filter(|k| k.common.key_id.as_deref() == Some(kid))
                    .cloned()
                    .collect(),
                // No kid: the set's one key.
                None if set.keys.len() == 1 => set.keys.clone(),
                None => Vec::new(),
            };
            (!named.is_empty()).then_some(named)
        };
        let at_hand = |keys: &Keys| {
            let fresh = keys.fetched.is_some_and(|at| at.elapsed() < KEYS_MAX_AGE);
            keys.set.as_ref().filter(|_| fresh).and_then(find)
        };
        let found = at_hand(&issuer.keys.lock().unwrap_or_else(|p| p.into_inner()));
        let found = match found {
            Some(found) => found,
            None => {
                // After any fetch under way (its answer may hold the kid, and is this call's
                // if it ended meanwhile), then fetch if allowed.
                let (seen, seen_metadata) = {
                    let keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                    (keys.keys_tried, keys.metadata_tried)
                };
                let _one = issuer.fetching.lock().await;
                let may_fetch = {
                    let mut keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                    let fresh = keys.fetched.is_some_and(|at| at.elapsed() < KEYS_MAX_AGE);
                    let shared = keys.keys_tried != seen;
                    let may = !shared
                        && at_hand(&keys).is_none()
                        && (keys.set.is_none()
                            || !fresh
                            || keys.fetched.is_none_or(|at| at.elapsed() >= REFRESH_EVERY));
                    if may {
                        keys.fetched = Some(Instant::now());
                    }
                    may
                };
                if may_fetch {
                    let fetched = self.fetch_keys(issuer, seen_metadata).await;
                    let mut keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                    keys.keys_tried += 1;
                    match fetched {
                        Ok(set) => {
                            keys.set = Some(set);
                            keys.keys_error = None;
                        }
                        Err(why) => {
                            tracing::warn!(issuer = %issuer.config.url, %why, "the keys could not be fetched");
                            keys.keys_error = Some(why);
                        }
                    }
                }
                let keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                if keys.set.is_none() {
                    let why = keys.keys_error.clone();
                    return Err(unavailable(
                        why.unwrap_or_else(|| "the issuer's keys could not be fetched".into()),
                    ));
                }
                keys.set.as_ref().and_then(find).ok_or_else(|| {
                    refused(match kid {
                        Some(kid) => format!("signed with key {}, which is not in the issuer's key set", text(kid)),
                        None => "no `kid`, and the issuer has several keys".to_string(),
                    })
                })?
            }
        };
        let found: Vec<_> = found
            .into_iter()
            .filter(|k| {
                k.common
                    .key_algorithm
                    .is_none_or(|a| a.to_string() == format!("{alg:?}"))
            })
            .collect();
        if found.is_empty() {
            return Err(refused("signed with an algorithm its key is not for"));
        }
        found
            .iter()
            .map(|k| {
                DecodingKey::from_jwk(k).map_err(|e| {
                    refused(format!(
                        "the issuer's key {} is unusable ({e})",
                        text(kid.unwrap_or(""))
                    ))
                })
            })
            .collect()
    }

    /// The issuer's key set, fetched (under `fetching`, held by the caller; `seen_metadata`:
    /// `metadata_tried` before it waited).
    async fn fetch_keys(&self, issuer: &Issuer, seen_metadata: u64) -> Result<JwkSet, String> {
        let jwks = match &issuer.config.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let metadata = self.metadata(issuer, seen_metadata).await?;
                metadata["jwks_uri"]
                    .as_str()
                    .ok_or_else(|| format!("{}'s metadata names no jwks_uri", issuer.config.url))?
                    .to_string()
            }
        };
        let set = self.get(&jwks).await?;
        serde_json::from_value(set).map_err(|e| format!("{jwks} is not a JWK set ({e})"))
    }

    /// The issuer's metadata: RFC 8414's, else OpenID Connect's, its `issuer` checked; kept
    /// once had. Fetched under `fetching`, held by the caller; an attempt that ended while the
    /// caller waited (`seen`: `metadata_tried` before it waited) is its answer.
    async fn metadata(&self, issuer: &Issuer, seen: u64) -> Result<Value, String> {
        {
            let keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(metadata) = &keys.metadata {
                return Ok(metadata.clone());
            }
            if keys.metadata_tried != seen {
                return Err(keys.metadata_error.clone().unwrap_or_default());
            }
        }
        let found = self.discover(issuer).await;
        let mut keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.metadata_tried += 1;
        match &found {
            Ok(metadata) => keys.metadata = Some(metadata.clone()),
            Err(why) => keys.metadata_error = Some(why.clone()),
        }
        found
    }

    /// The discovery documents asked in turn, the first that names the issuer.
    async fn discover(&self, issuer: &Issuer) -> Result<Value, String> {
        let url = &issuer.config.url;
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        let origin = parsed.origin().ascii_serialization();
        let path = parsed.path().trim_end_matches('/');
        let tried = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{}/.well-known/openid-configuration", url.trim_end_matches('/')),
            format!("{origin}/.well-known/openid-configuration{path}"),
        ];
        let mut why = Vec::new();
        for at in tried {
            match self.get(&at).await {
                Ok(metadata) if metadata["issuer"].as_str() == Some(url.as_str()) => return Ok(metadata),
                Ok(metadata) => why.push(format!("{at} names issuer {}", metadata["issuer"])),
                Err(e) => why.push(e),
            }
        }
        Err(format!("no discovery metadata for {url}: {}", why.join("; ")))
    }

    async fn get(&self, url: &str) -> Result<Value, String> {
        let response = self.http.get(url).send().await.map_err(|e| format!("{url}: {e}"))?;
        answer(url, response).await
    }
}

/// A JSON answer of at most `MAX_ANSWER` bytes, or why not.
async fn answer(url: &str, mut response: reqwest::Response) -> Result<Value, String> {
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(format!("{url} answered more than {} KiB", MAX_ANSWER >> 10));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} answered no JSON ({e})"))
}

/// A token's text as an error description may quote it: short, and within RFC 6750's characters.
/// The `alg` of a compact JWS's header (three parts, the first a JSON object naming one).
fn jws_alg(token: &str) -> Option<String> {
    use base64::Engine;
    let mut parts = token.split('.');
    let (header, _, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).ok()?;
    let header: Value = serde_json::from_slice(&header).ok()?;
    header["alg"].as_str().map(str::to_string)
}

fn text(said: &str) -> String {
    crate::android::text::echoed(said)
        .chars()
        .filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\')
        .collect()
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("resource", &self.resource)
            .field(
                "issuers",
                &self.issuers.iter().map(|i| &i.config.url).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Shared by the token check and the metadata route.
pub type Shared = Arc<OAuth>;
