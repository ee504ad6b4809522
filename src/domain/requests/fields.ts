/**
 * The building blocks of the request schemas the CLI and the MCP tools share. Bounds are written once
 * here, and each field carries the text a model reads: `v.description`, which @valibot/to-json-schema
 * publishes as the property's `description`.
 */
import * as v from "valibot";

/** A schema with the description a model reads for it. */
export function described<Schema extends v.GenericSchema>(schema: Schema, description: string) {
  return v.pipe(schema, v.description<v.InferOutput<Schema>, string>(description));
}

/**
 * An optional field. Absent means "not given"; clients written for the interface contract also send
 * null for it, which means the same and is still accepted, while the published schema says only
 * "optional" (hosts reject null branches).
 */
export function optionalOrNull<Schema extends v.GenericSchema>(schema: Schema) {
  return v.optional(v.nullable(schema), null);
}

/** Ids of runs, artifacts (sha256:…), run sets, experiments, trials, investigations and their records. */
export const identifierText = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
export const identifier = (description: string) => described(identifierText, description);

/** Workload, experiment and adapter names. */
export const nameText = v.pipe(v.string(), v.minLength(1), v.maxLength(100));
export const name = (description: string) => described(nameText, description);

/** Non-empty text of at most `maximum` characters. */
export const text = (maximum: number, description: string) =>
  described(v.pipe(v.string(), v.minLength(1), v.maxLength(maximum)), description);

export const runOrArtifact = (description = "Run/artifact id.") => identifier(description);

/** The page-size bounds of one listing: the same object sizes the MCP field and the CLI's --limit. */
export type LimitSpec = { maximum: number; default: number };

export const limitValue = (maximum: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(maximum));
export const limit = (spec: LimitSpec, description = "Page size.") =>
  v.optional(described(limitValue(spec.maximum), description), spec.default);

export const cursorText = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
export const cursor = optionalOrNull(described(cursorText, "next_cursor."));

/** A workload parameter or adapter option value. */
export const scalar = v.union([v.pipe(v.string(), v.maxLength(4096)), v.number(), v.boolean()]);
export type Scalar = v.InferOutput<typeof scalar>;

export const mapKey = v.pipe(v.string(), v.minLength(1), v.maxLength(100));
export const scalarMap = v.record(mapKey, scalar);

/** An optional ISO-8601 timestamp bound of a filter. */
export const timestamp = (description: string) => optionalOrNull(described(v.pipe(v.string(), v.isoTimestamp()), description));
