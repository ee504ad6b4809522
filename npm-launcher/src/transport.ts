/**
 * A fetch() for ofetch on Node's own http/https, because Node's built-in fetch ignores HTTPS_PROXY on
 * the Node versions we support: HTTPS through a proxy goes through an HTTP CONNECT tunnel, NO_PROXY
 * lists hosts reached directly, redirects are followed, and a connection silent for `idleMs` fails
 * (so a stalled download is retried instead of hanging).
 */
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import tls from "node:tls";
import { LauncherError } from "./errors.ts";

export type TransportOptions = { env?: NodeJS.ProcessEnv; idleMs?: number; maxRedirects?: number };

function proxyFor(url: URL, env: NodeJS.ProcessEnv): URL | undefined {
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
  const host = url.hostname.toLowerCase();
  const direct = noProxy.some(
    (entry) => entry === "*" || host === entry.replace(/^\./, "") || host.endsWith(entry.startsWith(".") ? entry : `.${entry}`),
  );
  if (direct) return undefined;
  const value = url.protocol === "https:" ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  return value ? new URL(value) : undefined;
}

function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username) return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "Proxy-Authorization": `Basic ${Buffer.from(credentials).toString("base64")}` };
}

/** One GET (no redirects followed here). */
function request(target: URL, headers: Record<string, string>, env: NodeJS.ProcessEnv, idleMs: number, signal?: AbortSignal | null) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const proxy = proxyFor(target, env);
    const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
    const watch = (outgoing: http.ClientRequest) => {
      outgoing.setTimeout(idleMs, () => outgoing.destroy(new Error(`no data for ${Math.round(idleMs / 1000)} s`)));
      outgoing.on("error", reject);
      const abort = () => outgoing.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      if (signal?.aborted) abort();
      else signal?.addEventListener("abort", abort, { once: true });
      outgoing.on("response", (response) => {
        signal?.removeEventListener("abort", abort);
        resolve(response);
      });
      outgoing.end();
    };
    if (proxy && target.protocol === "https:") {
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
          reject(new LauncherError(`The proxy ${proxy.host} refused the tunnel to ${target.host} (HTTP ${response.statusCode}).`));
          return;
        }
        watch(
          https.request({
            host: target.hostname,
            port,
            path: `${target.pathname}${target.search}`,
            headers,
            createConnection: () => tls.connect({ socket, servername: target.hostname }),
          }),
        );
      });
      connect.on("error", reject);
      connect.end();
      return;
    }
    if (proxy) {
      watch(
        http.request({
          host: proxy.hostname,
          port: Number(proxy.port || 80),
          path: target.toString(),
          headers: { ...headers, Host: target.host, ...proxyAuthorization(proxy) },
        }),
      );
      return;
    }
    watch((target.protocol === "https:" ? https : http).request(target, { headers }));
  });
}

/** A fetch-compatible function for ofetch's `createFetch({ fetch })`. GET only, which is all we need. */
export function nodeFetch(options: TransportOptions = {}): typeof fetch {
  const env = options.env ?? process.env;
  const idleMs = options.idleMs ?? 60_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const implementation = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    let target = new URL(typeof input === "string" || input instanceof URL ? input.toString() : input.url);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    for (let redirects = 0; ; redirects += 1) {
      const response = await request(target, headers, env, idleMs, init.signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (redirects >= maxRedirects) throw new LauncherError(`Too many redirects fetching ${target}.`);
        target = new URL(response.headers.location, target);
        continue;
      }
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      const body = status === 204 || status === 304 ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
      return new Response(body, { status, statusText: response.statusMessage ?? "", headers: responseHeaders });
    }
  };
  return implementation as typeof fetch;
}
