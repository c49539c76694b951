#!/usr/bin/env bash
# Fuzzes the WWW-Authenticate / Proxy-Authenticate parser with libFuzzer for a bounded time
# (default 60 s; FUZZ_SECONDS overrides). The parser's source files are compiled with the fuzz entry
# point by swiftc with -sanitize=fuzzer,address; a crash, an assertion or a leak fails the run and
# leaves the input in .build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
out=.build/fuzz
mkdir -p "$out/corpus"
sources=(
    Fuzz/AuthChallengeParserFuzz.swift
    Sources/Sesame/Schemes/AuthChallengeParser.swift
    Sources/Sesame/Schemes/HTTPAuthChallenge.swift
    Sources/Sesame/Schemes/AuthParameterList.swift
    Sources/Sesame/Schemes/DigestChallenge.swift
    Sources/Sesame/Schemes/DigestAlgorithm.swift
    Sources/Sesame/Schemes/HexString.swift
    Sources/Sesame/Challenge/AuthenticationMethod.swift
)
# Seeds: the shapes servers send.
printf 'Basic realm="x", charset="UTF-8"' >"$out/corpus/basic"
printf 'Digest realm="r", nonce="n", qop="auth,auth-int", algorithm=SHA-256, opaque="o", userhash=true' >"$out/corpus/digest"
printf 'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"\nNegotiate abc==, Bearer' >"$out/corpus/several"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name SesameFuzz \
    -I Sources/COpenSSL \
    "${sources[@]}" -lcrypto -o "$out/auth-challenge-fuzzer" >"$out/build.log" 2>&1 || {
    cat "$out/build.log"
    exit 1
}
cd "$out"
export SWIFT_BACKTRACE=enable=no
./auth-challenge-fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 corpus >fuzz.log 2>&1 || {
    tail -40 fuzz.log
    echo "fuzz: the parser failed on the input saved in $out (see fuzz.log)" >&2
    exit 1
}
grep -E "^(Done|stat::number_of_executed_units)" fuzz.log || tail -3 fuzz.log
