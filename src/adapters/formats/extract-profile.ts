/** One entry point over the format extractors: detect (unless told) and extract. */
import type { EvidenceSink, StackUnit } from "../../domain/evidence.ts";
import { FlameoxError } from "../../domain/errors.ts";
import { extractChromeTrace } from "./chrome-trace.ts";
import { extractCollapsed } from "./collapsed.ts";
import type { ExtractOptions, ExtractResult } from "./common.ts";
import { detectProfileFormat, type ProfileFormat } from "./detect.ts";
import { extractPprof } from "./pprof.ts";
import { extractPySpyRaw } from "./py-spy-raw.ts";
import { extractSpeedscope } from "./speedscope.ts";
import { extractV8CpuProfile } from "./v8-cpuprofile.ts";

export type ExtractProfileOptions = ExtractOptions & {
  format?: Exclude<ProfileFormat, "unknown">;
  /** collapsed only */
  unit?: StackUnit;
  /** pprof only */
  sampleType?: string;
};

export async function extractProfile(
  path: string,
  sink: EvidenceSink,
  options: ExtractProfileOptions,
): Promise<ExtractResult & { format: ProfileFormat }> {
  let format: ProfileFormat | undefined = options.format;
  let detectedProducer: string | null = null;
  let detectedVersion: string | null = null;
  if (!format) {
    const detected = await detectProfileFormat(path);
    format = detected.format;
    detectedProducer = detected.producer;
    detectedVersion = detected.producer_version;
  }
  let result: ExtractResult;
  switch (format) {
    case "speedscope":
      result = await extractSpeedscope(path, sink, options);
      break;
    case "chrome_trace":
      result = await extractChromeTrace(path, sink, options);
      break;
    case "collapsed":
      result = await extractCollapsed(path, sink, options);
      break;
    case "py_spy_raw":
      result = await extractPySpyRaw(path, sink, options);
      break;
    case "v8_cpuprofile":
      result = await extractV8CpuProfile(path, sink, options);
      break;
    case "pprof":
      result = await extractPprof(path, sink, options);
      break;
    default:
      throw new FlameoxError({
        code: "ARTIFACT_PARSE_FAILED",
        message: `Cannot tell the profile format of ${path}.`,
        details: { path },
        remediation: ["Name the format explicitly (speedscope, chrome_trace, collapsed, py_spy_raw, v8_cpuprofile, pprof)."],
      });
  }
  if (!result.producer && detectedProducer) result.producer = detectedProducer;
  if (!result.producer_version && detectedVersion) result.producer_version = detectedVersion;
  return { ...result, format };
}
