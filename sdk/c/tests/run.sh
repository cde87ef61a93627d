#!/usr/bin/env bash
# Builds and runs the kit's native unit tests (gcc or $CC), under
# AddressSanitizer and UndefinedBehaviorSanitizer when the compiler has them.
#
#   BINDINGS_DIR=DIR tests/run.sh
#
# BINDINGS_DIR holds the C bindings of the contract's `tool` world, as the
# kaizen build generates them (wit-bindgen-c 0.63.0, world `tool` renamed
# `kaizen_world`) but without the component-type object: kaizen_world.c and
# kaizen_world.h. test_abi compiles them natively with the export glue;
# every test runs, and the script fails when any test does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kit=$(dirname "$here")

die() {
    echo "run.sh: $*" >&2
    exit 1
}

[ -n "${BINDINGS_DIR:-}" ] ||
    die "set BINDINGS_DIR to a directory holding kaizen_world.c and kaizen_world.h: the bindings of the tool world (wit-bindgen-c 0.63.0, --rename-world kaizen_world, --no-object-file), which test_abi needs"
for file in kaizen_world.c kaizen_world.h; do
    [ -f "$BINDINGS_DIR/$file" ] ||
        die "BINDINGS_DIR=$BINDINGS_DIR has no $file; generate the tool world's bindings there (wit-bindgen-c 0.63.0, --rename-world kaizen_world, --no-object-file)"
done

out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
cc=${CC:-gcc}
flags=(-std=c11 -g -O1 -Wall -Wextra -Wpedantic -Werror -I"$kit/include" -I"$kit/src")
if echo 'int main(void){return 0;}' | "$cc" -x c - -fsanitize=address,undefined -o "$out/probe" 2>/dev/null; then
    flags+=(-fsanitize=address,undefined -fno-sanitize-recover=all)
else
    echo "run.sh: $cc has no AddressSanitizer/UndefinedBehaviorSanitizer; the tests run without them" >&2
fi

# The reader and writer stand alone; the call machinery needs them and a log sink.
"$cc" "${flags[@]}" "$kit/src/kaizen_json.c" "$here/test_json.c" -lm -o "$out/test_json"
"$cc" "${flags[@]}" "$kit/src/kaizen_json.c" "$kit/src/kaizen_tool.c" "$kit/src/kaizen_native.c" \
    "$here/test_tool.c" -lm -o "$out/test_tool"
# The export glue and the generated bindings, natively, with the test as
# host. The generated file's wasm import/export attributes mean nothing
# natively.
"$cc" "${flags[@]}" -Wno-error -Wno-attributes -Wno-unknown-attributes -Wno-pedantic -I"$BINDINGS_DIR" \
    "$kit/src/kaizen_json.c" "$kit/src/kaizen_tool.c" "$kit/src/kaizen_wasm.c" "$BINDINGS_DIR/kaizen_world.c" \
    "$here/test_abi.c" -lm -o "$out/test_abi" 2>"$out/abi-build.log" ||
    { cat "$out/abi-build.log" >&2; die "compiling test_abi with the bindings in $BINDINGS_DIR failed"; }

status=0
for t in test_json test_tool test_abi; do
    if ! "$out/$t"; then
        echo "run.sh: $t failed" >&2
        status=1
    fi
done
exit $status
