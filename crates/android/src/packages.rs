//! `pm list packages` output (`package:NAME`, or `package:PATH=NAME` with `-f`, plus ` uid:N` with `-U`).

/// One line of `pm list packages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageLine {
    pub name: String,
    /// The APK path, present with `-f`.
    pub path: Option<String>,
    /// The Linux uid, present with `-U`.
    pub uid: Option<u32>,
}

/// Parses every `package:` line; other lines (warnings, blank lines) are skipped.
pub fn parse_package_list(text: &str) -> Vec<PackageLine> {
    text.lines().filter_map(parse_package_line).collect()
}

fn parse_package_line(line: &str) -> Option<PackageLine> {
    let rest = line.trim_end_matches('\r').strip_prefix("package:")?;
    let (rest, uid) = match rest.rsplit_once(" uid:") {
        Some((head, uid)) => (head, uid.trim().parse().ok()),
        None => (rest, None),
    };
    // A path may itself contain '=' (e.g. /data/app/~~abc==/…), so the name is after the last '='.
    let (path, name) = match rest.rsplit_once('=') {
        Some((path, name)) if path.starts_with('/') => (Some(path.to_string()), name),
        _ => (None, rest),
    };
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    Some(PackageLine {
        name: name.to_string(),
        path,
        uid,
    })
}

/// Whether `name` follows Android's package-name grammar: dot-separated segments, each starting
/// with a letter and made of ASCII letters, digits and `_`. One segment is allowed: the system
/// package is called `android`.
pub fn is_valid_package_name(name: &str) -> bool {
    name.len() <= 255
        && name.split('.').all(|s| {
            let mut chars = s.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_with_equals_signs_keeps_the_name_after_the_last_one() {
        let p = parse_package_list("package:/data/app/~~Ab12==/com.x.y-Q==/base.apk=com.x.y uid:10123\n");
        assert_eq!(p[0].name, "com.x.y");
        assert_eq!(p[0].path.as_deref(), Some("/data/app/~~Ab12==/com.x.y-Q==/base.apk"));
        assert_eq!(p[0].uid, Some(10123));
    }

    #[test]
    fn package_name_grammar() {
        assert!(is_valid_package_name("com.android.settings"));
        assert!(is_valid_package_name("com.foo_bar.a1"));
        assert!(is_valid_package_name("android"));
        assert!(!is_valid_package_name(""));
        assert!(!is_valid_package_name("com.foo; reboot"));
        assert!(!is_valid_package_name("com..foo"));
        assert!(!is_valid_package_name("com.1foo"));
    }
}
