//! One file per Maestro command (commands of one shape share one): each holds the command's
//! reading (YAML → `flow::Step`), its fields, its compatibility row (docs/flows.md's table and
//! the refusal of a command not replayed) and, for a device command of its own, its struct with
//! its `commands::Run`: its step line (reports, `--check`), its run (the script lines and the
//! JavaScript helper they call) and its Maestro YAML. `REGISTRY` lists them; nothing else names a
//! command. To add one: its file here, and its line in `REGISTRY`; a device command also its
//! variant in `commands::Command` (its struct re-exported below) and that variant's line in
//! `Command::run`.

use std::path::Path;

use saphyr::MarkedYamlOwned;

use super::compat::Status;
use super::read::Reader;
use super::rendered::App;
use crate::{Action, Step};

mod action;
mod add_media;
mod ai;
mod airplane;
mod app;
mod assert_visible;
mod clear_keychain;
mod clipboard;
mod erase_text;
mod extended_wait_until;
mod input_random;
mod input_text;
mod keys;
mod launch_app;
mod location;
mod open_link;
mod recording;
mod repeat;
mod retry;
mod run_flow;
mod scripts;
mod scroll;
mod scroll_until_visible;
mod set_orientation;
mod set_permissions;
mod swipe;
mod take_screenshot;
mod tap_on;
mod wait_for_animation_to_end;

pub use add_media::{AddMedia, Media, check_media, media};
pub use airplane::Airplane;
pub use app::Kill;
pub use clear_keychain::Nothing;
pub use clipboard::{CopyText, Paste, SetClipboard};
#[cfg(any(test, feature = "test-support"))]
pub use launch_app::Extra;
pub use launch_app::LaunchWith;
pub use location::Travel;
pub use open_link::OpenLink;
pub use recording::{StartRecording, StopRecording};
pub use scroll_until_visible::ScrollUntil;
pub use set_orientation::Orientation;
pub use set_permissions::Permissions;
pub use take_screenshot::Screenshot;
pub use tap_on::Tap;

/// What the reader knows of a command as it reads it: its name, its argument (`None` for a bare
/// `- back`), the node of its name (its line), the flow's app, and `optional`.
pub(in crate::maestro) struct Given<'a> {
    pub name: &'a str,
    pub arg: Option<&'a MarkedYamlOwned>,
    pub item: &'a MarkedYamlOwned,
    pub app: App<'a>,
    pub optional: bool,
}

impl Given<'_> {
    /// The argument a command cannot go without.
    pub fn needed(&self) -> Result<&MarkedYamlOwned, String> {
        super::yaml::required(self.arg, self.item, self.name)
    }

    /// The app the argument names, else the flow's.
    pub fn package(&self, given: Option<&MarkedYamlOwned>) -> Result<String, String> {
        self.app.package(given, self.item, self.name)
    }
}

/// A command's reading: the step's action, or `None` when it put its steps in `steps` itself (a
/// block, an assertion joining the step before it, a launch of several steps).
pub(in crate::maestro) type Read = fn(&mut Reader, &Given, &mut Vec<Step>) -> Result<Option<Action>, String>;

/// One Maestro command as a replay takes it.
pub(in crate::maestro) struct Spec {
    pub name: &'static str,
    pub status: Status,
    /// Its row's note in docs/flows.md's table (its docs line), and the refusal's reason.
    pub note: &'static str,
    /// Its own keys (`yaml::only_keys`); a command that takes only a value has none.
    pub own: &'static [&'static str],
    /// The keys it takes when it is aimed by a selector (its own are then these).
    pub aimed: &'static [&'static [&'static str]],
    /// Its reading; `None`: refused with its note.
    pub read: Option<Read>,
    /// Its fields are read with the flow (files read, blocks spelled out) or are the script's own
    /// JavaScript: a template in them is never read again as the step runs (`rendered.rs`).
    pub with_the_flow: bool,
}

impl Spec {
    /// A command refused, for good or for now, with why.
    pub const fn refused(name: &'static str, status: Status, note: &'static str) -> Spec {
        Spec {
            name,
            status,
            note,
            own: &[],
            aimed: &[],
            read: None,
            with_the_flow: false,
        }
    }

    /// The keys the reader takes in its mapping, `None` when it is not read.
    pub fn fields(&self) -> Option<Vec<&'static str>> {
        self.read?;
        Some(match self.aimed {
            [] => self.own.to_vec(),
            groups => groups.concat(),
        })
    }
}

/// Every command Maestro 1.39 (and 2.x's docs) lists, in docs/flows.md's order.
pub(in crate::maestro) const REGISTRY: &[&Spec] = &[
    &launch_app::LAUNCH_APP,
    &app::STOP_APP,
    &app::KILL_APP,
    &app::CLEAR_STATE,
    &clear_keychain::CLEAR_KEYCHAIN,
    &tap_on::TAP_ON,
    &tap_on::DOUBLE_TAP_ON,
    &tap_on::LONG_PRESS_ON,
    &input_text::INPUT_TEXT,
    &input_random::EMAIL,
    &input_random::PERSON_NAME,
    &input_random::NUMBER,
    &input_random::TEXT,
    &erase_text::ERASE_TEXT,
    &clipboard::COPY_TEXT_FROM,
    &clipboard::PASTE_TEXT,
    &clipboard::SET_CLIPBOARD,
    &keys::HIDE_KEYBOARD,
    &keys::HIDE_KEYBOARD_SPELT,
    &keys::PRESS_KEY,
    &keys::BACK,
    &action::ACTION,
    &action::OPEN_BROWSER,
    &scroll::SCROLL,
    &scroll_until_visible::SCROLL_UNTIL_VISIBLE,
    &swipe::SWIPE,
    &assert_visible::ASSERT_VISIBLE,
    &assert_visible::ASSERT_NOT_VISIBLE,
    &scripts::ASSERT_TRUE,
    &extended_wait_until::EXTENDED_WAIT_UNTIL,
    &wait_for_animation_to_end::WAIT_FOR_ANIMATION_TO_END,
    &take_screenshot::TAKE_SCREENSHOT,
    &recording::START_RECORDING,
    &recording::STOP_RECORDING,
    &open_link::OPEN_LINK,
    &location::SET_LOCATION,
    &location::TRAVEL,
    &set_permissions::SET_PERMISSIONS,
    &add_media::ADD_MEDIA,
    &airplane::SET_AIRPLANE_MODE,
    &airplane::TOGGLE_AIRPLANE_MODE,
    &set_orientation::SET_ORIENTATION,
    &run_flow::RUN_FLOW,
    &repeat::REPEAT,
    &retry::RETRY,
    &scripts::RUN_SCRIPT,
    &scripts::EVAL_SCRIPT,
    &ai::ASSERT_WITH_AI,
    &ai::ASSERT_NO_DEFECTS_WITH_AI,
    &ai::EXTRACT_TEXT_WITH_AI,
];

/// The command named `name`, if Maestro has one.
pub(in crate::maestro) fn find(name: &str) -> Option<&'static Spec> {
    REGISTRY.iter().copied().find(|spec| spec.name == name)
}

/// The folder of the flow being read (a file a command names is beside it).
pub(in crate::maestro) fn folder(reader: &Reader) -> Option<&Path> {
    reader.files.last().and_then(|f| f.parent())
}

/// The device helpers the commands' runs call (`commands.js`, then each command's own), which
/// `js::render` puts in every replayed script.
pub fn prelude() -> String {
    [
        crate::commands::SHARED,
        clipboard::RUN,
        scroll_until_visible::RUN,
        tap_on::RUN,
        recording::RUN,
        set_permissions::RUN,
        airplane::RUN,
        location::RUN,
        launch_app::RUN,
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::prelude::*;
    use proptest::test_runner::TestRunner;

    use super::super::{parse, render};
    use crate::commands::{self, Command};
    use crate::tests::{selector, target, text};
    use crate::{Action, Step};

    /// Generated device commands, written as a Maestro flow, read back as the same commands (a
    /// content-desc becomes a text, and a long press or tap whose options are all the defaults
    /// reads as a plain one: both fixpoints after one round).
    #[test]
    fn generated_commands_read_back_as_written() {
        let cases = AtomicUsize::new(0);
        let within_cases = AtomicUsize::new(0);
        let strategy = (
            proptest::collection::vec(commands::generated(selector().boxed(), target().boxed()), 1..6),
            text(),
        );
        let result = TestRunner::default().run(&strategy, |(generated, app)| {
            cases.fetch_add(1, Ordering::Relaxed);
            let steps: Vec<Step> = generated
                .iter()
                .cloned()
                .map(|c| Step::new(Action::Command(c)))
                .collect();
            let written = render(&steps, &[], &app);
            let read = parse(&written).map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
            prop_assert_eq!(read.len(), steps.len(), "{}", written);
            let again = parse(&render(&read, &[], &app)).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&read, &again);
            for (step, command) in read.iter().zip(&generated) {
                let kept = matches!(
                    (&step.action, command),
                    (Action::Command(Command::OpenLink(a)), Command::OpenLink(b)) if a.link == b.link
                ) || matches!(
                    (&step.action, command),
                    (Action::Command(Command::Screenshot(a)), Command::Screenshot(b)) if a.name == b.name
                ) || !matches!(command, Command::OpenLink(_) | Command::Screenshot(_));
                prop_assert!(kept, "{:?} read as {:?}", command, step.action);
                // A point within the element reads back as that very point, beside its selector.
                if let Command::Tap(tap) = command
                    && let Some(within) = tap.within
                {
                    within_cases.fetch_add(1, Ordering::Relaxed);
                    let read_within = match &step.action {
                        Action::Command(Command::Tap(read)) => read.within,
                        _ => None,
                    };
                    prop_assert_eq!(read_within, Some(within), "{}", written);
                }
            }
            Ok(())
        });
        println!(
            "{} cases, {} taps at a point within their element",
            cases.load(Ordering::Relaxed),
            within_cases.load(Ordering::Relaxed)
        );
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// The registry is the table: each Maestro command once, and every command it reads has its
    /// fields.
    #[test]
    fn each_command_is_registered_once() {
        let mut names: Vec<&str> = super::REGISTRY.iter().map(|s| s.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a command registered twice");
        for spec in super::REGISTRY {
            assert_eq!(spec.read.is_some(), spec.fields().is_some(), "{}", spec.name);
        }
    }
}
