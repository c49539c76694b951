#!/usr/bin/env bash
# Builds the DocC documentation of the Sesame library with the toolchain's docc into .build/docs:
# the compiler's symbol graph of the public API, then the catalog in Sources/Sesame/Docs.docc.
# Any docc warning (a broken symbol link, an undocumented parameter) fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."

graphs=.build/sesame-symbol-graphs
rm -rf "$graphs"
mkdir -p "$graphs"
swift package dump-symbol-graph --minimum-access-level public >/dev/null
dumped="$(find .build -path '*/symbolgraph/Sesame.symbols.json' -newer Package.swift | head -1)"
[ -n "$dumped" ] || { echo "docs: no symbol graph for Sesame was written" >&2; exit 1; }
cp "$(dirname "$dumped")"/Sesame.symbols.json "$(dirname "$dumped")"/Sesame@*.symbols.json "$graphs"/ 2>/dev/null || true

log=.build/docc.log
docc convert Sources/Sesame/Docs.docc \
    --fallback-display-name Sesame \
    --fallback-bundle-identifier dev.sesame.Sesame \
    --additional-symbol-graph-dir "$graphs" \
    --output-path .build/docs >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
if grep -Eq "warning|error" "$log"; then
    grep -E -A6 "warning|error" "$log" >&2
    echo "docs: docc reported problems (above)" >&2
    exit 1
fi
echo "docs: .build/docs"
