// Type-checks tests/types/check.ts (input types inferred from inline JSON
// Schemas, with `@ts-expect-error` where a mistake must be caught) and the
// template's tool.js under `// @ts-check`. TypeScript is not a dependency of
// the kit: set KAIZEN_JS_TSC to a tsc (e.g. the toolchain's,
// <cache>/js-toolchain-*/node_modules/typescript/bin/tsc) to run it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const TSC = process.env.KAIZEN_JS_TSC;
const KIT = fileURLToPath(new URL("..", import.meta.url));
const FLAGS = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--skipLibCheck"];

function tsc(args) {
  const run = spawnSync(process.execPath, [TSC, ...FLAGS, ...args], { cwd: KIT, encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout + run.stderr);
}

test("input types are inferred from the schema", { skip: !TSC && "set KAIZEN_JS_TSC to a tsc to run" }, () => {
  tsc(["tests/types/check.ts"]);
});

test("the template's tool.js type-checks against the kit", { skip: !TSC && "set KAIZEN_JS_TSC to a tsc to run" }, () => {
  // tool.js imports ./kaizen-sdk/index.js; check it where new.sh puts it.
  const parent = mkdtempSync(join(tmpdir(), "kaizen-js-types-"));
  try {
    const dir = join(parent, "typed-tool");
    const made = spawnSync("bash", [join(KIT, "new.sh"), "typed-tool", dir], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    tsc(["--allowJs", "--checkJs", join(dir, "tool.js")]);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
