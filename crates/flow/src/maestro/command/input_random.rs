//! `inputRandomEmail`, `inputRandomPersonName`, `inputRandomNumber`, `inputRandomText`: drawn as
//! the flow is read (a replay reads its flow each run), in Maestro's shapes: `length` letters and
//! digits (8 by default), digits not starting with 0, `first_last_NNNN@domain`, "First Last".

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::super::yaml::{at, field, integer, only_keys, typed};
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const EMAIL: Spec = Spec {
    name: "inputRandomEmail",
    status: Status::Replayed,
    note: "first_last_NNNN@domain, drawn as the flow is read",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

pub(in crate::maestro) const PERSON_NAME: Spec = Spec {
    name: "inputRandomPersonName",
    note: "First Last",
    ..EMAIL
};

pub(in crate::maestro) const NUMBER: Spec = Spec {
    name: "inputRandomNumber",
    note: "length digits (8), not starting with 0",
    own: &["length", "optional"],
    ..EMAIL
};

pub(in crate::maestro) const TEXT: Spec = Spec {
    name: "inputRandomText",
    note: "length letters and digits (8)",
    ..NUMBER
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let own = super::find(given.name).map_or(NO_ARGUMENT, |spec| spec.own);
    Ok(Some(Action::Type {
        target: None,
        text: random_input(given.name, own, given.arg)?,
        clear: false,
        submit: false,
    }))
}

fn random_input(command: &str, own: &[&str], arg: Option<&MarkedYamlOwned>) -> Result<String, String> {
    use rand::Rng;
    const FIRST: [&str; 10] = [
        "Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Radia", "Donald",
    ];
    const LAST: [&str; 10] = [
        "Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Perlman", "Knuth",
    ];
    const DOMAINS: [&str; 6] = [
        "gmail.com",
        "yahoo.com",
        "hotmail.com",
        "aol.com",
        "msn.com",
        "outlook.com",
    ];
    let takes_length = matches!(command, "inputRandomText" | "inputRandomNumber");
    let length = match arg.filter(|a| !a.data.is_null()) {
        Some(map) if takes_length => {
            only_keys(map, own)?;
            match field(map, "length") {
                Some(n) => typed(n, 8, || match integer(n).ok() {
                    // Maestro takes 0 or less as its default.
                    Some(n) if n <= 0 => Ok(8),
                    Some(n @ 1..=1000) => Ok(n as usize),
                    _ => Err(at(n, "length is a number of characters, up to 1000")),
                })?,
                None => 8,
            }
        }
        Some(map) => {
            only_keys(map, own)?;
            8
        }
        None => 8,
    };
    let mut rng = rand::rng();
    let mut pick = |list: &[&str]| list[rng.random_range(0..list.len())].to_string();
    Ok(match command {
        "inputRandomText" => rand::rng()
            .sample_iter(rand::distr::Alphanumeric)
            .take(length)
            .map(char::from)
            .collect(),
        "inputRandomNumber" => {
            let mut rng = rand::rng();
            (0..length)
                .map(|i| char::from(b'0' + rng.random_range(u8::from(i == 0)..10)))
                .collect()
        }
        "inputRandomEmail" => {
            let (first, last, domain) = (pick(&FIRST), pick(&LAST), pick(&DOMAINS));
            let number: u32 = rand::rng().random_range(1000..10_000);
            format!("{first}_{last}_{number}@{domain}").to_lowercase()
        }
        _ => format!("{} {}", pick(&FIRST), pick(&LAST)),
    })
}
