/**
 * The comparison panel: decision, estimate and its confidence interval drawn as a bar against the
 * no-change line (1.0) and the ±practical-threshold band. Static SVG; no script needed.
 */
import { escapeXml } from "../flamegraph/format.ts";

export type ComparisonSummary = {
  /** e.g. "regression", "improvement", "no_change", "inconclusive". */
  decision: string;
  /** Candidate ÷ baseline ratio of the compared metric. */
  estimate: number;
  ci: { lower: number; upper: number; level: number; method: string };
  /** Fraction around 1.0 that counts as no practical change (0.05 → 0.95…1.05). */
  practical_threshold: number;
  validity: unknown;
  reasons: string[];
  /** What was compared, e.g. "wall time". */
  metric?: string;
};

function niceStep(span: number): number {
  const raw = span / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  return (fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10) * power;
}

function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(value >= 10 ? 1 : 3)}×` : "n/a";
}

/** The interval chart alone, as inline SVG. */
export function comparisonIntervalSvg(summary: ComparisonSummary, width = 720): string {
  const height = 92;
  const margin = { left: 16, right: 16 };
  const threshold = Math.abs(summary.practical_threshold);
  const values = [summary.ci.lower, summary.ci.upper, summary.estimate, 1 - threshold, 1 + threshold].filter(Number.isFinite);
  let low = Math.min(...values);
  let high = Math.max(...values);
  const padding = Math.max((high - low) * 0.12, 0.01);
  low -= padding;
  high += padding;
  const plot = width - margin.left - margin.right;
  const x = (value: number) => margin.left + ((value - low) / (high - low)) * plot;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" data-testid="comparison-ci" aria-label="${escapeXml(`estimate ${formatRatio(summary.estimate)}, ${Math.round(summary.ci.level * 100)}% interval ${formatRatio(summary.ci.lower)} to ${formatRatio(summary.ci.upper)}`)}">`,
    `<rect x="${x(1 - threshold).toFixed(1)}" y="14" width="${(x(1 + threshold) - x(1 - threshold)).toFixed(1)}" height="46" fill="#e4f2e4"><title>±${(threshold * 100).toFixed(1)}% practical threshold</title></rect>`,
    `<line x1="${x(1).toFixed(1)}" x2="${x(1).toFixed(1)}" y1="8" y2="66" stroke="#333" stroke-dasharray="3,3"/>`,
    `<text x="${x(1).toFixed(1)}" y="8" font-size="10" text-anchor="middle" fill="#333">no change</text>`,
  ];
  const step = niceStep(high - low);
  for (let tick = Math.ceil(low / step) * step; tick <= high + 1e-12; tick += step) {
    parts.push(
      `<line x1="${x(tick).toFixed(1)}" x2="${x(tick).toFixed(1)}" y1="66" y2="71" stroke="#777"/>`,
      `<text x="${x(tick).toFixed(1)}" y="84" font-size="10" text-anchor="middle" fill="#555">${escapeXml(formatRatio(tick))}</text>`,
    );
  }
  if (Number.isFinite(summary.ci.lower) && Number.isFinite(summary.ci.upper)) {
    const colour = summary.ci.lower > 1 + threshold ? "#c62828" : summary.ci.upper < 1 - threshold ? "#1565c0" : "#555";
    parts.push(
      `<line x1="${x(summary.ci.lower).toFixed(1)}" x2="${x(summary.ci.upper).toFixed(1)}" y1="37" y2="37" stroke="${colour}" stroke-width="6" stroke-linecap="round"><title>${escapeXml(`${Math.round(summary.ci.level * 100)}% CI ${formatRatio(summary.ci.lower)} – ${formatRatio(summary.ci.upper)} (${summary.ci.method})`)}</title></line>`,
    );
  }
  if (Number.isFinite(summary.estimate)) {
    parts.push(
      `<circle cx="${x(summary.estimate).toFixed(1)}" cy="37" r="6" fill="#fff" stroke="#111" stroke-width="2"><title>estimate ${escapeXml(formatRatio(summary.estimate))}</title></circle>`,
    );
  }
  parts.push("</svg>");
  return parts.join("");
}

function escapeHtml(text: string): string {
  return escapeXml(text);
}

function describeValidity(validity: unknown): string {
  if (validity === null || validity === undefined) return "not stated";
  if (typeof validity === "string" || typeof validity === "number" || typeof validity === "boolean") return escapeHtml(String(validity));
  if (typeof validity === "object") {
    const entries = Object.entries(validity as Record<string, unknown>).slice(0, 12);
    return `<ul class="plain">${entries
      .map(
        ([key, value]) =>
          `<li><span class="muted">${escapeHtml(key)}</span> ${escapeHtml(typeof value === "string" ? value : (JSON.stringify(value) ?? "")).slice(0, 300)}</li>`,
      )
      .join("")}</ul>`;
  }
  return escapeHtml(String(validity));
}

/** The whole panel as an HTML fragment. */
export function renderComparisonPanel(summary: ComparisonSummary): string {
  const decisionClass = /regress|slower|worse/i.test(summary.decision)
    ? "bad"
    : /improv|faster|better/i.test(summary.decision)
      ? "good"
      : "neutral";
  const reasons = summary.reasons.slice(0, 20);
  return [
    `<section class="panel" id="comparison" data-testid="comparison-panel">`,
    `<h2>Comparison${summary.metric ? ` · ${escapeHtml(summary.metric)}` : ""}</h2>`,
    `<p class="decision ${decisionClass}" data-testid="comparison-decision">${escapeHtml(summary.decision)}</p>`,
    `<p>Estimate <strong>${escapeHtml(formatRatio(summary.estimate))}</strong> (candidate ÷ baseline), ${Math.round(summary.ci.level * 100)}% CI ${escapeHtml(formatRatio(summary.ci.lower))} – ${escapeHtml(formatRatio(summary.ci.upper))} by ${escapeHtml(summary.ci.method)}; practical threshold ±${(Math.abs(summary.practical_threshold) * 100).toFixed(1)}%.</p>`,
    `<div class="chart">${comparisonIntervalSvg(summary)}</div>`,
    `<h3>Validity</h3>${describeValidity(summary.validity)}`,
    reasons.length > 0 ? `<h3>Reasons</h3><ul>${reasons.map((reason) => `<li>${escapeHtml(reason)}</li>`).join("")}</ul>` : "",
    `</section>`,
  ].join("\n");
}
