#!/usr/bin/env node
// Installs what the build, demo and tests need and is missing: npm packages (npm ci), the
// pinned Python tools in .tools/venv, and Debian packages (linux-perf). Idempotent and quiet
// when everything is present. Plain Node so it runs before Bun is installed.
//   --npm  npm packages only      --all  everything
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const all = process.argv.includes("--all");

function run(command, args, options = {}) {
  console.error(`ensure: ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], ...options });
  if (result.status !== 0) {
    console.error(`ensure: '${command} ${args.join(" ")}' failed (exit ${result.status}).`);
    process.exit(result.status ?? 1);
  }
}

function digest(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function stampIsCurrent(stampPath, value) {
  return existsSync(stampPath) && readFileSync(stampPath, "utf8") === value;
}

// npm packages: reinstall when package-lock.json changed since the last install.
const lockDigest = digest(join(root, "package-lock.json"));
const npmStamp = join(root, "node_modules", ".flameox-lock-digest");
if (!existsSync(join(root, "node_modules", ".bin", "bun")) || !stampIsCurrent(npmStamp, lockDigest)) {
  run("npm", ["ci", "--no-audit", "--no-fund"]);
  // npm may skip bun's postinstall; its launcher still finds the platform package, so check it runs.
  run(join(root, "node_modules", ".bin", "bun"), ["--version"]);
  writeFileSync(npmStamp, lockDigest);
}

if (all) {
  const requirements = join(root, "tools", "python-requirements.txt");
  if (existsSync(requirements)) {
    const venv = join(root, ".tools", "venv");
    const python = join(venv, "bin", "python");
    const requirementsDigest = digest(requirements);
    const venvStamp = join(venv, ".flameox-requirements-digest");
    if (!existsSync(python) || !stampIsCurrent(venvStamp, requirementsDigest)) {
      mkdirSync(join(root, ".tools"), { recursive: true });
      if (!existsSync(python)) run(process.env.FLAMEOX_BOOTSTRAP_PYTHON || "python3", ["-m", "venv", venv]);
      run(python, ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r", requirements]);
      writeFileSync(venvStamp, requirementsDigest);
    }
  }
  const debianPackages = join(root, "tools", "debian-packages.txt");
  if (existsSync(debianPackages) && process.platform === "linux") {
    const wanted = readFileSync(debianPackages, "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    const missing = wanted
      .filter((entry) => {
        const [name, command] = entry.split(/\s+/);
        if (command) return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status !== 0;
        return spawnSync("dpkg", ["-s", name], { stdio: "ignore" }).status !== 0;
      })
      .map((entry) => entry.split(/\s+/)[0]);
    if (missing.length > 0) {
      if (typeof process.getuid === "function" && process.getuid() === 0 && existsSync("/usr/bin/apt-get")) {
        run("apt-get", ["update", "-qq"]);
        run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], {
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
        });
      } else {
        console.error(
          `ensure: missing Debian packages ${missing.join(", ")}; install them with apt-get (tests that need them report CAPABILITY_UNAVAILABLE).`,
        );
      }
    }
  }
}
