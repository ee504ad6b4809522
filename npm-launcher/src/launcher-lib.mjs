// The npm `flameox` package: a thin, dependency-free bootstrap. It resolves this platform's release
// asset for its own exact version, downloads it (resuming with Range, through an HTTPS proxy tunnel
// when one is configured), checks its sha256 against checksums.json shipped in this package, caches it
// by hash, and hands off to `<binary> setup …`. It never edits client configs itself.
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import http from "node:http";
import https from "node:https";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import tls from "node:tls";

export const defaultDownloadBase = "https://github.com/morluto/flameox/releases/download";

export class LauncherError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Target id of this machine, or a LauncherError naming what to do instead. */
export function resolveTarget({ platform = process.platform, arch = process.arch, glibc = detectGlibc() } = {}) {
  const os = platform === "win32" ? "windows" : platform;
  const supported = new Set(["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"]);
  const id = `${os}-${arch}`;
  if (!supported.has(id)) {
    throw new LauncherError(
      `flameox has no prebuilt binary for ${platform}-${arch}. Supported: ${[...supported].join(", ")}. Build from source (bun scripts/build.ts) on this machine instead.`,
    );
  }
  if (platform === "linux" && !glibc) {
    throw new LauncherError(
      "flameox's Linux binaries need glibc; this system looks like musl (e.g. Alpine). Use a glibc-based distribution or container (Debian, Ubuntu, Fedora), or build from source.",
    );
  }
  return id;
}

function detectGlibc() {
  if (process.platform !== "linux") return undefined;
  try {
    return process.report?.getReport?.()?.header?.glibcVersionRuntime;
  } catch {
    return undefined;
  }
}

export function dataRoot(env = process.env, platform = process.platform, home = env.HOME || homedir()) {
  if (env.FLAMEOX_SETUP_DATA_ROOT) return env.FLAMEOX_SETUP_DATA_ROOT;
  if (platform === "darwin") return join(home, "Library", "Application Support", "flameox");
  if (platform === "win32") return join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "flameox");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "flameox");
}

function proxyFor(url, env) {
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
  const host = url.hostname.toLowerCase();
  if (
    noProxy.some(
      (entry) => entry === "*" || host === entry.replace(/^\./, "") || host.endsWith(entry.startsWith(".") ? entry : `.${entry}`),
    )
  )
    return undefined;
  const value = url.protocol === "https:" ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  return value ? new URL(value) : undefined;
}

function proxyAuthorization(proxy) {
  if (!proxy.username) return {};
  return {
    "Proxy-Authorization": `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}`,
  };
}

/** One GET with optional headers; resolves with the response (following redirects). */
function get(url, headers, env, redirects = 0) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const proxy = proxyFor(target, env);
    const onResponse = (response) => {
      if (response.statusCode >= 300 && response.statusCode < 400 && response.headers.location) {
        response.resume();
        if (redirects >= 5) return reject(new LauncherError(`Too many redirects fetching ${url}.`));
        return resolve(get(new URL(response.headers.location, target).toString(), headers, env, redirects + 1));
      }
      resolve(response);
    };
    const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
    if (proxy && target.protocol === "https:") {
      // HTTPS through a proxy: CONNECT tunnel, then TLS to the origin inside it.
      const connect = http.request({
        host: proxy.hostname,
        port: Number(proxy.port || 80),
        method: "CONNECT",
        path: `${target.hostname}:${port}`,
        headers: { Host: `${target.hostname}:${port}`, ...proxyAuthorization(proxy) },
      });
      connect.on("connect", (response, socket) => {
        if (response.statusCode !== 200) {
          socket.destroy();
          return reject(new LauncherError(`The proxy ${proxy.host} refused the tunnel to ${target.host} (HTTP ${response.statusCode}).`));
        }
        const request = https.request(
          {
            host: target.hostname,
            port,
            path: `${target.pathname}${target.search}`,
            headers,
            createConnection: () => tls.connect({ socket, servername: target.hostname }),
          },
          onResponse,
        );
        request.on("error", reject);
        request.end();
      });
      connect.on("error", reject);
      connect.end();
      return;
    }
    const request = proxy
      ? http.request(
          {
            host: proxy.hostname,
            port: Number(proxy.port || 80),
            path: target.toString(),
            headers: { ...headers, Host: target.host, ...proxyAuthorization(proxy) },
          },
          onResponse,
        )
      : (target.protocol === "https:" ? https : http).request(target, { headers }, onResponse);
    request.on("error", reject);
    request.end();
  });
}

function sha256File(path) {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

function progressReporter(label, total, stream = process.stderr) {
  let lastShown = -1;
  return (done, final = false) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 0;
    const megabytes = (value) => (value / 1048576).toFixed(1);
    if (stream.isTTY) {
      if (percent !== lastShown || final)
        stream.write(`\r${label}: ${percent}% ${megabytes(done)}/${megabytes(total)} MB${final ? "\n" : ""}`);
    } else if (final || Math.floor(percent / 10) !== Math.floor(lastShown / 10)) {
      stream.write(`${label}: ${percent}% ${megabytes(done)}/${megabytes(total)} MB\n`);
    }
    lastShown = percent;
  };
}

/** Appends one response body to `partial`, counting bytes; never writes past `limit`. */
function download(response, partial, append, limit, onProgress, startAt) {
  return new Promise((resolve, reject) => {
    const descriptor = openSync(partial, append ? "a" : "w", 0o600);
    let written = startAt;
    let failed = false;
    response.on("data", (chunk) => {
      if (failed) return;
      if (written + chunk.length > limit) {
        failed = true;
        response.destroy();
        closeSync(descriptor);
        return reject(new LauncherError(`The download is larger than the expected ${limit} bytes.`));
      }
      writeSync(descriptor, chunk);
      written += chunk.length;
      onProgress(written);
    });
    response.on("error", (error) => {
      if (failed) return;
      failed = true;
      fsyncSync(descriptor);
      closeSync(descriptor);
      reject(error);
    });
    response.on("aborted", () => response.emit("error", new Error("connection closed early")));
    response.on("end", () => {
      if (failed) return;
      failed = true;
      fsyncSync(descriptor);
      closeSync(descriptor);
      if (written < limit) reject(new Error(`connection closed after ${written} of ${limit} bytes`));
      else resolve(written);
    });
  });
}

/**
 * The verified, cached binary for `asset` ({name, sha256, size}): `<data>/cache/downloads/<sha256>`.
 * Interrupted downloads resume from `<sha256>.partial` with a Range request, or restart; a checksum
 * mismatch deletes everything it wrote.
 */
export async function ensureBinary({ asset, version, env = process.env, platform = process.platform, log = process.stderr }) {
  const directory = join(dataRoot(env, platform), "cache", "downloads");
  const final = join(directory, `${asset.sha256}${platform === "win32" ? ".exe" : ""}`);
  if (existsSync(final) && (await sha256File(final)) === asset.sha256) return final;
  rmSync(final, { force: true });
  mkdirSync(directory, { recursive: true });
  const partial = `${final}.partial`;
  const base = (env.FLAMEOX_DOWNLOAD_BASE || defaultDownloadBase).replace(/\/+$/, "");
  const url = `${base}/v${version}/${asset.name}`;
  const report = progressReporter(`Downloading flameox ${version} (${asset.name})`, asset.size, log);
  let lastError;
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    let have = existsSync(partial) ? statSync(partial).size : 0;
    if (have > asset.size) {
      rmSync(partial, { force: true });
      have = 0;
    }
    try {
      if (have < asset.size) {
        const response = await get(url, have > 0 ? { Range: `bytes=${have}-` } : {}, env);
        if (response.statusCode === 206 && have > 0) {
          await download(response, partial, true, asset.size, report, have);
        } else if (response.statusCode === 200) {
          await download(response, partial, false, asset.size, report, 0);
        } else if (response.statusCode === 416) {
          response.resume();
          rmSync(partial, { force: true });
          continue;
        } else {
          response.resume();
          throw new LauncherError(`Downloading ${url} failed: HTTP ${response.statusCode}.`);
        }
      }
      report(asset.size, true);
      const digest = await sha256File(partial);
      if (digest !== asset.sha256) {
        rmSync(partial, { force: true });
        throw new LauncherError(
          `Checksum mismatch for ${asset.name}: got ${digest}, expected ${asset.sha256}. Nothing was installed; check your network or mirror (FLAMEOX_DOWNLOAD_BASE) and retry.`,
        );
      }
      chmodSync(partial, 0o755);
      renameSync(partial, final);
      return final;
    } catch (error) {
      if (error instanceof LauncherError) throw error;
      lastError = error;
      log.write(`\nDownload interrupted (${error.message}); ${attempt < 5 ? "resuming" : "giving up"}.\n`);
    }
  }
  throw new LauncherError(`Could not download ${url}: ${lastError?.message}. Rerun to resume; behind a proxy set HTTPS_PROXY.`);
}

/** Runs `<binary> args…`, forwarding signals; a signal death is re-raised, never turned into exit 0. */
export function handOff(binary, args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: "inherit", env: { ...env, FLAMEOX_NPM_BOOTSTRAP: "1" } });
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
    const forward = (signal) => {
      try {
        child.kill(signal);
      } catch {
        // The child is already gone.
      }
    };
    for (const signal of signals) process.on(signal, forward);
    child.on("error", (error) => {
      process.stderr.write(`Could not start flameox setup: ${error.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      for (const name of signals) process.off(name, forward);
      if (signal) {
        process.kill(process.pid, signal);
        // If the signal is ignored here, still report failure.
        setTimeout(() => resolve(1), 1000);
        return;
      }
      resolve(code ?? 1);
    });
  });
}

export function packageRoot(moduleUrl) {
  return dirname(dirname(new URL(moduleUrl).pathname));
}

export async function main(argv, { root, env = process.env } = {}) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const [command, ...rest] = argv;
  if (command !== "setup" && command !== "upgrade") {
    process.stderr.write(
      "The flameox npm package is only the setup bootstrap. Use `npx flameox@latest setup` (connect MCP clients) or `npx flameox@latest upgrade` (update connected clients).\n",
    );
    return 2;
  }
  try {
    const target = resolveTarget();
    const table = JSON.parse(readFileSync(join(root, "checksums.json"), "utf8"));
    const asset = table.assets?.[target];
    if (table.version !== pkg.version || !asset) {
      throw new LauncherError(`This flameox ${pkg.version} package has no checksum for ${target}; run \`npx flameox@latest setup\`.`);
    }
    const binary = await ensureBinary({ asset, version: pkg.version, env });
    const args = command === "upgrade" ? ["setup", "--refresh", "--yes", ...rest] : ["setup", ...rest];
    return await handOff(binary, args, env);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    return error instanceof LauncherError ? error.exitCode : 1;
  }
}
