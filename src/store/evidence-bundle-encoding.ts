/**
 * The staging text of the evidence tables that come in bulk (trace_events, stacks, frames): rows as
 * delimited text, which DuckDB reads several times faster and in far less memory than NDJSON, and
 * which needs no per-field JSON escaping. Fields are separated by U+001F and rows end with "\n";
 * the quote character U+001E never occurs. NULL is U+0002. A string that is empty or holds any of
 * "\n", "\r", U+001E, U+001F, U+0002 or U+0003 is written as U+0003 followed by its JSON text (which
 * escapes every control character) and decoded in SQL, so every string survives exactly. A list of
 * frame keys is written comma-joined, or as U+0003 and its JSON text when empty or when a key is empty or holds
 * a comma or one of those characters.
 */
import type { EvidenceTable, FrameRow, StackRow, TraceEventRow } from "../domain/evidence.ts";
import { putRow, rowBytesBound } from "./evidence-bundle-row-bytes.ts";
import { evidenceColumns } from "./evidence-schema.ts";

export const fieldSeparator = "\u001f";
const nullField = "\u0002";
const encodedMarker = "\u0003";
const specialCharacters = /[\n\r\u0001-\u0003\u001e\u001f]/;
const specialInList = /[,\n\r\u0001-\u0003\u001e\u001f]/;

export function escapeSql(value: string): string {
  return value.replaceAll("'", "''");
}

function integerField(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return nullField;
  if (Number.isSafeInteger(value)) return String(value);
  // Past 2^53 every double is an integer, and below 1e21 toFixed writes its exact digits (as BigInt
  // would, several times faster): absolute trace timestamps in ns all land here.
  if (Math.abs(value) >= 2 ** 53 && Math.abs(value) < 1e21) return value.toFixed(0);
  return BigInt(Math.round(value)).toString();
}

function doubleField(value: number): string {
  return Number.isFinite(value) ? String(value) : nullField;
}

function textField(value: string | null): string {
  if (value === null) return nullField;
  if (value === "" || specialCharacters.test(value)) return `${encodedMarker}${JSON.stringify(value)}`;
  return value;
}

function listField(values: readonly string[]): string {
  // The commas the join puts between keys are the separators: only a key that holds one (or is empty,
  // or holds a special character) makes the list take its JSON form.
  if (values.length === 0 || values.some((value) => value === "" || specialInList.test(value))) {
    return `${encodedMarker}${JSON.stringify(values)}`;
  }
  return values.join(",");
}

/**
 * Writes one trace_events row at `at` of `into`: the bytes written, or -1 when they might not fit.
 * Plain rows (integers, ASCII text with nothing to escape) are written byte by byte
 * (evidence-bundle-row-bytes.ts); any other row goes through its line string as UTF-8.
 */
export function writeTraceEventLine(row: TraceEventRow, into: Buffer, at: number): number {
  if (at + rowBytesBound(row) <= into.length) {
    const end = putRow(into, at, row);
    if (end >= 0) return end - at;
  }
  const line = traceEventLine(row);
  if (at + line.length * 3 > into.length) return -1;
  return into.write(line, at);
}

/** One trace_events row as a staging line (the reference for the byte writer). */
export function traceEventLine(row: TraceEventRow): string {
  const { name, category, pid, tid, args, correlation, device, stream, phase } = row;
  return `${integerField(row.event_id)}\u001f${integerField(row.parent_id)}\u001f${integerField(row.depth)}\u001f${textField(name)}\u001f${textField(category)}\u001f${integerField(
    row.ts_ns,
  )}\u001f${integerField(row.dur_ns)}\u001f${textField(pid)}\u001f${textField(tid)}\u001f${textField(args)}\u001f${textField(correlation)}\u001f${textField(device)}\u001f${textField(stream)}\u001f${textField(phase)}\n`;
}

export function stackLine(row: StackRow): string {
  return `${textField(row.thread)}\u001f${textField(row.process)}\u001f${listField(row.frame_keys)}\u001f${doubleField(row.weight)}\u001f${textField(
    row.unit,
  )}\u001f${integerField(row.sample_count)}\n`;
}

export function frameLine(row: FrameRow): string {
  return `${textField(row.frame_key)}\u001f${textField(row.function)}\u001f${textField(row.file)}\u001f${integerField(row.line)}\u001f${textField(
    row.module,
  )}\u001f${textField(row.language)}\n`;
}

/** A delimited staging table: its columns in file order, and which are text or frame-key lists. */
type DelimitedLayout = { columns: readonly string[]; text: readonly string[]; lists: readonly string[] };

export const delimitedLayouts = {
  trace_events: {
    columns: [
      "event_id",
      "parent_id",
      "depth",
      "name",
      "category",
      "ts_ns",
      "dur_ns",
      "pid",
      "tid",
      "args",
      "correlation",
      "device",
      "stream",
      "phase",
    ],
    text: ["name", "category", "pid", "tid", "args", "correlation", "device", "stream", "phase"],
    lists: [],
  },
  stacks: {
    columns: ["thread", "process", "frame_keys", "weight", "unit", "sample_count"],
    text: ["thread", "process", "unit"],
    lists: ["frame_keys"],
  },
  frames: {
    columns: ["frame_key", "function", "file", "line", "module", "language"],
    text: ["frame_key", "function", "file", "module", "language"],
    lists: [],
  },
} satisfies Partial<Record<EvidenceTable, DelimitedLayout>>;

export type DelimitedTable = keyof typeof delimitedLayouts;

/** read_csv of a delimited staging file (or pipe); list columns arrive as text. */
export function delimitedSource(table: DelimitedTable, path: string, options: { bufferBytes?: number } = {}): string {
  const layout: DelimitedLayout = delimitedLayouts[table];
  const types = evidenceColumns[table] as Record<string, string>;
  const columns = `{${layout.columns
    .map((column) => `'${column}': '${layout.lists.includes(column) ? "VARCHAR" : types[column]}'`)
    .join(", ")}}`;
  return `read_csv('${escapeSql(path)}', delim = '${fieldSeparator}', quote = '\u001e', escape = '\u001e', header = false, auto_detect = false, new_line = '\\n', nullstr = '${nullField}', allow_quoted_nulls = false${options.bufferBytes ? `, buffer_size = ${options.bufferBytes}` : ""}, columns = ${columns})`;
}

/** The decoded value of one staged column, as SQL. */
export function decodedColumn(table: DelimitedTable, column: string): string {
  const layout: DelimitedLayout = delimitedLayouts[table];
  if (layout.lists.includes(column)) {
    return `CASE WHEN prefix(${column}, '${encodedMarker}') THEN CAST(json(substr(${column}, 2)) AS VARCHAR[]) ELSE string_split(${column}, ',') END`;
  }
  return layout.text.includes(column) ? decodedText(column) : column;
}

/**
 * A staged text column decoded. `prefix` rather than `starts_with`, which tests the same: with it,
 * DuckDB converts a trace's staged rows in about 8% less CPU.
 */
function decodedText(column: string): string {
  return `CASE WHEN prefix(${column}, '${encodedMarker}') THEN json_extract_string(substr(${column}, 2), '$') ELSE ${column} END`;
}

/** SELECT of every staged column decoded, under its own name. */
export function decodedSelect(table: DelimitedTable, source: string): string {
  const layout: DelimitedLayout = delimitedLayouts[table];
  return `SELECT ${layout.columns.map((column) => `${decodedColumn(table, column)} AS ${column}`).join(", ")} FROM ${source}`;
}

/** One line of the labels of flushed stacks: the thread key, then its final thread and process labels. */
export function stackLabelLine(label: { key: string; thread: string | null; process: string | null }): string {
  return `${textField(label.key)}\u001f${textField(label.thread)}\u001f${textField(label.process)}\n`;
}

/**
 * Stacks an extractor flushed in parts: rows of one (thread key, process, stack, unit) summed,
 * their thread key replaced by the labels it was given at the end.
 */
export function mergedStacksSelect(identity: string, stacksPath: string, labelsPath: string): string {
  const labels = `read_csv('${escapeSql(labelsPath)}', delim = '${fieldSeparator}', quote = '\u001e', escape = '\u001e', header = false, auto_detect = false, new_line = '\\n', nullstr = '${nullField}', allow_quoted_nulls = false, columns = {'key': 'VARCHAR', 'thread': 'VARCHAR', 'process': 'VARCHAR'})`;
  // Summed on the staged text (a string key hashes far faster than a list), decoded once per distinct stack.
  return `WITH g AS (
        SELECT thread, process, frame_keys, unit, sum(weight) AS weight, sum(sample_count) AS sample_count
        FROM ${delimitedSource("stacks", stacksPath)} GROUP BY thread, process, frame_keys, unit
      ),
      l AS (SELECT ${decodedText("key")} AS key, ${decodedText("thread")} AS thread, ${decodedText("process")} AS process FROM ${labels}),
      s AS (SELECT ${decodedText("thread")} AS thread, ${decodedText("process")} AS process, ${decodedColumn("stacks", "frame_keys")} AS frame_keys,
               ${decodedText("unit")} AS unit, weight, sample_count FROM g)
      SELECT ${identity}, CASE WHEN l.key IS NULL THEN s.thread ELSE l.thread END AS thread,
             CASE WHEN l.key IS NULL THEN s.process ELSE l.process END AS process,
             s.frame_keys, CAST(s.weight AS DOUBLE) AS weight, s.unit, CAST(s.sample_count AS BIGINT) AS sample_count
      FROM s LEFT JOIN l ON l.key = s.thread`;
}
