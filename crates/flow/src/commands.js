// The helpers Maestro's device commands share (each command's own is in its file,
// crates/flow/src/maestro/command/): appended to the replay script's prelude (crates/flow/src/js.rs).
// Files the replay pulls beside its report after the run (takeScreenshot).
const files = [];
async function pullLater(devicePath, name, program) {
  const made = await shellChecked(program + quoted(devicePath));
  files.push({ device: made.device, path: devicePath, name });
  await workspace.write("flow-files.json", files);
}

// A path this script wrote itself, quoted for the device's shell (it holds no quote).
function quoted(path) {
  if (!/^[A-Za-z0-9_.\/-]+$/.test(path)) throw new Error(`not a device path: ${path}`);
  return `'${path}'`;
}

// A device command the script wrote (its values quoted as it was written); fails with its
// error output.
async function shellChecked(command) {
  const done = await shell.run({ command });
  if (done.exitCode !== 0 && done.exitCode !== null) {
    throw new Error(`${command.split(" ")[0]} failed (exit ${done.exitCode}): ${(done.stderr || done.stdout).trim()}`);
  }
  if (/^Error|Exception occurred/m.test(done.stderr + done.stdout)) {
    throw new Error((done.stderr + done.stdout).trim());
  }
  return done;
}
