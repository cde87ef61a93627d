#!/usr/bin/env bash
# Builds a Kaizen tool plugin written in Python into a WebAssembly component.
# The reference recipe for `kaizen plugins build` (see sdk/python/README.md).
#
# Environment:
#   KIT      the kit: sdk/python (kaizen_sdk/, kaizen_build.py, wit/deps/)
#   WIT      the contract's WIT directory: wit/v0.1.1
#   PROJECT  the plugin directory: plugin.toml, app.py (+ more modules)
#   OUT      the component to write, e.g. $PROJECT/my-tool.wasm
#   CACHE    where componentize-py is installed (a venv), once per version
#
# Steps:
#   1. componentize-py $COMPONENTIZE_PY_VERSION, pip-installed into
#      $CACHE/componentize-py-<version> on first use;
#   2. the sources: the project's modules and packages (not its tests),
#      copied to a scratch directory so nothing lands in the project (no
#      __pycache__), then kaizen_sdk beside them;
#   3. the world: kaizen_build.py reads plugin.toml and the copied sources
#      and writes a world `python-tool` that includes kaizen:plugin/tool and
#      imports one interface per requested capability (http -> wasi:http),
#      plus session when the code uses kaizen_sdk.session; the contract and
#      the kit's wasi WIT are its deps;
#   4. componentize-py builds kaizen_sdk.component, which imports `app` and
#      exports its @tool functions; the output is written to $OUT.tmp, then
#      moved to $OUT, so a failed build never leaves a broken component.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1

die() {
    echo "build.sh: $*" >&2
    exit 1
}

for var in KIT WIT PROJECT OUT CACHE; do
    [ -n "${!var:-}" ] || die "$var is not set (KIT=sdk/python WIT=wit/v0.1.1 PROJECT=plugin dir OUT=file.wasm CACHE=dir)"
done
[ -f "$KIT/kaizen_sdk/__init__.py" ] && [ -f "$KIT/kaizen_build.py" ] ||
    die "KIT=$KIT is not the Python kit (it needs kaizen_sdk/ and kaizen_build.py: point it at sdk/python)"
[ -d "$WIT" ] || die "WIT=$WIT is not a directory (point it at wit/v0.1.1)"
[ -f "$PROJECT/plugin.toml" ] || die "$PROJECT has no plugin.toml"
[ -f "$PROJECT/app.py" ] || die "$PROJECT has no app.py; a Python plugin's tools are the @tool functions of app.py"
[ ! -e "$PROJECT/kaizen_sdk" ] || die "$PROJECT has its own kaizen_sdk; remove it, the build uses the kit's ($KIT)"

# 1. componentize-py, pinned, in its own venv.
venv="$CACHE/componentize-py-$COMPONENTIZE_PY_VERSION"
if [ ! -x "$venv/bin/componentize-py" ] || [ ! -f "$venv/.installed" ]; then
    echo "build.sh: installing componentize-py==$COMPONENTIZE_PY_VERSION into $venv" >&2
    mkdir -p "$CACHE"
    python3 -m venv "$venv" ||
        die "cannot create a venv in $venv: Python 3.11+ with its venv module is needed (Debian: apt-get install python3 python3-venv)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION" >&2 ||
        die "pip could not install componentize-py==$COMPONENTIZE_PY_VERSION into $venv; pip needs to reach PyPI"
    touch "$venv/.installed"
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/kaizen-py-build.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# 2. The sources.
mkdir "$stage/src"
for file in "$PROJECT"/*.py; do
    case "$(basename "$file")" in
    test_*.py | *_test.py | conftest.py | setup.py) continue ;;
    esac
    cp "$file" "$stage/src/"
done
for dir in "$PROJECT"/*/; do
    name=$(basename "$dir")
    case "$name" in
    test | tests | __pycache__ | .* | *.dist-info | *.egg-info) continue ;;
    esac
    if [ -f "$dir/__init__.py" ]; then
        cp -R "$dir" "$stage/src/$name"
    fi
done
find "$stage/src" -name __pycache__ -prune -exec rm -rf {} +

# 3. The world, from the manifest and the code.
world=$("$venv/bin/python" "$KIT/kaizen_build.py" prepare "$PROJECT/plugin.toml" "$WIT" "$KIT/wit" "$stage/src" "$stage/wit") ||
    die "cannot choose a world for $PROJECT/plugin.toml (the error above says why)"
echo "build.sh: world $world: $(grep -E '^\s+(include|import)' "$stage/wit/world.wit" | sed -E 's/^\s+//; s/;$//' | paste -sd, - | sed 's/,/, /g')" >&2

cp -R "$KIT/kaizen_sdk" "$stage/src/kaizen_sdk"
find "$stage/src/kaizen_sdk" -name __pycache__ -prune -exec rm -rf {} +

# 4. The component.
mkdir -p "$(dirname "$OUT")"
# No Rust backtrace: the Python traceback above it is the useful part.
PYTHONDONTWRITEBYTECODE=1 RUST_BACKTRACE=0 RUST_LIB_BACKTRACE=0 "$venv/bin/componentize-py" --quiet -d "$stage/wit" -w "$world" \
    componentize kaizen_sdk.component -p "$stage/src" -o "$OUT.tmp" ||
    die "componentize-py could not build $PROJECT (the Python error above names the cause)"
mv "$OUT.tmp" "$OUT"
echo "build.sh: wrote $OUT ($(wc -c <"$OUT") bytes)" >&2
