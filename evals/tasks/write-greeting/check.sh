#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
[ "$(cat hello.txt)" = "hello, world" ]
