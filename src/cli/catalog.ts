import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues } from "./output.ts";
import { NegativeResult } from "./workspace.ts";

const fields = ["catalog_path", "exists", "valid", "fresh", "catalog_commit_id", "corpus_commit_id", "rebuilt_at", "problem"] as const;

export const catalogCommand = defineCommand({
  meta: {
    name: "catalog",
    description: "The derived DuckDB catalog (.diagnostics/catalog.duckdb): views over every current evidence bundle.",
  },
  subCommands: {
    status: defineCommand({
      meta: { name: "status", description: "Whether the catalog exists, opens, and matches the corpus commit." },
      async run() {
        const result = await cliServices().catalog.status();
        emit(cliOptions(), result, () => renderKeyValues(result, fields));
      },
    }),
    rebuild: defineCommand({
      meta: { name: "rebuild", description: "Rebuild catalog.duckdb from the control plane; changes only derived state." },
      async run() {
        const result = await cliServices().catalog.rebuild();
        emit(cliOptions(), result, () => `${renderKeyValues(result, fields)}\nviews: ${JSON.stringify(result.views)}`);
      },
    }),
    validate: defineCommand({
      meta: { name: "validate", description: "Check the catalog opens and is fresh; exit 1 when it is not. Never repairs." },
      async run() {
        const result = await cliServices().catalog.validate();
        emit(cliOptions(), result, () => renderKeyValues(result, fields));
        if (!result.valid || !result.fresh) throw new NegativeResult();
      },
    }),
  },
});
