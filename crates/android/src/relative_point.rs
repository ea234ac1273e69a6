//! Maestro's element-relative point (`tapOn: {id: seek, point: "50%,90%"}`): where inside the
//! element a tap lands, read and placed as Maestro 2 does. Its source (mobile-dev-inc/maestro,
//! `maestro-orchestra/src/main/java/maestro/orchestra/util/ElementCoordinateUtil.kt`,
//! `calculateElementRelativePoint`; `Orchestra.tapOnElement` finds the element once and taps
//! `maestro.tap(x, y, …)` there):
//! - a text with a `%` anywhere is two percentages: every `%` removed, split on `,`, each trimmed
//!   and read as an `Int`, each 0 to 100; the point is `left + width * x / 100` (whole-number
//!   arithmetic, so truncated), `top + height * y / 100`;
//! - any other is pixels from the element's top-left, each 0 to its width (height) minus 1.
//!
//! Maestro checks the numbers only as the tap runs; here what no element can make right (not two
//! numbers, a percentage beyond 0 to 100, a negative pixel) is refused as the flow is read, and a
//! pixel beyond the element's size as the tap resolves it. Maestro reads the first two of three or
//! more numbers; here a third is refused (nothing given is silently dropped).

use super::uiautomator::Bounds;

/// Where inside an element: percentages of its size, or pixels from its top-left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelativePoint {
    Percent([i32; 2]),
    Pixels([i32; 2]),
}

const SHAPE: &str =
    "a point within the element is \"x%,y%\" of its size (each 0 to 100) or \"x,y\" pixels from its top-left";

impl RelativePoint {
    /// Reads `text` as Maestro does (`calculateElementRelativePoint`), refusing what no element
    /// could make a point of.
    pub fn parse(text: &str) -> Result<RelativePoint, String> {
        let percent = text.contains('%');
        let numbers = text.replace('%', "");
        let parts: Vec<&str> = numbers.split(',').map(str::trim).collect();
        let [x, y] = parts.as_slice() else {
            return Err(format!("{:?}: {SHAPE}", crate::text::echoed(text)));
        };
        // Kotlin's `toInt`: an optional sign, then digits, within an Int.
        let (Ok(x), Ok(y)) = (x.parse::<i32>(), y.parse::<i32>()) else {
            return Err(format!("{:?}: {SHAPE}", crate::text::echoed(text)));
        };
        match percent {
            true if !(0..=100).contains(&x) || !(0..=100).contains(&y) => Err(format!(
                "{:?}: percentages of the element are 0 to 100",
                crate::text::echoed(text)
            )),
            true => Ok(RelativePoint::Percent([x, y])),
            false if x < 0 || y < 0 => Err(format!(
                "{:?}: pixels from the element's top-left are 0 or more",
                crate::text::echoed(text)
            )),
            false => Ok(RelativePoint::Pixels([x, y])),
        }
    }

    /// The point on the screen, inside `bounds` (the element's), as Maestro places it.
    pub fn within(self, bounds: Bounds) -> Result<[i32; 2], String> {
        let (width, height) = (bounds.right - bounds.left, bounds.bottom - bounds.top);
        match self {
            RelativePoint::Percent([x, y]) => Ok([
                bounds.left + (i64::from(width) * i64::from(x) / 100) as i32,
                bounds.top + (i64::from(height) * i64::from(y) / 100) as i32,
            ]),
            RelativePoint::Pixels([x, y]) if x < width && y < height => Ok([bounds.left + x, bounds.top + y]),
            RelativePoint::Pixels(_) => Err(format!(
                "the point {} is outside the element, which is {width}×{height}: pixels within it are (0,0) to ({},{})",
                self.written(),
                width - 1,
                height - 1
            )),
        }
    }

    /// As a flow writes it (`parse` reads it back the same).
    pub fn written(self) -> String {
        match self {
            RelativePoint::Percent([x, y]) => format!("{x}%,{y}%"),
            RelativePoint::Pixels([x, y]) => format!("{x},{y}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RelativePoint;
    use crate::uiautomator::Bounds;

    const ELEMENT: Bounds = Bounds {
        left: 100,
        top: 100,
        right: 200,
        bottom: 200,
    };

    #[test]
    fn places_a_point_as_maestro_does() {
        // Maestro's own cases (ElementCoordinateUtilTest: an element at [100,100][200,200]).
        for (given, at) in [
            ("50%, 90%", [150, 190]),
            ("0%, 0%", [100, 100]),
            ("100%, 100%", [200, 200]),
            ("25%, 75%", [125, 175]),
            ("25, 75", [125, 175]),
            // One `%` makes both percentages; every `%` is removed first.
            ("50%, 90", [150, 190]),
            ("+50%,90%", [150, 190]),
        ] {
            let point = RelativePoint::parse(given).unwrap();
            assert_eq!(point.within(ELEMENT).unwrap(), at, "{given}");
            assert_eq!(RelativePoint::parse(&point.written()).unwrap(), point);
        }
        // Truncated, as Kotlin's Int division: 33% of 101 is 33.33.
        let odd = Bounds {
            left: 0,
            top: 0,
            right: 101,
            bottom: 7,
        };
        assert_eq!(RelativePoint::parse("33%,50%").unwrap().within(odd).unwrap(), [33, 3]);
        for (given, error) in [
            ("150%,10%", "percentages of the element are 0 to 100"),
            ("-5%,10%", "percentages of the element are 0 to 100"),
            ("-5,10", "pixels from the element's top-left are 0 or more"),
            ("abc", "a point within the element is"),
            ("50%", "a point within the element is"),
            ("1,2,3", "a point within the element is"),
            ("50.5%,10%", "a point within the element is"),
        ] {
            let refused = RelativePoint::parse(given).unwrap_err();
            assert!(refused.contains(error), "{given}: {refused}");
        }
        let outside = RelativePoint::parse("100,5").unwrap().within(ELEMENT).unwrap_err();
        assert!(outside.contains("(0,0) to (99,99)"), "{outside}");
    }
}
