//! Headless Chromium (Debian's `chromium`) driven through its DevTools protocol over a
//! websocket: open a page, evaluate in it or in its iframe, click where a person would, save
//! screenshots and downloads. Missing chromium skips locally and fails under CI.

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How long one DevTools command may take before the test fails (a hung browser).
const COMMAND_WAIT: Duration = Duration::from_secs(30);

pub struct Browser {
    socket: Socket,
    next: u64,
    _headless: Headless,
}

/// One page (a target attached in flat mode), and its iframe's isolated world once found.
pub struct Page {
    session: String,
}

/// A headless Chromium (Debian's `chromium`) with a DevTools port on loopback and a fresh
/// profile, killed on drop: the one way the tests start a browser.
pub struct Headless {
    child: std::process::Child,
    pub port: u16,
    /// The browser target's WebSocket path (`/devtools/browser/…`).
    browser_path: String,
    _profile: tempfile::TempDir,
}

impl Headless {
    /// Starts it on `url` with the shared flags plus `extra`; `None` (after skip_or_fail) when
    /// chromium is not installed.
    pub fn start(extra: &[&str], url: &str) -> Option<Headless> {
        if std::process::Command::new("chromium")
            .arg("--version")
            .output()
            .is_err()
        {
            super::skip_or_fail("chromium is not installed (apt-get install chromium)");
            return None;
        }
        let profile = tempfile::tempdir().unwrap();
        let child = std::process::Command::new("chromium")
            .args([
                "--headless",
                // As root (CI) Chromium runs only without its sandbox.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn chromium");
        // Chromium writes the port it picked, and the browser's path, to DevToolsActivePort.
        let active = profile.path().join("DevToolsActivePort");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let (port, browser_path) = loop {
            let written = std::fs::read_to_string(&active).unwrap_or_default();
            let mut lines = written.lines();
            if let (Some(Ok(port)), Some(path)) = (lines.next().map(str::parse), lines.next()) {
                break (port, path.to_string());
            }
            assert!(
                std::time::Instant::now() < deadline,
                "chromium wrote no DevToolsActivePort in 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        Some(Headless {
            child,
            port,
            browser_path,
            _profile: profile,
        })
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// A headless Chromium on `about:blank`, driven over its browser target; `None` (after
    /// skip_or_fail) when it is not installed.
    pub async fn launch() -> Option<Browser> {
        let headless = Headless::start(
            &[
                // The app's sandboxed iframe in the page's own process, so the page's target
                // reaches it (no out-of-process frame to attach to).
                "--disable-features=IsolateSandboxedIframes",
                "--disable-site-isolation-trials",
                "--window-size=1000,760",
            ],
            "about:blank",
        )?;
        let url = format!("ws://{}{}", headless.addr(), headless.browser_path);
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connect to chromium's DevTools");
        Some(Browser {
            socket,
            next: 0,
            _headless: headless,
        })
    }

    /// One DevTools command (on a page's session, or the browser's); its result, or the
    /// protocol's error message.
    pub async fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .map_err(|e| e.to_string())?;
        let answer = tokio::time::timeout(COMMAND_WAIT, async {
            while let Some(frame) = self.socket.next().await {
                let Ok(Message::Text(text)) = frame else { continue };
                let value: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                if value["id"] == json!(id) {
                    return Some(value);
                }
            }
            None
        })
        .await
        .unwrap_or_else(|_| panic!("chromium did not answer {method} in {COMMAND_WAIT:?}"))
        .unwrap_or_else(|| panic!("chromium closed the DevTools connection during {method}"));
        match answer.get("error") {
            Some(e) => Err(format!("{method}: {e}")),
            None => Ok(answer["result"].clone()),
        }
    }

    /// Opens `url` in a new page.
    pub async fn open(&mut self, url: &str) -> Page {
        let target = self
            .send(None, "Target.createTarget", json!({"url": url}))
            .await
            .unwrap();
        let attached = self
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await
            .unwrap();
        let page = Page {
            session: attached["sessionId"].as_str().unwrap().to_string(),
        };
        self.send(Some(&page.session), "Page.enable", json!({})).await.unwrap();
        page
    }

    /// Saves downloads into `folder`, under the names the page gives them.
    pub async fn download_to(&mut self, folder: &Path) {
        self.send(
            None,
            "Browser.setDownloadBehavior",
            json!({"behavior": "allow", "downloadPath": folder.display().to_string()}),
        )
        .await
        .unwrap();
    }

    /// The value of a JavaScript expression in the page (`frame: None`) or in the isolated world
    /// of its first iframe; a promise is awaited. An exception is an `Err` with its text.
    pub async fn eval(&mut self, page: &Page, in_frame: bool, expression: &str) -> Result<Value, String> {
        let mut params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true});
        if in_frame {
            params["contextId"] = self.frame_world(page).await?;
        }
        let out = self.send(Some(&page.session), "Runtime.evaluate", params).await?;
        if let Some(e) = out.get("exceptionDetails") {
            return Err(format!("{expression}: {e}"));
        }
        Ok(out["result"]["value"].clone())
    }

    /// An isolated world in the page's first iframe (the DOM shared, the scripts not).
    async fn frame_world(&mut self, page: &Page) -> Result<Value, String> {
        let tree = self.send(Some(&page.session), "Page.getFrameTree", json!({})).await?;
        let frame = tree["frameTree"]["childFrames"][0]["frame"]["id"].clone();
        if frame.is_null() {
            return Err("the page has no iframe yet".into());
        }
        let world = self
            .send(
                Some(&page.session),
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": "droidmcp-test"}),
            )
            .await?;
        Ok(world["executionContextId"].clone())
    }

    /// Evaluates until the expression is truthy, at most `wait`; its last value.
    pub async fn until(&mut self, page: &Page, in_frame: bool, expression: &str, wait: Duration) -> Value {
        let started = std::time::Instant::now();
        let mut last = Value::Null;
        while started.elapsed() < wait {
            match self.eval(page, in_frame, expression).await {
                Ok(v) if !v.is_null() && v != json!(false) && v != json!(0) && v != json!("") => return v,
                Ok(v) => last = v,
                Err(e) => last = json!(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{expression} did not hold within {wait:?}; last: {last}");
    }

    /// A person's click (mouse down and up) on the iframe element the selector finds, at its
    /// centre, in page coordinates.
    pub async fn click_in_frame(&mut self, page: &Page, selector: &str) {
        let at = self
            .eval(
                page,
                true,
                &format!(
                    "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
                ),
            )
            .await
            .unwrap_or_else(|e| panic!("no {selector} to click: {e}"));
        let frame = self
            .eval(
                page,
                false,
                "(() => { const r = document.querySelector('iframe').getBoundingClientRect(); return [r.x, r.y]; })()",
            )
            .await
            .unwrap();
        let x = at[0].as_f64().unwrap() + frame[0].as_f64().unwrap();
        let y = at[1].as_f64().unwrap() + frame[1].as_f64().unwrap();
        for kind in ["mousePressed", "mouseReleased"] {
            self.send(
                Some(&page.session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await
            .unwrap();
        }
    }

    /// Types text with the keyboard into what has the focus.
    pub async fn type_text(&mut self, page: &Page, text: &str) {
        self.send(Some(&page.session), "Input.insertText", json!({"text": text}))
            .await
            .unwrap();
    }

    /// A PNG of the page as shown.
    pub async fn screenshot(&mut self, page: &Page) -> Vec<u8> {
        use base64::Engine;
        let shot = self
            .send(Some(&page.session), "Page.captureScreenshot", json!({"format": "png"}))
            .await
            .unwrap();
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap()
    }
}
