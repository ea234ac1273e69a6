//! A WebView the simulator hosts: the screen that shows an `android.webkit.WebView` belongs to an
//! app whose process lists `@webview_devtools_remote_<pid>` in `/proc/net/unix`, and a
//! `localabstract:` stream to that socket is forwarded to a real DevTools server (a headless
//! Chromium's `--remote-debugging-port`) given at start (`droidmcp sim --webview-devtools`).
//! Without it the WebView is there and not debuggable: no socket, as on a release build.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::device::Device;
use super::transport::StreamIo;
use android::unix_sockets::{HEADER, format_listening};

/// The class uiautomator gives a WebView.
pub const WEBVIEW_CLASS: &str = "android.webkit.WebView";

/// `/proc/net/unix`: a few system sockets, and the WebView's DevTools socket while the app that
/// hosts it runs and a DevTools server was given.
pub fn proc_net_unix(d: &Device) -> String {
    let mut out = format!("{HEADER}\n");
    for (inode, name) in [(17094, "/dev/socket/logdw"), (17090, "/dev/socket/zygote")] {
        out.push_str(&format!(
            "0000000000000000: 00000002 00000000 00010000 0001 01 {inode:>5} {name}\n"
        ));
    }
    out.push_str(&format!("{}\n", format_listening(30555, "jdwp-control")));
    if let Some(name) = devtools_socket(d) {
        out.push_str(&format!("{}\n", format_listening(31277, &name)));
    }
    out
}

/// The DevTools socket's name, when there is one: `webview_devtools_remote_<pid>` of the running
/// app whose screen holds a WebView.
fn devtools_socket(d: &Device) -> Option<String> {
    d.webview_devtools?;
    let package = d.webview_package()?;
    let pid = d.pid_of(&package)?;
    Some(format!("webview_devtools_remote_{pid}"))
}

/// Where `localabstract:NAME` leads, if NAME is the DevTools socket listed now.
pub fn target(d: &Device, service: &str) -> Option<SocketAddr> {
    let name = service.strip_prefix("localabstract:")?;
    (devtools_socket(d).as_deref() == Some(name)).then_some(d.webview_devtools?)
}

/// Copies bytes both ways between the host's stream and the DevTools server until either ends.
pub async fn forward(mut io: StreamIo, to: SocketAddr) {
    let socket = match tokio::net::TcpStream::connect(to).await {
        Ok(socket) => socket,
        Err(e) => {
            tracing::warn!(target: "droidmcp::sim::webview", "the WebView's DevTools server at {to} is not reachable: {e}");
            return;
        }
    };
    let (mut from_server, mut to_server) = socket.into_split();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            data = io.read() => match data {
                Some(data) => {
                    if to_server.write_all(&data).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
            n = from_server.read(&mut buf) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if io.write(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            },
        }
    }
}
