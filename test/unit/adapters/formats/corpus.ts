/**
 * The real third-party corpus under test/fixtures/formats/corpus (origins in its README): the
 * format each file is, for the files flameox reads on import, and the route or advice for the rest.
 */
import { join } from "node:path";
import { fixtures } from "./helpers.ts";

export const corpusRoot = join(fixtures, "corpus");

/** Files read on import into stacks, with the format detection must name. */
export const readableCorpus: [string, string][] = [
  ["flamegraph/example-dtrace-stacks.txt.gz", "dtrace_stacks"],
  ["flamegraph/example-perf-stacks.txt.gz", "perf_script"],
  ["flamegraph/perf-cycles-instructions-01.txt", "perf_script"],
  ["flamegraph/perf-dd-stacks-01.txt", "perf_script"],
  ["flamegraph/perf-funcab-pid-01.txt", "perf_script"],
  ["flamegraph/perf-iperf-stacks-pidtid-01.txt", "perf_script"],
  ["flamegraph/perf-java-faults-01.txt", "perf_script"],
  ["flamegraph/perf-java-stacks-02.txt", "perf_script"],
  ["flamegraph/perf-js-stacks-01.txt", "perf_script"],
  ["flamegraph/perf-mirageos-stacks-01.txt", "perf_script"],
  ["flamegraph/perf-numa-stacks-01.txt", "perf_script"],
  ["flamegraph/perf-rust-Yamakaky-dcpu.txt", "perf_script"],
  ["flamegraph/results-perf-iperf-stacks-pidtid-01-collapsed-tid.txt", "collapsed"],
  ["flamegraph/results-perf-java-stacks-01-collapsed-all.txt", "collapsed"],
  ["flamegraph/results-perf-rust-Yamakaky-dcpu-collapsed-addrs.txt", "collapsed"],
  ["firefox-profiler/flamegraph.txt", "collapsed"],
  ["firefox-profiler/gecko-1.json", "gecko_profile"],
  ["firefox-profiler/gecko-2.json", "gecko_profile"],
  ["firefox-profiler/graphviz.perf.gz", "perf_script"],
  ["firefox-profiler/gzip.perf.gz", "perf_script"],
  ["firefox-profiler/hello.cjs-20231120T211435.cpuprofile", "v8_cpuprofile"],
  ["firefox-profiler/processed-1.json", "gecko_profile"],
  ["firefox-profiler/processed-2.json", "gecko_profile"],
  ["firefox-profiler/processed-3.json", "gecko_profile"],
  ["firefox-profiler/simple-perf.txt.gz", "perf_script"],
  ["firefox-profiler/test.perf.gz", "perf_script"],
  ["ghc-prof/purs.prof.gz", "ghc_prof"],
  ["google-pprof/cppbench.cpu_no_samples_type", "pprof"],
  ["google-pprof/go.nomappings.crash", "pprof"],
  ["google-pprof/sample.cpu", "pprof"],
  ["google-pprof/sample.cpu.pb", "pprof"],
  ["speedscope/Chrome-65-sucrase.cpuprofile.gz", "v8_cpuprofile"],
  ["speedscope/Firefox-59-firefox.json.gz", "gecko_profile"],
  ["speedscope/Firefox-59-simple-firefox.json", "gecko_profile"],
  ["speedscope/Firefox-61-recursion.json", "gecko_profile"],
  ["speedscope/Firefox-63-simple-firefox.json", "gecko_profile"],
  ["speedscope/haskell-simple.prof", "ghc_prof"],
  ["speedscope/linux-perf-forks.linux-perf.txt", "perf_script"],
  ["speedscope/linux-perf-rust-mangled.linux-perf.txt", "perf_script"],
  ["speedscope/linux-perf-simple-with-header.linux-perf.txt", "perf_script"],
  ["speedscope/linux-perf-simple-with-pid.linux-perf.txt", "perf_script"],
  ["speedscope/linux-perf-simple.linux-perf.txt", "perf_script"],
  ["speedscope/linux-perf-system-wide.linux-perf.txt", "perf_script"],
  ["speedscope/pprof-simple.prof", "pprof"],
  ["speedscope/speedscope-0.0.1-simple.speedscope.json", "speedscope"],
  ["speedscope/speedscope-0.1.2-simple-sampled.speedscope.json", "speedscope"],
  ["speedscope/speedscope-0.6.0-two-sampled.speedscope.json", "speedscope"],
  ["speedscope/stackcollapse-alternating.txt", "collapsed"],
  ["speedscope/stackcollapse-perf-vertx-stacks-01-collapsed-all.txt", "collapsed"],
  ["speedscope/stackcollapse-recursion.txt", "collapsed"],
  ["speedscope/stackcollapse-simple-crlf.txt", "collapsed"],
  ["speedscope/stackcollapse-simple-utf16-be.txt", "collapsed"],
  ["speedscope/stackcollapse-simple-utf16-le.txt", "collapsed"],
  ["speedscope/stackcollapse-simple-with-invalids.txt", "collapsed"],
  ["speedscope/stackcollapse-simple.txt", "collapsed"],
  ["speedscope/stackcollapse-tall.txt", "collapsed"],
  ["speedscope/stackprof-object-stackprof.json", "stackprof"],
  ["speedscope/stackprof-ruby-stackprof.json.gz", "stackprof"],
  ["speedscope/stackprof-simple-cpu-stackprof.json", "stackprof"],
  ["speedscope/stackprof-simple-stackprof.json", "stackprof"],
  ["speedscope/stackprof-stackprof-last-frame-no-name.json", "stackprof"],
];

/** Profiles recorded for this repository (test/fixtures/formats/README.md), held to the same oracle. */
export const recordedProfiles: [string, string][] = [
  ["../perf/hot.perf.txt", "perf_script"],
  ["../pstats/busy.pstats", "pstats"],
  ["../py-spy.raw.txt", "py_spy_raw"],
  ["../py-spy-threads.raw.txt", "py_spy_raw"],
  ["../py-spy.speedscope.json", "speedscope"],
  ["../node-busy.cpuprofile", "v8_cpuprofile"],
];

/** Files an extract_* tool reads after import: the detected format and the tool the receipt names. */
export const extractedCorpus: [string, string, string][] = [
  ["pyperf/telco.json", "pyperf_json", "extract_pyperf"],
  ["pyperf/py3.json.gz", "pyperf_json", "extract_pyperf"],
];

/** Files flameox does not read: the advice code the receipt carries (next tool import_artifact). */
export const unreadableCorpus: [string, "format_needs_conversion" | "format_not_recognized", RegExp][] = [
  ["google-pprof/cppbench.cpu", "format_needs_conversion", /pprof -proto/],
  ["google-pprof/gobench.heap", "format_needs_conversion", /pprof -proto/],
  ["speedscope/java-flight-recorder-heavy.jfr", "format_needs_conversion", /jfrconv/],
  ["speedscope/callgrind-callgrind.example.log", "format_not_recognized", /callgrind/],
  ["speedscope/node-10.11.0-Heap-20181003T105432.heapprofile", "format_not_recognized", /heap profile/],
  ["speedscope/pmcstat-simple.txt", "format_not_recognized", /kind=sample_profile/],
  ["firefox-profiler/dhat.json.gz", "format_not_recognized", /DHAT/],
];
