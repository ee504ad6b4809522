/** The report's inline stylesheet: system fonts only, so the page never reaches for the network. */
export const reportStyles = `
:root { color-scheme: light; --ink: #1d1d1f; --muted: #6b6b70; --line: #dedee3; --panel: #ffffff; --page: #f3f3f6; --accent: #d633ff; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { padding: 18px 24px 8px; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; color: var(--muted); }
nav { padding: 0 24px 8px; display: flex; gap: 14px; flex-wrap: wrap; }
nav a { color: #4a3aa8; text-decoration: none; }
main { padding: 0 24px 32px; display: grid; gap: 16px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.panel h2 { margin: 0 0 8px; font-size: 16px; }
.panel h3 { margin: 12px 0 4px; font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.toolbar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
.toolbar input[type=search] { flex: 0 1 280px; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
.toolbar button { padding: 5px 10px; border: 1px solid var(--line); border-radius: 6px; background: #f7f7fa; font: inherit; cursor: pointer; }
.toolbar button:hover { background: #ececf2; }
.status { color: var(--muted); font-size: 12px; }
.canvas-wrap { width: 100%; overflow-x: hidden; overflow-y: auto; max-height: 70vh; padding: 0; border-top: 1px solid var(--line); }
.canvas-wrap canvas { display: block; }
.tooltip { position: fixed; z-index: 10; max-width: 520px; padding: 6px 9px; background: rgba(20,20,24,.94); color: #fff; border-radius: 6px; font-size: 12px; pointer-events: none; word-break: break-all; }
.tooltip .muted { color: #c9c9d1; }
.legend { font-size: 12px; color: var(--muted); margin: 6px 0 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; vertical-align: -1px; margin: 0 3px 0 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.muted { color: var(--muted); }
.decision { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; margin: 0 0 8px; }
.decision.bad { background: #fde3e3; color: #a11; }
.decision.good { background: #e0edff; color: #124; }
.decision.neutral { background: #ececf0; color: #333; }
.chart svg { max-width: 100%; height: auto; }
ul.plain { list-style: none; padding: 0; margin: 0; }
.empty { color: var(--muted); font-style: italic; }
`;
