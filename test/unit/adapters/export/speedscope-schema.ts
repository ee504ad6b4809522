/**
 * The key rules of speedscope's file-format schema (file-format-schema.json), checked by hand so
 * the test needs no network: top-level shape, the frame table, and sampled/evented profiles whose
 * indices point into the frame table.
 */
const units = new Set(["none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"]);
const schemaUrl = "https://www.speedscope.app/file-format-schema.json";

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Returns the violations found; empty when the document conforms. */
export function speedscopeSchemaViolations(document: unknown): string[] {
  const problems: string[] = [];
  if (!isRecord(document)) return ["document is not an object"];
  if (document.$schema !== schemaUrl) problems.push(`$schema must be "${schemaUrl}"`);
  for (const key of Object.keys(document)) {
    if (!["$schema", "shared", "profiles", "name", "activeProfileIndex", "exporter"].includes(key))
      problems.push(`unexpected top-level key ${key}`);
  }
  if (document.name !== undefined && typeof document.name !== "string") problems.push("name must be a string");
  if (document.exporter !== undefined && typeof document.exporter !== "string") problems.push("exporter must be a string");
  if (document.activeProfileIndex !== undefined && document.activeProfileIndex !== null && !Number.isInteger(document.activeProfileIndex)) {
    problems.push("activeProfileIndex must be an integer");
  }
  const shared = document.shared;
  let frameCount = 0;
  if (!isRecord(shared) || !Array.isArray(shared.frames)) problems.push("shared.frames must be an array");
  else {
    frameCount = shared.frames.length;
    shared.frames.forEach((frame: unknown, index: number) => {
      if (!isRecord(frame)) return problems.push(`shared.frames[${index}] is not an object`);
      if (typeof frame.name !== "string") problems.push(`shared.frames[${index}].name must be a string`);
      if (frame.file !== undefined && typeof frame.file !== "string") problems.push(`shared.frames[${index}].file must be a string`);
      if (frame.line !== undefined && !isNumber(frame.line)) problems.push(`shared.frames[${index}].line must be a number`);
      if (frame.col !== undefined && !isNumber(frame.col)) problems.push(`shared.frames[${index}].col must be a number`);
      return undefined;
    });
  }
  if (!Array.isArray(document.profiles)) return [...problems, "profiles must be an array"];
  if (isNumber(document.activeProfileIndex) && document.activeProfileIndex >= document.profiles.length)
    problems.push("activeProfileIndex is past the last profile");
  document.profiles.forEach((profile: unknown, index: number) => {
    const at = `profiles[${index}]`;
    if (!isRecord(profile)) return problems.push(`${at} is not an object`);
    if (typeof profile.name !== "string") problems.push(`${at}.name must be a string`);
    if (typeof profile.unit !== "string" || !units.has(profile.unit)) problems.push(`${at}.unit must be one of ${[...units].join(", ")}`);
    if (!isNumber(profile.startValue) || !isNumber(profile.endValue)) problems.push(`${at}.startValue and endValue must be numbers`);
    if (profile.type === "sampled") {
      if (!Array.isArray(profile.samples) || !Array.isArray(profile.weights))
        return problems.push(`${at}: sampled profiles need samples and weights arrays`);
      if (profile.samples.length !== profile.weights.length) problems.push(`${at}: samples and weights differ in length`);
      profile.samples.forEach((stack: unknown, sampleIndex: number) => {
        if (!Array.isArray(stack) || !stack.every((frame) => Number.isInteger(frame) && frame >= 0 && frame < frameCount)) {
          problems.push(`${at}.samples[${sampleIndex}] must list frame indices below ${frameCount}`);
        }
      });
      if (!profile.weights.every(isNumber)) problems.push(`${at}.weights must be numbers`);
    } else if (profile.type === "evented") {
      if (!Array.isArray(profile.events)) return problems.push(`${at}: evented profiles need events`);
    } else {
      problems.push(`${at}.type must be "sampled" or "evented"`);
    }
    return undefined;
  });
  return problems;
}
