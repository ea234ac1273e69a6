//! The simulated device's state: properties, packages, screens and navigation, the file system
//! and running processes (fields.rs: its text fields, typed into and revealed). Commands read and
//! change it through here.

use std::collections::{BTreeMap, HashMap};

use chrono::Local;

use android::logcat::{Level, LogLine};
use android::uiautomator::UiTree;

use super::fs::Fs;
use super::log::rebase_log;
pub use super::log::{LogBuffer, LogEntry, format_entry};
use super::profile::{Battery, Display, PackageSpec, Profile, Reveal, Transition};

mod fields;

/// A screen as it is now: its template plus whatever was typed, focused or toggled.
#[derive(Debug, Clone)]
pub struct Screen {
    pub name: String,
    pub package: String,
    /// Activity as `dumpsys` prints it: `.Short` when inside the package, else fully qualified.
    pub activity: String,
    pub tree: UiTree,
    /// What each edited field really holds: the dump shows a password as dots and an empty
    /// field's hint as its text.
    pub values: HashMap<usize, String>,
    /// The screen as the app first draws it, which `pm clear` puts back (its fields empty again).
    pub fresh: UiTree,
}

impl Screen {
    pub fn component(&self) -> String {
        format!("{}/{}", self.package, self.activity)
    }
}

pub struct Device {
    pub props: BTreeMap<String, String>,
    pub packages: Vec<PackageSpec>,
    pub display: Display,
    pub battery: Battery,
    pub fs: Fs,
    pub log: Vec<LogEntry>,
    screens: Vec<Screen>,
    transitions: Vec<Transition>,
    reveals: Vec<Reveal>,
    home: usize,
    current: usize,
    back_stack: Vec<usize>,
    running: BTreeMap<String, u32>,
    next_pid: u32,
    next_uid: u32,
    /// Bumped on every visible change, so renders can be cached.
    pub generation: u64,
    /// The last rendered frame and the generation it shows.
    pub frame_cache: Option<(u64, image::RgbaImage)>,
    /// What the emulator console set (battery status, location, rotation, calls).
    pub emulator: crate::emulator::EmulatorState,
    /// Asleep, locked, never idle, the keyboard, a system dialog (sim/phone).
    pub phone: crate::phone::Phone,
    /// What each program costs on the phone, and what was spent (sim/costs).
    pub costs: crate::costs::Costs,
    /// The kernel's input devices and what was written to them (sim/touch).
    pub touch: crate::touch::Touch,
    pub spent: crate::costs::Spent,
    /// The link's speed now (MB/s; 0 unmodelled): the profile's USB link, or `sim-state link`.
    pub link_mb_per_s: f64,
    /// The DevTools server the hosted WebView's socket leads to (`sim/webview.rs`), if any.
    pub webview_devtools: Option<std::net::SocketAddr>,
    /// `/proc/sys/kernel/random/boot_id`: drawn when this phone "boots" (is made), so every
    /// route to it reads the same one and no two simulated phones share it. An emulator's
    /// ro.serialno is its image's (the same in every copy); this tells copies apart, as on a host.
    pub boot_id: String,
}

/// A random UUID, as the kernel draws one at boot.
fn boot_id() -> String {
    let hex = format!("{:032x}", rand::random::<u128>());
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Normalises `pkg/.Act` and `pkg/pkg.Act` to the same fully qualified class.
pub fn full_class(package: &str, activity: &str) -> String {
    match activity.strip_prefix('.') {
        Some(rest) => format!("{package}.{rest}"),
        None => activity.to_string(),
    }
}

/// The short form `dumpsys` uses: `.Act` when the class lives in the package.
pub fn short_class(package: &str, class: &str) -> String {
    match class.strip_prefix(package) {
        Some(rest) if rest.starts_with('.') => rest.to_string(),
        _ => class.to_string(),
    }
}

impl Device {
    pub fn from_profile(p: Profile) -> Device {
        let screens: Vec<Screen> = p
            .screens
            .into_iter()
            .map(|(spec, tree)| {
                let (package, activity) = spec.activity.split_once('/').unwrap_or((&spec.activity, ""));
                Screen {
                    name: spec.name.clone(),
                    package: package.to_string(),
                    activity: short_class(package, &full_class(package, activity)),
                    fresh: tree.clone(),
                    tree,
                    values: HashMap::new(),
                }
            })
            .collect();
        let home = screens.iter().position(|s| s.name == p.toml.home).unwrap_or(0);
        let mut dev = Device {
            props: p.props,
            display: p.toml.display,
            battery: p.toml.battery,
            fs: Fs::default(),
            log: rebase_log(&p.logcat),
            screens,
            transitions: p.toml.transitions,
            reveals: p.toml.reveals,
            home,
            current: home,
            back_stack: Vec::new(),
            running: BTreeMap::new(),
            next_pid: 4000,
            next_uid: 10000 + p.packages.iter().filter(|p| !p.system).count() as u32 + 200,
            packages: p.packages,
            generation: 0,
            frame_cache: None,
            emulator: Default::default(),
            phone: crate::phone::Phone::from_spec(&p.toml.phone).expect("checked when the profile was read"),
            costs: p.toml.costs.clone(),
            touch: p.toml.input.capture.as_deref().map_or_else(Default::default, |n| {
                crate::touch::Touch::named(n).expect("checked when the profile was read")
            }),
            spent: Default::default(),
            link_mb_per_s: p.toml.costs.link_mb_per_s,
            webview_devtools: None,
            boot_id: boot_id(),
        };
        dev.running = p.toml.processes.clone();
        dev.next_pid = dev.running.values().max().map_or(4000, |&m| m.max(5000) + 100);
        let home_pkg = dev.screens[home].package.clone();
        dev.ensure_running(&home_pkg);
        dev
    }

    pub fn prop(&self, key: &str) -> Option<String> {
        self.props.get(key).cloned()
    }

    pub fn package(&self, name: &str) -> Option<&PackageSpec> {
        self.packages.iter().find(|p| p.name == name)
    }

    pub fn screen(&self) -> &Screen {
        &self.screens[self.current]
    }

    pub fn screen_mut(&mut self) -> &mut Screen {
        self.generation += 1;
        &mut self.screens[self.current]
    }

    /// The app whose screen holds a WebView (the first such screen's).
    pub fn webview_package(&self) -> Option<String> {
        let hosts = |s: &&Screen| s.tree.nodes.iter().any(|n| n.class() == crate::webview::WEBVIEW_CLASS);
        self.screens.iter().find(hosts).map(|s| s.package.clone())
    }

    pub fn pid_of(&self, package: &str) -> Option<u32> {
        self.running.get(package).copied()
    }

    pub fn running(&self) -> impl Iterator<Item = (&String, &u32)> {
        self.running.iter()
    }

    fn ensure_running(&mut self, package: &str) -> u32 {
        if let Some(pid) = self.running.get(package) {
            return *pid;
        }
        let pid = self.next_pid;
        self.next_pid += 7;
        self.running.insert(package.to_string(), pid);
        self.log_line(
            LogBuffer::System,
            1200,
            Level::Info,
            "ActivityManager",
            &format!("Start proc {pid}:{package}/u0a1 for top-activity"),
        );
        pid
    }

    /// Appends a line stamped now, as the system would log it.
    pub fn log_line(&mut self, buffer: LogBuffer, pid: u32, level: Level, tag: &str, message: &str) {
        let line = LogLine {
            timestamp: Local::now().format("%m-%d %H:%M:%S%.3f").to_string(),
            pid,
            tid: pid,
            level,
            tag: tag.to_string(),
            message: message.to_string(),
        };
        self.log.push(LogEntry { buffer, line });
    }

    fn show(&mut self, index: usize, push: bool) {
        if push && index != self.current {
            self.back_stack.push(self.current);
        }
        self.current = index;
        self.generation += 1;
        let (package, component) = (self.screens[index].package.clone(), self.screens[index].component());
        self.ensure_running(&package);
        self.log_line(
            LogBuffer::System,
            1200,
            Level::Info,
            "ActivityTaskManager",
            &format!("Displayed {component}"),
        );
    }

    fn go_to(&mut self, name: &str) {
        if let Some(i) = self.screens.iter().position(|s| s.name == name) {
            if i == self.home {
                self.back_stack.clear();
                self.show(i, false);
            } else {
                self.show(i, true);
            }
        }
    }

    /// The rule for this screen that matches, else a matching rule for every screen (`*`).
    fn transition_for(&self, matches: impl Fn(&Transition) -> bool) -> Option<String> {
        let here = &self.screens[self.current].name;
        let rule = |from_any: bool| {
            self.transitions
                .iter()
                .find(|t| (if from_any { t.from == "*" } else { &t.from == here }) && matches(t))
        };
        rule(false).or_else(|| rule(true)).map(|t| t.to.clone())
    }

    /// The current screen as the display shows it (turned by the console's `rotate`), with the
    /// phone's windows (keyguard, dialog, keyboard) as uiautomator would dump them.
    pub fn shown_tree(&self) -> android::uiautomator::UiTree {
        let tree = crate::phone::shown(self, self.screen().tree.clone());
        crate::emulator::shown_tree(&tree, self.natural_size(), self.emulator.rotation)
    }

    /// The display's width and height as it is turned now.
    pub fn shown_size(&self) -> (u32, u32) {
        let (w, h) = self.natural_size();
        if self.emulator.rotation % 2 == 1 {
            (h, w)
        } else {
            (w, h)
        }
    }

    fn natural_size(&self) -> (u32, u32) {
        (self.display.width, self.display.height)
    }

    /// A tap at device pixels (as the display is turned now): focuses an EditText, toggles a
    /// checkable, follows a transition.
    pub fn tap(&mut self, x: i32, y: i32) {
        let (x, y) = crate::emulator::natural_point(x, y, self.natural_size(), self.emulator.rotation);
        let tree = &self.screens[self.current].tree;
        let clickable = tree.deepest_at(x, y, |n| {
            n.flag("clickable") || n.flag("checkable") || n.flag("long-clickable")
        });
        let Some(target) = clickable.or_else(|| tree.deepest_at(x, y, |_| true)) else {
            return;
        };
        if tree.nodes[target].attr("enabled").is_some_and(|e| e != "true") {
            return;
        }
        // What the tap touched, for matching transitions: a clickable element and everything
        // inside it (a row's title); else only the deepest element under the finger, never what
        // a container holds elsewhere (a tap on empty space opens nothing).
        let within: Vec<usize> = match clickable {
            Some(_) => (0..tree.nodes.len()).filter(|&i| tree.is_within(i, target)).collect(),
            None => vec![target],
        };
        let rule = self.transition_for(|t| {
            t.tap
                .as_deref()
                .is_some_and(|sel| within.iter().any(|&i| selector_matches(sel, &tree.nodes[i])))
        });
        let revealed = self.revealed_by(&within);
        let is_edit = tree.nodes[target].class().contains("EditText");
        let checkable = tree.nodes[target].flag("checkable");
        if is_edit {
            self.focus(target);
        } else if checkable {
            let screen = self.screen_mut();
            let checked = screen.tree.nodes[target].flag("checked");
            screen.tree.nodes[target].set_attr("checked", if checked { "false" } else { "true" });
        }
        self.reveal(&revealed);
        if let Some(to) = rule {
            self.go_to(&to);
        }
    }

    /// A key event by name without `KEYCODE_` (e.g. `BACK`).
    pub fn key(&mut self, name: &str) {
        if let Some(to) = self.transition_for(|t| t.key.as_deref() == Some(name)) {
            self.go_to(&to);
            return;
        }
        match name {
            "HOME" => {
                let home = self.home;
                self.back_stack.clear();
                self.show(home, false);
            }
            "BACK" => {
                if let Some(prev) = self.back_stack.pop() {
                    self.show(prev, false);
                }
            }
            "DEL" => {
                if let Some(id) = self.focused_edit() {
                    self.edit_focused(id, |v| {
                        v.pop();
                    });
                }
            }
            "SPACE" => self.type_text(" "),
            _ => {}
        }
    }

    /// A swipe whose finger moves in `direction` (`up`, `down`, `left`, `right`).
    pub fn swipe(&mut self, direction: &str) {
        if let Some(to) = self.transition_for(|t| t.swipe.as_deref() == Some(direction)) {
            self.go_to(&to);
        }
    }

    /// `am start -n pkg/activity`. Err is the message `am` prints.
    pub fn start_activity(&mut self, package: &str, activity: &str) -> Result<(), String> {
        let class = full_class(package, activity);
        if self.package(package).is_none() {
            return Err(format!("Error: Activity class {{{package}/{class}}} does not exist."));
        }
        let found = self
            .screens
            .iter()
            .position(|s| s.package == package && full_class(package, &s.activity) == class);
        let index = match found {
            Some(i) => i,
            None if self.package(package).and_then(|p| p.launcher.clone()) == Some(class.clone()) => {
                self.app_screen(package)
            }
            None => return Err(format!("Error: Activity class {{{package}/{class}}} does not exist.")),
        };
        self.show(index, true);
        Ok(())
    }

    /// What `monkey -p PKG -c LAUNCHER 1` does: opens the app's launcher activity.
    pub fn launch(&mut self, package: &str) -> Result<(), String> {
        let launcher = self.package(package).and_then(|p| p.launcher.clone());
        match launcher {
            Some(class) => self.start_activity(package, &class),
            None => Err("** No activities found to run, monkey aborted.".to_string()),
        }
    }

    /// The screen for an app the profile draws no screen for: a title bar with its label.
    fn app_screen(&mut self, package: &str) -> usize {
        let spec = self.package(package).expect("caller checked the package").clone();
        let class = spec.launcher.clone().unwrap_or_default();
        if let Some(i) = self
            .screens
            .iter()
            .position(|s| s.package == package && full_class(package, &s.activity) == class)
        {
            return i;
        }
        let (w, h) = (self.display.width, self.display.height);
        // Only numbers go into the XML text; the package and the label are set on the parsed
        // nodes, so any label is shown as it is (never read as markup).
        let xml = format!(
            r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][{w},{h}]"><node index="0" text="" resource-id="android:id/title" class="android.widget.TextView" package="" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[48,120][{r},260]" /></node></hierarchy>"#,
            r = w - 48,
        );
        let mut tree = android::uiautomator::parse_ui_dump(&xml).expect("generated XML parses");
        for node in &mut tree.nodes {
            node.set_attr("package", package);
        }
        tree.nodes[1].set_attr("text", &spec.label);
        self.screens.push(Screen {
            name: format!("app:{package}"),
            package: package.to_string(),
            activity: short_class(package, &class),
            fresh: tree.clone(),
            tree,
            values: HashMap::new(),
        });
        self.screens.len() - 1
    }

    /// `am force-stop`: the process ends and its screens leave the back stack.
    pub fn force_stop(&mut self, package: &str) {
        self.running.remove(package);
        let screens = &self.screens;
        self.back_stack.retain(|&i| screens[i].package != package);
        if self.screens[self.current].package == package {
            let prev = self.back_stack.pop().unwrap_or(self.home);
            self.show(prev, false);
        }
        if self.screens[self.current].package == package {
            // The app was the home screen itself: it restarts.
            self.ensure_running(package);
        }
    }

    /// `am kill`: a phone kills only what is safe to kill, a package's processes in the
    /// background; the app in front keeps running. Its screens stay on the back stack, and the
    /// process starts again when one of them shows.
    pub fn kill_background(&mut self, package: &str) {
        if self.screen().package != package {
            self.running.remove(package);
        }
    }

    /// `pm clear`: data goes, the process stops, typed text on its screens is reset.
    pub fn clear_data(&mut self, package: &str) -> bool {
        if self.package(package).is_none() {
            return false;
        }
        self.force_stop(package);
        self.fs.remove(&format!("/data/data/{package}"), true).ok();
        for screen in self.screens.iter_mut().filter(|s| s.package == package) {
            screen.tree = screen.fresh.clone();
            screen.values.clear();
        }
        self.generation += 1;
        true
    }

    pub fn next_user_uid(&mut self) -> u32 {
        self.next_uid += 1;
        self.next_uid
    }

    pub fn add_package(&mut self, spec: PackageSpec) {
        self.packages.retain(|p| p.name != spec.name);
        self.packages.push(spec);
        self.generation += 1;
    }

    pub fn remove_package(&mut self, package: &str) {
        self.force_stop(package);
        self.packages.retain(|p| p.name != package);
        self.screens
            .retain(|s| s.package != package || s.name != format!("app:{package}"));
        self.generation += 1;
    }
}

/// `text=…`, `id=…` or `desc=…` against one node. An `id=` without a package matches the part
/// after `:id/`.
pub fn selector_matches(selector: &str, node: &android::uiautomator::UiNode) -> bool {
    let Some((kind, want)) = selector.split_once('=') else {
        return false;
    };
    match kind {
        "text" => node.text() == want,
        "desc" => node.content_desc() == want,
        "id" => {
            let id = node.resource_id();
            id == want || id.rsplit_once(":id/").is_some_and(|(_, short)| short == want)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn username(d: &Device) -> String {
        let tree = &d.screen().tree;
        let node = tree.nodes.iter().find(|n| n.resource_id().ends_with(":id/username"));
        node.expect("the login screen's user name field").text().to_string()
    }

    #[test]
    fn typing_into_a_field_showing_its_hint_replaces_the_hint() {
        let mut d = Device::from_profile(Profile::builtin().unwrap());
        d.launch("org.droidmcp.demo.login").unwrap();
        assert_eq!(username(&d), "name@example.com", "the empty field shows its hint");
        d.tap(540, 665);
        d.type_text("ada");
        assert_eq!(username(&d), "ada");
        for _ in 0..3 {
            d.key("DEL");
        }
        assert_eq!(username(&d), "name@example.com", "emptied, it shows the hint again");
        d.type_text("name@example.com!");
        assert_eq!(
            username(&d),
            "name@example.com!",
            "typed text equal to the hint is kept"
        );
    }

    #[test]
    fn a_tap_on_empty_space_opens_nothing_and_one_on_a_row_opens_it() {
        let mut d = Device::from_profile(Profile::builtin().unwrap());
        d.launch("com.android.settings").unwrap();
        let on_top = d.current;
        // Above the title: only the window's containers are there, holding every row elsewhere.
        d.tap(540, 120);
        assert_eq!(d.current, on_top, "a tap on empty space went somewhere");
        d.tap(540, 638);
        assert_ne!(d.current, on_top, "the Network & internet row did not open");
    }
}
