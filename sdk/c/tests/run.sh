#!/usr/bin/env bash
# Builds and runs the kit's native unit tests (gcc or $CC), under
# AddressSanitizer and UndefinedBehaviorSanitizer when the compiler has them.
# test_abi also needs wit-bindgen 0.63.0 (WIT_BINDGEN, on PATH, or in
# $CACHE/tools/bin as build.sh installs it) for the generated bindings; it
# is skipped, saying so, without one (REQUIRE_ABI=1 makes that an error).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kit=$(dirname "$here")
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
cc=${CC:-gcc}
flags=(-std=c11 -g -O1 -Wall -Wextra -Wpedantic -Werror -I"$kit/include" -I"$kit/src")
if echo 'int main(void){return 0;}' | "$cc" -x c - -fsanitize=address,undefined -o "$out/probe" 2>/dev/null; then
    flags+=(-fsanitize=address,undefined -fno-sanitize-recover=all)
fi
status=0
# The reader and writer stand alone; the call machinery needs them and a log sink.
"$cc" "${flags[@]}" "$kit/src/kaizen_json.c" "$here/test_json.c" -lm -o "$out/test_json"
"$cc" "${flags[@]}" "$kit/src/kaizen_json.c" "$kit/src/kaizen_tool.c" "$kit/src/kaizen_native.c" \
    "$here/test_tool.c" -lm -o "$out/test_tool"
tests=(test_json test_tool)

# The export glue and the generated bindings, natively, with the test as host.
wit=${WIT:-$kit/../../wit/v0.1.1}
bindgen=${WIT_BINDGEN:-}
if [ -z "$bindgen" ]; then
    for candidate in wit-bindgen "${CACHE:-/nonexistent}/tools/bin/wit-bindgen"; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" --version | grep -q ' 0\.63\.0$'; then
            bindgen=$candidate
            break
        fi
    done
fi
if [ -n "$bindgen" ]; then
    "$bindgen" c "$wit" --world tool --rename-world kaizen_world --no-object-file --out-dir "$out/gen" >/dev/null 2>&1
    # The generated file's wasm import/export attributes mean nothing natively.
    "$cc" "${flags[@]}" -Wno-error -Wno-attributes -Wno-unknown-attributes -Wno-pedantic -I"$out/gen" \
        "$kit/src/kaizen_json.c" "$kit/src/kaizen_tool.c" "$kit/src/kaizen_wasm.c" "$out/gen/kaizen_world.c" \
        "$here/test_abi.c" -lm -o "$out/test_abi" 2>"$out/abi-build.log" || { cat "$out/abi-build.log" >&2; exit 1; }
    tests+=(test_abi)
elif [ "${REQUIRE_ABI:-0}" = 1 ]; then
    echo "run.sh: wit-bindgen 0.63.0 not found (set WIT_BINDGEN)" >&2
    exit 1
else
    echo "run.sh: test_abi skipped: wit-bindgen 0.63.0 not found (set WIT_BINDGEN)" >&2
fi

for t in "${tests[@]}"; do
    "$out/$t" || status=1
done
exit $status
