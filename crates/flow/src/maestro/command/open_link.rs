//! `openLink: LINK` or `{link, autoVerify, browser}`: `am start -a VIEW -d LINK`, in the flow's
//! app or the browser.

use android::text::quote;
use saphyr::MarkedYamlOwned;

use super::super::args::flag;
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::rendered::App;
use super::super::write::quoted;
use super::super::yaml::{at, field, only_keys, string};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, quoted as lit};

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
    Ok(Action::Command(Command::OpenLink(OpenLink {
        link: string(link, "link")?,
        package,
        browser,
    })))
}

/// `openLink`: `am start -a android.intent.action.VIEW -d LINK`, in `package` when `autoVerify`
/// names the app, in the browser when `browser`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenLink {
    pub(crate) link: String,
    pub(crate) package: Option<String>,
    pub(crate) browser: bool,
}

impl Run for OpenLink {
    fn describe(&self) -> String {
        let OpenLink { link, package, browser } = self;
        match (package, browser) {
            (Some(p), _) => format!("open link {link:?} in {p}"),
            (None, true) => format!("open link {link:?} in the browser"),
            (None, false) => format!("open link {link:?}"),
        }
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        let OpenLink { link, package, browser } = self;
        let mut command = format!("am start -a android.intent.action.VIEW -d {}", quote(link));
        if *browser {
            command.push_str(" -c android.intent.category.BROWSABLE");
        }
        if let Some(p) = package {
            command.push_str(&format!(" -p {}", quote(p)));
        }
        vec![format!("await shellChecked({});", lit(&command))]
    }

    fn write(&self) -> String {
        let OpenLink { link, package, browser } = self;
        format!(
            "- openLink:\n    link: {}\n    autoVerify: {}\n    browser: {browser}\n",
            quoted(link),
            package.is_some()
        )
    }
}
