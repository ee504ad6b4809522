/** The results of workload_configuration_status, configure_workload and configure_experiment; services/workload-service.ts infers its types from them. */
import * as v from "valibot";

export const WorkloadConfigurationStatusSchema = v.object({
  schema_version: v.literal(1),
  status: v.picklist(["missing", "valid", "invalid"]),
  config_path: v.literal("flameox.toml"),
  configuration_id: v.nullable(v.string()),
  workload_names: v.array(v.string()),
  diagnostics: v.array(v.string()),
  next_tool: v.nullable(v.picklist(["configure_workload", "list_declared_workflows"])),
});

export const WorkloadConfigurationResultSchema = v.object({
  schema_version: v.literal(1),
  action: v.picklist(["created", "updated", "unchanged"]),
  name: v.string(),
  configuration_id: v.string(),
  workload_definition_id: v.string(),
  configuration_source: v.literal("agent"),
  changed_paths: v.array(v.string()),
  next_tool: v.literal("list_declared_workflows"),
});

export const ExperimentConfigurationResultSchema = v.object({
  schema_version: v.literal(1),
  action: v.picklist(["created", "updated", "unchanged"]),
  name: v.string(),
  workload_name: v.string(),
  configuration_id: v.string(),
  experiment_definition_id: v.string(),
  configuration_source: v.literal("agent"),
  changed_paths: v.array(v.string()),
  next_tool: v.literal("plan_experiment"),
});
