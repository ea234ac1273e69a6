//! Shared test helpers, one of each: the device side (device.rs: a simulator process, a private
//! adb server), the MCP server a test talks to (server.rs: one builder for stdio or HTTP, any
//! protocol era), the tools' schemas walked (schema.rs), and here the captures folder, the one
//! profile builder, a test APK and the one memory reader. Missing `adb` or `../shared` skips
//! locally and fails under CI.
#![allow(dead_code)]

pub mod chromium;
mod device;
mod schema;
mod server;

pub use device::*;
pub use schema::*;
pub use server::*;

use std::io::Write;
use std::path::{Path, PathBuf};

pub use testkit::{captures_dir, skip_or_fail};

pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn profile_dir() -> PathBuf {
    repo_dir().join("fixtures/pixel-emulator")
}

/// Every capture whose file name starts with `prefix`, sorted.
pub fn captures(prefix: &str) -> Vec<(String, PathBuf)> {
    let Some(dir) = captures_dir() else { return Vec::new() };
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("read captures dir")
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no capture named {prefix}* in {}", dir.display());
    found
}

/// Copies a folder tree (what `Profile` builds on).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    // Below the kernel's ephemeral range (32768-60999 by default): an outgoing connection (an adb
    // server reaching a device) never takes a port a device restarting where it was, or a new adb
    // server, needs. Each port goes out once per test process, from an offset per process.
    const FIRST: u32 = 20_000;
    const COUNT: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(7919) % COUNT,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..COUNT {
        let port = (FIRST + NEXT.fetch_add(1, Ordering::SeqCst) % COUNT) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + COUNT)
}

/// A minimal APK the simulator can install: a zip with a text manifest.
pub fn build_test_apk(dir: &Path, package: &str, version_code: u32) -> PathBuf {
    let path = dir.join(format!("{package}.apk"));
    let manifest = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="{package}" android:versionCode="{version_code}" android:versionName="1.{version_code}">
  <uses-sdk android:minSdkVersion="24" android:targetSdkVersion="34"/>
  <uses-permission android:name="android.permission.INTERNET"/>
  <application android:label="Test App">
    <activity android:name=".MainActivity" android:exported="true">
      <intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter>
    </activity>
  </application>
</manifest>"#
    );
    let file = std::fs::File::create(&path).expect("create apk");
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("AndroidManifest.xml", opts).expect("zip entry");
    zip.write_all(manifest.as_bytes()).expect("write manifest");
    zip.start_file("classes.dex", opts).expect("zip entry");
    zip.write_all(b"dex\n035\0").expect("write dex");
    zip.finish().expect("finish apk");
    path
}

/// The center of the first node whose attribute `attr` equals `value` in a uiautomator dump.
pub fn center_of(xml: &str, attr: &str, value: &str) -> (i32, i32) {
    let tree = droidmcp::android::uiautomator::parse_ui_dump(xml).expect("parse dump");
    let node = tree
        .nodes
        .iter()
        .find(|n| n.attr(attr) == Some(value))
        .unwrap_or_else(|| panic!("no node with {attr}={value:?} on this screen"));
    node.bounds().expect("bounds").center()
}

/// What a process wrote to stderr so far, kept by a reader task or thread.
pub type Log = std::sync::Arc<std::sync::Mutex<String>>;

/// A simulator profile a test changes (fixtures/README.md has the format): a copy of the
/// built-in one (fixtures/pixel-emulator) in a temporary folder of its own, or in a folder the
/// test names. The one profile builder: a test changes files with `write`, `edit` and `append`.
pub struct Profile {
    root: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Profile {
    /// The built-in profile, copied into a temporary folder (removed on drop).
    pub fn new() -> Profile {
        let temp = tempfile::tempdir().expect("tempdir");
        copy_dir(&profile_dir(), temp.path());
        Profile {
            root: temp.path().to_path_buf(),
            _temp: Some(temp),
        }
    }

    /// The built-in profile, copied into `folder` (kept: the test owns the folder).
    pub fn at(folder: &Path) -> Profile {
        copy_dir(&profile_dir(), folder);
        Profile {
            root: folder.to_path_buf(),
            _temp: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The folder as an argument (`--sim PATH`).
    pub fn arg(&self) -> &str {
        self.root.to_str().expect("a UTF-8 temp path")
    }

    /// Writes `file` (a path inside the profile) whole.
    pub fn write(&self, file: &str, contents: impl AsRef<[u8]>) -> &Self {
        std::fs::write(self.root.join(file), contents).unwrap_or_else(|e| panic!("write {file}: {e}"));
        self
    }

    /// Rewrites `file` with what `change` makes of its text.
    pub fn edit(&self, file: &str, change: impl FnOnce(String) -> String) -> &Self {
        let text = std::fs::read_to_string(self.root.join(file)).unwrap_or_else(|e| panic!("read {file}: {e}"));
        self.write(file, change(text))
    }

    /// Adds `text` at the end of `file` (a `[[screen]]` to profile.toml, a line to a list).
    pub fn append(&self, file: &str, text: &str) -> &Self {
        self.edit(file, |old| old + text)
    }

    /// Replaces `file` with a copy of `from` (a capture, a generated log).
    pub fn copy_in(&self, from: &Path, file: &str) -> &Self {
        std::fs::copy(from, self.root.join(file)).unwrap_or_else(|e| panic!("copy {} to {file}: {e}", from.display()));
        self
    }
}

/// The login demo with an eye icon in its password field that shows or hides the password.
pub fn login_with_eye() -> Profile {
    let profile = Profile::new();
    profile.edit("screens/login.xml", |xml| {
        let field = r#"password="true" selected="false" bounds="[84,870][996,1020]" />"#;
        assert!(xml.contains(field), "the demo's password field moved");
        xml.replace(
            field,
            &format!(
                r#"{field}<node index="9" text="" resource-id="" class="android.widget.ImageButton" package="org.droidmcp.demo.login" content-desc="Show password" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[880,890][980,1000]" />"#
            ),
        )
    });
    profile.append(
        "profile.toml",
        "\n[[reveal]]\nscreen = \"login\"\ntoggle = \"desc=Show password\"\nfield = \"id=password\"\n",
    );
    profile
}

/// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`): the one memory reader.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}
