//! `repeat`: `times` (spelled out when it is a number), or `while` (decided as the flow runs).

use super::super::compat::Status;
use super::super::read::{MAX_STEPS, Reader};
use super::super::template::marked;
use super::super::yaml::{at, field, only_keys, scalar};
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const REPEAT: Spec = Spec {
    name: "repeat",
    status: Status::Replayed,
    note: "times; while visible, notVisible, true (read before each round)",
    own: &["times", "commands", "while"],
    aimed: &[],
    read: Some(read),
    with_the_flow: true,
};

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let map = given.needed()?;
    only_keys(map, REPEAT.own)?;
    // Decided as the flow runs: a condition, or times from a ${…}.
    let template = field(map, "times").is_some_and(marked);
    if field(map, "while").is_some() || template {
        reader.repeat_block(map, given.app, steps)?;
        return Ok(None);
    }
    let times = field(map, "times").ok_or_else(|| at(map, "repeat takes times and commands"))?;
    let times = scalar(times)
        .and_then(|t| t.parse::<usize>().ok())
        .ok_or_else(|| at(times, "times is a whole number"))?;
    let commands = field(map, "commands").ok_or_else(|| at(map, "repeat takes times and commands"))?;
    let mut body = Vec::new();
    reader.commands(commands, given.app, &mut body)?;
    for _ in 0..times {
        if steps.len() + body.len() > MAX_STEPS {
            return Err(at(given.item, &format!("repeat grows the flow past {MAX_STEPS} steps")));
        }
        steps.extend(body.iter().cloned());
    }
    Ok(None)
}
