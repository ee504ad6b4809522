import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from "@duckdb/node-api";
import type { EvidenceTable } from "../domain/evidence.ts";
import { loadDuckdb } from "./duckdb.ts";
import { bundleFiles, escapeSql } from "./evidence-bundle.ts";
import { emptyRelation, evidenceTables } from "./evidence-schema.ts";
import { processStagingPath } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

/**
 * A read-only view of a fixed set of published bundles: each evidence table is a view over
 * exactly those Parquet files, so a query sees one pinned snapshot whatever is published meanwhile.
 */
export class EvidenceView {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly tableRowFiles: Record<EvidenceTable, string[]>,
  ) {}

  static async open(workspace: Workspace, bundleIds: string[]): Promise<EvidenceView> {
    const duckdb = await loadDuckdb();
    // Bounded memory that spills inside the workspace: a huge query degrades instead of exhausting the machine.
    const instance = await duckdb.DuckDBInstance.create(":memory:", {
      threads: "2",
      memory_limit: process.env.FLAMEOX_DUCKDB_MEMORY_LIMIT ?? "4GB",
      temp_directory: processStagingPath(workspace, "duckdb-spill"),
    });
    const connection = await instance.connect();
    const files = Object.fromEntries(evidenceTables.map((table) => [table, [] as string[]])) as Record<EvidenceTable, string[]>;
    for (const bundleId of bundleIds) {
      for (const [table, path] of Object.entries(bundleFiles(workspace, bundleId))) files[table as EvidenceTable].push(path);
    }
    for (const table of evidenceTables) {
      const list = files[table];
      const relation =
        list.length === 0
          ? emptyRelation(table)
          : `SELECT * FROM read_parquet([${list.map((path) => `'${escapeSql(path)}'`).join(", ")}], union_by_name = true)`;
      await connection.run(`CREATE VIEW ${table} AS ${relation}`);
    }
    return new EvidenceView(instance, connection, files);
  }

  has(table: EvidenceTable): boolean {
    return this.tableRowFiles[table].length > 0;
  }

  async rows<Row = Record<string, unknown>>(sql: string, values?: DuckDBValue[]): Promise<Row[]> {
    const reader = await this.connection.runAndReadAll(sql, values);
    return reader.getRowObjectsJS() as Row[];
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
