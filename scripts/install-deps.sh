#!/usr/bin/env bash
# Installs what building and testing Sesame needs on a fresh Debian 12 machine with the Swift
# toolchain: OpenSSL 3 headers (libssl-dev), zlib headers (zlib1g-dev), pkg-config, the openssl CLI (test peer) and the CA
# bundle. Idempotent: does nothing when everything is present.
set -euo pipefail

packages=(libssl-dev zlib1g-dev pkg-config openssl ca-certificates)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
