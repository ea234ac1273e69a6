//! `pm` and `cmd package`: list, path, clear, install (from a file or streamed stdin),
//! uninstall, dump and resolve-activity.

use std::io::Read;

use rand::Rng;

use crate::device::Device;
use crate::fs::now_secs;
use crate::profile::PackageSpec;
use crate::shell::Output;

pub fn pm(d: &mut Device, args: &[&str], stdin: &[u8]) -> Output {
    match args.first().copied() {
        Some("list") if args.get(1) == Some(&"packages") => list_packages(d, &args[2..]),
        Some("path") => match args
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .and_then(|p| d.package(p))
        {
            Some(p) => Output::ok(format!("package:{}\n", p.path)),
            None => Output {
                code: 1,
                ..Output::default()
            },
        },
        Some("clear") => match args.iter().skip(1).find(|a| !a.starts_with('-')) {
            Some(pkg) if d.clear_data(pkg) => Output::ok("Success\n"),
            _ => Output::err(1, "Failed\n"),
        },
        Some("install") => install(d, &args[1..], stdin),
        Some(verb @ ("grant" | "revoke")) => grant(d, verb, &args[1..]),
        Some("uninstall") => uninstall(d, &args[1..]),
        Some("dump") => super::dumpsys::dumpsys(d, &["package", args.get(1).copied().unwrap_or("")]),
        Some("resolve-activity") => resolve_activity(d, &args[1..]),
        Some(other) => Output::err(255, format!("Unknown command: {other}\n")),
        None => Output::err(
            255,
            "usage: pm [list|path|install|uninstall|clear|dump|resolve-activity] ...\n",
        ),
    }
}

fn list_packages(d: &Device, args: &[&str]) -> Output {
    let mut show_path = false;
    let mut show_uid = false;
    let mut only_system = false;
    let mut only_user = false;
    let mut filter = None;
    let mut iter = args.iter();
    while let Some(&a) = iter.next() {
        match a {
            "-f" => show_path = true,
            "-U" => show_uid = true,
            "-s" => only_system = true,
            "-3" => only_user = true,
            "-e" | "-d" | "-i" | "-u" | "-a" => {}
            "--user" => {
                iter.next();
            }
            f if f.starts_with('-') => return Output::err(255, format!("Error: Unknown option: {f}\n")),
            f => filter = Some(f),
        }
    }
    let mut out = String::new();
    for p in &d.packages {
        if (only_system && !p.system) || (only_user && p.system) || filter.is_some_and(|f| !p.name.contains(f)) {
            continue;
        }
        out.push_str("package:");
        if show_path {
            out.push_str(&p.path);
            out.push('=');
        }
        out.push_str(&p.name);
        if show_uid {
            out.push_str(&format!(" uid:{}", p.uid));
        }
        out.push('\n');
    }
    Output::ok(out)
}

/// `pm install [-r] [-d] [-g] [-t] [-S SIZE] [PATH]`: the APK comes from the file system, or
/// from stdin when `-S` is given (how `adb install` streams it with the `cmd` feature).
fn install(d: &mut Device, args: &[&str], stdin: &[u8]) -> Output {
    let replace = args.contains(&"-r");
    let downgrade = args.contains(&"-d");
    let sized = args
        .iter()
        .position(|a| *a == "-S")
        .and_then(|i| args.get(i + 1)?.parse::<usize>().ok());
    let apk: Vec<u8> = match sized {
        Some(size) if stdin.len() >= size => stdin[..size].to_vec(),
        Some(size) => {
            return failure(&format!(
                "INSTALL_FAILED_INVALID_APK: expected {size} bytes, got {}",
                stdin.len()
            ));
        }
        None => {
            let flags_with_values = [
                "--user",
                "-i",
                "--install-location",
                "-p",
                "--originating-uri",
                "--referrer",
                "--abi",
            ];
            let mut path = None;
            let mut it = args.iter();
            while let Some(a) = it.next() {
                if flags_with_values.contains(a) {
                    it.next();
                } else if !a.starts_with('-') {
                    path = Some(*a);
                }
            }
            let Some(path) = path else {
                return Output::err(255, "Error: must either specify a package size or an APK file\n");
            };
            match d.fs.read(path) {
                Ok(data) => data.to_vec(),
                Err(_) => return Output::err(1, format!("Error: Can't open file: {path}\n")),
            }
        }
    };
    let manifest = match read_manifest(&apk) {
        Ok(m) => m,
        Err(e) => return failure(&format!("INSTALL_PARSE_FAILED_NOT_APK: {e}")),
    };
    if let Some(existing) = d.package(&manifest.package) {
        if !replace && existing.system {
            return failure(&format!(
                "INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package {} signatures do not match previously installed version",
                manifest.package
            ));
        }
        if existing.version_code > manifest.version_code && !downgrade {
            return failure(&format!(
                "INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version code {} is older than current {}",
                manifest.version_code, existing.version_code
            ));
        }
    }
    let token = |n: usize| -> String {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut rng = rand::rng();
        (0..n)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
            .collect()
    };
    let dir = format!("/data/app/~~{}==/{}-{}==", token(22), manifest.package, token(22));
    let path = format!("{dir}/base.apk");
    if let Err(e) = d.fs.write(&path, apk, 0o644, now_secs()) {
        return failure(&format!("INSTALL_FAILED_INTERNAL_ERROR: {e}"));
    }
    let now = chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string();
    let (uid, first_install) = match d.package(&manifest.package) {
        Some(p) => (p.uid, p.first_install.clone()),
        None => (d.next_user_uid(), now.clone()),
    };
    d.add_package(PackageSpec {
        name: manifest.package.clone(),
        path,
        uid,
        system: false,
        version_name: manifest.version_name,
        version_code: manifest.version_code,
        launcher: manifest.launcher,
        label: manifest.label.unwrap_or_else(|| manifest.package.clone()),
        first_install,
        last_update: now,
        min_sdk: manifest.min_sdk,
        target_sdk: manifest.target_sdk,
        runtime: crate::profile::runtime_grants(&manifest.permissions, args.contains(&"-g")),
        permissions: manifest.permissions,
    });
    Output::ok("Success\n")
}

/// `pm grant|revoke [--user N] PKG PERMISSION`: a runtime permission granted or revoked; the
/// refusals are the exceptions Android 14's PermissionManagerService throws, as `pm` prints them
/// (the stack trace left out), with exit code 255.
fn grant(d: &mut Device, verb: &str, args: &[&str]) -> Output {
    let words: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-') && *a != "0")
        .collect();
    let [package, permission] = words.as_slice() else {
        return Output::err(255, "Error: no package or permission specified\n");
    };
    let thrown = |e: String| Output::err(255, format!("Exception occurred while executing '{verb}':\n{e}\n"));
    let Some(spec) = d.packages.iter_mut().find(|p| p.name == *package) else {
        return thrown(format!(
            "java.lang.IllegalArgumentException: Unknown package: {package}"
        ));
    };
    if !permission.contains('.') {
        return thrown(format!(
            "java.lang.IllegalArgumentException: Unknown permission: {permission}"
        ));
    }
    if !spec.permissions.iter().any(|p| p == permission) {
        return thrown(format!(
            "java.lang.SecurityException: Package {package} has not requested permission {permission}"
        ));
    }
    match spec.runtime.get_mut(*permission) {
        Some(granted) => {
            *granted = verb == "grant";
            Output::default()
        }
        None => thrown(format!(
            "java.lang.SecurityException: Permission {permission} requested by {package} is not a changeable permission type"
        )),
    }
}

fn failure(reason: &str) -> Output {
    Output {
        stdout: format!("Failure [{reason}]\n").into_bytes(),
        code: 1,
        ..Output::default()
    }
}

fn uninstall(d: &mut Device, args: &[&str]) -> Output {
    let Some(pkg) = args.iter().rev().find(|a| !a.starts_with('-')) else {
        return Output::err(255, "Error: package name not specified\n");
    };
    match d.package(pkg) {
        Some(p) if !p.system => {
            d.remove_package(pkg);
            Output::ok("Success\n")
        }
        _ => failure("DELETE_FAILED_INTERNAL_ERROR"),
    }
}

/// `resolve-activity --brief [-c CATEGORY] PKG`: the launcher activity, as `cmd package` prints it.
fn resolve_activity(d: &Device, args: &[&str]) -> Output {
    let mut it = args.iter();
    let mut pkg = None;
    while let Some(a) = it.next() {
        match *a {
            "-c" | "-a" | "--user" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => pkg = Some(a),
        }
    }
    match pkg
        .and_then(|p| d.package(p))
        .and_then(|p| Some((p.name.clone(), p.launcher.clone()?)))
    {
        Some((name, class)) => Output::ok(format!(
            "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n{name}/{}\n",
            crate::device::short_class(&name, &class)
        )),
        None => Output::ok("No activity found\n"),
    }
}

/// What the simulator reads from an APK's `AndroidManifest.xml`.
struct Manifest {
    package: String,
    version_code: u64,
    version_name: String,
    label: Option<String>,
    launcher: Option<String>,
    min_sdk: u32,
    target_sdk: u32,
    permissions: Vec<String>,
}

/// Reads the manifest of an APK (a zip). The simulator understands a text manifest; a compiled
/// (binary XML) one is refused with a clear reason.
fn read_manifest(apk: &[u8]) -> Result<Manifest, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(apk)).map_err(|e| format!("not a zip archive ({e})"))?;
    let mut entry = zip
        .by_name("AndroidManifest.xml")
        .map_err(|_| "no AndroidManifest.xml in the APK".to_string())?;
    let mut raw = Vec::new();
    entry.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8(raw).map_err(|_| {
        "binary (compiled) manifests are not supported by the simulator; use a text AndroidManifest.xml".to_string()
    })?;
    let doc = roxmltree::Document::parse(&text).map_err(|e| format!("AndroidManifest.xml: {e}"))?;
    let root = doc.root_element();
    let attr =
        |n: roxmltree::Node, name: &str| n.attributes().find(|a| a.name() == name).map(|a| a.value().to_string());
    let package = attr(root, "package").ok_or("manifest has no package attribute")?;
    if !android::packages::is_valid_package_name(&package) {
        return Err(format!("invalid package name {package:?}"));
    }
    let uses_sdk = root.children().find(|n| n.has_tag_name("uses-sdk"));
    let sdk = |name: &str, default: u32| {
        uses_sdk
            .and_then(|n| attr(n, name))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let app = root.children().find(|n| n.has_tag_name("application"));
    let launcher = app.and_then(|app| {
        app.children().filter(|n| n.has_tag_name("activity")).find_map(|act| {
            let is_launcher = act.descendants().any(|n| {
                n.has_tag_name("category") && attr(n, "name").as_deref() == Some("android.intent.category.LAUNCHER")
            });
            let name = attr(act, "name")?;
            is_launcher.then(|| crate::device::full_class(&package, &name))
        })
    });
    Ok(Manifest {
        version_code: attr(root, "versionCode").and_then(|v| v.parse().ok()).unwrap_or(1),
        version_name: attr(root, "versionName").unwrap_or_else(|| "1.0".into()),
        label: app.and_then(|a| attr(a, "label")),
        launcher,
        min_sdk: sdk("minSdkVersion", 21),
        target_sdk: sdk("targetSdkVersion", 34),
        permissions: root
            .children()
            .filter(|n| n.has_tag_name("uses-permission"))
            .filter_map(|n| attr(n, "name"))
            .collect(),
        package,
    })
}
