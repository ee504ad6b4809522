import { MeasurementsRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** query_measurements: measurement rows, keyset-paged (services.measurements). */
export const measurementTools = [
  defineTool({
    name: "query_measurements",
    description: "Measurements (benchmarks, tests, startup, memory) by run, artifact or name.",
    input: MeasurementsRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.measurements.query(input);
      return { result };
    },
  }),
];
