//! The one door from a gesture (a tap, a long press, a swipe, a key) to the device command that
//! makes it: written to the kernel's input device where the shell may (no JVM, no `cmd input`:
//! `android::input_device`'s protocol B events, scaled to the touchscreen's axes and turned by
//! the screen's rotation), else `input`. The devices are probed once per device (`getevent -lp`,
//! the ABI, whether the touchscreen is writable) and kept in `State`; a write refused later
//! falls back to `input` and is remembered. Every `input tap`/`swipe`/`keyevent` is built here
//! (`house::`).

use std::time::Duration;

use crate::android::input_device::{
    self, InputDevice, LINUX_KEYS, MAX_WRITE, Touchscreen, Width, encode, key_press, touch_down, touch_move, touch_up,
};
use crate::android::text::quote;
use crate::tools::State;

/// What a finger or a key does, in shown (rotated) device pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gesture {
    Tap([i32; 2]),
    Press {
        at: [i32; 2],
        lasts: Duration,
    },
    Swipe {
        from: [i32; 2],
        to: [i32; 2],
        lasts: Duration,
    },
    /// An Android key code.
    Key(u32),
}

impl Gesture {
    /// How long it lasts on the device beyond the command's usual time.
    pub(super) fn lasts(&self) -> Duration {
        match self {
            Gesture::Press { lasts, .. } | Gesture::Swipe { lasts, .. } => *lasts,
            _ => Duration::ZERO,
        }
    }
}

/// A swipe's moves between its ends: enough for a fling's velocity, few writes.
const MOVES: u32 = 10;

/// What a device's input devices allow, probed once (`probe`).
#[derive(Debug, Clone)]
pub struct Inputs {
    devices: Vec<InputDevice>,
    touchscreen: Option<Touchscreen>,
    width: Width,
    /// Whether the shell may write them; `Err`: why not, as answers say it.
    writable: Result<(), String>,
}

/// The command a gesture became, and the way it takes (what the answer and the log say).
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub line: String,
    /// `input`'s command, when `line` writes to an input device (taken if the write is refused).
    pub fallback: Option<String>,
    pub via: String,
}

/// `input`'s command for a gesture: the only place one is built.
pub(super) fn input_line(gesture: &Gesture) -> String {
    match *gesture {
        Gesture::Tap([x, y]) => format!("input tap {x} {y}"),
        Gesture::Press { at: [x, y], lasts } => format!("input swipe {x} {y} {x} {y} {}", lasts.as_millis()),
        Gesture::Swipe { from, to, lasts } => format!(
            "input swipe {} {} {} {} {}",
            from[0],
            from[1],
            to[0],
            to[1],
            lasts.as_millis()
        ),
        Gesture::Key(code) => format!("input keyevent {code}"),
    }
}

/// The device's input devices: `getevent -lp` and the ABI (one round trip), then whether the
/// shell may write the touchscreen (a `test -w`, no program), once per device. A device whose
/// probe fails takes `input`.
async fn probe(state: &State, serial: &str) -> Inputs {
    if let Some(known) = state.inputs(serial) {
        return known;
    }
    let listed = state
        .adb
        .shell(serial, "getevent -lp; getprop ro.product.cpu.abi")
        .await
        .map(|o| o.stdout_text())
        .unwrap_or_default();
    // getprop's one line comes last; getevent's lines before it.
    let abi = listed.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let devices = input_device::parse_getevent(&listed);
    let touchscreen = input_device::touchscreen(&devices);
    let node = touchscreen
        .as_ref()
        .map(|t| t.path.clone())
        .or_else(|| devices.iter().find(|d| !d.keys.is_empty()).map(|d| d.path.clone()));
    let writable = match &node {
        None => Err("getevent lists no touchscreen".to_string()),
        Some(node) => match state.adb.shell(serial, &format!("test -w {}", quote(node))).await {
            Ok(out) if out.exit_code == Some(0) => Ok(()),
            Ok(_) => Err(format!("the shell may not write {node}")),
            Err(e) => Err(format!("could not check {node}: {e}")),
        },
    };
    let inputs = Inputs {
        touchscreen,
        width: Width::of_abi(abi),
        devices,
        writable,
    };
    state.remember_inputs(serial, inputs.clone());
    inputs
}

/// The command for `gesture` on this device: a write to its input device when it allows one
/// (and the screen's rotation is known, from the last reading), else `input`.
pub(super) async fn command(state: &State, serial: &str, gesture: &Gesture) -> Sent {
    let inputs = probe(state, serial).await;
    let written = match &inputs.writable {
        Ok(()) => write(state, serial, &inputs, gesture).await,
        Err(why) => Err(why.clone()),
    };
    match written {
        Ok((line, node)) => Sent {
            line,
            fallback: Some(input_line(gesture)),
            via: format!("input device {node}"),
        },
        Err(why) => Sent {
            line: input_line(gesture),
            fallback: None,
            via: format!("input ({why})"),
        },
    }
}

/// The write that makes `gesture` on the device's touchscreen or key device, and its node.
async fn write(state: &State, serial: &str, inputs: &Inputs, gesture: &Gesture) -> Result<(String, String), String> {
    let bytes = |events: Vec<input_device::Event>| encode(&events, inputs.width);
    let (node, writes) = match *gesture {
        Gesture::Key(code) => {
            let name = crate::android::keys::KEYS
                .iter()
                .find(|(_, c)| *c == code)
                .map(|(n, _)| *n)
                .unwrap_or_default();
            let (_, linux, linux_code) = LINUX_KEYS
                .iter()
                .find(|(n, ..)| *n == name)
                .ok_or(format!("no input device has key {code}"))?;
            let node =
                input_device::key_device(&inputs.devices, linux).ok_or(format!("no input device has {linux}"))?;
            (node.to_string(), vec![(bytes(key_press(*linux_code)), 0.0)])
        }
        _ => {
            let ts = inputs.touchscreen.as_ref().ok_or("getevent lists no touchscreen")?;
            // The reading the caller aimed by says how the screen is turned.
            let rotation = state
                .screen(serial)
                .map(|s| s.tree.rotation)
                .ok_or("the screen's rotation is not known yet (no reading)")?;
            let rotation = u8::try_from(rotation.rem_euclid(4)).unwrap_or_default();
            let natural = state.display(serial).await?;
            let down = |at| touch_down(ts, at, natural, rotation);
            let to = |at| touch_move(ts, at, natural, rotation);
            let writes = match *gesture {
                Gesture::Tap(at) => vec![(bytes([down(at), touch_up()].concat()), 0.0)],
                Gesture::Press { at, lasts } => vec![(bytes(down(at)), lasts.as_secs_f64()), (bytes(touch_up()), 0.0)],
                Gesture::Swipe { from, to: end, lasts } => {
                    let pause = lasts.as_secs_f64() / f64::from(MOVES);
                    let mut writes = vec![(bytes(down(from)), pause)];
                    for i in 1..=MOVES {
                        let along = |a: i32, b: i32| a + (b - a) * i as i32 / MOVES as i32;
                        let at = [along(from[0], end[0]), along(from[1], end[1])];
                        match i == MOVES {
                            true => writes.push((bytes([to(at), touch_up()].concat()), 0.0)),
                            false => writes.push((bytes(to(at)), pause)),
                        }
                    }
                    writes
                }
                Gesture::Key(_) => unreachable!("keys are matched above"),
            };
            (ts.path.clone(), writes)
        }
    };
    let line = input_device::write_command(&node, &writes).ok_or(format!("a write is over {MAX_WRITE} bytes"))?;
    Ok((line, node))
}

/// Makes `gesture` on the device: `command`, run and checked; a write the device refuses (its
/// `test -w` fails: nothing was written) is made with `input` instead, and the device is
/// remembered as refusing. Answers the way it took; logs it.
pub(super) async fn send(state: &State, serial: &str, gesture: &Gesture) -> Result<String, String> {
    let sent = command(state, serial, gesture).await;
    let lasts = gesture.lasts();
    let via = match run(state, serial, &sent.line, lasts).await {
        Ok(()) => sent.via,
        // `test -w` failed: exit 1, nothing said, nothing written.
        Err((Some(1), said)) if said.is_empty() && sent.fallback.is_some() => {
            let why = "the device refused the write".to_string();
            if let Some(mut inputs) = state.inputs(serial) {
                inputs.writable = Err(why.clone());
                state.remember_inputs(serial, inputs);
            }
            let fallback = sent.fallback.unwrap_or_default();
            run(state, serial, &fallback, lasts)
                .await
                .map_err(|e| failed(&fallback, e))?;
            format!("input ({why})")
        }
        Err(e) => return Err(failed(&sent.line, e)),
    };
    tracing::info!(target: "droidmcp::tools::ui::input", serial, via = %via, "{gesture:?}");
    Ok(via)
}

/// A failed command's error: the command (a typed text masked, a long write cut), its exit and
/// what it said; `None`: the device layer's error.
pub(super) fn failed(line: &str, (code, said): (Option<i32>, String)) -> String {
    match code {
        // The device layer's own error (a timeout, a lost device) says it all.
        None => said,
        Some(code) => format!(
            "`{}` failed (exit {code}): {said}",
            crate::android::text::cut(&crate::adb::shown(line), 200)
        ),
    }
}

/// Runs a device command (`lasts` beyond the usual time): its exit code and stderr when it fails.
pub(super) async fn run(state: &State, serial: &str, line: &str, lasts: Duration) -> Result<(), (Option<i32>, String)> {
    let limit = state.adb.timeout() + lasts;
    let out = state
        .adb
        .shell_with_timeout(serial, line, limit)
        .await
        .map_err(|e| (None, e.to_string()))?;
    match out.exit_code {
        Some(0) | None => Ok(()),
        code => Err((code, String::from_utf8_lossy(&out.stderr).trim().to_string())),
    }
}
