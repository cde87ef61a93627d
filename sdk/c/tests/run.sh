#!/usr/bin/env bash
# Builds and runs the kit's native unit tests (gcc or $CC), under
# AddressSanitizer and UndefinedBehaviorSanitizer when the compiler has them.
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
for t in test_json test_tool; do
    "$out/$t" || status=1
done
exit $status
