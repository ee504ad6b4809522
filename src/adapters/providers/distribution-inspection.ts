/**
 * Asks one interpreter which of a list of requirements (PEP 508 index specifiers) it satisfies,
 * without importing or changing anything: distribution metadata only. The interpreter's own
 * `packaging` (or pip's vendored copy) evaluates specifiers and markers exactly; without either, a
 * small fallback compares numeric release versions and says so.
 */
import type { CommandRunner } from "../capture-adapter.ts";
import { askPython } from "./python-query.ts";

export type RequirementStatus = "installed" | "missing" | "version_mismatch";

export type InspectedRequirement = {
  requirement: string;
  distribution: string;
  status: RequirementStatus;
  installed_version: string | null;
  /** False when an environment marker excludes it on this interpreter. */
  applies: boolean;
};

export type DistributionInspection = {
  python_version: string;
  evaluator: "packaging" | "pip_vendored_packaging" | "numeric_fallback";
  requirements: InspectedRequirement[];
};

const inspectionScript = String.raw`
import json, re, sys
import importlib.metadata as metadata
requirements = json.loads(sys.argv[1])
Requirement = None
evaluator = "numeric_fallback"
try:
    from packaging.requirements import Requirement
    evaluator = "packaging"
except Exception:
    try:
        from pip._vendor.packaging.requirements import Requirement
        evaluator = "pip_vendored_packaging"
    except Exception:
        Requirement = None

def release(text):
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None

def pad(a, b):
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))

def fallback_satisfies(version, specifier):
    have = release(version)
    for clause in filter(None, (part.strip() for part in specifier.split(","))):
        operator, wanted = re.match(r"^(===|==|!=|~=|<=|>=|<|>)\s*(.+)$", clause).groups()
        if operator == "===":
            if version != wanted: return False
            continue
        if wanted.endswith(".*"):
            prefix = release(wanted[:-2])
            same = have is not None and have[:len(prefix)] == prefix
            if (operator == "==") != same: return False
            continue
        want = release(wanted)
        if have is None or want is None: return False
        a, b = pad(have, want)
        if operator == "==" and a != b: return False
        if operator == "!=" and a == b: return False
        if operator == ">=" and a < b: return False
        if operator == "<=" and a > b: return False
        if operator == ">" and a <= b: return False
        if operator == "<" and a >= b: return False
        if operator == "~=":
            upper = want[:-1]
            if a < b or have[:len(upper)] != upper: return False
    return True

out = []
for text in requirements:
    if Requirement is not None:
        parsed = Requirement(text)
        name, specifier = parsed.name, parsed.specifier
        applies = parsed.marker.evaluate() if parsed.marker else True
    else:
        head = text.split(";")[0]
        match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$", head)
        name, specifier, applies = match.group(1), match.group(2).strip(), True
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        version = None
    if version is None:
        status = "missing"
    elif Requirement is not None:
        status = "installed" if specifier.contains(version, prereleases=True) else "version_mismatch"
    else:
        status = "installed" if fallback_satisfies(version, specifier) else "version_mismatch"
    out.append({"requirement": text, "distribution": name, "status": status, "installed_version": version, "applies": bool(applies)})
print(json.dumps({"python_version": "%d.%d.%d" % sys.version_info[:3], "evaluator": evaluator, "requirements": out}))
`;

/** Runs the inspection in `python` (isolated mode: no user site, no PYTHON* variables). */
export async function inspectDistributions(python: string, requirements: string[], run: CommandRunner): Promise<DistributionInspection> {
  return (await askPython(python, run, {
    script: inspectionScript,
    argv: [JSON.stringify(requirements)],
    timeoutMs: 30_000,
  })) as DistributionInspection;
}
