import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBValue } from "@duckdb/node-api";
import type { EvidenceTable } from "../domain/evidence.ts";
import { loadDuckdb } from "./duckdb.ts";
import { bundleFiles, escapeSql } from "./evidence-bundle.ts";
import { emptyRelation, evidenceTables } from "./evidence-schema.ts";
import { processStagingPath } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

/** Views kept open per process; each is one DuckDB connection with five temporary views. */
const maximumViews = 8;
/** Prepared statements kept per view (the recipes' texts; a text seen once costs one slot). */
const maximumStatements = 64;
/** Materialized relations kept per view (hotspot rankings, unit summaries). */
const maximumRelations = 16;
/** Answers of fixed questions kept per view (each a few rows: the units a view holds, say). */
const maximumFixedAnswers = 32;
/** A fixed question's answer larger than this is not kept. */
const maximumFixedRows = 1000;

/**
 * The evidence engine of one open workspace: one DuckDB instance for the life of the process (the
 * MCP server, or one CLI command), and one view per distinct set of bundles, kept warm between calls.
 *
 * A view is keyed by its exact bundle ids. A published bundle is never rewritten (a re-extraction
 * publishes a new bundle and supersedes the old one), so a view over a given set of bundles can never
 * go stale: a publication moves the corpus commit, which changes the bundle set that later pins
 * select, which selects a new view; views of sets no longer pinned age out of the cache.
 */
export class EvidenceEngine {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly views = new Map<string, Promise<EvidenceView>>();
  private closed = false;
  private opened = 0;

  constructor(private readonly workspace: Workspace) {}

  /** How many views this engine has opened: a warm call opens none (benches and tests read it). */
  get viewsOpened(): number {
    return this.opened;
  }

  /**
   * Starts the engine's DuckDB instance now, so the first query does not wait for it: a capture calls
   * this while its collector runs, and the receipt's first answer then only opens its view. A failure
   * here is forgotten; the first query meets it again.
   */
  warm(): void {
    if (this.closed) return;
    this.database().catch(() => undefined);
  }

  /** Runs `body` over the view of exactly these bundles; the view stays open for later calls. */
  async use<T>(bundleIds: string[], body: (view: EvidenceView) => Promise<T>): Promise<T> {
    const view = await this.acquire(bundleIds);
    try {
      return await body(view);
    } finally {
      view.release();
    }
  }

  private async acquire(bundleIds: string[]): Promise<EvidenceView> {
    for (;;) {
      if (this.closed) throw new Error("The workspace's evidence engine is closed.");
      const key = bundleIds.join("\n");
      let entry = this.views.get(key);
      if (entry) {
        // Most recently used last: eviction takes the first.
        this.views.delete(key);
        this.views.set(key, entry);
      } else {
        entry = this.open(bundleIds);
        this.views.set(key, entry);
        entry.catch(() => {
          if (this.views.get(key) === entry) this.views.delete(key);
        });
        this.evict();
      }
      const view = await entry;
      // Evicted and closed while this call waited: open it again.
      if (view.acquire()) return view;
    }
  }

  private evict(): void {
    while (this.views.size > maximumViews) {
      const [key, oldest] = this.views.entries().next().value as [string, Promise<EvidenceView>];
      this.views.delete(key);
      oldest.then(
        (view) => view.retire(),
        () => {},
      );
    }
  }

  private async open(bundleIds: string[]): Promise<EvidenceView> {
    this.opened += 1;
    const instance = await this.database();
    const connection = await instance.connect();
    try {
      const files = Object.fromEntries(evidenceTables.map((table) => [table, [] as string[]])) as Record<EvidenceTable, string[]>;
      for (const bundleId of bundleIds) {
        for (const [table, path] of Object.entries(bundleFiles(this.workspace, bundleId))) files[table as EvidenceTable].push(path);
      }
      for (const table of evidenceTables) {
        const list = files[table];
        const relation =
          list.length === 0
            ? emptyRelation(table)
            : `SELECT * FROM read_parquet([${list.map((path) => `'${escapeSql(path)}'`).join(", ")}], union_by_name = true)`;
        // Temporary views belong to this connection alone, so every view names its tables plainly.
        await connection.run(`CREATE TEMPORARY VIEW ${table} AS ${relation}`);
      }
      await connection.run(`CREATE TEMPORARY VIEW stack_rows AS ${stackRowsRelation(files.stacks)}`);
      return new EvidenceView(connection, files);
    } catch (error) {
      connection.closeSync();
      throw error;
    }
  }

  private database(): Promise<DuckDBInstance> {
    this.instance ??= (async () => {
      const duckdb = await loadDuckdb();
      // Bounded memory that spills inside the workspace: a huge query degrades instead of exhausting the machine.
      const instance = await duckdb.DuckDBInstance.create(":memory:", {
        threads: "2",
        memory_limit: process.env.FLAMEOX_DUCKDB_MEMORY_LIMIT ?? "1GB",
        temp_directory: processStagingPath(this.workspace, "duckdb-spill"),
      });
      // Parquet footers are cached, so a warm query does not parse them again (the setting exists
      // only once the parquet extension is loaded).
      const setup = await instance.connect();
      try {
        await setup.run("LOAD parquet");
        await setup.run("SET GLOBAL parquet_metadata_cache = true");
      } finally {
        setup.closeSync();
      }
      return instance;
    })();
    this.instance.catch(() => {
      this.instance = undefined;
    });
    return this.instance;
  }

  close(): void {
    this.closed = true;
    const views = [...this.views.values()];
    this.views.clear();
    for (const entry of views)
      entry.then(
        (view) => view.retire(),
        () => {},
      );
    const instance = this.instance;
    this.instance = undefined;
    // Connections close when their last call ends; the instance then goes with the last reference.
    instance?.then(
      (database) =>
        Promise.all(
          views.map((entry) =>
            entry.then(
              (view) => view.closedSignal,
              () => {},
            ),
          ),
        ).then(() => database.closeSync()),
      () => {},
    );
  }
}

/**
 * A read-only view of a fixed set of published bundles: each evidence table is a view over exactly
 * those Parquet files (and `stack_rows` numbers the stacks rows), so a query sees one pinned snapshot
 * whatever is published meanwhile. Calls on
 * one view run one at a time (one connection); statement texts are prepared once, and deterministic
 * relations are materialized once, since the files under them never change.
 */
export class EvidenceView {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly statements = new Map<string, DuckDBPreparedStatement>();
  private readonly relations = new Map<string, string>();
  private readonly fixedAnswers = new Map<string, Promise<readonly Readonly<Record<string, unknown>>[]>>();
  private relationCount = 0;
  /** Statements executed on this view so far (fixed answers kept are not asked again). */
  queriesRun = 0;
  private leases = 0;
  private retired = false;
  private closed = false;
  private signalClosed: () => void = () => {};
  /** Settles when the connection has closed. */
  readonly closedSignal = new Promise<void>((resolve) => {
    this.signalClosed = resolve;
  });

  constructor(
    private readonly connection: DuckDBConnection,
    readonly tableRowFiles: Record<EvidenceTable, string[]>,
  ) {}

  has(table: EvidenceTable): boolean {
    return this.tableRowFiles[table].length > 0;
  }

  async rows<Row = Record<string, unknown>>(sql: string, values?: DuckDBValue[]): Promise<Row[]> {
    return this.serially(() => this.execute<Row>(sql, values));
  }

  /**
   * Runs `select(name)`, where `name` is a temporary table holding `relation`, computed on the first
   * call for this text and kept: the bundles under a view never change, so neither does the relation.
   */
  async rowsFrom<Row = Record<string, unknown>>(
    relation: string,
    select: (name: string) => string,
    values?: DuckDBValue[],
  ): Promise<Row[]> {
    return this.serially(async () => this.execute<Row>(select(await this.materialize(relation)), values));
  }

  /**
   * Answers a parameterless question over a kept relation once per view: the bundles under a view never
   * change, so neither does the answer. Kept frozen (callers share it), when it is small.
   */
  async fixedRowsFrom<Row = Record<string, unknown>>(
    relation: string,
    select: (name: string) => string,
  ): Promise<readonly Readonly<Row>[]> {
    const key = `${relation}\u0000${select("\u0000")}`;
    const kept = this.fixedAnswers.get(key);
    if (kept) return (await kept) as readonly Readonly<Row>[];
    const answer = this.rowsFrom<Record<string, unknown>>(relation, select).then((rows) =>
      Object.freeze(rows.map((row) => Object.freeze(row))),
    );
    if (this.fixedAnswers.size >= maximumFixedAnswers) this.fixedAnswers.delete(this.fixedAnswers.keys().next().value as string);
    this.fixedAnswers.set(key, answer);
    try {
      const rows = await answer;
      if (rows.length > maximumFixedRows) this.fixedAnswers.delete(key);
      return rows as readonly Readonly<Row>[];
    } catch (error) {
      this.fixedAnswers.delete(key);
      throw error;
    }
  }

  /** Took a lease; false when the view was already closed. */
  acquire(): boolean {
    if (this.closed) return false;
    this.leases += 1;
    return true;
  }

  release(): void {
    this.leases -= 1;
    if (this.retired && this.leases === 0) this.close();
  }

  /** Leaves the cache: closes now when unused, else when the last lease ends. */
  retire(): void {
    this.retired = true;
    if (this.leases === 0) this.close();
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  private async execute<Row>(sql: string, values?: DuckDBValue[]): Promise<Row[]> {
    let statement = this.statements.get(sql);
    if (statement) {
      this.statements.delete(sql);
    } else {
      statement = await this.connection.prepare(sql);
      if (this.statements.size >= maximumStatements) this.dropStatements((_, index) => index === 0);
    }
    this.statements.set(sql, statement);
    if (values && values.length > 0) statement.bind(values);
    this.queriesRun += 1;
    const reader = await statement.runAndReadAll();
    return reader.getRowObjectsJS() as Row[];
  }

  private async materialize(relation: string): Promise<string> {
    const known = this.relations.get(relation);
    if (known) {
      this.relations.delete(relation);
      this.relations.set(relation, known);
      return known;
    }
    if (this.relations.size >= maximumRelations) {
      const [oldestText, oldest] = this.relations.entries().next().value as [string, string];
      this.relations.delete(oldestText);
      // Statements over a dropped table would need rebinding; they go with it.
      this.dropStatements((sql) => sql.includes(oldest));
      await this.connection.run(`DROP TABLE IF EXISTS temp.${oldest}`);
    }
    this.relationCount += 1;
    const name = `flameox_relation_${this.relationCount}`;
    await this.connection.run(`CREATE TEMPORARY TABLE ${name} AS ${relation}`);
    this.relations.set(relation, name);
    return name;
  }

  private dropStatements(drop: (sql: string, index: number) => boolean): void {
    let index = 0;
    for (const [sql, statement] of [...this.statements]) {
      if (drop(sql, index)) {
        statement.destroySync();
        this.statements.delete(sql);
      }
      index += 1;
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    // Queued calls finish first; a call never sees its connection close under it.
    void this.queue.then(() => {
      this.dropStatements(() => true);
      this.connection.closeSync();
      this.signalClosed();
    });
  }
}

/**
 * `stacks` with `stack_row`, a number unique to each row, taken from the Parquet reader's file index and
 * row number: a query that must tell two equal rows apart numbers them without `row_number() OVER ()`,
 * which would run the whole scan on one thread (and cost twice the CPU on 1M stacks here).
 */
function stackRowsRelation(files: string[]): string {
  if (files.length === 0) return `SELECT CAST(NULL AS BIGINT) AS stack_row, * FROM (${emptyRelation("stacks")})`;
  return `SELECT (file_index << 40) | file_row_number AS stack_row, * FROM read_parquet([${files.map((path) => `'${escapeSql(path)}'`).join(", ")}], union_by_name = true)`;
}

/** The evidence engine of an open workspace, created on first use and closed with the workspace. */
export function evidenceEngine(workspace: Workspace): EvidenceEngine {
  return workspace.attachment("evidence-engine", () => new EvidenceEngine(workspace));
}
