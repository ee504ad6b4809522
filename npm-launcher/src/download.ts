/**
 * The verified, cached binary: `<data>/cache/downloads/<sha256>`. ofetch (bundled at build time) does
 * the requests: retries with exponential backoff on network errors and 408/429/5xx, a timeout for the
 * response to start, and typed HTTP errors that we turn into a remedy. An interrupted body resumes from
 * `<sha256>.partial` with a Range request (or restarts); a body larger than expected, or one whose
 * checksum is wrong, deletes everything it wrote.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { createFetch, FetchError } from "ofetch";
import { LauncherError } from "./errors.ts";
import { dataRoot } from "./paths.ts";
import { nodeFetch } from "./transport.ts";

export const defaultDownloadBase = "https://github.com/morluto/flameox/releases/download";

export type Asset = { name: string; sha256: string; size: number };

export type DownloadOptions = {
  asset: Asset;
  version: string;
  env?: NodeJS.ProcessEnv;
  platform?: string;
  log?: NodeJS.WritableStream & { isTTY?: boolean };
};

/** Body-level attempts (each resumes); every one also gets ofetch's own request retries. */
const bodyAttempts = 5;
const requestRetries = 4;

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

function progressReporter(label: string, total: number, stream: DownloadOptions["log"] & object) {
  let lastShown = -1;
  return (done: number, final = false) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 0;
    const megabytes = (value: number) => (value / 1048576).toFixed(1);
    if (stream.isTTY) {
      if (percent !== lastShown || final)
        stream.write(`\r${label}: ${percent}% ${megabytes(done)}/${megabytes(total)} MB${final ? "\n" : ""}`);
    } else if (final || Math.floor(percent / 10) !== Math.floor(lastShown / 10)) {
      stream.write(`${label}: ${percent}% ${megabytes(done)}/${megabytes(total)} MB\n`);
    }
    lastShown = percent;
  };
}

/** Exponential backoff: base, 2×, 4×, … capped at 30 s. FLAMEOX_DOWNLOAD_RETRY_DELAY_MS sets the base. */
export function backoffMs(env: NodeJS.ProcessEnv, attempt: number): number {
  const base = Number(env.FLAMEOX_DOWNLOAD_RETRY_DELAY_MS ?? 500);
  return Math.min(30_000, (Number.isFinite(base) && base >= 0 ? base : 500) * 2 ** attempt);
}

function remedyFor(error: FetchError, url: string, version: string): LauncherError {
  const status = error.response?.status;
  if (status === 404) {
    return new LauncherError(
      `flameox ${version} has no download at ${url} (HTTP 404). The release may not be published yet, or a mirror (FLAMEOX_DOWNLOAD_BASE) lacks it. Run \`npx flameox@latest setup\`, or download the binary and SHA256SUMS by hand and run \`./flameox setup --checksums SHA256SUMS\`.`,
    );
  }
  if (status !== undefined) {
    return new LauncherError(
      `Downloading ${url} failed with HTTP ${status} after ${requestRetries + 1} tries. The server may be down: retry later, or download the binary and SHA256SUMS by hand and run \`./flameox setup --checksums SHA256SUMS\`.`,
    );
  }
  return new LauncherError(
    `Could not reach ${url} (${error.cause instanceof Error ? error.cause.message : error.message}) after ${requestRetries + 1} tries. Check the network; behind a proxy set HTTPS_PROXY (NODE_EXTRA_CA_CERTS for its CA).`,
  );
}

/** Writes one response body to `partial` (appending from `startAt`), never past `limit` bytes. */
async function writeBody(
  body: ReadableStream<Uint8Array>,
  partial: string,
  startAt: number,
  limit: number,
  onProgress: (done: number) => void,
) {
  const descriptor = openSync(partial, startAt > 0 ? "a" : "w", 0o600);
  const reader = body.getReader();
  let written = startAt;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (written + value.byteLength > limit) {
        await reader.cancel().catch(() => undefined);
        closeSync(descriptor);
        rmSync(partial, { force: true });
        throw new LauncherError(
          `The download is larger than the expected ${limit} bytes; nothing was kept. The mirror may serve another file: check FLAMEOX_DOWNLOAD_BASE and retry.`,
        );
      }
      writeSync(descriptor, value);
      written += value.byteLength;
      onProgress(written);
    }
  } catch (error) {
    if (error instanceof LauncherError) throw error;
    fsyncSync(descriptor);
    closeSync(descriptor);
    throw error;
  }
  fsyncSync(descriptor);
  closeSync(descriptor);
  if (written < limit) throw new Error(`connection closed after ${written} of ${limit} bytes`);
}

export async function ensureBinary({
  asset,
  version,
  env = process.env,
  platform = process.platform,
  log = process.stderr,
}: DownloadOptions) {
  const directory = join(dataRoot(env, platform), "cache", "downloads");
  const final = join(directory, `${asset.sha256}${platform === "win32" ? ".exe" : ""}`);
  if (existsSync(final) && (await sha256File(final)) === asset.sha256) return final;
  rmSync(final, { force: true });
  mkdirSync(directory, { recursive: true });
  const partial = `${final}.partial`;
  const base = (env.FLAMEOX_DOWNLOAD_BASE || defaultDownloadBase).replace(/\/+$/, "");
  const url = `${base}/v${version}/${asset.name}`;
  const report = progressReporter(`Downloading flameox ${version} (${asset.name})`, asset.size, log);
  const fetcher = createFetch({ fetch: nodeFetch({ env }) });
  let lastError: unknown;
  for (let attempt = 0; attempt < bodyAttempts; attempt += 1) {
    let have = existsSync(partial) ? statSync(partial).size : 0;
    if (have > asset.size) {
      rmSync(partial, { force: true });
      have = 0;
    }
    try {
      if (have < asset.size) {
        let response: Response;
        try {
          response = await fetcher.raw(url, {
            headers: have > 0 ? { Range: `bytes=${have}-` } : {},
            responseType: "stream",
            retry: requestRetries,
            retryDelay: (context) => backoffMs(env, requestRetries - Number(context.options.retry ?? 0)),
            retryStatusCodes: [408, 425, 429, 500, 502, 503, 504],
            timeout: 30_000,
          });
        } catch (error) {
          if (error instanceof FetchError && error.response?.status === 416) {
            rmSync(partial, { force: true });
            continue;
          }
          throw error instanceof FetchError ? remedyFor(error, url, version) : error;
        }
        const resumed = response.status === 206 && have > 0;
        const declared = Number(response.headers.get("content-length") ?? Number.NaN);
        if (Number.isFinite(declared) && (resumed ? have : 0) + declared > asset.size) {
          await response.body?.cancel().catch(() => undefined);
          rmSync(partial, { force: true });
          throw new LauncherError(
            `${url} is ${declared} bytes, larger than the expected ${asset.size}; nothing was kept. The mirror may serve another file: check FLAMEOX_DOWNLOAD_BASE.`,
          );
        }
        if (!response.body) throw new Error("the response has no body");
        await writeBody(response.body, partial, resumed ? have : 0, asset.size, report);
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
      const last = attempt === bodyAttempts - 1;
      log.write(`\nDownload interrupted (${(error as Error).message}); ${last ? "giving up" : "resuming"}.\n`);
      if (!last) await new Promise((resolve) => setTimeout(resolve, backoffMs(env, attempt)));
    }
  }
  throw new LauncherError(`Could not download ${url}: ${(lastError as Error)?.message}. Rerun to resume; behind a proxy set HTTPS_PROXY.`);
}
