//! `dumpsys package PKG`, `dumpsys battery`, `dumpsys window` and `dumpsys activity`, in the
//! layout real devices print (see the captures under `shared/device-captures`).

use std::fmt::Write as _;

use crate::device::{Device, short_class};
use crate::shell::Output;

pub fn dumpsys(d: &Device, args: &[&str]) -> Output {
    match args.first().copied() {
        Some("package") => match args.get(1) {
            Some(pkg) if !pkg.is_empty() => package(d, pkg),
            _ => Output::err(
                1,
                "dumpsys package: the simulator dumps one package at a time: dumpsys package PKG\n",
            ),
        },
        Some("battery") => battery(d),
        Some("location") => Output::ok(crate::emulator::location_dump(d)),
        Some("window") => window(d),
        Some("power") => Output::ok(crate::phone::power_dump(d)),
        Some("input_method") => Output::ok(crate::phone::input_method_dump(d)),
        Some("activity") => activity(d),
        Some("display") => Output::ok(format!(
            "DISPLAY MANAGER (dumpsys display)\n  mDisplayStates: 1\nDisplay Devices: size=1\n  DisplayDeviceInfo{{\"Built-in Screen\": uniqueId=\"local:0\", {} x {}, density {}}}\n",
            d.display.width, d.display.height, d.display.density
        )),
        Some(other) => Output::err(0, format!("Can't find service: {other}\n")),
        None => Output::err(
            1,
            "dumpsys: the simulator needs a service name (package, battery, location, window, activity, display)\n",
        ),
    }
}

/// A stable 7-hex-digit identity hash like the ones `dumpsys` prints.
fn hash(s: &str) -> String {
    let h = s
        .bytes()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("{:07x}", h & 0x0fff_ffff)
}

fn package(d: &Device, name: &str) -> Output {
    let Some(p) = d.package(name) else {
        // A real device prints its tables with no "Packages:" section; exit code stays 0.
        return Output::ok("Dexopt state:\n  Unable to find package: ".to_string() + name + "\n");
    };
    let code_path = p.path.rsplit_once('/').map_or(p.path.as_str(), |(dir, _)| dir);
    let mut s = String::new();
    if let Some(launcher) = &p.launcher {
        let _ = write!(
            s,
            "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n        {} {}/{} filter {}\n          Action: \"android.intent.action.MAIN\"\n          Category: \"android.intent.category.LAUNCHER\"\n\n",
            hash(launcher),
            p.name,
            short_class(&p.name, launcher),
            hash(&p.name)
        );
    }
    let flags = if p.system {
        "[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ]"
    } else {
        "[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]"
    };
    let _ = write!(
        s,
        "Packages:\n  Package [{name}] ({h}):\n    userId={uid}\n    pkg=Package{{{h} {name}}}\n    codePath={code_path}\n    resourcePath={code_path}\n    legacyNativeLibraryDir={code_path}/lib\n    primaryCpuAbi=null\n    secondaryCpuAbi=null\n    versionCode={vc} minSdk={min} targetSdk={target}\n    versionName={vn}\n    splits=[base]\n    apkSigningVersion=3\n    flags={flags}\n    dataDir=/data/user/0/{name}\n    timeStamp={update}\n    firstInstallTime={first}\n    lastUpdateTime={update}\n    installerPackageName={installer}\n    pkgFlags={flags}\n",
        name = p.name,
        h = hash(&p.name),
        uid = p.uid,
        vc = p.version_code,
        min = p.min_sdk,
        target = p.target_sdk,
        vn = p.version_name,
        update = p.last_update,
        first = p.first_install,
        installer = if p.system { "null" } else { "com.android.vending" },
    );
    if !p.permissions.is_empty() {
        s.push_str("    requested permissions:\n");
        for perm in &p.permissions {
            let _ = writeln!(s, "      {perm}");
        }
        s.push_str("    install permissions:\n");
        for perm in p.permissions.iter().filter(|perm| !p.runtime.contains_key(*perm)) {
            let _ = writeln!(s, "      {perm}: granted=true");
        }
    }
    // Runtime permissions are per user, as a real dump lists them (a real capture's shape:
    // `NAME: granted=true, flags=[ GRANTED_BY_DEFAULT]`).
    let runtime: String = p
        .runtime
        .iter()
        .map(|(perm, granted)| {
            format!(
                "        {perm}: granted={granted}, flags=[ USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED]\n"
            )
        })
        .collect();
    let stopped = d.pid_of(&p.name).is_none();
    let _ = write!(
        s,
        "    User 0: ceDataInode=4{uid} installed=true hidden=false suspended=false distractionFlags=0 stopped={stopped} notLaunched=false enabled=0 instant=false virtual=false\n      gids=[3003]\n      runtime permissions:\n{runtime}\nDexopt state:\n  [{name}]\n    path: {path}\n      x86_64: [status=speed-profile] [reason=install-dm]\n",
        uid = p.uid,
        name = p.name,
        path = p.path,
    );
    Output::ok(s)
}

fn battery(d: &Device) -> Output {
    let b = &d.battery;
    let powered = |kind: &str| b.powered == kind;
    let status = crate::emulator::battery_status(d);
    Output::ok(format!(
        "Current Battery Service state:\n  AC powered: {}\n  USB powered: {}\n  Wireless powered: {}\n  Dock powered: false\n  Max charging current: 0\n  Max charging voltage: 0\n  Charge counter: 10000\n  status: {status}\n  health: 2\n  present: true\n  level: {}\n  scale: 100\n  voltage: {}\n  temperature: {}\n  technology: Li-ion\n",
        powered("ac"),
        powered("usb"),
        powered("wireless"),
        b.level,
        b.voltage_mv,
        b.temperature_tenths_c
    ))
}

fn window(d: &Device) -> Output {
    let screen = d.screen();
    let full = crate::device::full_class(&screen.package, &screen.activity);
    let mut s = format!(
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 Window{{{h} u0 {pkg}/{full}}}:\n    mDisplayId=0 rootTaskId=12 mSession=Session{{{h2} 4242:u0a10150}}\n    mOwnerUid=10150 showForAllUsers=false package={pkg} appop=NONE\n    mAttrs={{(0,0)(fillxfill) sim=#120 ty=BASE_APPLICATION fmt=TRANSLUCENT}}\n    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false\n\n  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h{hdp}dp {dpi}dpi nrml long port finger qwerty/v/v -nav/h}}\n  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n  mCurrentFocus=Window{{{h} u0 {pkg}/{full}}}\n  mFocusedApp=ActivityRecord{{{h3} u0 {component} t12}}\n",
        h = hash(&full),
        h2 = hash(&screen.package),
        h3 = hash(&screen.component()),
        pkg = screen.package,
        component = screen.component(),
        hdp = d.display.height * 160 / d.display.density.max(1),
        dpi = d.display.density,
    );
    s.push_str(&crate::phone::window_dump(d));
    Output::ok(s)
}

fn activity(d: &Device) -> Output {
    let screen = d.screen();
    Output::ok(format!(
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n  * Task{{{h} #12 type=standard A=10150:{pkg}}}\n    topResumedActivity=ActivityRecord{{{h} u0 {component} t12}}\n  ResumedActivity: ActivityRecord{{{h} u0 {component} t12}}\n  mFocusedApp=ActivityRecord{{{h} u0 {component} t12}}\n",
        h = hash(&screen.component()),
        pkg = screen.package,
        component = screen.component(),
    ))
}
