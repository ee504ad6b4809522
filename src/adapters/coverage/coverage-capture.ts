import * as v from "valibot";
import { collectorPlan, isPythonExecutable, workloadPython } from "../adapter-support.ts";
import { pythonToolAdapter } from "../python-tool-adapter.ts";
import { coverageCaptureCommand, coverageRequirement, extractCoverage, probeCoverage } from "./coverage-adapter.ts";
import { coverageStatementsUnavailable, extractCoverageStatements } from "./coverage-statements.ts";

export const CoverageOptionsSchema = v.strictObject({
  context: v.optional(v.nullable(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/))), null),
  dynamic_context: v.optional(v.nullable(v.picklist(["test_function"])), null),
});

/**
 * coverage.py in branch mode; the .coverage SQLite becomes line and arc observations, and coverage's
 * JSON report over it the statements (executed, missed, excluded) and the missed branches.
 */
export const coverageAdapter = pythonToolAdapter({
  name: "coverage",
  requirement: coverageRequirement,
  optionsSchema: CoverageOptionsSchema,
  extractor: { name: "coverage", version: "2" },
  probe: probeCoverage,
  plan(context, options, workload) {
    const command = coverageCaptureCommand({
      workload,
      artifactDirectory: context.artifactDirectory,
      options: { context: options.context, dynamicContext: options.dynamic_context },
      rcDirectory: `${context.collectorDirectory}/coverage`,
    });
    return collectorPlan(
      command,
      () => ({
        kind: "execution_coverage",
        role: "coverage_data",
        format: "coverage_sqlite",
        producer: "coverage",
        required: true,
        extract: true,
      }),
      "coverage.py line and branch tracing: typically 1.5–3x slower Python code",
    );
  },
  async extract(_output, path, sink, context) {
    const summary = extractCoverage(path, sink, { projectRoot: context.projectRoot, projectFilesOnly: true });
    const limitations =
      summary.skippedFiles.length > 0 ? [`${summary.skippedFiles.length} measured file(s) outside the project were skipped.`] : [];
    const python = isPythonExecutable(context.workloadExecutable)
      ? context.workloadExecutable
      : workloadPython([context.workloadExecutable], process.env.PATH ?? "");
    const statements = python
      ? await extractCoverageStatements(
          {
            dataFile: path,
            python,
            rcDirectory: `${context.collectorDirectory}/coverage`,
            workDirectory: context.scratchDirectory,
            projectRoot: context.projectRoot,
            measuredFiles: summary.files.map((file) => file.file),
            run: context.run,
          },
          sink,
        )
      : null;
    const limitation = statements
      ? statements.limitation
      : { code: coverageStatementsUnavailable, message: "No Python interpreter to report statements with." };
    if (!limitation) return { limitations };
    return { limitations: [...limitations, limitation.message], limitationDetails: [limitation] };
  },
});
