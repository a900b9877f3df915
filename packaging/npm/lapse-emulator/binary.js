// Where the lapse binary of this platform is: in the package
// @lapse-emulator/<os>-<cpu> that npm installed beside lapse-emulator as one
// of its optional dependencies (npm installs only the one whose os and cpu
// fields match the machine). No download happens at install or at run time.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** The platforms lapse-emulator has a binary for, as Node names them. */
export const PLATFORMS = [
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
  "win32-x64",
  "win32-arm64",
];

/**
 * binaryPath returns the absolute path of the lapse binary for this
 * machine's platform and CPU, or throws an Error that names the package
 * to install when there is none.
 */
export function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `@lapse-emulator/${platform}`;
  if (!PLATFORMS.includes(platform)) {
    throw new Error(
      `lapse-emulator has no lapse binary for ${process.platform} ${process.arch}; ` +
        `it has one for ${PLATFORMS.join(", ")}. ` +
        "lapse is also a Go program and a container image: build it or run the image instead.",
    );
  }
  let manifest;
  const { version } = require("./package.json");
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch (err) {
    throw new Error(
      `lapse-emulator: the package ${pkg}, which holds the lapse binary for ${process.platform} ${process.arch}, is not installed. ` +
        "npm installs it as an optional dependency of lapse-emulator: it is left out by --no-optional, " +
        "--omit=optional or a node_modules copied from another platform. " +
        `Install again without leaving out optional dependencies, or add ${pkg}@${version}.`,
      { cause: err },
    );
  }
  const exe = process.platform === "win32" ? "lapse.exe" : "lapse";
  return join(dirname(manifest), "bin", exe);
}
