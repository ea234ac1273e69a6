//! `openLink: LINK` or `{link, autoVerify, browser}`: `am start -a VIEW -d LINK`, in the flow's
//! app or the browser.

use saphyr::MarkedYamlOwned;

use super::super::args::flag;
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::rendered::App;
use super::super::yaml::{at, field, only_keys, string};
use super::{Given, Spec};
use crate::commands::Command;
use crate::{Action, Step};

pub(in crate::maestro) const OPEN_LINK: Spec = Spec {
    name: "openLink",
    status: Status::Replayed,
    note: "am start -a android.intent.action.VIEW -d LINK; autoVerify: in the flow's app (-p appId); browser: -c BROWSABLE",
    own: &["link", "autoVerify", "browser", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| open_link(given.needed()?, given.app).map(Some)),
    with_the_flow: false,
};

/// `openLink: LINK` or `{link, autoVerify, browser}`.
fn open_link(arg: &MarkedYamlOwned, app: App) -> Result<Action, String> {
    let (link, verify, browser) = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, OPEN_LINK.own)?;
            let link = field(arg, "link").ok_or_else(|| at(arg, "openLink takes link"))?;
            (link, flag(arg, "autoVerify")?, flag(arg, "browser")?)
        }
        None => (arg, false, false),
    };
    let package = match (verify, app.node) {
        (true, None) => {
            return Err(at(
                arg,
                "autoVerify opens the link in the flow's app: give appId in the header",
            ));
        }
        (true, Some(_)) => Some(app.package(None, arg, "openLink")?),
        (false, _) => None,
    };
    Ok(Action::Command(Command::OpenLink {
        link: string(link, "link")?,
        package,
        browser,
    }))
}
