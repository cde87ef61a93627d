#!/usr/bin/env bash
# build.sh: the reference recipe for a Kaizen tool plugin written in C.
#
#   build.sh          builds the component $OUT from $PROJECT's *.c files
#                     (test_*.c left out)
#   build.sh test     builds each $PROJECT/test_*.c natively with the
#                     project's other sources and the kit, and runs it
#
# Environment (all optional):
#   KIT      this kit (sdk/c); default: the directory of this script
#   WIT      the contract's WIT directory; default: $KIT/../../wit/v0.1.1
#   PROJECT  the plugin's directory; default: .
#   OUT      the component to write; default: $PROJECT/<component> from
#            plugin.toml, else $PROJECT/<directory name>.wasm
#   CACHE    where tools, the adapter and build files are kept;
#            default: $PROJECT/.kaizen-build
#   CC       clang for wasm32-wasi; default: clang-19, else clang
#   WASI_SYSROOT  a WASI sysroot (e.g. wasi-sdk's); default: Debian's, found
#            by clang itself
#   HOST_CC  the native compiler for `test`; default: cc
#
# Toolchain on Debian 12 (bookworm), as root:
#   apt-get install -y clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32
# (clang-19 with wasm-ld from lld-19, wasi-libc's headers and libraries in
# /usr/include/wasm32-wasi and /usr/lib/wasm32-wasi, compiler-rt's wasm32
# builtins). Debian's wasi-libc only has the wasm32-wasi (preview 1)
# target, so clang builds a core module in the reactor model and
# `wasm-tools component new` wraps it with the WASI preview 1 reactor
# adapter. The bindings and the wrapping use, pinned to match each other
# and the Rust crates the Kaizen CLI links:
#   wit-bindgen-cli 0.63.0 (crates wit-bindgen-c / wit-bindgen-core 0.63.0)
#   wasm-tools 1.262.0      (crate wit-component 0.262.0)
#   wasi-preview1-component-adapter-provider 48.0.8 (the reactor adapter,
#     the same version as the host's wasmtime)
# They are installed with cargo into $CACHE on first use when not on PATH.
set -euo pipefail

KIT=${KIT:-$(cd "$(dirname "$0")" && pwd)}
WIT=${WIT:-$KIT/../../wit/v0.1.1}
PROJECT=${PROJECT:-.}
CACHE=${CACHE:-$PROJECT/.kaizen-build}
WIT_BINDGEN_VERSION=0.63.0
WASM_TOOLS_VERSION=1.262.0
ADAPTER_VERSION=48.0.8

die() {
    echo "build.sh: $*" >&2
    exit 1
}

[ -f "$KIT/include/kaizen.h" ] || die "KIT=$KIT does not hold include/kaizen.h"
[ -d "$PROJECT" ] || die "PROJECT=$PROJECT is not a directory"
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

# The project's sources: every *.c but the tests.
SOURCES=()
for f in "$PROJECT"/*.c; do
    [ -e "$f" ] || continue
    case $(basename "$f") in test_*) ;; *) SOURCES+=("$f") ;; esac
done
KIT_PURE=("$KIT/src/kaizen_json.c" "$KIT/src/kaizen_tool.c")

if [ "${1:-}" = test ]; then
    HOST_CC=${HOST_CC:-cc}
    found=0
    for t in "$PROJECT"/test_*.c; do
        [ -e "$t" ] || continue
        found=1
        exe=$CACHE/native-$(basename "$t" .c)
        # shellcheck disable=SC2086 # HOST_CFLAGS are words on purpose
        "$HOST_CC" -std=c11 -g -O1 -Wall -Wextra ${HOST_CFLAGS:-} -I"$KIT/include" \
            "${KIT_PURE[@]}" "$KIT/src/kaizen_native.c" "${SOURCES[@]}" "$t" -lm -o "$exe"
        "$exe"
    done
    [ "$found" = 1 ] || die "no test_*.c in $PROJECT"
    exit 0
fi

[ "${#SOURCES[@]}" -gt 0 ] || die "no C sources (*.c) in $PROJECT"
[ -f "$WIT/worlds.wit" ] || die "WIT=$WIT does not hold the contract (worlds.wit)"

if [ -z "${OUT:-}" ]; then
    component=
    if [ -f "$PROJECT/plugin.toml" ]; then
        component=$(sed -n 's/^[[:space:]]*component[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$PROJECT/plugin.toml" | head -n 1)
    fi
    [ -n "$component" ] || component=$(basename "$(cd "$PROJECT" && pwd)").wasm
    OUT=$PROJECT/$component
fi

if [ -z "${CC:-}" ] || [ "$CC" = cc ]; then
    if command -v clang-19 >/dev/null 2>&1; then CC=clang-19; else CC=clang; fi
fi
command -v "$CC" >/dev/null 2>&1 || die "$CC not found; on Debian 12: apt-get install -y clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32"

# A pinned cargo-installed tool: on PATH at the right version, else in $CACHE.
tool() { # name crate version features
    if command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -q " $3\$"; then
        command -v "$1"
        return
    fi
    if [ ! -x "$CACHE/tools/bin/$1" ] || ! "$CACHE/tools/bin/$1" --version | grep -q " $3\$"; then
        command -v cargo >/dev/null 2>&1 || die "$1 $3 is missing and cargo is not there to install it"
        echo "build.sh: installing $2 $3 into $CACHE/tools (once)" >&2
        cargo install --quiet --locked --root "$CACHE/tools" "$2@$3" --no-default-features --features "$4" >&2
    fi
    echo "$CACHE/tools/bin/$1"
}
WIT_BINDGEN=${WIT_BINDGEN:-$(tool wit-bindgen wit-bindgen-cli $WIT_BINDGEN_VERSION c)}
WASM_TOOLS=${WASM_TOOLS:-$(tool wasm-tools wasm-tools $WASM_TOOLS_VERSION component,validate)}

# The reactor adapter, taken from the crate that embeds it.
ADAPTER=${ADAPTER:-$CACHE/wasi_snapshot_preview1.reactor.wasm}
if [ ! -f "$ADAPTER" ]; then
    echo "build.sh: fetching wasi-preview1-component-adapter-provider $ADAPTER_VERSION (once)" >&2
    mkdir -p "$CACHE/adapter/src"
    cat >"$CACHE/adapter/Cargo.toml" <<EOF
[package]
name = "kaizen-c-adapter-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
wasi-preview1-component-adapter-provider = "=$ADAPTER_VERSION"
EOF
    : >"$CACHE/adapter/src/lib.rs"
    manifest=$(cd "$CACHE/adapter" && cargo metadata --format-version 1 --quiet |
        tr ',' '\n' | sed -n 's/.*"manifest_path":"\([^"]*wasi-preview1-component-adapter-provider-[^"]*\)".*/\1/p' | head -n 1)
    [ -n "$manifest" ] || die "could not locate the adapter crate"
    cp "$(dirname "$manifest")/artefacts/wasi_snapshot_preview1.reactor.wasm" "$ADAPTER"
fi

# Bindings for the `tool` world (imports `log`, exports `tools`). The world
# is renamed so that the generated files (kaizen_world.{c,h}) cannot clash
# with a plugin's own tool.c.
BUILD=$CACHE/gen
rm -rf "$BUILD"
mkdir -p "$BUILD"
# It names each file it writes on stderr: show that only when it fails.
if ! log=$("$WIT_BINDGEN" c "$WIT" --world tool --rename-world kaizen_world --out-dir "$BUILD" 2>&1); then
    printf '%s\n' "$log" >&2
    die "wit-bindgen failed on $WIT"
fi

# One clang run compiles and links everything: the reactor model exports
# `_initialize` (wit-component calls it when the component starts) instead
# of `_start`. The stack gets 1 MiB, as Rust gives wasm32, and comes first
# in memory so that an overflow traps instead of overwriting static data.
# --strip-debug keeps the component-type section the bindings' object
# carries (and the function names, for readable traps).
flags=(--target=wasm32-wasi -O2 -std=c11 -mexec-model=reactor -Wall -Wextra
    -I"$KIT/include" -I"$KIT/src" -I"$BUILD"
    -Wl,--stack-first -Wl,-z,stack-size=1048576 -Wl,--strip-debug)
[ -n "${WASI_SYSROOT:-}" ] && flags+=(--sysroot="$WASI_SYSROOT")
# shellcheck disable=SC2086 # CFLAGS are words on purpose
"$CC" "${flags[@]}" ${CFLAGS:-} \
    "${KIT_PURE[@]}" "$KIT/src/kaizen_wasm.c" \
    "$BUILD/kaizen_world.c" "$BUILD/kaizen_world_component_type.o" \
    "${SOURCES[@]}" -o "$BUILD/core.wasm"

"$WASM_TOOLS" component new "$BUILD/core.wasm" \
    --adapt "wasi_snapshot_preview1=$ADAPTER" -o "$OUT"
"$WASM_TOOLS" validate "$OUT"
echo "built $OUT ($(wc -c <"$OUT") bytes)"
