// Types of lapse-emulator (index.js): the sandbox fixture's (sandbox.d.ts,
// copied from lapse-sandbox when the package is built) and binaryPath's.

export * from "./sandbox.js";

/**
 * The absolute path of the lapse binary for this platform, from the
 * optional package @lapse-emulator/<platform>-<arch>; throws when that
 * package is not installed.
 */
export function binaryPath(): string;
