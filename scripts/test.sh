#!/usr/bin/env bash
# Sesame's whole test run, as CI runs it (.ci/run calls this script). Installs what the tests need,
# then: format lint, a strict build (warnings are errors, explicit Sendable), every test (unit and
# loopback integration against our servers, nginx, Apache, squid, httpbin and `openssl s_server`),
# the DocC documentation and every Swift sample in it and in README.md, the tests again under ThreadSanitizer and AddressSanitizer/LeakSanitizer,
# and a bounded libFuzzer run over each parser (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Everything from here talks to loopback only. Sessions honour proxy variables by default (as curl
# does), so a machine-wide proxy set for apt must not reroute the tests' loopback traffic.
unset http_proxy https_proxy all_proxy no_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY

echo "== swift format lint"
swift format lint --strict -r Sources Tests Package.swift

echo "== strict build"
swift build --build-tests \
    -Xswiftc -warnings-as-errors \
    -Xswiftc -require-explicit-sendable \
    --explicit-target-dependency-import-check error

echo "== documentation (DocC, warnings are errors)"
scripts/docs.sh

echo "== documentation samples, compiled as printed"
scripts/doc-samples.sh

echo "== a program importing only Sesame loads no Foundation or ICU"
scripts/footprint-check.sh

# The soak test measures its process's descriptors and memory, so it runs in a process of its own
# (SESAME_SOAK_REQUESTS turns it on and sets the count): 20,000 requests under each.
echo "== tests under ThreadSanitizer"
swift test --sanitize=thread
SESAME_SOAK_REQUESTS=20000 swift test --sanitize=thread --filter SesameSoakTests

echo "== tests under AddressSanitizer and LeakSanitizer"
LSAN_OPTIONS="suppressions=$PWD/.ci/lsan-suppressions.txt" swift test --sanitize=address
LSAN_OPTIONS="suppressions=$PWD/.ci/lsan-suppressions.txt" SESAME_SOAK_REQUESTS=20000 \
    swift test --sanitize=address --filter SesameSoakTests

echo "== fuzzing every parser (${FUZZ_SECONDS:-20} s each)"
scripts/fuzz.sh

echo "== the demo"
swift run sesame demo

echo "== the soak test"
SESAME_SOAK_REQUESTS=20000 swift test --filter SesameSoakTests

echo "== tests"
swift test
