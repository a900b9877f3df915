#!/usr/bin/env node
// The lapse command of lapse-emulator: runs this platform's lapse binary
// (binary.js says where it is) with the same arguments, passes it the
// signals this process gets (Ctrl-C, a container's SIGTERM) and ends the
// way it ended: with its exit code, or by the signal that stopped it.

import { spawn } from "node:child_process";
import { constants } from "node:os";
import { binaryPath } from "../binary.js";

let exe;
try {
  exe = binaryPath();
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}

const child = spawn(exe, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// Each signal is handed to lapse, which shuts down cleanly on SIGINT and
// SIGTERM; this process ends when lapse has.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => {
  child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.on("error", (err) => {
  process.stderr.write(`lapse-emulator: cannot run ${exe}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  for (const s of forwarded) process.off(s, forward);
  if (signal) {
    // End by the same signal, so that a shell or runner sees what the
    // binary saw.
    process.kill(process.pid, signal);
    // A signal this process cannot die of (one it ignores) ends it with
    // the shell's code for it instead.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
    return;
  }
  process.exit(code ?? 1);
});
