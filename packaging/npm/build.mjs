#!/usr/bin/env node
// Builds lapse's npm packages from the release binaries (issue 30.3):
//
//   node packaging/npm/build.mjs --bin-dir dist/bin --out dist/npm
//
// reads --bin-dir as packaging/collect-binaries leaves it
// (<goos>-<goarch>/lapse or lapse.exe for the six platforms, and VERSION),
// writes one folder per package under <out>/packages and packs each into
// <out>/*.tgz with npm pack:
//
//   - @lapse-emulator/<os>-<cpu>, six of them, npm's names for the
//     platform (linux-x64, darwin-arm64, win32-x64, ...): the binary as
//     bin/lapse (bin/lapse.exe on Windows), mode 0755, and os and cpu
//     fields so that npm installs only the one the machine runs;
//   - lapse-emulator: the lapse command (bin/lapse.js, which runs the
//     binary of the platform package npm installed) with those six as
//     optional dependencies at the same version, and as its module the
//     sandbox fixture of fixtures/js (copied, not forked) with binaryPath.
//
// No package has an install script: nothing is downloaded at install
// time. Node 18 or later, no dependency but npm itself.

import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");

// The six platforms: the folder packaging/collect-binaries writes (Go's
// names) and npm's os and cpu for it (Node's process.platform and arch).
export const platforms = [
  { goos: "linux", goarch: "amd64", os: "linux", cpu: "x64" },
  { goos: "linux", goarch: "arm64", os: "linux", cpu: "arm64" },
  { goos: "darwin", goarch: "amd64", os: "darwin", cpu: "x64" },
  { goos: "darwin", goarch: "arm64", os: "darwin", cpu: "arm64" },
  { goos: "windows", goarch: "amd64", os: "win32", cpu: "x64" },
  { goos: "windows", goarch: "arm64", os: "win32", cpu: "arm64" },
];

const repository = { type: "git", url: "git+https://github.com/lapse-emulator/lapse.git" };

// The main package's own files (packaging/npm/lapse-emulator) and the
// fixture's, which keep their names from fixtures/js under new ones.
const ownFiles = ["index.js", "index.d.ts", "binary.js", "bin/lapse.js"];
const fixtureFiles = { "index.js": "sandbox.js", "index.d.ts": "sandbox.d.ts" };

// semver is the npm version of the version GoReleaser stamped: a release's
// (1.2.3, or v1.2.3) stays as it is; a snapshot's, such as
// 0.0.0-SNAPSHOT-476a222, is not valid semver everywhere (npm accepts it,
// but the hyphen joins SNAPSHOT and the commit into one identifier) and
// becomes 0.0.0-snapshot.476a222. A pre-release identifier of digits alone
// may not start with 0 in semver, so such a commit gets a "g" before it.
export function semver(stamped) {
  const v = stamped.trim().replace(/^v/, "");
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/.exec(v);
  if (!m) throw new Error(`VERSION ${JSON.stringify(stamped)} is not a version (want MAJOR.MINOR.PATCH with an optional -suffix)`);
  const [, major, minor, patch, pre, build] = m;
  let out = `${Number(major)}.${Number(minor)}.${Number(patch)}`;
  if (pre) {
    const ids = pre
      .toLowerCase()
      .split(/[.-]+/)
      .filter((id) => id !== "")
      .map((id) => (/^0\d+$/.test(id) ? `g${id}` : id));
    if (ids.length > 0) out += `-${ids.join(".")}`;
  }
  if (build) out += `+${build}`;
  return out;
}

function parseArgs(argv) {
  const args = { binDir: "", out: "" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--bin-dir") args.binDir = value();
    else if (a === "--out") args.out = value();
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${JSON.stringify(a)}`);
  }
  if (!args.binDir || !args.out) usage("--bin-dir and --out are required");
  return args;
}

function usage(problem) {
  const text = "usage: node packaging/npm/build.mjs --bin-dir dist/bin --out dist/npm\n";
  if (problem) {
    process.stderr.write(`build.mjs: ${problem}\n${text}`);
    process.exit(2);
  }
  process.stdout.write(text);
  process.exit(0);
}

function writeJSON(path, value) {
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n");
}

function platformReadme(p, version) {
  return `# @lapse-emulator/${p.os}-${p.cpu}

The lapse binary for ${p.os} on ${p.cpu}, version ${version}.

Do not install this package by itself: install \`lapse-emulator\`, which
lists it among its optional dependencies. npm then picks, from the six
platform packages, the one whose \`os\` and \`cpu\` match the machine, and
the \`lapse\` command of \`lapse-emulator\` runs the binary it holds.
`;
}

function mainReadme(version) {
  return `# lapse-emulator

lapse emulates Azure Service Bus, RabbitMQ and Azure Cosmos DB in one
program, with one clock that tests move instead of waiting for an expiry.
This package, version ${version}, installs it for Node projects:

    npm install --save-dev lapse-emulator
    npx lapse            # serves every protocol on its default ports
    npx lapse version

The binary comes from the optional dependency \`@lapse-emulator/<os>-<cpu>\`
that matches the machine (Linux, macOS and Windows, on x64 and arm64);
nothing is downloaded when the package is installed or run.

The module is the sandbox fixture: \`createSandbox()\` asks a running lapse
(\`LAPSE_URL\`, else http://localhost:8080) for a sandbox of its own, with
its own clock and entities, so test files that run in parallel do not
share one clock. \`binaryPath()\` returns where the binary is, for a test
setup that starts lapse itself.

    import { createSandbox } from "lapse-emulator";

    const sandbox = await createSandbox();
    // ... connect with sandbox.cosmos, sandbox.servicebus or sandbox.rabbitmq ...
    await sandbox.advance("15m");
    await sandbox.dispose();

The repository's docs/parallel-tests.md says more.
`;
}

// npmPack packs dir into out and returns the tarball's file name.
function npmPack(dir, out) {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const json = execFileSync(npm, ["pack", "--json", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    shell: process.platform === "win32",
  });
  return JSON.parse(json)[0].filename;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const binDir = resolve(args.binDir);
  const out = resolve(args.out);
  const stamped = readFileSync(join(binDir, "VERSION"), "utf8").trim();
  const version = semver(stamped);

  // Only what this script writes is removed: the package folders and the
  // tarballs.
  mkdirSync(out, { recursive: true });
  rmSync(join(out, "packages"), { recursive: true, force: true });
  for (const f of readdirSync(out)) if (f.endsWith(".tgz")) rmSync(join(out, f));

  const dirs = [];
  const optionalDependencies = {};
  for (const p of platforms) {
    const exe = p.goos === "windows" ? "lapse.exe" : "lapse";
    const src = join(binDir, `${p.goos}-${p.goarch}`, exe);
    if (!existsSync(src)) throw new Error(`${src} is missing: packaging/collect-binaries writes the six binaries`);
    const name = `@lapse-emulator/${p.os}-${p.cpu}`;
    const dir = join(out, "packages", `${p.os}-${p.cpu}`);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(src, join(dir, "bin", exe));
    chmodSync(join(dir, "bin", exe), 0o755);
    writeJSON(join(dir, "package.json"), {
      name,
      version,
      description: `The lapse binary for ${p.os} ${p.cpu}, installed by lapse-emulator.`,
      repository,
      os: [p.os],
      cpu: [p.cpu],
      files: [`bin/${exe}`],
      // Yarn's Plug'n'Play keeps the binary on disk, where it can run.
      preferUnplugged: true,
    });
    writeFileSync(join(dir, "README.md"), platformReadme(p, version));
    optionalDependencies[name] = version;
    dirs.push(dir);
  }

  const dir = join(out, "packages", "lapse-emulator");
  mkdirSync(join(dir, "bin"), { recursive: true });
  for (const f of ownFiles) copyFileSync(join(here, "lapse-emulator", f), join(dir, f));
  chmodSync(join(dir, "bin", "lapse.js"), 0o755);
  for (const [from, to] of Object.entries(fixtureFiles)) copyFileSync(join(repo, "fixtures", "js", from), join(dir, to));
  writeJSON(join(dir, "package.json"), {
    name: "lapse-emulator",
    version,
    description:
      "lapse, an emulator of Azure Service Bus, RabbitMQ and Azure Cosmos DB with one movable clock: the lapse command and a sandbox per test.",
    keywords: ["emulator", "azure", "service-bus", "cosmos-db", "rabbitmq", "testing"],
    repository,
    type: "module",
    bin: { lapse: "bin/lapse.js" },
    main: "./index.js",
    types: "./index.d.ts",
    exports: {
      ".": { types: "./index.d.ts", default: "./index.js" },
      "./package.json": "./package.json",
    },
    files: [...ownFiles, ...Object.values(fixtureFiles)],
    engines: { node: ">=18" },
    optionalDependencies,
  });
  writeFileSync(join(dir, "README.md"), mainReadme(version));
  dirs.push(dir);

  process.stdout.write(`npm packages of lapse ${stamped} as ${version}:\n`);
  for (const d of dirs) {
    const tgz = npmPack(d, out);
    process.stdout.write(`  ${tgz} (${statSync(join(out, tgz)).size} bytes)\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`build.mjs: ${err.message}\n`);
    process.exit(1);
  }
}
