#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
python3 -c "import calc; assert calc.add(2, 3) == 5"
