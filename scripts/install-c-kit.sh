#!/usr/bin/env bash
# Installs what `kaizen plugins build` needs for C plugins on Debian 12:
# clang 19 with lld and the WASI sysroot (wasi-libc, compiler-rt for
# wasm32). The bindings and the component wrapping are done by kaizen
# itself. Runs apt-get as root (through sudo when not root); does nothing
# when the packages are there.
set -euo pipefail

packages=(clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "install-c-kit: run as root, or install: ${missing[*]}" >&2
        exit 1
    }
    sudo=(sudo)
fi
echo "install-c-kit: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
