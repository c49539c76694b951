#!/usr/bin/env bash
# Compiles every ```swift block of README.md and of the DocC catalogs, as printed, in a package of
# its own that depends on this one by path: one executable target per block, so two samples may
# declare the same names, and a sample sees only what its own imports bring.
#
# A block is the whole `main.swift` of its target, verbatim. A block preceded by the line
# `<!-- fragment -->` is a piece of a larger program: it is wrapped in an `async throws` function
# after `import Foundation` and the import of the module whose catalog holds it (README.md and
# the Sesame catalog: `Sesame`). A block that is neither complete nor marked fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out=.build/doc-samples
rm -rf "$out/Sources"
mkdir -p "$out/Sources"

documents=(README.md Sources/*/*.docc/*.md)
targets=()
index="$out/index.txt"
: >"$index"
for document in "${documents[@]}"; do
    case "$document" in
    Sources/*/*.docc/*) module="${document#Sources/}" && module="${module%%/*}" ;;
    *) module=Sesame ;;
    esac
    stem="$(basename "$document" .md)"
    [ "$module" = Sesame ] && [ "$document" = README.md ] || stem="${module}_$stem"
    # Writes each block to $out/Sources/<stem>_<n>/main.swift and lists "<target> <line> <fragment>".
    awk -v out="$out/Sources" -v stem="$stem" '
        function flush() { close(file) }
        !inBlock && /^[ \t]*```swift[ \t]*$/ {
            n += 1; inBlock = 1; target = stem "_" n
            system("mkdir -p \"" out "/" target "\"")
            file = out "/" target "/main.swift"
            printf "" > file
            print target, NR, (previous ~ /^[ \t]*<!-- fragment -->[ \t]*$/ ? "fragment" : "whole")
            next
        }
        inBlock && /^[ \t]*```[ \t]*$/ { inBlock = 0; flush(); previous = $0; next }
        inBlock { print >> file; next }
        { if ($0 !~ /^[ \t]*$/) previous = $0 }
    ' "$document" | while read -r target line kind; do
        echo "$target $document:$line $kind $module" >>"$index"
    done
done

while read -r target location kind module; do
    main="$out/Sources/$target/main.swift"
    if [ "$kind" = fragment ]; then
        body="$(cat "$main")"
        {
            echo "import Foundation"
            echo "import $module"
            echo
            echo "func fragment() async throws {"
            printf '%s\n' "$body" | sed 's/^\(.\)/    \1/'
            echo "}"
        } >"$main"
    elif ! grep -q '^import ' "$main"; then
        echo "doc samples: $location: the block has no import; print one or mark it <!-- fragment -->" >&2
        exit 1
    fi
    targets+=("$target")
done <"$index"

package="$(basename "$root")"
{
    echo "// swift-tools-version:6.0"
    echo "// Written by scripts/doc-samples.sh: one target per Swift block of the documentation."
    echo "import PackageDescription"
    echo
    echo "let products = [\"Sesame\", \"SesameTesting\", \"SesameNetworking\", \"SesameAFNetworking\"]"
    echo "let samples = ["
    for target in "${targets[@]}"; do echo "    \"$target\","; done
    echo "]"
    echo "let package = Package("
    echo "    name: \"DocSamples\","
    echo "    dependencies: [.package(path: \"$root\")],"
    echo "    targets: samples.map { sample in"
    echo "        .executableTarget("
    echo "            name: sample,"
    echo "            dependencies: products.map { .product(name: \$0, package: \"$package\") }"
    echo "        )"
    echo "    }"
    echo ")"
} >"$out/Package.swift"

echo "doc samples: ${#targets[@]} blocks from ${#documents[@]} documents"
log="$out/build.log"
if ! swift build --package-path "$out" >"$log" 2>&1; then
    grep -E "error:" "$log" | sort -u >&2 || true
    echo "doc samples: these blocks do not compile as printed (target → place):" >&2
    grep -oE "Sources/[A-Za-z0-9]+_[0-9]+/" "$log" | sort -u | while read -r path; do
        target="${path#Sources/}" && target="${target%/}"
        grep "^$target " "$index" >&2
    done
    exit 1
fi
echo "doc samples: every block compiles"
