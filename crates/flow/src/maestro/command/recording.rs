//! `startRecording: NAME` (or `{path: NAME}`): the device's screenrecord running beside the next
//! steps into NAME.mp4, pulled beside the report; `stopRecording` ends it.

use super::super::args::no_argument;
use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::super::write::quoted;
use super::take_screenshot::file_name;
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run, device_file};
use crate::{Action, Step, quoted as lit};

pub(in crate::maestro) const START_RECORDING: Spec = Spec {
    name: "startRecording",
    status: Status::Replayed,
    note: "PATH.mp4 beside the report: the device's screenrecord running beside the next steps (at most its 180 s), pulled after the run; one still running when the flow ends is stopped and kept",
    own: &["path", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let name = file_name(given.needed()?, &START_RECORDING, ".mp4")?;
        Ok(Some(Action::Command(Command::StartRecording(StartRecording { name }))))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const STOP_RECORDING: Spec = Spec {
    name: "stopRecording",
    status: Status::Replayed,
    note: "pkill -INT screenrecord, which finishes its file",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Command(Command::StopRecording(StopRecording))))
    }),
    with_the_flow: false,
};

/// `startRecording`: the device's screenrecord runs beside the next steps (at most its own
/// 180 s) into `NAME.mp4`, which the replay pulls beside the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRecording {
    pub(crate) name: String,
}

impl Run for StartRecording {
    fn describe(&self) -> String {
        format!("start recording {}.mp4", self.name)
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        let name = &self.name;
        vec![format!(
            "await startRecording({}, {});",
            lit(&device_file(name, "mp4")),
            lit(&format!("{name}.mp4"))
        )]
    }

    fn write(&self) -> String {
        format!("- startRecording: {}\n", quoted(&self.name))
    }
}

/// `stopRecording`: interrupts screenrecord (it finishes its file on SIGINT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRecording;

impl Run for StopRecording {
    fn describe(&self) -> String {
        "stop recording".into()
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec!["await stopRecording();".into()]
    }

    fn write(&self) -> String {
        "- stopRecording\n".into()
    }
}

/// The run: screenrecord started (its own limit, 180 s) until stopRecording interrupts it; its
/// file is pulled beside the report.
pub(super) const RUN: &str = r#"
let recording = null;
async function startRecording(devicePath, name) {
  if (recording !== null) throw new Error("a recording is running already: stopRecording first");
  const run = shell.run({ command: "screenrecord --time-limit 180 " + quoted(devicePath), timeoutMs: 190000 })
    .then((done) => done, (e) => ({ error: String((e && e.message) || e) }));
  recording = { run, devicePath, name };
}

// stopRecording: SIGINT to screenrecord (it may take a moment to start), then its file listed.
async function stopRecording() {
  if (recording === null) throw new Error("no recording is running: startRecording first");
  const { run, devicePath, name } = recording;
  recording = null;
  for (let tries = 0; (await shell.run({ command: "pkill -INT screenrecord" })).exitCode !== 0; tries++) {
    if (tries === 10) throw new Error("screenrecord is not running: it ended or never started");
    await sleep(200);
  }
  const done = await run;
  if (done.error || done.exitCode !== 0) throw new Error(`screenrecord failed: ${done.error || done.stderr}`);
  files.push({ device: done.device, path: devicePath, name });
  await workspace.write("flow-files.json", files);
}

// After the flow's last command, passed or failed: a recording still running is stopped and
// kept, as Maestro keeps it; its own failure is a warning, never the flow's error.
async function stopRecordingLeftOpen() {
  if (recording === null) return;
  try {
    await stopRecording();
  } catch (e) {
    console.warn(`the recording left running could not be kept: ${(e && e.message) || e}`);
  }
}
"#;
