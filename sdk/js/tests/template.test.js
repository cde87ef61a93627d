// The template as `kaizen plugins new NAME --lang js` writes it (new.sh is
// the reference recipe): every placeholder replaced, and its own tests
// passing under plain Node with no install step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const KIT = fileURLToPath(new URL("..", import.meta.url));

test("a new project has no placeholder left and passes its own tests", () => {
  const parent = mkdtempSync(join(tmpdir(), "kaizen-js-template-"));
  try {
    const dir = join(parent, "line-stats");
    const made = spawnSync("bash", [join(KIT, "new.sh"), "line-stats", dir], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);

    const files = ["plugin.toml", "package.json", "tool.js", "tool.test.js", "README.md"];
    for (const file of files) {
      assert.doesNotMatch(readFileSync(join(dir, file), "utf8"), /\{\{/, `${file} keeps a placeholder`);
    }
    assert.deepEqual(readdirSync(join(dir, "kaizen-sdk")).sort(), ["index.d.ts", "index.js", "package.json"]);

    const manifest = readFileSync(join(dir, "plugin.toml"), "utf8");
    assert.match(manifest, /^name = "line-stats"$/m);
    assert.match(manifest, /^contract = "0\.1\.1"$/m);
    assert.match(manifest, /^kinds = \["tool"\]$/m);
    assert.match(manifest, /^component = "line-stats\.wasm"$/m);
    assert.match(readFileSync(join(dir, "tool.js"), "utf8"), /name: "LineStats"/);
    assert.ok(readFileSync(join(dir, "tool.js"), "utf8").split("\n").length <= 31, "tool.js stays short");

    // Without the runner's own marker, so the child reports as a user's would.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const run = spawnSync(process.execPath, ["--test"], { cwd: dir, env, encoding: "utf8" });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^# pass 5$/m);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("new.sh refuses a bad name and an existing directory", () => {
  const bad = spawnSync("bash", [join(KIT, "new.sh"), "My Tool", join(tmpdir(), "never")], { encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /lowercase letters and digits/);
  const existing = spawnSync("bash", [join(KIT, "new.sh"), "x", tmpdir()], { encoding: "utf8" });
  assert.equal(existing.status, 1);
  assert.match(existing.stderr, /already exists/);
});
