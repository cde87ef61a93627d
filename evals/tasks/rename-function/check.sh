#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
! grep -rq old_name --include=*.py . && grep -q "def new_name" a.py && [ "$(python3 b.py)" = 42 ]
