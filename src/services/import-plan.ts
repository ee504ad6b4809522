/**
 * What an import does with a file, decided before it is stored: the kind it registers, whether the
 * import itself reads it (a profile, or a failure log), and otherwise the next tool, with a typed
 * limitation whenever the file cannot become evidence as imported.
 */
import type { DetectedProfileFormat } from "../adapters/formats/detect.ts";
import { type ProfileFormat, formatRoute, isProfileFormat } from "../adapters/formats/format-catalog.ts";
import { detectFailureLog, type FailureLogKind } from "../adapters/failures/failure-log.ts";

export type LimitationDetail = { source: string; code: string; message: string };

export type ImportPlan = {
  kind: string;
  /** The profile format read on import, when the file is one and its kind is read as a profile. */
  profileFormat: ProfileFormat | null;
  producer: string | null;
  /** The next tool when the import does not extract (undefined: the kind decides). */
  nextTool?: string | null;
  notes: LimitationDetail[];
};

const profileKinds = new Set(["sample_profile", "execution_trace", "memory_profile"]);

function kindNotRead(kind: string, producer: string | null, message: string): ImportPlan {
  return {
    kind,
    profileFormat: null,
    producer,
    nextTool: "import_artifact",
    notes: [{ source: "import", code: "kind_not_read", message }],
  };
}

/**
 * The plan for a detected file: the kind it registers (the caller's, else the format's), whether it
 * reads the profile at once, and otherwise the next tool. `extractToolFor` names the extract tool of
 * a kind (for files of no known format imported under an explicit kind).
 */
export function importPlan(
  detected: DetectedProfileFormat,
  requestedKind: string | null,
  extractToolFor: (kind: string) => string | null,
): ImportPlan {
  if (detected.format === "unknown") {
    const advice = detected.advice;
    const notes = advice ? [{ source: "import", code: advice.code, message: advice.message }] : [];
    const kind = requestedKind ?? "collector_metadata";
    return { kind, profileFormat: null, producer: null, nextTool: extractToolFor(kind) ?? advice?.next_tool ?? null, notes };
  }
  const route = formatRoute(detected.format);
  const kind = requestedKind ?? route.kind;
  if (isProfileFormat(detected.format)) {
    if (profileKinds.has(kind)) return { kind, profileFormat: detected.format, producer: route.producer, notes: [] };
    return kindNotRead(
      kind,
      route.producer,
      `The file is a ${detected.format} profile, but kind ${kind} is not read as one; import it again with kind=${route.kind} (or no kind) to get its stacks.`,
    );
  }
  if (kind === route.kind || route.alsoKinds?.includes(kind))
    return { kind, profileFormat: null, producer: route.producer, nextTool: route.extractTool, notes: [] };
  return kindNotRead(
    kind,
    route.producer,
    `The file is a ${detected.format} file, read by ${route.extractTool} as kind ${route.kind}; as kind ${kind} no extract tool reads it. Import it again with kind=${route.kind} (or no kind).`,
  );
}

/**
 * Whether to read an import as a failure log, and under which kind: a sanitizer_report always (a
 * file without a report is then refused); process_output or validation_output, or no kind for a
 * file of no profile or capture format, when its content shows sanitizer reports or a Python
 * traceback.
 */
export function failureLogToExtract(requested: string | null, path: string, unrecognized: boolean): string | null {
  if (requested === "sanitizer_report") return requested;
  if (requested === null ? !unrecognized : requested !== "process_output" && requested !== "validation_output") return null;
  const detected: FailureLogKind | null = detectFailureLog(path);
  return detected === null ? null : (requested ?? detected);
}
