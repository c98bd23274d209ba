#!/usr/bin/env bash
# make demo: placeholder until the demo lands (issue 7).
set -eu
echo "demo: the static engine and the demo target are not built yet"
