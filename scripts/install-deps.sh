#!/usr/bin/env bash
# Installs what building, testing and benchmarking Sesame needs on a fresh Debian 12 machine with
# the Swift toolchain: OpenSSL 3, zlib and nghttp2 headers, pkg-config, the openssl CLI and nginx (test
# peers), squid (a proxy peer), curl and libcurl (benchmark baselines), the CA bundle, libsecret
# (loaded at run time for the Secret Service store) with GNOME Keyring, dbus-daemon and secret-tool
# (the keyring peer: a private session bus per test), nghttpd (an HTTP/2 peer), h2load (the load
# generator the benchmark measures the servers' ceiling with), MIT Kerberos's KDC, kadmin.local and
# kinit with Apache's mod_auth_gssapi and gss-ntlmssp (the Negotiate peers; GSSAPI itself is loaded at
# run time), and httpbin under gunicorn in a
# Python virtual environment at .build/peers/httpbin-venv (a test peer). Idempotent: does nothing
# when everything is present.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.build/peers/httpbin-venv"

install_httpbin() {
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import httpbin, gunicorn' 2>/dev/null; then
        return
    fi
    echo "install-deps: installing httpbin and gunicorn into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'httpbin==0.10.4' 'gunicorn>=21,<24'
}

packages=(libssl-dev zlib1g-dev libbrotli-dev libnghttp2-dev pkg-config openssl ca-certificates publicsuffix nginx apache2 apache2-utils squid curl libcurl4-openssl-dev python3 python3-venv libsecret-1-0 libsecret-tools gnome-keyring dbus-daemon dbus-bin nghttp2-server nghttp2-client krb5-kdc krb5-admin-server krb5-user libgssapi-krb5-2 libapache2-mod-auth-gssapi gss-ntlmssp)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    install_httpbin
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Keep apt from starting the system nginx on port 80: the tests start their own on loopback.
created_policy=false
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${as_root[@]}" chmod +x /usr/sbin/policy-rc.d
    created_policy=true
fi
cleanup() { if [ "$created_policy" = true ]; then "${as_root[@]}" rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_httpbin
