#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
[ "$(python3 src/main.py)" = hello ] && head -1 docs/README.md | grep -q "^# "
