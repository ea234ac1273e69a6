//! A time in the log's own terms: the device's date, and a read's `since` (`MM-DD HH:MM:SS`, a
//! whole date, or a time of the newest line's day) dated as `with_years` dates log lines.

use crate::android::logcat::parse_threadtime_line;

pub(super) fn is_date(text: &str) -> bool {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

/// `YYYY-MM-DD HH:MM:SS[.mmm]`, `MM-DD HH:MM:SS[.mmm]` (the latest such day up to `today`) or
/// `HH:MM:SS[.mmm]` (the newest line's day) → `YYYY-MM-DD HH:MM:SS.mmm`, as `with_years` dates
/// log lines.
pub(super) fn parse_since(text: &str, newest: Option<&str>, today: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "since {text:?} is not a time: use \"last\", MM-DD HH:MM:SS[.mmm], YYYY-MM-DD HH:MM:SS[.mmm] or HH:MM:SS[.mmm]"
        )
    };
    let (year, date, time) = match text.split_once(' ') {
        Some((date, time)) if date.len() == 10 => (
            date.get(..4)
                .filter(|y| y.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(bad)?
                .to_string(),
            date.get(5..).ok_or_else(bad)?.to_string(),
            time,
        ),
        Some((date, time)) => {
            let this_year = today.get(..4).unwrap_or("2000");
            let year = if today.get(5..).is_some_and(|t| date > t) {
                this_year
                    .parse::<i32>()
                    .map_or_else(|_| this_year.to_string(), |y| format!("{:04}", y - 1))
            } else {
                this_year.to_string()
            };
            (year, date.to_string(), time)
        }
        None => {
            let day = newest.unwrap_or(today);
            (
                day.get(..4).unwrap_or("2000").to_string(),
                day.get(5..10).unwrap_or("01-01").to_string(),
                text,
            )
        }
    };
    let time = if time.len() == 8 {
        format!("{time}.000")
    } else {
        time.to_string()
    };
    let candidate = format!("{date} {time}");
    let shape = parse_threadtime_line(&format!("{candidate}     1     1 I x: y")).is_some();
    let field = |at: usize| {
        candidate
            .get(at..at + 2)
            .and_then(|f| f.parse::<u32>().ok())
            .unwrap_or(99)
    };
    let in_range = shape
        && (1..=12).contains(&field(0))
        && (1..=31).contains(&field(3))
        && field(6) < 24
        && field(9) < 60
        && field(12) < 60;
    if in_range {
        Ok(format!("{year}-{candidate}"))
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::parse_since;
    use crate::android::logcat::with_years;

    #[test]
    fn since_accepts_the_forms_logcat_prints_and_refuses_the_rest() {
        let today = "2025-11-24";
        assert_eq!(
            parse_since("11-20 14:05:00", None, today).unwrap(),
            "2025-11-20 14:05:00.000"
        );
        // A day later in the year than today is last year's.
        assert_eq!(
            parse_since("12-31 23:00:00", None, "2026-01-01").unwrap(),
            "2025-12-31 23:00:00.000"
        );
        assert_eq!(
            parse_since("2025-11-20 14:05:00.250", None, today).unwrap(),
            "2025-11-20 14:05:00.250"
        );
        assert_eq!(
            parse_since("14:05:00", Some("2025-11-21 09:00:00.000"), today).unwrap(),
            "2025-11-21 14:05:00.000"
        );
        for bad in [
            "yesterday",
            "14:05",
            "11-20 25:00:00",
            "1; reboot",
            "20x5-11-20 14:05:00",
        ] {
            assert!(parse_since(bad, None, today).is_err(), "{bad}");
        }
        // Multi-byte characters where the digits should be: refused, never a panic.
        for bad in ["2025é1-20 14:05:00", "é1-20 14:05:00", "11-20 14:0é:00", "ééééééééé"] {
            assert!(parse_since(bad, Some("é"), "é").is_err(), "{bad}");
        }
    }

    #[test]
    fn since_last_holds_across_new_year() {
        // Read on 12-31, then lines on 01-01: text order would hide them; dated keys do not.
        let before = with_years(&["12-31 23:59:50.000"], "2026-12-31");
        let after = with_years(&["12-31 23:59:50.000", "01-01 00:00:05.000"], "2027-01-01");
        assert_eq!(after[0], before[0]);
        assert!(after[1] > before[0], "{} after {}", after[1], before[0]);
    }
}
