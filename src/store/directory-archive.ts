import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { artifactTooLarge, executionRefused } from "../domain/errors.ts";

/**
 * A folder as one deterministic POSIX tar (ustar, with a PAX record for long names): entries sorted
 * by path, owner 0, mtime 0, modes reduced to 0755/0644, links stored as links and never followed.
 * The same tree always gives the same bytes, so a package's artifact id is its content identity.
 */
export type ArchiveSummary = { entries: number; content_bytes: number; archive_bytes: number };

const block = 512;
const largestUstarSize = 0o77777777777;
const chunkSize = 1 << 20;

type Entry = { path: string; absolute: string; type: "file" | "directory" | "link"; size: number; executable: boolean; link: string };

export function archiveDirectory(
  source: string,
  rootName: string,
  target: string,
  limits: { maxBytes: number; maxEntries: number },
): ArchiveSummary {
  const entries = collect(source, rootName, limits);
  const output = openSync(target, "wx", 0o600);
  let written = 0;
  const write = (bytes: Uint8Array) => {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(output, bytes, offset, bytes.length - offset);
    written += bytes.length;
  };
  let contentBytes = 0;
  try {
    for (const entry of entries) {
      for (const header of headers(entry)) write(header);
      if (entry.type !== "file") continue;
      contentBytes += copyFile(entry, write);
      if (entry.size % block !== 0) write(new Uint8Array(block - (entry.size % block)));
    }
    write(new Uint8Array(block * 2));
  } finally {
    closeSync(output);
  }
  return { entries: entries.length, content_bytes: contentBytes, archive_bytes: written };
}

/** Every entry under the root, depth first in byte order of the path; refuses what a package cannot hold. */
function collect(source: string, rootName: string, limits: { maxBytes: number; maxEntries: number }): Entry[] {
  const entries: Entry[] = [];
  let total = 0;
  const visit = (absolute: string, path: string) => {
    const stat = lstatSync(absolute);
    if (entries.length >= limits.maxEntries)
      throw executionRefused(`The folder has more than ${limits.maxEntries} entries.`, { remediation: ["Import a smaller package."] });
    if (stat.isSymbolicLink()) {
      entries.push({ path, absolute, type: "link", size: 0, executable: false, link: readlinkSync(absolute) });
    } else if (stat.isDirectory()) {
      entries.push({ path: `${path}/`, absolute, type: "directory", size: 0, executable: true, link: "" });
      const names = readdirSync(absolute).sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));
      for (const name of names) visit(join(absolute, name), `${path}/${name}`);
    } else if (stat.isFile()) {
      total += stat.size;
      if (total > limits.maxBytes) throw artifactTooLarge(total, limits.maxBytes);
      entries.push({ path, absolute, type: "file", size: stat.size, executable: (stat.mode & 0o111) !== 0, link: "" });
    } else {
      throw executionRefused(`The folder holds ${path.slice(rootName.length + 1)}, which is neither a file, a folder nor a link.`, {
        remediation: ["Import a package of regular files and folders."],
      });
    }
  };
  visit(source, rootName);
  return entries;
}

function copyFile(entry: Entry, write: (bytes: Uint8Array) => void): number {
  const input = openSync(entry.absolute, "r");
  const buffer = Buffer.allocUnsafe(chunkSize);
  let copied = 0;
  try {
    // Exactly the size the header announced: a file that grows or shrinks meanwhile would corrupt the archive.
    while (copied < entry.size) {
      const read = readSync(input, buffer, 0, Math.min(chunkSize, entry.size - copied), null);
      if (read === 0) break;
      write(buffer.subarray(0, read));
      copied += read;
    }
  } finally {
    closeSync(input);
  }
  if (copied !== entry.size || lstatSync(entry.absolute).size !== entry.size)
    throw executionRefused(`${entry.path} changed while it was being archived.`, {
      remediation: ["Wait until the recording has finished writing the package, then import it again."],
    });
  return copied;
}

const encoder = new TextEncoder();

/** The entry's header, preceded by a PAX header when its path or link does not fit ustar's fields. */
function headers(entry: Entry): Uint8Array[] {
  const type = entry.type === "file" ? "0" : entry.type === "directory" ? "5" : "2";
  const mode = entry.type === "file" && !entry.executable ? 0o644 : entry.type === "link" ? 0o777 : 0o755;
  const path = encoder.encode(entry.path);
  const link = encoder.encode(entry.link);
  const split = splitPath(path);
  const pax: string[] = [];
  if (!split) pax.push(paxRecord("path", entry.path));
  if (link.length > 100) pax.push(paxRecord("linkpath", entry.link));
  // ustar's size field holds 11 octal digits (8 GiB); larger files carry their size in the PAX header.
  const hugeFile = entry.size > largestUstarSize;
  if (hugeFile) pax.push(paxRecord("size", String(entry.size)));
  const result: Uint8Array[] = [];
  if (pax.length > 0) {
    const body = encoder.encode(pax.join(""));
    result.push(
      header({
        name: encoder.encode("PaxHeader"),
        prefix: new Uint8Array(),
        mode: 0o644,
        size: body.length,
        type: "x",
        link: new Uint8Array(),
      }),
    );
    const padded = new Uint8Array(Math.ceil(body.length / block) * block);
    padded.set(body);
    result.push(padded);
  }
  const fallback = split ?? { prefix: new Uint8Array(), name: path.subarray(Math.max(0, path.length - 100)) };
  result.push(
    header({
      ...fallback,
      mode,
      size: entry.type === "file" && !hugeFile ? entry.size : 0,
      type,
      link: link.length > 100 ? new Uint8Array() : link,
    }),
  );
  return result;
}

/** ustar's 155-byte prefix and 100-byte name, split at a slash; null when the path cannot be split so. */
function splitPath(path: Uint8Array): { prefix: Uint8Array; name: Uint8Array } | null {
  if (path.length <= 100) return { prefix: new Uint8Array(), name: path };
  for (let index = path.length - 1; index > 0; index--) {
    if (path[index] !== 0x2f) continue;
    if (index <= 155 && path.length - index - 1 <= 100 && path.length - index - 1 > 0)
      return { prefix: path.subarray(0, index), name: path.subarray(index + 1) };
  }
  return null;
}

/** "<length> key=value\n", where length counts the whole record including its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLength = encoder.encode(body).length;
  let length = bodyLength + String(bodyLength).length;
  while (length !== bodyLength + String(length).length) length = bodyLength + String(length).length;
  return `${length}${body}`;
}

function header(fields: { name: Uint8Array; prefix: Uint8Array; mode: number; size: number; type: string; link: Uint8Array }): Uint8Array {
  const bytes = new Uint8Array(block);
  const octal = (offset: number, width: number, value: number) =>
    bytes.set(encoder.encode(`${value.toString(8).padStart(width - 1, "0")}\0`), offset);
  bytes.set(fields.name, 0);
  octal(100, 8, fields.mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, fields.size);
  octal(136, 12, 0);
  bytes.set(encoder.encode("        "), 148);
  bytes.set(encoder.encode(fields.type), 156);
  bytes.set(fields.link, 157);
  bytes.set(encoder.encode("ustar\u000000"), 257);
  bytes.set(fields.prefix, 345);
  let checksum = 0;
  for (const byte of bytes) checksum += byte;
  bytes.set(encoder.encode(`${checksum.toString(8).padStart(6, "0")}\0 `), 148);
  return bytes;
}
