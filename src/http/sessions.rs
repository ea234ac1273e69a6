//! Legacy sessions (`Mcp-Session-Id`) as the principal's: rmcp's `LocalSessionManager` underneath,
//! and around it what a shared server needs. Each session belongs to the principal whose
//! `initialize` made it (`claim`); a request naming another principal's session is answered as
//! one naming a session nobody made (`bind` swaps the id for an unknown one before rmcp sees it).
//! Each principal holds at most `--max-sessions`: past that its least recently used idle session
//! (no call running, no stream open) is closed, and when none is idle its new one is refused
//! with 503. An answer's events are kept while the call runs and 60 s after it ends (the last
//! `KEPT_ENDED` ended calls of a session), so a `Last-Event-ID` resume after the end gets them:
//! rmcp drops a call's events as its answer goes out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

use crate::principals::Principal;

/// How long an ended call's events stay resumable (docs/http.md promises 60 s).
pub const RESUMABLE_AFTER_END: Duration = Duration::from_secs(60);
/// Ended calls kept per session for a resume (the newest; older ones go first).
const KEPT_ENDED: usize = 16;
/// Events kept per call: a resume replays those after its `Last-Event-ID` among them.
const KEPT_EVENTS: usize = 256;
/// The header naming a legacy session.
const SESSION_ID: &str = "mcp-session-id";

/// The session manager `serve` hands rmcp.
pub struct Sessions {
    inner: LocalSessionManager,
    held: Arc<Mutex<HashMap<SessionId, Held>>>,
    max_per_principal: usize,
}

struct Held {
    /// None until the `initialize` that made it has answered.
    owner: Option<Arc<str>>,
    last_used: Instant,
    /// Cloned by each running call and open stream: more than one reference is busy.
    busy: Arc<()>,
    /// The session's calls' events by rmcp's request number (the `/N` of an event id).
    calls: HashMap<u64, Arc<Kept>>,
}

/// One call's events, kept for resumes.
struct Kept {
    state: Mutex<KeptState>,
    changed: tokio::sync::watch::Sender<()>,
}

#[derive(Default)]
struct KeptState {
    events: std::collections::VecDeque<(usize, ServerSseMessage)>,
    ended: Option<Instant>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An event id as rmcp writes it for a call's stream: `INDEX/REQUEST`.
fn parse_event_id(id: &str) -> Option<(usize, u64)> {
    let (index, request) = id.split_once('/')?;
    Some((index.parse().ok()?, request.parse().ok()?))
}

#[derive(Debug)]
pub enum SessionsError {
    Inner(LocalSessionManagerError),
    /// A `Last-Event-ID` naming no call this session still keeps.
    NotKept(String),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Inner(e) => e.fmt(f),
            SessionsError::NotKept(id) => write!(
                f,
                "no call of this session with event {id} is kept (events are kept {} s after a call ends)",
                RESUMABLE_AFTER_END.as_secs()
            ),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionsError::Inner(e)
    }
}

/// A stream that keeps its session busy while it is open.
struct Busy {
    inner: std::pin::Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>,
    _busy: Arc<()>,
}

impl Stream for Busy {
    type Item = ServerSseMessage;
    fn poll_next(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl Sessions {
    pub fn new(inner: LocalSessionManager, max_per_principal: usize) -> Sessions {
        Sessions {
            inner,
            held: Arc::new(Mutex::new(HashMap::new())),
            max_per_principal,
        }
    }

    /// The session's busy token, or none when the session is unknown.
    fn busy(&self, id: &SessionId) -> Option<Arc<()>> {
        lock(&self.held).get(id).map(|h| h.busy.clone())
    }

    /// Whether `principal` made the session `id`; marks it used when so.
    pub fn owned_by(&self, id: &str, principal: &Principal) -> bool {
        let mut held = lock(&self.held);
        match held.get_mut(id) {
            Some(h) if h.owner.as_deref() == Some(&*principal.0) => {
                h.last_used = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Gives the new session `id` to `principal`, closing its least recently used idle session
    /// when that makes one more than the cap; when none is idle, closes the new one and says
    /// why.
    pub async fn claim(&self, id: &str, principal: &Principal) -> Result<(), String> {
        let evict = {
            let mut held = lock(&self.held);
            if let Some(h) = held.get_mut(id) {
                h.owner = Some(principal.0.clone());
                h.last_used = Instant::now();
            }
            let own: Vec<(&SessionId, &Held)> = held
                .iter()
                .filter(|(_, h)| h.owner.as_deref() == Some(&*principal.0))
                .collect();
            if own.len() <= self.max_per_principal {
                return Ok(());
            }
            own.iter()
                .filter(|(sid, h)| &***sid != id && Arc::strong_count(&h.busy) == 1)
                .min_by_key(|(_, h)| h.last_used)
                .map(|(sid, _)| (*sid).clone())
        };
        match evict {
            Some(old) => {
                tracing::info!(principal = %principal.0, "closed the least recently used idle session: at --max-sessions");
                let _ = self.close_session(&old).await;
                Ok(())
            }
            None => {
                let _ = self.close_session(&SessionId::from(id)).await;
                tracing::warn!(principal = %principal.0, max = self.max_per_principal, "refused a new session: all of this principal's are busy");
                Err(format!(
                    "Service Unavailable: this token's {max} MCP sessions are all busy (--max-sessions {max}, per token); end one (DELETE) or retry later\n",
                    max = self.max_per_principal
                ))
            }
        }
    }

    /// Drops the session's ended calls past their time, and the oldest past `KEPT_ENDED`.
    fn forget_ended(calls: &mut HashMap<u64, Arc<Kept>>) {
        calls.retain(|_, k| lock(&k.state).ended.is_none_or(|at| at.elapsed() < RESUMABLE_AFTER_END));
        let mut ended: Vec<(u64, Instant)> = calls
            .iter()
            .filter_map(|(n, k)| lock(&k.state).ended.map(|at| (*n, at)))
            .collect();
        if ended.len() > KEPT_ENDED {
            ended.sort_by_key(|(_, at)| *at);
            for (n, _) in &ended[..ended.len() - KEPT_ENDED] {
                calls.remove(n);
            }
        }
    }
}

impl Kept {
    fn push(&self, event: &ServerSseMessage) {
        let index = event.event_id.as_deref().and_then(parse_event_id).map(|(i, _)| i);
        if let Some(index) = index {
            let mut state = lock(&self.state);
            if state.events.len() == KEPT_EVENTS {
                state.events.pop_front();
            }
            state.events.push_back((index, event.clone()));
        }
        self.changed.send_replace(());
    }

    fn end(&self) {
        lock(&self.state).ended = Some(Instant::now());
        self.changed.send_replace(());
    }

    /// The events after `after`, then each new one until the call ends.
    async fn replay(self: Arc<Kept>, after: usize, tx: tokio::sync::mpsc::Sender<ServerSseMessage>) {
        let mut changed = self.changed.subscribe();
        let mut next = after + 1;
        loop {
            let (events, ended): (Vec<ServerSseMessage>, bool) = {
                let state = lock(&self.state);
                let events = state
                    .events
                    .iter()
                    .filter(|(i, _)| *i >= next)
                    .map(|(_, e)| e.clone())
                    .collect();
                (events, state.ended.is_some())
            };
            for event in events {
                if let Some((i, _)) = event.event_id.as_deref().and_then(parse_event_id) {
                    next = i + 1;
                }
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            if ended || changed.changed().await.is_err() {
                return;
            }
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.held).insert(
            id.clone(),
            Held {
                owner: None,
                last_used: Instant::now(),
                busy: Arc::new(()),
                calls: HashMap::new(),
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.held).remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    /// The call's events go to the client and into the session's keeping, read to the end by a
    /// task of their own whether or not the client still listens.
    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let mut events = Box::pin(self.inner.create_stream(id, message).await?);
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let kept = Arc::new(Kept {
            state: Mutex::new(KeptState::default()),
            changed: tokio::sync::watch::channel(()).0,
        });
        let sessions = self.held_handle();
        let id = id.clone();
        tokio::spawn(async move {
            let _busy = busy;
            let mut tx = Some(tx);
            let mut filed = false;
            while let Some(event) = events.next().await {
                if !filed && let Some((_, request)) = event.event_id.as_deref().and_then(parse_event_id) {
                    filed = true;
                    if let Some(held) = sessions.upgrade() {
                        let mut held = lock(&held);
                        if let Some(h) = held.get_mut(&id) {
                            Sessions::forget_ended(&mut h.calls);
                            h.calls.insert(request, kept.clone());
                        }
                    }
                }
                kept.push(&event);
                if let Some(sender) = &tx
                    && sender.send(event).await.is_err()
                {
                    tx = None;
                }
            }
            kept.end();
        });
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id).unwrap_or_default();
        let inner = self.inner.create_standalone_stream(id).await?;
        Ok(Busy {
            inner: Box::pin(inner),
            _busy: busy,
        })
    }

    /// A call's stream from this session's keeping; the session's own stream from rmcp's.
    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id).unwrap_or_default();
        let Some((index, request)) = parse_event_id(&last_event_id) else {
            let inner = self.inner.resume(id, last_event_id).await?;
            return Ok(Busy {
                inner: Box::pin(inner),
                _busy: busy,
            });
        };
        let kept = {
            let mut held = lock(&self.held);
            held.get_mut(id).and_then(|h| {
                Sessions::forget_ended(&mut h.calls);
                h.calls.get(&request).cloned()
            })
        };
        let kept = kept.ok_or(SessionsError::NotKept(last_event_id))?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(kept.replay(index, tx));
        Ok(Busy {
            inner: Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)),
            _busy: busy,
        })
    }
}

impl Sessions {
    /// A weak handle on the sessions' table, for the tasks that file a call's events (they must
    /// not keep it alive past the server).
    fn held_handle(&self) -> std::sync::Weak<Mutex<HashMap<SessionId, Held>>> {
        Arc::downgrade(&self.held)
    }
}

/// What a request naming another principal's session (or a malformed id) names instead: an id
/// rmcp never makes, so the answer is exactly the one for a session nobody made.
const UNKNOWN: &str = "unknown-session";

/// Binds sessions to principals: a request naming a session goes on only as its maker's (else as
/// one naming no known session); a response that made a session gives it to the request's
/// principal, within its cap.
pub async fn bind(sessions: &Sessions, mut request: Request, next: Next) -> Response {
    let Some(principal) = request.extensions().get::<Principal>().cloned() else {
        return next.run(request).await;
    };
    if let Some(named) = request.headers().get(SESSION_ID) {
        let own = named.to_str().is_ok_and(|id| sessions.owned_by(id, &principal));
        if !own {
            request
                .headers_mut()
                .insert(SESSION_ID, HeaderValue::from_static(UNKNOWN));
        }
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let made = response
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(made) = made
        && let Err(why) = sessions.claim(&made, &principal).await
    {
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "30")], why).into_response();
    }
    response
}
