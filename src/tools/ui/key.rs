//! `ui key`: one key event (BACK, HOME, ENTER… or a code).

use super::act::{Act, act};
use super::answer::{Outcome, output};
use super::args::UiOperation;
use super::input::Gesture;
use super::web::{self, WebAction};
use crate::flow;
use crate::tools::State;

pub(super) async fn key(state: &State, serial: &str, name: &str, code: u32, observe: bool) -> Outcome {
    let out = output(UiOperation::Key, serial);
    let step = flow::Action::Key {
        name: name.to_ascii_uppercase(),
    };
    // ENTER in a web field with focus goes to the page through DevTools, as a replayed Maestro
    // `pressKey: Enter` after `inputText` meant it (the simulator's WebView gets no key events;
    // a phone's would).
    let web = match code {
        66 => web::focused_field(state, serial).await,
        _ => None,
    };
    let web = web.map(|(page, selector)| WebAction::Type {
        page,
        selector,
        text: String::new(),
        clear: false,
        submit: true,
    });
    let key = Act::new(out, step, String::new(), observe)
        .web(web)
        .gesture(Some(Gesture::Key(code)));
    act(state, serial, key).await
}
