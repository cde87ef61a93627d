// Type-checks tests/types/check.ts (input types inferred from inline JSON
// Schemas, with `@ts-expect-error` where a mistake must be caught) and the
// template's tool.js under `// @ts-check`, against the kit's index.d.ts.
//
// TypeScript is not a dependency of the kit: KAIZEN_JS_TSC names a tsc to
// run (a TypeScript 5 package's bin/tsc), e.g.
//
//   npm install --prefix /tmp/tsc typescript@5
//   KAIZEN_JS_TSC=/tmp/tsc/node_modules/typescript/bin/tsc node --test sdk/js/tests/
//
// Without it these tests fail, as every Kaizen test does when something of
// the machine is missing, unless KAIZEN_TEST_ALLOW_MISSING (a
// comma-separated list of features, or `all`) lists `tsc`: then they pass
// without their subject, say so on stderr, and record it in opt-outs.log
// beside the Rust tests' record ($CARGO_TARGET_DIR/tmp, else target/tmp).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const TSC = process.env.KAIZEN_JS_TSC;
const KIT = fileURLToPath(new URL("..", import.meta.url));
const REPO = resolve(KIT, "..", "..");
const FLAGS = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--skipLibCheck"];

const ALLOW_MISSING = "KAIZEN_TEST_ALLOW_MISSING";
const FEATURE = "tsc";

/** Whether KAIZEN_TEST_ALLOW_MISSING lists `feature` (or `all`). */
function allowed(feature) {
  return (process.env[ALLOW_MISSING] ?? "")
    .split(",")
    .map((name) => name.trim())
    .some((name) => name === "all" || name === feature);
}

/**
 * Whether tsc can run. When it cannot, fails the test (naming the fix)
 * unless KAIZEN_TEST_ALLOW_MISSING lets it off; then records the opt-out and
 * returns false, for the test to return too.
 */
function haveTsc(t) {
  if (TSC) {
    assert.ok(existsSync(TSC), `KAIZEN_JS_TSC=${TSC} does not exist; point it at a TypeScript package's bin/tsc`);
    return true;
  }
  const why = "KAIZEN_JS_TSC is not set";
  const log = join(process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(REPO, "target"), "tmp", "opt-outs.log");
  if (!allowed(FEATURE)) {
    assert.fail(
      `${FEATURE} is missing: ${why}\n` +
        "this test needs a TypeScript compiler: `npm install --prefix /tmp/tsc typescript@5`, then " +
        "KAIZEN_JS_TSC=/tmp/tsc/node_modules/typescript/bin/tsc; to run without it, set " +
        `${ALLOW_MISSING}=${FEATURE} (a comma-separated list of features, or \`all\`), ` +
        `and the opt-out is recorded in ${log}`,
    );
  }
  const line = `${FEATURE}: ${why} (test sdk/js/tests/types.test.js: ${t.name})`;
  process.stderr.write(`${ALLOW_MISSING} opts out of ${FEATURE}, so this test passes without its subject: ${line}\n`);
  try {
    mkdirSync(join(log, ".."), { recursive: true });
    appendFileSync(log, `${line}\n`);
  } catch (err) {
    // An opt-out that leaves no record would be a silent skip.
    assert.fail(`could not record the opt-out in ${log}: ${err.message}`);
  }
  return false;
}

function tsc(args, cwd = KIT) {
  const run = spawnSync(process.execPath, [TSC, ...FLAGS, ...args], { cwd, encoding: "utf8" });
  assert.equal(run.error, undefined, `running ${TSC}: ${run.error}`);
  assert.equal(run.status, 0, run.stdout + run.stderr);
}

test("input types are inferred from the schema", (t) => {
  if (!haveTsc(t)) return;
  tsc(["tests/types/check.ts"]);
});

test("the template's tool.js type-checks against the kit", (t) => {
  if (!haveTsc(t)) return;
  // tool.js imports ./kaizen-sdk/index.js: lay it out as
  // `kaizen plugins new typed-tool --lang js` does, with the package.json
  // files that make both ES modules.
  const dir = mkdtempSync(join(tmpdir(), "kaizen-js-types-"));
  try {
    const render = (text) =>
      text.replaceAll("{{name}}", "typed-tool").replaceAll("{{snake_name}}", "typed_tool").replaceAll("{{camel_name}}", "TypedTool");
    for (const file of ["tool.js", "package.json"]) {
      writeFileSync(join(dir, file), render(readFileSync(join(KIT, "template", file), "utf8")));
    }
    mkdirSync(join(dir, "kaizen-sdk"));
    for (const file of ["index.js", "index.d.ts", "package.json"]) {
      copyFileSync(join(KIT, "kaizen-sdk", file), join(dir, "kaizen-sdk", file));
    }
    tsc(["--allowJs", "--checkJs", "tool.js"], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
