// lapse-emulator's module: the sandbox fixture of the repository's
// fixtures/js (lapse-sandbox, copied here as sandbox.js when the package
// is built) and binaryPath, where this platform's lapse binary is.

export * from "./sandbox.js";
export { binaryPath } from "./binary.js";
