/**
 * The formatting and colour helpers every flame graph renderer shares: the static SVG, the HTML
 * report's tables, and the report's browser code (bundled from the same module, so a weight or a
 * colour reads the same everywhere). Pure functions of their arguments; no server or DOM APIs.
 */

/**
 * The units a weight comes in. The domain's StackUnit restated, so browser code need not load a
 * server module; a StackUnit this does not cover fails to compile wherever one is formatted.
 */
export type WeightUnit = "ns" | "samples" | "bytes" | "retained_bytes";

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Human-readable weight in its unit. */
export function formatWeight(value: number, unit: WeightUnit): string {
  if (unit === "samples") return `${formatNumber(value)} ${value === 1 ? "sample" : "samples"}`;
  if (unit === "bytes" || unit === "retained_bytes") {
    const steps = ["B", "KiB", "MiB", "GiB", "TiB"];
    let scaled = value;
    let step = 0;
    while (Math.abs(scaled) >= 1024 && step < steps.length - 1) {
      scaled /= 1024;
      step += 1;
    }
    return `${step === 0 ? String(Math.round(scaled)) : scaled.toFixed(scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2)} ${steps[step]}`;
  }
  const magnitude = Math.abs(value);
  if (magnitude >= 1e9) return `${(value / 1e9).toFixed(magnitude >= 1e11 ? 0 : 2)} s`;
  if (magnitude >= 1e6) return `${(value / 1e6).toFixed(magnitude >= 1e8 ? 0 : 2)} ms`;
  if (magnitude >= 1e3) return `${(value / 1e3).toFixed(magnitude >= 1e5 ? 0 : 2)} µs`;
  return `${Math.round(value)} ns`;
}

/** A share (0..1) as a percentage with two decimals. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(2)}%`;
}

/** A change in share as signed percentage points. */
export function signedPoints(share: number): string {
  const value = share * 100;
  return `${value >= 0 ? "+" : ""}${value.toFixed(2)} pp`;
}

const escapes: Record<string, string> = { "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" };

/** Text and attribute escaping for XML and HTML alike. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (character) => escapes[character] ?? character);
}

/** FNV-1a: a stable 32-bit hash, so a name maps to the same colour in every renderer. */
function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index += 1) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 16777619);
  }
  return value >>> 0;
}

/** Warm palette keyed by function name, so one function keeps its colour across graphs. */
export function warmColour(name: string): string {
  const value = hash(name);
  const red = 205 + (value % 50);
  const green = 80 + ((value >>> 8) % 150);
  const blue = (value >>> 16) % 55;
  return `rgb(${red},${green},${blue})`;
}

/** Red for gained share, blue for lost, pale for no change; intensity relative to the largest change. */
export function differentialColour(deltaShare: number, largestDelta: number): string {
  if (largestDelta <= 0 || Math.abs(deltaShare) < 1e-12) return "rgb(225,225,225)";
  const strength = Math.min(1, Math.abs(deltaShare) / largestDelta);
  const fade = Math.round(225 - 170 * strength);
  return deltaShare > 0 ? `rgb(235,${fade},${fade})` : `rgb(${fade},${fade},235)`;
}
