#!/usr/bin/env bash
# Builds the DocC documentation with the toolchain's docc into .build/docs/<module>: the
# compiler's symbol graph of each product's public API, then its catalog (Sources/<module>/Docs.docc).
# Any docc warning (a broken symbol link, an undocumented parameter) fails the build, and so does
# a public symbol of any product without a doc comment (scripts/doc-coverage.py).
set -euo pipefail
cd "$(dirname "$0")/.."

swift package dump-symbol-graph --minimum-access-level public >/dev/null
dumped="$(find .build -path '*/symbolgraph/Sesame.symbols.json' -newer Package.swift | head -1)"
[ -n "$dumped" ] || { echo "docs: no symbol graph for Sesame was written" >&2; exit 1; }
symbolgraphs="$(dirname "$dumped")"

scripts/doc-coverage.py "$symbolgraphs" Sesame SesameNetworking SesameAFNetworking SesameTesting

mkdir -p .build/docs
for module in Sesame SesameTesting; do
    graphs=".build/symbol-graphs/$module"
    rm -rf "$graphs"
    mkdir -p "$graphs"
    cp "$symbolgraphs/$module.symbols.json" "$graphs"/
    cp "$symbolgraphs/$module"@*.symbols.json "$graphs"/ 2>/dev/null || true
    log=".build/docc-$module.log"
    docc convert "Sources/$module/Docs.docc" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "dev.sesame.$module" \
        --additional-symbol-graph-dir "$graphs" \
        --output-path ".build/docs/$module" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    if grep -Eq "warning|error" "$log"; then
        grep -E -A6 "warning|error" "$log" >&2
        echo "docs: docc reported problems in $module (above)" >&2
        exit 1
    fi
    echo "docs: .build/docs/$module"
done
