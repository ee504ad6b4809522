import { isAbsolute, relative, resolve } from "node:path";
import { isPythonExecutable, workloadPython } from "../adapters/adapter-support.ts";
import { probeRunner } from "../adapters/command-runner.ts";
import { inspectDistributions } from "../adapters/providers/distribution-inspection.ts";
import { resolveWorkloadInvocation } from "../config/workload-template.ts";
import { capabilityUnavailable, processFailed, toFlameoxError } from "../domain/errors.ts";
import type { WorkloadDependencySetupResult } from "../domain/results/providers.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { WorkloadService } from "./workload-service.ts";
import { displayPath } from "./host-paths.ts";

/**
 * prepare_workload_dependencies, inspection only: asks the workload's exact interpreter which of its
 * declared python_distributions are installed and which are missing or at the wrong version, and says
 * what to do next. It never installs anything or changes that environment (nor flameox's own).
 */
export class WorkloadDependencyService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly workloads: WorkloadService,
  ) {}

  async inspect(workloadName: string): Promise<WorkloadDependencySetupResult> {
    const { workload, definitionId } = await this.workloads.requireWorkload(workloadName);
    const invocation = resolveWorkloadInvocation(workload, {});
    const pathValue = invocation.environment.PATH ?? process.env.PATH ?? "";
    const cwd = resolve(this.workspace.projectRoot, invocation.cwd);
    const argv = [...invocation.argv];
    // A relative interpreter (.venv/bin/python) is relative to the workload's cwd, as the child sees it.
    if (argv[0]?.includes("/") && !isAbsolute(argv[0])) argv[0] = resolve(cwd, argv[0]);
    const python = workloadPython(argv, pathValue);
    if (!python) {
      throw capabilityUnavailable(`No Python interpreter was found for workload '${workloadName}'.`, {
        details: { workload_name: workloadName, next_tool: "get_declared_workflow" },
        remediation: ["Declare the workload as `python …` (or a Python entry point), or put python3 on its PATH."],
        next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: workloadName } },
      });
    }
    const declared = workload.requirements?.python_distributions ?? [];
    const optional = new Set(workload.requirements?.optional ?? []);
    let inspection: Awaited<ReturnType<typeof inspectDistributions>>;
    try {
      inspection = await inspectDistributions(python, declared, probeRunner());
    } catch (error) {
      throw processFailed(`The workload's interpreter could not be inspected: ${toFlameoxError(error).message}`, {
        details: { workload_name: workloadName, next_tool: "get_declared_workflow" },
        remediation: ["Check that the workload's interpreter starts, then call prepare_workload_dependencies again."],
        next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: workloadName } },
      });
    }
    const interpreter = this.interpreterLabel(python, invocation.argv[0] ?? "");
    const requirements = inspection.requirements
      .filter((entry) => entry.applies)
      .map((entry) => ({
        requirement: entry.requirement,
        distribution: entry.distribution,
        status: entry.status,
        installed_version: entry.installed_version,
        optional: optional.has(entry.requirement),
      }));
    const missing = requirements.filter((entry) => entry.status !== "installed" && !entry.optional).map((entry) => entry.requirement);
    const ready = missing.length === 0;
    const quoted = missing.map((requirement) => `'${requirement}'`).join(" ");
    return {
      schema_version: 1,
      workload_name: workloadName,
      workload_definition_id: definitionId,
      interpreter,
      python_version: inspection.python_version,
      requirements,
      installed: requirements.filter((entry) => entry.status === "installed").map((entry) => entry.requirement),
      missing,
      ready,
      environment_changed: false,
      remediation: [
        ...(ready
          ? []
          : [
              `Install into the workload's own interpreter (flameox never does): ${interpreter} -m pip install ${quoted}; then call prepare_workload_dependencies again.`,
            ]),
        ...(inspection.evaluator === "numeric_fallback"
          ? ["The interpreter has no `packaging`: versions were compared by their numeric release only and markers were not evaluated."]
          : []),
      ],
      next_tool: ready ? "plan_capture" : null,
      next_arguments: ready ? { workload_name: workloadName } : null,
    };
  }

  /**
   * The interpreter as the project names it: the workload's own argv[0] when that is the interpreter
   * (the declaration already shows it; by its file name when it lies outside the project), else its
   * project-relative path, else its file name.
   */
  private interpreterLabel(python: string, declared: string): string {
    if (declared && isPythonExecutable(declared)) return displayPath(declared, this.workspace.projectRoot);
    const inside = relative(this.workspace.projectRoot, python);
    if (!inside.startsWith("..") && !isAbsolute(inside)) return inside;
    return python.split("/").pop() ?? python;
  }
}
