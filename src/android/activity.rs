//! Which app is in front, from `dumpsys activity activities` (or `dumpsys window`).

/// The resumed (focused) activity.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Focus {
    pub package: String,
    /// The full class name (a leading `.` expanded with the package).
    pub activity: String,
}

/// Looks for the resumed activity in the order Android versions print it: `topResumedActivity=`
/// (10+), `ResumedActivity:` / `mResumedActivity:`, then `mFocusedApp=` and `mCurrentFocus=`.
pub fn parse_focus(text: &str) -> Option<Focus> {
    const MARKERS: [&str; 5] = [
        "topResumedActivity=",
        "ResumedActivity:",
        "mResumedActivity:",
        "mFocusedApp=",
        "mCurrentFocus=",
    ];
    MARKERS.iter().find_map(|marker| {
        text.lines()
            .filter_map(|line| line.split_once(marker).map(|(_, rest)| rest))
            .find_map(component)
    })
}

/// `ActivityRecord{16812046 u0 com.x/.Main t4}` or `Window{7a6b78e u0 com.x/com.x.Main}`.
fn component(record: &str) -> Option<Focus> {
    let inside = record.split_once('{')?.1.split('}').next()?;
    let (package, class) = inside.split_whitespace().find(|w| w.contains('/'))?.split_once('/')?;
    let activity = match class.strip_prefix('.') {
        Some(short) => format!("{package}.{short}"),
        None => class.to_string(),
    };
    Some(Focus {
        package: package.to_string(),
        activity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn focus_comes_from_the_resumed_activity_and_expands_short_names() {
        let text = "  mFocusedApp=null\n      topResumedActivity=ActivityRecord{16812046 u0 com.android.settings/.Settings t4}\n";
        assert_eq!(
            parse_focus(text),
            Some(Focus {
                package: "com.android.settings".into(),
                activity: "com.android.settings.Settings".into()
            })
        );
        assert_eq!(parse_focus("mCurrentFocus=null\n"), None);
    }
}
