//! Which app is in front, from `dumpsys activity activities` (or `dumpsys window`).

/// The resumed (focused) activity.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Focus {
    pub package: String,
    /// The full class name (a leading `.` expanded with the package).
    pub activity: String,
    /// Set when the activity manager named another app than the one on the screen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
        note: None,
    })
}

/// The focus that agrees with the screen. `screen_package` is the app whose window the dump
/// shows (its root node's package). When `dumpsys` names another app resumed (a dialog or
/// overlay of another app, a multi-window split, or a stale record), the answer follows the
/// screen, takes that app's activity from the same text if it is listed, and says why.
pub fn focus_for_screen(dumpsys: &str, screen_package: Option<&str>) -> Option<Focus> {
    let resumed = parse_focus(dumpsys);
    let Some(package) = screen_package.filter(|p| !p.is_empty()) else {
        return resumed;
    };
    if resumed.as_ref().is_some_and(|f| f.package == package) {
        return resumed;
    }
    let listed = dumpsys
        .lines()
        .filter_map(|line| line.split_once("ActivityRecord").map(|(_, rest)| rest))
        .filter_map(component)
        .find(|f| f.package == package);
    Some(Focus {
        package: package.to_string(),
        activity: listed.map_or_else(|| package.to_string(), |f| f.activity),
        note: Some(format!(
            "the screen shows {package}'s window; the activity manager names {} resumed (a dialog or overlay of another app, a split screen, or a stale record): focused follows the screen",
            resumed.map_or_else(|| "nothing".to_string(), |f| f.package)
        )),
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
                activity: "com.android.settings.Settings".into(),
                note: None,
            })
        );
        assert_eq!(parse_focus("mCurrentFocus=null\n"), None);
    }

    #[test]
    fn focus_follows_the_screen_and_says_why_when_dumpsys_disagrees() {
        let text = "  topResumedActivity=ActivityRecord{1 u0 com.launcher/.Home t1}\n  * ActivityRecord{2 u0 com.android.settings/.Settings t9}\n";
        let agree = focus_for_screen(text, Some("com.launcher")).unwrap();
        assert_eq!((agree.package.as_str(), agree.note), ("com.launcher", None));
        let screen = focus_for_screen(text, Some("com.android.settings")).unwrap();
        assert_eq!(screen.activity, "com.android.settings.Settings");
        assert!(screen.note.unwrap().contains("names com.launcher resumed"));
    }
}
