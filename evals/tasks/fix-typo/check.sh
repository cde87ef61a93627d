#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
grep -qx "Kaizen runs the agent loop." README.md
