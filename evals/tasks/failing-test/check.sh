#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
python3 test_calc.py && grep -q "assert mul(3, 4) == 12" test_calc.py
