#!/usr/bin/env bash
# The whole side-by-side benchmark in one command: installs what it needs (nginx, Apache, squid,
# curl, libcurl headers), builds sesame-bench in release mode, and runs every workload for Sesame,
# libcurl's multi interface and the curl CLI, interleaved, several times. The Markdown table is
# printed and written to bench-results.md (or the file given with --output).
#
#   scripts/bench.sh [--repetitions N] [--only NAME-PART] [--output FILE.md]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Everything from here talks to loopback only. Sessions honour proxy variables by default (as curl
# does), so a machine-wide proxy set for apt must not reroute the tests' loopback traffic.
unset http_proxy https_proxy all_proxy no_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY
swift build -c release --product sesame-bench
swift build -c release --product sesame-bench-worker
swift build -c release --product sesame
arguments=("$@")
if [[ " ${arguments[*]-} " != *" --output "* ]]; then arguments+=(--output bench-results.md); fi
if [[ " ${arguments[*]-} " != *" --repetitions "* ]]; then arguments+=(--repetitions 4); fi
exec .build/release/sesame-bench "${arguments[@]}"
