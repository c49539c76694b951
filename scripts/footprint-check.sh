#!/usr/bin/env bash
# Builds a program that imports only Sesame (and FoundationEssentials), in a package of its own
# that depends on this one by path, and checks what it loads: no libFoundation, no ICU, no
# FoundationNetworking. A Sesame source file that imports Foundation again fails here. The
# command-line tool is checked too: it loads no Foundation either.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out=.build/footprint-probe
rm -rf "$out/Sources"
mkdir -p "$out/Sources/Probe"
cat >"$out/Package.swift" <<PACKAGE
// swift-tools-version:6.0
// Written by scripts/footprint-check.sh.
import PackageDescription

let package = Package(
    name: "FootprintProbe",
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(name: "Probe", dependencies: [.product(name: "Sesame", package: "$(basename "$root")")])
    ]
)
PACKAGE
cat >"$out/Sources/Probe/main.swift" <<'SWIFT'
import FoundationEssentials
import Sesame

// Touches the session, the trust store, the serializers and the cookie store, so that the
// linker keeps what a real program uses.
var configuration = SessionConfiguration.default
configuration.proxy = .none
let session = Session(configuration: configuration)
let request = try HTTPRequestSerializer().request(method: "GET", url: URL(string: "https://example.test/")!, parameters: ["q": "1"])
print(session.configuration.maximumConnectionsPerHost, request.url.absoluteString, CookieStore().allCookies.count)
SWIFT
swift build --package-path "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
probe="$(swift build --package-path "$out" --show-bin-path)/Probe"
libraries="$(ldd "$probe")"
if grep -Eq "libFoundation\.so|libFoundationNetworking|libFoundationXML|_FoundationICU|libicu" <<<"$libraries"; then
    echo "footprint: a program importing only Sesame loads Foundation or ICU:" >&2
    grep -E "Foundation|icu|ICU" <<<"$libraries" >&2
    exit 1
fi
"$probe" >/dev/null
echo "footprint: a program importing only Sesame loads $(grep -c "=>" <<<"$libraries") shared libraries, none of them libFoundation or ICU"

swift build --product sesame >"$out/cli-build.log" 2>&1 || { cat "$out/cli-build.log" >&2; exit 1; }
cli="$(swift build --show-bin-path)/sesame"
cli_libraries="$(ldd "$cli")"
if grep -Eq "libFoundation\.so|libFoundationNetworking|libFoundationXML|_FoundationICU|libicu" <<<"$cli_libraries"; then
    echo "footprint: the sesame command loads Foundation or ICU:" >&2
    grep -E "Foundation|icu|ICU" <<<"$cli_libraries" >&2
    exit 1
fi
echo "footprint: the sesame command loads $(grep -c "=>" <<<"$cli_libraries") shared libraries, none of them libFoundation or ICU"
