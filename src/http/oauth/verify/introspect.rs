//! Opaque tokens through RFC 7662 introspection: the answer asked of the first issuer's
//! introspection endpoint (configured, or from its metadata), read as the RFC says, and kept
//! until the token's `exp` or the cache time, whichever comes first.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha1::Digest;

use super::{KEPT_ANSWERS, OAuth, Refused, Verified, answer, refused, text, unavailable};

impl OAuth {
    /// An opaque token through introspection, its answer kept for the cache time.
    pub(super) async fn introspected(&self, token: &str) -> Result<Verified, Refused> {
        let Some(config) = &self.settings.introspection else {
            return Err(refused("not a JWT"));
        };
        let digest = sha1::Sha1::digest(token.as_bytes()).to_vec();
        {
            let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((until, answer)) = answers.get(&digest)
                && Instant::now() < *until
            {
                return answer.clone();
            }
        }
        let _turn = self.asking.acquire().await.map_err(|_| unavailable("shutting down"))?;
        let (answer, exp) = self.introspect(token).await;
        if answer.as_ref().is_err_and(|r| r.unavailable) {
            return answer;
        }
        let mut kept = Instant::now() + config.cache;
        if let Some(exp) = exp {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            kept = kept.min(Instant::now() + Duration::from_secs(exp.saturating_sub(now)));
        }
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        if answers.len() >= KEPT_ANSWERS {
            let now = Instant::now();
            answers.retain(|_, (until, _)| *until > now);
            if answers.len() >= KEPT_ANSWERS {
                answers.clear();
            }
        }
        answers.insert(digest, (kept, answer.clone()));
        answer
    }

    async fn introspect(&self, token: &str) -> (Result<Verified, Refused>, Option<u64>) {
        let Some(config) = &self.settings.introspection else {
            return (Err(refused("not a JWT")), None);
        };
        let issuer = &self.issuers[0];
        let endpoint = match &config.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => {
                let (kept, seen) = {
                    let keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                    (keys.metadata.clone(), keys.metadata_tried)
                };
                let metadata = match kept {
                    Some(kept) => Ok(kept),
                    None => {
                        let _one = issuer.fetching.lock().await;
                        self.metadata(issuer, seen).await
                    }
                };
                match metadata {
                    Ok(m) => match m["introspection_endpoint"].as_str() {
                        Some(e) => e.to_string(),
                        None => {
                            return (
                                Err(unavailable(format!(
                                    "{}'s metadata names no introspection_endpoint",
                                    issuer.config.url
                                ))),
                                None,
                            );
                        }
                    },
                    Err(why) => return (Err(unavailable(why)), None),
                }
            }
        };
        let asked = self
            .http
            .post(&endpoint)
            .basic_auth(&config.client_id, Some(&config.client_secret))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await;
        let info = match asked {
            Ok(response) => match answer(&endpoint, response).await {
                Ok(info) => info,
                Err(why) => return (Err(unavailable(why)), None),
            },
            Err(e) => return (Err(unavailable(format!("{endpoint}: {e}"))), None),
        };
        let exp = info["exp"].as_u64();
        if info["active"] != Value::Bool(true) {
            return (Err(refused("the authorization server says it is not active")), exp);
        }
        if let Some(iss) = info["iss"].as_str()
            && iss != issuer.config.url
        {
            return (Err(refused(format!("issued by {}", text(iss)))), exp);
        }
        let aud: Vec<&str> = match &info["aud"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !aud.iter().any(|a| self.audiences.iter().any(|ours| ours == a)) {
            return (
                Err(refused(format!(
                    "issued for another resource (aud {}), not {}",
                    text(&aud.join(" ")),
                    self.audiences.join(" ")
                ))),
                exp,
            );
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let leeway = self.settings.leeway.as_secs();
        if exp.is_some_and(|exp| exp + leeway < now) {
            return (Err(refused("expired")), exp);
        }
        if info["nbf"].as_u64().is_some_and(|nbf| nbf > now + leeway) {
            return (Err(refused("not valid yet (nbf)")), exp);
        }
        (self.verified(issuer, &info), exp)
    }
}
