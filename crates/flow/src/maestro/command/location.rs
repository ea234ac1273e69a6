//! Where the device is: `setLocation` (the emulator console's `geo fix`) and `travel` (a `geo fix`
//! at each point in turn, after the time the distance takes at its speed).

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, field, only_keys, scalar, string, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step};

pub(in crate::maestro) const SET_LOCATION: Spec = Spec {
    name: "setLocation",
    status: Status::Replayed,
    note: "the emulator console's geo fix",
    own: &["latitude", "longitude", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let map = given.needed()?;
        only_keys(map, SET_LOCATION.own)?;
        let degrees = |key: &str, limit: f64| -> Result<f64, String> {
            let node = field(map, key).ok_or_else(|| at(map, "setLocation takes latitude and longitude"))?;
            typed(node, 0.0, || {
                scalar(node)
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .filter(|d| (-limit..=limit).contains(d))
                    .ok_or_else(|| at(node, &format!("{key} is a number of degrees from -{limit} to {limit}")))
            })
        };
        let (latitude, longitude) = (degrees("latitude", 90.0)?, degrees("longitude", 180.0)?);
        Ok(Some(Action::Emulator {
            command: format!("geo fix {longitude} {latitude}"),
        }))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const TRAVEL: Spec = Spec {
    name: "travel",
    status: Status::Replayed,
    note: "points, speed (4 m/s): the emulator console's geo fix at each point in turn, after the time the distance takes; a real phone has no console, so the step fails saying so",
    own: &["points", "speed", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| travel(given.needed()?).map(Some)),
    with_the_flow: false,
};

/// `travel {points: ["LAT, LON", …], speed}`: one point or more, `speed` in m/s (Maestro's
/// default 4.0).
fn travel(map: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(map, TRAVEL.own)?;
    let list = field(map, "points")
        .and_then(|p| p.data.as_sequence())
        .ok_or_else(|| at(map, "travel takes points: a list of \"latitude, longitude\""))?;
    let mut points = Vec::new();
    for point in list {
        let (lat, lon) = typed(point, (0.0, 0.0), || {
            let text = string(point, "a point")?;
            let parts: Vec<Option<f64>> = text.split(',').map(|p| p.trim().parse::<f64>().ok()).collect();
            match parts.as_slice() {
                [Some(lat), Some(lon)] if lat.abs() <= 90.0 && lon.abs() <= 180.0 => Ok((*lat, *lon)),
                _ => Err(at(point, "a point is \"latitude, longitude\" in degrees")),
            }
        })?;
        points.push((lat.to_string(), lon.to_string()));
    }
    if points.is_empty() {
        return Err(at(map, "travel goes through one point at least"));
    }
    let speed = match field(map, "speed") {
        Some(n) => typed(n, 4.0, || {
            scalar(n)
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|v| *v > 0.0 && *v <= 1000.0)
                .ok_or_else(|| at(n, "speed is in m/s, above 0, up to 1000"))
        })?,
        None => 4.0,
    };
    Ok(Action::Command(Command::Travel(Travel {
        points,
        speed: speed.to_string(),
    })))
}

/// `travel`: the emulator console's `geo fix` at each point in turn, waiting between two the time
/// the distance takes at `speed` m/s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Travel {
    pub(crate) points: Vec<(String, String)>,
    pub(crate) speed: String,
}

impl Run for Travel {
    fn describe(&self) -> String {
        format!("travel through {} points at {} m/s", self.points.len(), self.speed)
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        let each: Vec<String> = self.points.iter().map(|(lat, lon)| format!("[{lat}, {lon}]")).collect();
        vec![format!("await travel([{}], {});", each.join(", "), self.speed)]
    }

    fn write(&self) -> String {
        let each: String = self
            .points
            .iter()
            .map(|(lat, lon)| format!("      - \"{lat}, {lon}\"\n"))
            .collect();
        format!("- travel:\n    points:\n{each}    speed: {}\n", self.speed)
    }
}

/// travel's run: each point set through the emulator console in turn, after the time the
/// distance from the last takes at `speed` m/s (a real phone has no console: the step says so).
pub(super) const RUN: &str = r#"
async function travel(points, speed) {
  const rad = (d) => (d * Math.PI) / 180;
  for (let i = 0; i < points.length; i++) {
    if (i > 0) {
      const [[a, b], [c, d]] = [points[i - 1], points[i]];
      const h = Math.sin(rad(c - a) / 2) ** 2 + Math.cos(rad(a)) * Math.cos(rad(c)) * Math.sin(rad(d - b) / 2) ** 2;
      await sleep((2 * 6371000 * Math.asin(Math.sqrt(h)) / speed) * 1000);
    }
    await device.emulator({ command: `geo fix ${points[i][1]} ${points[i][0]}` });
  }
}
"#;
