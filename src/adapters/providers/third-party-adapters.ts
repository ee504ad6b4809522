/**
 * Third-party adapters: Python distributions that declare an entry point in the `flameox.adapters`
 * group. Discovery reads distribution metadata only (no plugin code is imported), and a package's
 * identity covers its name, version and every file its RECORD lists, hashed as it is on disk now, so
 * any upgrade or edit of the installed package changes it.
 */
import type { CommandRunner } from "../capture-adapter.ts";
import { askPython } from "./python-query.ts";

export const adapterEntryPointGroup = "flameox.adapters";

export type AdapterEntryPoint = { name: string; value: string; distribution: string; version: string };

export type PackageFiles = {
  distribution: string;
  version: string;
  /** Every RECORD entry: its path, recorded hash and size, and the sha256 and size of the file now on disk (null when unreadable). */
  files: { path: string; recorded_hash: string | null; recorded_size: number | null; sha256: string | null; size: number | null }[];
};

const script = `
import hashlib, json, sys
import importlib.metadata as metadata
group, mode = sys.argv[1], sys.argv[2]
if mode == "list":
    found = []
    for dist in metadata.distributions():
        for entry in dist.entry_points:
            if entry.group == group:
                found.append({"name": entry.name, "value": entry.value, "distribution": dist.metadata["Name"], "version": dist.version})
    print(json.dumps(sorted(found, key=lambda item: (item["name"], item["value"]))))
else:
    dist = metadata.distribution(sys.argv[3])
    files = []
    for record in dist.files or []:
        digest, size = hashlib.sha256(), 0
        try:
            with open(record.locate(), "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
            sha = digest.hexdigest()
        except OSError:
            sha, size = None, None
        recorded = "%s=%s" % (record.hash.mode, record.hash.value) if record.hash else None
        files.append({"path": str(record), "recorded_hash": recorded, "recorded_size": record.size, "sha256": sha, "size": size})
    print(json.dumps({"distribution": dist.metadata["Name"], "version": dist.version, "files": files}))
`;

/** Entry points of the group, sorted by (name, value); nothing is imported. */
export async function discoverAdapterEntryPoints(python: string, run: CommandRunner): Promise<AdapterEntryPoint[]> {
  return (await askPython(python, run, { script, argv: [adapterEntryPointGroup, "list"], timeoutMs: 60_000 })) as AdapterEntryPoint[];
}

export async function readPackageFiles(python: string, distribution: string, run: CommandRunner): Promise<PackageFiles> {
  return (await askPython(python, run, {
    script,
    argv: [adapterEntryPointGroup, "identity", distribution],
    timeoutMs: 60_000,
  })) as PackageFiles;
}

/** PEP 503 normalization: the same distribution however its name is spelled. */
export function normalizedDistribution(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** A package whose files cannot all be read (or that records none) has no identity an approval could bind to. */
export function verifiable(files: PackageFiles): boolean {
  return files.files.length > 0 && files.files.every((file) => file.sha256 !== null);
}
