//! `droidmcp sim`: a simulated Android device that speaks adbd's wire protocol, so the real `adb`,
//! adb_client and droidmcp itself can connect to it. Behind the wire sits a device model loaded
//! from a fixture profile (see `fixtures/README.md`).
//!
//! Map: `message` (wire frames) → `transport` (handshake, streams, faults) → `services` (shell,
//! exec, sync) → `shell` (command lines) → `commands/` (getprop, pm, input, …) → `device` (state).
//! Beside it, `console` serves the emulator console; `emulator` is what its commands set; `log`
//! holds the device's log. Every lock is taken through `lock`.

pub mod auth;
pub mod commands;
pub mod console;
pub mod costs;
pub mod device;
pub mod emulator;
pub mod fs;
pub mod log;
pub mod phone;
pub mod profile;
pub mod render;
pub mod services;
pub mod shell;
pub mod sync;
pub mod touch;
pub mod transport;
pub mod webview;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use auth::AuthPolicy;
pub use device::Device;

/// Faults for the reliability tests, set by flags or by the profile's `[faults]` table.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Added before every message the device sends.
    #[serde(default, with = "millis")]
    pub latency: Duration,
    /// Shell commands (by program name, e.g. `uiautomator`) that never answer.
    #[serde(default)]
    pub stall_on: Vec<String>,
    /// Close the connection once this many bytes were sent on it.
    #[serde(default)]
    pub drop_after_bytes: Option<u64>,
    /// Send 24 random bytes once this many bytes were sent on the connection.
    #[serde(default)]
    pub garbage_after_bytes: Option<u64>,
}

mod millis {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Everything one simulated device shares across its connections.
pub struct Simulator {
    pub device: Mutex<Device>,
    /// adbd features the banner announces (the profile's `features`).
    pub features: Vec<String>,
    pub faults: Faults,
    pub auth: AuthPolicy,
    /// The screen recordings running (`screenrecord`, stopped by `pkill`).
    pub recorder: commands::record::Recorder,
}

impl Simulator {
    /// Loads a profile folder. Flags given here override the profile's own faults when set.
    pub fn load(profile_dir: &Path, faults: Option<Faults>, auth: AuthPolicy) -> anyhow::Result<Simulator> {
        Ok(Simulator::from_profile(
            profile::Profile::load(profile_dir)?,
            faults,
            auth,
        ))
    }

    /// The built-in profile (a Pixel-like emulator), whatever the working directory.
    pub fn builtin(faults: Option<Faults>, auth: AuthPolicy) -> anyhow::Result<Simulator> {
        Ok(Simulator::from_profile(profile::Profile::builtin()?, faults, auth))
    }

    fn from_profile(profile: profile::Profile, faults: Option<Faults>, auth: AuthPolicy) -> Simulator {
        let faults = faults.unwrap_or_else(|| profile.faults.clone());
        Simulator {
            features: profile.toml.features.clone(),
            device: Mutex::new(Device::from_profile(profile)),
            faults,
            auth,
            recorder: Default::default(),
        }
    }

    /// The CNXN banner: product name, model and device, and the profile's features.
    pub fn banner(&self) -> String {
        let dev = lock(&self.device);
        let prop = |k: &str| dev.prop(k).unwrap_or_default();
        format!(
            "device::ro.product.name={};ro.product.model={};ro.product.device={};features={}\0",
            prop("ro.product.name"),
            prop("ro.product.model"),
            prop("ro.product.device"),
            self.features.join(",")
        )
    }

    /// Runs `f` with the device state locked. Keep `f` short: every connection shares the lock.
    pub fn with_device<T>(&self, f: impl FnOnce(&mut Device) -> T) -> T {
        f(&mut lock(&self.device))
    }
}

/// The simulator's one way to take a lock: a task that panicked while holding it leaves it
/// poisoned, and the device must go on answering every other client, so the guard is taken back.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running simulator: its address, and the task that accepts connections.
pub struct SimHandle {
    pub addr: SocketAddr,
    pub sim: Arc<Simulator>,
    accept_task: JoinHandle<()>,
    /// The emulator console, when served (`serve_console`).
    pub console: Option<console::ConsoleHandle>,
}

impl SimHandle {
    /// Serves the emulator console on `listen` too, asking for the token in
    /// `~/.emulator_console_auth_token` (made if missing) as the emulator does.
    pub async fn serve_console(&mut self, listen: SocketAddr) -> anyhow::Result<SocketAddr> {
        let handle = console::start(self.sim.clone(), listen, console::token()?).await?;
        let addr = handle.addr;
        self.console = Some(handle);
        Ok(addr)
    }

    pub fn stop(&self) {
        self.accept_task.abort();
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

/// Binds `listen` and serves every host connection on its own task.
pub async fn start(sim: Simulator, listen: SocketAddr) -> anyhow::Result<SimHandle> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    let sim = Arc::new(sim);
    let shared = sim.clone();
    let accept_task = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((socket, _)) => {
                    tokio::spawn(transport::serve_connection(shared.clone(), socket));
                }
                Err(e) => {
                    tracing::warn!(target: "droidmcp::sim", "accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    });
    Ok(SimHandle {
        addr,
        sim,
        accept_task,
        console: None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::lock;

    #[test]
    fn a_lock_a_panicking_task_left_poisoned_is_taken_back() {
        let device = Mutex::new(1);
        let failed = std::panic::catch_unwind(|| {
            let _held = lock(&device);
            panic!("a command failed while holding the device");
        });
        assert!(failed.is_err() && device.is_poisoned());
        *lock(&device) += 1;
        assert_eq!(*lock(&device), 2, "the next command still gets the device");
    }
}
