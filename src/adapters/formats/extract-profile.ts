/** One entry point over the format extractors: detect (unless told) and extract. */
import type { EvidenceSink, StackUnit } from "../../domain/evidence.ts";
import { artifactParseFailed } from "../../domain/errors.ts";
import { extractChromeTrace } from "./chrome-trace.ts";
import { extractCollapsed } from "./collapsed.ts";
import type { ExtractOptions, ExtractResult } from "./common.ts";
import { detectProfileFormat } from "./detect.ts";
import { extractDtraceStacks } from "./dtrace-stacks.ts";
import { type DetectedFormat, type ProfileFormat, isProfileFormat, profileFormats } from "./format-catalog.ts";
import { extractGeckoProfile } from "./gecko-profile.ts";
import { extractGhcProf } from "./ghc-prof.ts";
import { extractPerfScript } from "./perf-script.ts";
import { extractPprof } from "./pprof.ts";
import { extractPstats } from "./pstats.ts";
import { extractPySpyRaw } from "./py-spy-raw.ts";
import { extractSpeedscope } from "./speedscope.ts";
import { extractStackprof } from "./stackprof.ts";
import { extractV8CpuProfile } from "./v8-cpuprofile.ts";

export type ExtractProfileOptions = ExtractOptions & {
  format?: ProfileFormat;
  /** collapsed only */
  unit?: StackUnit;
  /** pprof only */
  sampleType?: string;
};

type Extractor = (path: string, sink: EvidenceSink, options: ExtractProfileOptions) => Promise<ExtractResult>;

const extractors: Record<ProfileFormat, Extractor> = {
  speedscope: extractSpeedscope,
  chrome_trace: extractChromeTrace,
  collapsed: extractCollapsed,
  py_spy_raw: extractPySpyRaw,
  v8_cpuprofile: extractV8CpuProfile,
  pprof: extractPprof,
  perf_script: extractPerfScript,
  gecko_profile: extractGeckoProfile,
  pstats: extractPstats,
  stackprof: extractStackprof,
  dtrace_stacks: extractDtraceStacks,
  ghc_prof: extractGhcProf,
};

export async function extractProfile(
  path: string,
  sink: EvidenceSink,
  options: ExtractProfileOptions,
): Promise<ExtractResult & { format: DetectedFormat }> {
  let format: DetectedFormat | undefined = options.format;
  let detectedProducer: string | null = null;
  let detectedVersion: string | null = null;
  let advice: string | null = null;
  if (!format) {
    const detected = await detectProfileFormat(path);
    format = detected.format;
    detectedProducer = detected.producer;
    detectedVersion = detected.producer_version;
    advice = detected.advice?.message ?? null;
  }
  if (!isProfileFormat(format)) {
    throw artifactParseFailed(
      format === "unknown" ? `Cannot tell the profile format of ${path}.` : `${path} is a ${format} file, not a profile.`,
      {
        details: { path, format },
        remediation: [
          advice ?? `Name the format explicitly (${profileFormats.join(", ")}), or import the file with import_artifact to have it routed.`,
        ],
      },
    );
  }
  const result = await extractors[format](path, sink, options);
  if (!result.producer && detectedProducer) result.producer = detectedProducer;
  if (!result.producer_version && detectedVersion) result.producer_version = detectedVersion;
  return { ...result, format };
}
