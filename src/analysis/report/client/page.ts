/** Small DOM helpers the report's flame graphs and timeline share. */

export const labelFont = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";

/** A required element inside a panel; the page is generated together with this code, so absence is a bug. */
export function part<T extends Element>(container: Element, selector: string): T {
  const found = container.querySelector<T>(selector);
  if (found === null) throw new Error(`flameox report: ${selector} is missing`);
  return found;
}

/** The canvas, its 2d context and the tooltip every drawing panel has. */
export function panelParts(container: Element): { canvas: HTMLCanvasElement; context: CanvasRenderingContext2D; tooltip: HTMLElement } {
  const canvas = part<HTMLCanvasElement>(container, "canvas");
  const context = canvas.getContext("2d");
  if (context === null) throw new Error("flameox report: no 2d canvas context");
  return { canvas, context, tooltip: part<HTMLElement>(container, ".tooltip") };
}

/** Sizes the canvas backing store for the device pixel ratio and returns a context in CSS pixels. */
export function fitCanvas(canvas: HTMLCanvasElement, context: CanvasRenderingContext2D, cssWidth: number, cssHeight: number): void {
  const ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(cssWidth * ratio) || canvas.height !== Math.round(cssHeight * ratio)) {
    canvas.width = Math.round(cssWidth * ratio);
    canvas.height = Math.round(cssHeight * ratio);
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${cssHeight}px`;
  }
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, cssWidth, cssHeight);
  context.font = labelFont;
  context.textBaseline = "middle";
}

/** Keeps the tooltip next to the pointer and inside the window. */
export function positionTooltip(tooltip: HTMLElement, event: MouseEvent): void {
  const margin = 14;
  const width = tooltip.offsetWidth;
  const height = tooltip.offsetHeight;
  let left = event.clientX + margin;
  let top = event.clientY + margin;
  if (left + width > window.innerWidth - 4) left = Math.max(4, event.clientX - width - margin);
  if (top + height > window.innerHeight - 4) top = Math.max(4, event.clientY - height - margin);
  tooltip.style.left = `${left}px`;
  tooltip.style.top = `${top}px`;
}

/** Search text as a predicate: `/pattern/` is a case-insensitive regular expression, anything else a substring. */
export function makeMatcher(text: string): ((value: string) => boolean) | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  if (trimmed.length > 2 && trimmed.startsWith("/") && trimmed.endsWith("/")) {
    try {
      const pattern = new RegExp(trimmed.slice(1, -1), "i");
      return (value) => pattern.test(value);
    } catch {
      // Not a valid pattern: fall back to plain text.
    }
  }
  const needle = trimmed.toLowerCase();
  return (value) => value.toLowerCase().includes(needle);
}

/** The label cut to what fits, with an ellipsis. */
export function fitLabel(name: string, fitting: number): string {
  return name.length <= fitting ? name : `${name.slice(0, Math.max(fitting - 1, 1))}…`;
}

/** Coalesces redraw requests into one animation frame. */
export function frameScheduler(draw: () => void): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  };
}
