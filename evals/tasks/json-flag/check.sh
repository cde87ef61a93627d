#!/usr/bin/env bash
# Passes (exit 0) when the task is done; runs in the workspace.
set -eu
python3 -c "import json; c = json.load(open('config.json')); assert c == {'debug': True, 'name': 'app'}"
