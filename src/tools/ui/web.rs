//! Web content in the same ref space: a WebView (or Chrome) on the screen is read through its
//! DevTools socket (`adb::devtools` over our own adb stream) and its interactive elements join
//! the dump as nodes under the WebView, class `web:<role>`, their boxes mapped into the
//! WebView's bounds. Tapping one scrolls it into view and clicks its center through CDP
//! (`Input.dispatchMouseEvent`: the page sees a real pointer event), refused when something else
//! covers that center; typing inserts any Unicode text (`Input.insertText`). Every script here
//! runs in droidmcp's isolated world (`devtools::Session::evaluate`), where a page's overrides of
//! its own built-ins cannot make it lie. Only debuggable WebViews have a socket: the reading says
//! so when one has none.

use serde::Serialize;
use serde_json::{Value, json};

use super::read::Snapshot;
use crate::adb::devtools::{self, Session, Target};
use crate::android::text::quote;
use crate::android::ui_elements::Element;
use crate::android::uiautomator::UiNode;
use crate::android::uiautomator::{Bounds, UiTree};
use crate::android::unix_sockets::{DevtoolsOwner, devtools_sockets};
use crate::context::{Data, Kind};
use crate::tools::State;

/// The class uiautomator gives a WebView.
const WEBVIEW_CLASS: &str = "android.webkit.WebView";
/// The attribute a web node carries: the CSS selector that finds it again.
pub(super) const SELECTOR_ATTR: &str = crate::android::identity::WEB_SELECTOR_ATTR;

/// What a reading saw of the page in the WebView on the screen.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebPage {
    /// The page's title and address, when it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Web elements listed among `elements` (class `web:<role>`).
    pub elements: usize,
    /// The page's console errors and failed requests, as the page keeps them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console: Option<WebConsole>,
    /// Why the page could not be read (no DevTools socket: not debuggable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip)]
    pub socket: String,
    #[serde(skip)]
    pub ws_url: String,
}

/// Reads the page of the first WebView in `tree` and adds its elements under it. `None` when no
/// WebView is on the screen.
pub(super) async fn merge(state: &State, serial: &str, tree: &mut UiTree) -> Option<WebPage> {
    let at = tree.nodes.iter().position(|n| n.class() == WEBVIEW_CLASS)?;
    let package = tree.nodes[at].attr("package").unwrap_or_default().to_string();
    let bounds = tree.nodes[at].bounds()?;
    let not_read = |note: String| WebPage {
        title: None,
        url: None,
        elements: 0,
        console: None,
        note: Some(note),
        socket: String::new(),
        ws_url: String::new(),
    };
    let (socket, target) = match page_of(state, serial, &package).await {
        Ok(found) => found,
        Err(note) => return Some(not_read(note)),
    };
    let Some(ws_url) = target.web_socket_debugger_url.clone() else {
        return Some(not_read(format!(
            "the page {:?} is held by another DevTools client (a DevTools window?); close it to read the page",
            target.title
        )));
    };
    let read = async {
        let pipe = state
            .adb
            .local_abstract(serial, &socket)
            .await
            .map_err(|e| e.to_string())?;
        let mut session = Session::open(pipe, &ws_url, state.adb.timeout())
            .await
            .map_err(|e| e.to_string())?;
        let page = session.evaluate(COLLECT).await.map_err(|e| e.to_string())?;
        // Enabling replays what the page logged so far (console calls, exceptions, log entries
        // such as failed requests); the events arrive before each answer.
        for domain in ["Runtime.enable", "Log.enable"] {
            session.call(domain, json!({})).await.map_err(|e| e.to_string())?;
        }
        Ok::<_, String>((page, std::mem::take(&mut session.events)))
    };
    let (page, events) = match read.await {
        Ok(read) => read,
        Err(e) => return Some(not_read(format!("the page could not be read: {e}"))),
    };
    let width = page["vw"].as_f64().filter(|w| *w > 0.0).unwrap_or(1.0);
    // CSS pixels to device pixels: the WebView's width over the page's (the device pixel
    // ratio on a phone); the page's own scroll is already in its client boxes.
    let scale = f64::from(bounds.right - bounds.left) / width;
    let empty = Vec::new();
    let found = page["els"].as_array().unwrap_or(&empty);
    let depth = tree.nodes[at].depth + 1;
    for e in found {
        let index = tree.nodes.len();
        tree.nodes.push(node(e, &package, bounds, scale, at, depth));
        tree.nodes[at].children.push(index);
    }
    Some(WebPage {
        title: page["title"].as_str().map(str::to_string),
        url: page["url"].as_str().map(str::to_string),
        elements: found.len(),
        console: console(state, serial, &events),
        note: None,
        socket,
        ws_url,
    })
}

/// The node of one element `COLLECT` read (`e`) under the WebView at `bounds` (node `parent`),
/// CSS pixels times `scale`: class `web:<role>`, its value (never a password's) as its text and
/// its accessible name as its hint, which is what its identity reads (`android::identity`).
pub(super) fn node(e: &Value, package: &str, bounds: Bounds, scale: f64, parent: usize, depth: usize) -> UiNode {
    let num = |k: &str| e[k].as_f64().unwrap_or(0.0);
    let [left, top] = [
        bounds.left + (num("x") * scale).round() as i32,
        bounds.top + (num("y") * scale).round() as i32,
    ];
    let [right, bottom] = [
        left + (num("w") * scale).round() as i32,
        top + (num("h") * scale).round() as i32,
    ];
    let role = e["role"].as_str().unwrap_or("generic");
    let name = e["name"].as_str().unwrap_or_default();
    let value = e["value"].as_str().unwrap_or_default();
    let flag = |k: &str| if e[k].as_bool() == Some(true) { "true" } else { "false" };
    let clickable = if role == "heading" || role == "text" {
        "false"
    } else {
        "true"
    };
    let attrs = [
        ("text", if value.is_empty() { name } else { value }),
        ("resource-id", ""),
        ("class", &format!("web:{role}")),
        ("package", package),
        ("content-desc", ""),
        ("hint", name),
        ("clickable", clickable),
        ("focusable", clickable),
        (
            "checkable",
            if role == "checkbox" || role == "radio" {
                "true"
            } else {
                "false"
            },
        ),
        ("checked", flag("checked")),
        ("focused", flag("focused")),
        ("password", flag("password")),
        (
            "enabled",
            if e["disabled"].as_bool() == Some(true) {
                "false"
            } else {
                "true"
            },
        ),
        ("bounds", &format!("[{left},{top}][{right},{bottom}]")),
        (SELECTOR_ATTR, e["sel"].as_str().unwrap_or_default()),
    ];
    UiNode {
        tag: "node".into(),
        attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        parent: Some(parent),
        children: Vec::new(),
        depth,
    }
}

/// A page's errors, summarised as `adb-logcat read` does: counts, the first few, and a cacheId
/// for all of them.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebConsole {
    /// Console errors and uncaught exceptions.
    pub errors: usize,
    /// Requests that failed (network log entries).
    pub failed_requests: usize,
    pub first: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
}

/// How many messages a reading lists; the rest stay behind the cacheId.
const FIRST_MESSAGES: usize = 3;

fn console(state: &State, serial: &str, events: &[Value]) -> Option<WebConsole> {
    let (mut errors, mut failed, mut all) = (0, 0, Vec::new());
    for event in events {
        let params = &event["params"];
        let line = match event["method"].as_str() {
            Some("Runtime.consoleAPICalled") if params["type"] == "error" => {
                errors += 1;
                let args = params["args"].as_array().map(Vec::as_slice).unwrap_or_default();
                let said: Vec<String> = args
                    .iter()
                    .map(|a| match &a["value"] {
                        Value::String(s) => s.clone(),
                        Value::Null => a["description"].as_str().unwrap_or_default().to_string(),
                        other => other.to_string(),
                    })
                    .collect();
                format!("console.error: {}", said.join(" "))
            }
            Some("Runtime.exceptionThrown") => {
                errors += 1;
                let details = &params["exceptionDetails"];
                let text = details["exception"]["description"]
                    .as_str()
                    .or(details["text"].as_str());
                format!("uncaught: {}", text.unwrap_or("an exception"))
            }
            Some("Log.entryAdded") if params["entry"]["level"] == "error" => {
                let entry = &params["entry"];
                let text = entry["text"].as_str().unwrap_or_default();
                if entry["source"] == "network" {
                    failed += 1;
                    format!("request failed: {} {text}", entry["url"].as_str().unwrap_or_default())
                } else {
                    errors += 1;
                    format!("{}: {text}", entry["source"].as_str().unwrap_or("log"))
                }
            }
            _ => continue,
        };
        all.push(crate::android::text::cut(&line, 300));
    }
    if all.is_empty() {
        return None;
    }
    let first = all.iter().take(FIRST_MESSAGES).cloned().collect();
    let cache_id = (all.len() > FIRST_MESSAGES).then(|| {
        let items = all.into_iter().map(Value::String).collect();
        let label = format!("web page errors on {serial}");
        state.cache.put(Kind::Ui, label, Data::List(items)).id.clone()
    });
    Some(WebConsole {
        errors,
        failed_requests: failed,
        first,
        cache_id,
    })
}

/// The DevTools socket of `package`'s WebView (or of Chrome, or one the app names itself), and
/// the visible page on it; else why there is none.
async fn page_of(state: &State, serial: &str, package: &str) -> Result<(String, Target), String> {
    let unix = state
        .adb
        .shell(serial, "cat /proc/net/unix")
        .await
        .map_err(|e| e.to_string())?
        .stdout_text();
    let pids = state
        .adb
        .shell(serial, &format!("pidof {}", quote(package)))
        .await
        .map_err(|e| e.to_string())?
        .stdout_text();
    let pids: Vec<u32> = pids.split_whitespace().filter_map(|p| p.parse().ok()).collect();
    let socket = devtools_sockets(&unix).into_iter().find(|s| match &s.owner {
        DevtoolsOwner::WebView { pid } => pids.contains(pid),
        DevtoolsOwner::Chrome => package == "com.android.chrome",
        DevtoolsOwner::Named(name) => name == package,
    });
    let Some(socket) = socket else {
        return Err(format!(
            "the WebView of {package} has no DevTools socket: it is not debuggable (only debug builds, apps that call WebView.setWebContentsDebuggingEnabled(true), and Chrome expose one), so only what uiautomator shows of it is listed"
        ));
    };
    let pipe = state
        .adb
        .local_abstract(serial, &socket.name)
        .await
        .map_err(|e| e.to_string())?;
    let targets = devtools::targets(pipe, state.adb.timeout())
        .await
        .map_err(|e| e.to_string())?;
    // A WebView says in its description whether it is attached and visible.
    let visible = |t: &&Target| t.kind == "page" && !t.description.contains("\"visible\":false");
    let page = targets
        .iter()
        .find(visible)
        .cloned()
        .ok_or_else(|| format!("the DevTools socket {} lists no visible page", socket.name))?;
    Ok((socket.name, page))
}

/// The web element a resolved element is, when it is one: its selector.
pub(super) fn selector_of(snap: &Snapshot, element: &Element) -> Option<String> {
    let node = snap.tree.nodes.get(element.node)?;
    node.attr(SELECTOR_ATTR).map(str::to_string)
}

async fn session(state: &State, serial: &str, page: &WebPage) -> Result<Session, String> {
    let pipe = state
        .adb
        .local_abstract(serial, &page.socket)
        .await
        .map_err(|e| e.to_string())?;
    Session::open(pipe, &page.ws_url, state.adb.timeout())
        .await
        .map_err(|e| e.to_string())
}

/// An action on a web element, done through DevTools.
pub(super) enum WebAction {
    Tap {
        page: WebPage,
        selector: String,
    },
    Type {
        page: WebPage,
        selector: String,
        text: String,
        clear: bool,
        submit: bool,
    },
}

pub(super) async fn perform(state: &State, serial: &str, action: WebAction) -> Result<(), String> {
    match action {
        WebAction::Tap { page, selector } => tap(state, serial, &page, &selector).await,
        WebAction::Type {
            page,
            selector,
            text,
            clear,
            submit,
        } => type_text(state, serial, &page, &selector, &text, clear, submit).await,
    }
}

/// Scrolls the element into view, then presses and releases the mouse at its center.
async fn tap(state: &State, serial: &str, page: &WebPage, selector: &str) -> Result<(), String> {
    let mut s = session(state, serial, page).await?;
    let [x, y] = center(&mut s, selector).await?;
    for kind in ["mousePressed", "mouseReleased"] {
        s.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        )
        .await
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Focuses the field (emptied first with `clear`), inserts `text` as typed, any script, and
/// presses Enter with `submit`.
#[allow(clippy::too_many_arguments)]
async fn type_text(
    state: &State,
    serial: &str,
    page: &WebPage,
    selector: &str,
    text: &str,
    clear: bool,
    submit: bool,
) -> Result<(), String> {
    let mut s = session(state, serial, page).await?;
    let focus = format!(
        "(() => {{ const e = {find}; if (!e) return false; e.scrollIntoView({{block: 'nearest'}}); e.focus({{preventScroll: true}}); if ({clear}) {{ e.select && e.select(); e.ownerDocument.execCommand('delete'); }} return e.getRootNode().activeElement === e; }})()",
        find = find_js(selector),
    );
    if s.evaluate(&focus).await.map_err(|e| e.to_string())? != json!(true) {
        return Err(format!(
            "the web field ({selector}) is gone or cannot take focus; nothing was typed. ui dump gives the current refs"
        ));
    }
    if !text.is_empty() {
        s.call("Input.insertText", json!({"text": text}))
            .await
            .map_err(|e| e.to_string())?;
    }
    if submit {
        for kind in ["keyDown", "keyUp"] {
            let key = json!({"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": if kind == "keyDown" { "\r" } else { "" }});
            s.call("Input.dispatchKeyEvent", key).await.map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The page's focused field (selector `:focus`, which `type_text` reads as the active element), when the last reading saw a page and a field
/// of it has focus: where a `type` without a ref goes.
pub(super) async fn focused_field(state: &State, serial: &str) -> Option<(WebPage, String)> {
    let page = state.screen(serial)?.web.filter(|p| !p.socket.is_empty())?;
    let mut s = session(state, serial, &page).await.ok()?;
    let editable = format!(
        "(() => {{ const e = {}; return !!e && (e.isContentEditable || ['INPUT', 'TEXTAREA'].includes(e.tagName)); }})()",
        find_js(":focus")
    );
    (s.evaluate(&editable).await.ok()? == json!(true)).then(|| (page, ":focus".to_string()))
}

/// The element's center in CSS pixels after scrolling it into view.
async fn center(s: &mut Session, selector: &str) -> Result<[f64; 2], String> {
    let js = format!(
        "(() => {{ {PRELUDE} const e = find({sel}); return e ? center(e) : null; }})()",
        sel = json!(selector)
    );
    let at = s.evaluate(&js).await.map_err(|e| e.to_string())?;
    if let Some(cover) = at[2].as_str() {
        return Err(format!(
            "the web element ({selector}) is covered at its center by {cover}, which a tap there would press instead; nothing was tapped. ui dump lists what is on the page"
        ));
    }
    match (at[0].as_f64(), at[1].as_f64()) {
        (Some(x), Some(y)) => Ok([x, y]),
        _ => Err(format!(
            "the web element ({selector}) is no longer on the page; nothing was done. ui dump gives the current refs"
        )),
    }
}

/// A JS expression for the element `selector` names (`find` in `PRELUDE`); null when gone.
fn find_js(selector: &str) -> String {
    format!("(() => {{ {PRELUDE} return find({sel}); }})()", sel = json!(selector))
}

/// The functions every script here shares; `PRELUDE` for `format!`, the macro for `concat!`.
///
/// Selectors: each ` >>> `-separated part is a CSS selector matching exactly one element in
/// its root (the document first); `HOST >>> INNER` looks INNER up in what HOST holds: a
/// same-origin frame's document, or an element's open shadow root (a closed one cannot be read,
/// by droidmcp or by the page). `:focus` is the focused element, through frames and shadow roots.
///
/// `contentOffset` is the one place a frame's offset is computed (reading, tapping, the cover
/// check): its content box (border box, then border and padding), where its document starts.
///
/// `center` gives where the element's center is in the top page, in CSS pixels, and what else a
/// tap there would press (`[x, y, null]` when it is the element, something inside it, its own
/// label, or content of that label that is not itself interactive; else a description of what
/// covers it): the browser hit-tests the point, not the element, so a transparent layer over
/// Cancel, or a button inside Cancel's label, would take Cancel's tap.
macro_rules! prelude_js {
    () => {
        r#"
  const contentOffset = f => { const r = f.getBoundingClientRect(), s = f.ownerDocument.defaultView.getComputedStyle(f);
    return [r.left + f.clientLeft + parseFloat(s.paddingLeft), r.top + f.clientTop + parseFloat(s.paddingTop)]; };
  const inside = e => { if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') { try { return e.contentDocument; } catch (_) { return null; } } return e.shadowRoot; };
  const find = sel => {
    if (sel === ':focus') { let e = document.activeElement; for (let r; e && (r = inside(e)) && r.activeElement; ) e = r.activeElement; return e; }
    let root = document, e = null;
    for (const part of sel.split(' >>> ')) {
      if (!root) return null;
      const all = root.querySelectorAll(part); if (all.length !== 1) return null;
      e = all[0]; root = inside(e);
    }
    return e;
  };
  const INTERACTIVE = 'a[href],area[href],button,input,select,textarea,summary,[contenteditable=""],[contenteditable=true],[onclick],[tabindex],'
    + ['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'textbox', 'searchbox', 'combobox', 'slider', 'spinbutton', 'treeitem'].map(r => '[role=' + r + ']').join(',');
  const center = e => {
    e.scrollIntoView({block: 'nearest'}); const r = e.getBoundingClientRect(); let x = r.left + r.width / 2, y = r.top + r.height / 2;
    for (let w = e.ownerDocument.defaultView; w && w.frameElement; w = w.parent) { const [fx, fy] = contentOffset(w.frameElement); x += fx; y += fy; }
    let hit = document.elementFromPoint(x, y), hx = x, hy = y;
    for (let next = hit; next; ) {
      hit = next; next = null;
      if (hit.tagName === 'IFRAME' && hit.contentDocument) { const [fx, fy] = contentOffset(hit); hx -= fx; hy -= fy; next = hit.contentDocument.elementFromPoint(hx, hy); if (!next) hit = null; }
      else if (hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(hx, hy); if (inner && inner !== hit) next = inner; }
    }
    if (!hit || e.contains(hit)) return [x, y, null];
    const label = hit.closest('label');
    if (label && label.control === e) { let n = hit; while (n !== label && !n.matches(INTERACTIVE)) n = n.parentElement; if (n === label) return [x, y, null]; }
    const words = (hit.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 40);
    return [x, y, '<' + hit.tagName.toLowerCase() + (hit.id ? ' id=' + JSON.stringify(hit.id.slice(0, 40)) : '') + '>' + (words ? ' ' + JSON.stringify(words) : '')];
  };
"#
    };
}
const PRELUDE: &str = prelude_js!();

/// The page's interactive elements and headings, each with its role, accessible name, value
/// (never a password's), client box, flags and a selector that finds it again, and it alone.
const COLLECT: &str = concat!(
    "(() => {",
    prelude_js!(),
    r#"
  const roleOf = e => {
    const r = e.getAttribute('role'); if (r) return r;
    const t = e.tagName.toLowerCase();
    if (t === 'a') return 'link'; if (t === 'button') return 'button'; if (t === 'select') return 'combobox';
    if (t === 'textarea') return 'textbox';
    if (t === 'input') {
      const ty = (e.type || 'text').toLowerCase();
      if (['submit', 'button', 'reset', 'image'].includes(ty)) return 'button';
      if (ty === 'checkbox' || ty === 'radio') return ty; if (ty === 'hidden') return '';
      return 'textbox';
    }
    if (/^h[1-6]$/.test(t)) return 'heading'; if (t === 'li') return 'listitem';
    return e.hasAttribute('onclick') || e.hasAttribute('tabindex') ? 'generic' : '';
  };
  const text = s => (s || '').replace(/\s+/g, ' ').trim();
  const nameOf = e => {
    const a = e.getAttribute('aria-label'); if (a) return text(a);
    const by = e.getAttribute('aria-labelledby');
    if (by) { const root = e.getRootNode(); const t = text(by.split(/\s+/).map(id => (root.getElementById(id) || {}).innerText).join(' ')); if (t) return t; }
    if (e.labels && e.labels.length) return text([...e.labels].map(l => l.innerText).join(' '));
    if (e.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(e.type)) return text(e.value);
    if (!['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName)) { const t = text(e.innerText); if (t) return t; }
    return text(e.getAttribute('placeholder') || e.getAttribute('alt') || e.getAttribute('title'));
  };
  // Unique in e's root (a document or a shadow root): its id when no other element there has
  // it, else the nth-of-type path from the nearest ancestor with such an id, or from the root
  // (`:not(* *)` anchors a shadow root's top element, which has no parent to name).
  const cssOf = e => {
    const root = e.getRootNode();
    const byId = n => { if (!n.id) return null; const s = '#' + CSS.escape(n.id); return root.querySelectorAll(s).length === 1 ? s : null; };
    const parts = [];
    for (let n = e; n && n !== root.documentElement; n = n.parentElement) {
      const id = byId(n); if (id) { parts.unshift(id); break; }
      let i = 1; for (let s = n.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')' + (n.parentElement ? '' : ':not(* *)'));
    }
    return parts.join(' > ');
  };
  const LISTED = 'a[href],button,input,select,textarea,[role],h1,h2,h3,h4,h5,h6,li,[onclick],[tabindex]';
  const els = [];
  // Same-origin frames and open shadow roots are read too (`HOST >>> ELEMENT` selectors), a
  // frame's boxes offset by its content box; a cross-origin frame or a closed shadow root is not
  // readable.
  const walk = (root, dx, dy, prefix) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.tagName === 'IFRAME') {
        const inner = inside(e);
        if (inner) { const [fx, fy] = contentOffset(e); walk(inner, dx + fx, dy + fy, prefix + cssOf(e) + ' >>> '); }
        continue;
      }
      if (e.shadowRoot) walk(e.shadowRoot, dx, dy, prefix + cssOf(e) + ' >>> ');
      if (!e.matches(LISTED)) continue;
      const role = roleOf(e); if (!role) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const st = getComputedStyle(e); if (st.visibility === 'hidden' || st.display === 'none') continue;
      const password = e.type === 'password';
      const value = 'value' in e && role !== 'button' && !password && typeof e.value === 'string' ? e.value : '';
      els.push({role, name: nameOf(e).slice(0, 500), value: value.slice(0, 500), x: dx + r.left, y: dy + r.top, w: r.width, h: r.height,
        sel: prefix + cssOf(e), password, checked: !!e.checked, disabled: !!e.disabled,
        focused: root.activeElement === e && (root.ownerDocument || root).hasFocus()});
    }
  };
  walk(document, 0, 0, '');
  return {vw: innerWidth, vh: innerHeight, title: document.title, url: location.href, els};
})()"#
);
