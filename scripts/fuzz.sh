#!/usr/bin/env bash
# Fuzzes Sesame's parsers with libFuzzer, each target for a bounded time (FUZZ_SECONDS, default
# 20 s each; FUZZ_TARGETS, default all). The `Sesame` module's sources and Fuzz/*.swift are
# compiled together by swiftc with -sanitize=fuzzer,address into one binary; SESAME_FUZZ_TARGET
# chooses the target. Each starts from its seed corpus in Fuzz/Corpus/<target>/ (checked in) and
# keeps what it finds in .build/fuzz/corpus/<target>/. A crash, an assertion, a leak or a
# 10-second input fails the run and leaves the input in .build/fuzz/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seconds="${FUZZ_SECONDS:-20}"
targets=(${FUZZ_TARGETS:-auth-challenge http1-response set-cookie cookie-jar netrc credential-store certificates user-files location http2-frames})
out=.build/fuzz
mkdir -p "$out/include"

# The C shim as SwiftPM builds it, instrumented like the rest.
cat >"$out/include/module.modulemap" <<MAP
module CSesameShims {
    header "$root/Sources/CSesameShims/include/CSesameShims.h"
    export *
}
MAP
build() {
    clang -O1 -fsanitize=address,fuzzer-no-link -c Sources/CSesameShims/shims.c \
        -I Sources/CSesameShims/include -o "$out/shims.o"
    swiftc -O -g -sanitize=fuzzer,address -parse-as-library -module-name SesameFuzz -package-name Sesame -swift-version 6 -num-threads 2 \
        -I Sources/COpenSSL -I Sources/CZlib -I Sources/CBrotli -I Sources/CNGHTTP2 -I "$out/include" \
        $(find Sources/Sesame -name '*.swift' | sort) Fuzz/*.swift "$out/shims.o" \
        -lssl -lcrypto -lz -lbrotlidec -lnghttp2 -o "$out/sesame-fuzzer"
}
build >"$out/build.log" 2>&1 || {
    cat "$out/build.log"
    exit 1
}

export SWIFT_BACKTRACE=enable=no
for target in "${targets[@]}"; do
    corpus="$out/corpus/$target"
    mkdir -p "$corpus" "$out/$target"
    if [ -d "Fuzz/Corpus/$target" ]; then cp -n Fuzz/Corpus/"$target"/* "$corpus"/ 2>/dev/null || true; fi
    log="$out/$target/fuzz.log"
    if ! (cd "$out/$target" && SESAME_FUZZ_TARGET="$target" ../sesame-fuzzer -max_total_time="$seconds" \
        -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$root/$corpus" >fuzz.log 2>&1); then
        tail -40 "$log"
        echo "fuzz: $target failed on the input saved in $out/$target (see $log)" >&2
        exit 1
    fi
    runs=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}')
    coverage=$(grep -oE "cov: [0-9]+" "$log" | tail -1)
    echo "fuzz: $target: ${runs:-?} runs in ${seconds} s, ${coverage:-cov: ?} edges, $(ls "$corpus" | wc -l) inputs in the corpus"
done
