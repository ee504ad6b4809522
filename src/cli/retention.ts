import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { invalidRequest } from "../domain/errors.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit } from "./output.ts";

/**
 * Retention and repair: the CLI is the only way to move or delete workspace data (MCP never
 * deletes, and validate_workspace stays read-only).
 */
export const gcCommand = defineCommand({
  meta: {
    name: "gc",
    description:
      "Collect garbage: a dry run by default lists exactly what --apply would move into recoverable trash (staging no live process owns, superseded bundles, caches, unreferenced artifact files), with the retention roots that keep the rest.",
  },
  args: {
    "dry-run": { type: "boolean", description: "List what is eligible without moving anything (the default)." },
    apply: { type: "boolean", description: "Move the eligible paths into .diagnostics/trash/<id>/ with a manifest." },
    restore: { type: "string", description: "Move everything of a trash manifest (its path or trash id) back where it was." },
    purge: { type: "string", description: "Delete an expired trash manifest (its path or trash id) and what it holds." },
    "minimum-age-hours": {
      type: "string",
      description: "Only paths unchanged for at least this many hours are eligible (>= 1, default 24).",
    },
  },
  run({ args }) {
    const chosen = [args["dry-run"] && "--dry-run", args.apply && "--apply", args.restore && "--restore", args.purge && "--purge"].filter(
      Boolean,
    );
    if (chosen.length > 1) {
      throw invalidRequest(`gc takes one of --dry-run, --apply, --restore, --purge; got ${chosen.join(", ")}.`, {
        details: { fields: chosen.map((field) => ({ field, message: "mutually exclusive", type: "exclusive" })) },
        remediation: ["Choose one action; without any, gc is a dry run."],
      });
    }
    const services = cliServices();
    if (args.restore) {
      const result = services.retention.restore(manifestReference(String(args.restore)));
      emit(cliOptions(), result, () => `Restored ${result.restored.length} paths from ${result.trash_id}.`);
      return;
    }
    if (args.purge) {
      const result = services.retention.purge(manifestReference(String(args.purge)));
      emit(cliOptions(), result, () => `Purged ${result.trash_id}: ${result.purged_paths} paths, ${result.purged_bytes} bytes.`);
      return;
    }
    const minimumAgeHours = parseAgeHours(args["minimum-age-hours"] as string | undefined);
    const plan = args.apply ? services.retention.apply({ minimumAgeHours }) : services.retention.plan({ minimumAgeHours });
    emit(cliOptions(), plan, () =>
      [
        `${plan.mode === "apply" ? "Moved" : "Eligible"}: ${plan.entries.length} paths, ${plan.total_bytes} bytes (unchanged for ${plan.minimum_age_hours} h).`,
        ...plan.entries.map((entry) => `  ${entry.category.padEnd(22)} .diagnostics/${entry.path}  ${entry.bytes} bytes`),
        `Retention roots: ${plan.retention_roots.map((root) => `${root.kind} ${root.id}`).join("; ")}`,
        plan.manifest_path ? `Manifest: ${plan.manifest_path} (restorable until ${plan.expires_at})` : "",
        plan.next_step,
      ]
        .filter(Boolean)
        .join("\n"),
    );
  },
});

export const repairCommand = defineCommand({
  meta: {
    name: "repair",
    description:
      "Without PLAN.json: preview the repair plan validate proposes (one action per issue with a safe fix). With PLAN.json (that preview, saved): apply exactly those actions, or nothing if any no longer applies.",
  },
  args: { plan: { type: "positional", required: false, description: "A repair plan printed by flameox repair --json." } },
  async run({ args }) {
    const services = cliServices();
    const path = args.plan as string | undefined;
    const result = path ? await services.repair.apply(readPlan(path)) : await services.repair.preview();
    emit(cliOptions(), result, () =>
      [
        result.plan_id === null ? "Nothing to repair." : `Repair plan ${result.plan_id}${result.applied ? " applied" : ""}:`,
        ...(result.applied
          ? result.outcomes.map((item) => `  ${item.outcome.padEnd(12)} ${describe(item.action)}`)
          : result.actions.map((action) => `  ${describe(action)}`)),
        result.next_step,
      ].join("\n"),
    );
  },
});

function describe(action: Record<string, unknown>): string {
  const { action: name, ...rest } = action;
  return `${String(name)} ${Object.values(rest).join(" ")}`;
}

function parseAgeHours(value: string | undefined): number {
  if (value === undefined) return 24;
  const hours = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(hours) || hours < 1) {
    throw invalidRequest("--minimum-age-hours must be a number of hours of at least 1.", {
      details: { fields: [{ field: "--minimum-age-hours", message: "must be >= 1", type: "greater_than_equal" }] },
      remediation: ["Pass --minimum-age-hours 24 (the default), or any number >= 1."],
    });
  }
  return hours;
}

/** A trash id as given, or a manifest path made absolute against the current folder. */
function manifestReference(value: string): string {
  return /^trash-/.test(value) ? value : resolve(value);
}

function readPlan(path: string): unknown {
  try {
    return JSON.parse(readFileSync(resolve(path), "utf8"));
  } catch (error) {
    throw invalidRequest(`The repair plan ${path} cannot be read as JSON: ${error instanceof Error ? error.message : String(error)}`, {
      remediation: ["Save the output of flameox repair --json to a file and pass that file."],
    });
  }
}
