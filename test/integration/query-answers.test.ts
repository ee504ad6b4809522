import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { queryAnswers } from "../../scripts/query-answers.ts";

// Three imports, 33 queries over real DuckDB and a comparison, on a shared 2-core machine.
setDefaultTimeout(120_000);

const repositoryRoot = resolve(import.meta.dir, "../..");

test("hotspots, callers, callees, stack examples, PyTorch operators and a comparison answer exactly as the build before the performance work did", async () => {
  const recorded = JSON.parse(readFileSync(join(repositoryRoot, "test", "fixtures", "query-answers", "answers-a0ff272.json"), "utf8"));
  const answers = JSON.parse(JSON.stringify(await queryAnswers(repositoryRoot)));
  expect(Object.keys(answers)).toEqual(Object.keys(recorded));
  for (const key of Object.keys(recorded)) expect({ key, answer: answers[key] }).toEqual({ key, answer: recorded[key] });
});
