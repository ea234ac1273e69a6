//! DevTools sockets in `/proc/net/unix`: the abstract sockets a debuggable WebView, Chrome or an
//! app's own DevTools server listens on. Only these are reachable; a WebView an app did not make
//! debuggable has none.
//!
//! A line: `Num RefCount Protocol Flags Type St Inode Path`, e.g.
//! `0000000000000000: 00000002 00000000 00010000 0001 01 27955 @webview_devtools_remote_1234`.
//! Flags `00010000` (`__SO_ACCEPTCON`) marks a listening socket; an abstract name starts with `@`.

/// Whose DevTools server a socket is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevtoolsOwner {
    /// `@webview_devtools_remote_<pid>`: the WebViews of the process `pid`.
    WebView { pid: u32 },
    /// `@chrome_devtools_remote`: Chrome.
    Chrome,
    /// `@<name>_devtools_remote`: a browser or app that names its own (often its package).
    Named(String),
}

/// One listening DevTools socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevtoolsSocket {
    /// The abstract name without `@`, as `localabstract:` takes it.
    pub name: String,
    pub owner: DevtoolsOwner,
}

/// Listening abstract sockets whose name ends in `devtools_remote` (or `devtools_remote_<pid>`),
/// each once, in the order listed. Lines that are not socket rows are skipped.
pub fn devtools_sockets(proc_net_unix: &str) -> Vec<DevtoolsSocket> {
    let mut found: Vec<DevtoolsSocket> = Vec::new();
    for line in proc_net_unix.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, _, _, flags, _, _, _, path] = fields.as_slice() else {
            continue;
        };
        let listening = u32::from_str_radix(flags, 16).is_ok_and(|f| f & 0x0001_0000 != 0);
        let Some(name) = path.strip_prefix('@') else { continue };
        let Some(owner) = owner_of(name) else { continue };
        if listening && !found.iter().any(|s| s.name == name) {
            found.push(DevtoolsSocket {
                name: name.to_string(),
                owner,
            });
        }
    }
    found
}

fn owner_of(name: &str) -> Option<DevtoolsOwner> {
    if let Some(pid) = name.strip_prefix("webview_devtools_remote_") {
        return pid.parse().ok().map(|pid| DevtoolsOwner::WebView { pid });
    }
    if name == "chrome_devtools_remote" {
        return Some(DevtoolsOwner::Chrome);
    }
    let prefix = name.strip_suffix("_devtools_remote")?;
    (!prefix.is_empty()).then(|| DevtoolsOwner::Named(prefix.to_string()))
}

/// The line `/proc/net/unix` shows for a listening abstract socket (the simulator's).
pub fn format_listening(inode: u32, name: &str) -> String {
    format!("0000000000000000: 00000002 00000000 00010000 0001 01 {inode:>5} @{name}")
}

pub const HEADER: &str = "Num       RefCount Protocol Flags    Type St Inode Path";

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of an Android 14 emulator's /proc/net/unix: listening and connected sockets,
    /// file-system paths, unnamed ones, and a DevTools socket seen twice (listening, accepted).
    const SAMPLE: &str = "Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 17094 /dev/socket/logdw
0000000000000000: 00000002 00000000 00010000 0001 01 17090 /dev/socket/zygote
0000000000000000: 00000003 00000000 00000000 0001 03 27433
0000000000000000: 00000002 00000000 00010000 0001 01 31277 @webview_devtools_remote_4242
0000000000000000: 00000003 00000000 00000000 0001 03 31290 @webview_devtools_remote_4242
0000000000000000: 00000002 00000000 00010000 0001 01 29981 @chrome_devtools_remote
0000000000000000: 00000002 00000000 00010000 0001 01 30112 @org.mozilla.firefox_devtools_remote
0000000000000000: 00000002 00000000 00010000 0001 01 30555 @jdwp-control
0000000000000000: 00000002 00000000 00000000 0001 03 30558 @webview_devtools_remote_77
0000000000000000: 00000002 00000000 00010000 0001 01 30559 @webview_devtools_remote_x
";

    #[test]
    fn listening_devtools_sockets_are_found_with_their_owners() {
        let found = devtools_sockets(SAMPLE);
        let owners: Vec<(&str, &DevtoolsOwner)> = found.iter().map(|s| (s.name.as_str(), &s.owner)).collect();
        assert_eq!(
            owners,
            [
                ("webview_devtools_remote_4242", &DevtoolsOwner::WebView { pid: 4242 }),
                ("chrome_devtools_remote", &DevtoolsOwner::Chrome),
                (
                    "org.mozilla.firefox_devtools_remote",
                    &DevtoolsOwner::Named("org.mozilla.firefox".into())
                ),
            ]
        );
    }

    /// Generated: any listed DevTools socket line reads back as what was written, after any
    /// other printable lines, and no input panics.
    #[test]
    fn generated_lines_read_back_among_any_others() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config::with_cases(256));
        let cases = std::cell::Cell::new(0usize);
        let strategy = (
            1u32..4_000_000,
            "[a-z]{1,8}(\\.[a-z]{1,8}){0,3}",
            proptest::collection::vec("[ -~]{0,80}", 0..6),
        );
        runner
            .run(&strategy, |(pid, package, noise)| {
                cases.set(cases.get() + 1);
                let mut text = format!("{HEADER}\n");
                for line in &noise {
                    text.push_str(line);
                    text.push('\n');
                }
                text.push_str(&format_listening(1, &format!("webview_devtools_remote_{pid}")));
                text.push('\n');
                text.push_str(&format_listening(2, &format!("{package}_devtools_remote")));
                let found = devtools_sockets(&text);
                let [.., webview, named] = found.as_slice() else {
                    return Err(TestCaseError::fail(format!("two sockets in {text:?}: {found:?}")));
                };
                prop_assert_eq!(&webview.owner, &DevtoolsOwner::WebView { pid });
                prop_assert_eq!(&named.owner, &DevtoolsOwner::Named(package));
                Ok(())
            })
            .unwrap();
        eprintln!("{} cases", cases.get());
    }

    #[test]
    fn the_simulators_line_reads_back() {
        let text = format!("{HEADER}\n{}\n", format_listening(123, "webview_devtools_remote_9"));
        assert_eq!(devtools_sockets(&text)[0].owner, DevtoolsOwner::WebView { pid: 9 });
    }
}
