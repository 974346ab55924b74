#!/usr/bin/env bash
# The cargo-fuzz targets (fuzz/) for a bounded time each: the tryte parser, the transaction
# parser and the CLI's line reader. Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Needs cargo-fuzz (cargo install cargo-fuzz). It runs on the stable toolchain: RUSTC_BOOTSTRAP=1
# lets cargo-fuzz pass its -Z flags, and --sanitizer none skips AddressSanitizer (nightly-only;
# the parsers have no unsafe code for it to watch). On nightly, set CURLPOW_FUZZ_SANITIZER=address.
# Corpora stay in fuzz/corpus/TARGET (not committed), crashes in fuzz/artifacts/TARGET.
# The same properties run on pseudo-random inputs in `cargo test --test cli cli_parsers_random::`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trytes transaction line_reader)
sanitizer="${CURLPOW_FUZZ_SANITIZER:-none}"
export RUSTC_BOOTSTRAP=1
cd fuzz
cargo fuzz build --sanitizer "$sanitizer"
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    # Seeds: the example transaction, and it with CRLF and a BOM.
    cp ../examples/transaction.trytes "corpus/$t/seed-example"
    printf '%s\r\n' "$(tr -d '\n' < ../examples/transaction.trytes)" > "corpus/$t/seed-crlf"
    printf '\xef\xbb\xbf%s\n' "$(tr -d '\n' < ../examples/transaction.trytes)" > "corpus/$t/seed-bom"
    echo "== $t: ${seconds} s" >&2
    cargo fuzz run --sanitizer "$sanitizer" "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 2>&1 |
        grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)|SUMMARY|panicked|ERROR" || true
    if [ -n "$(ls -A "artifacts/$t" 2>/dev/null)" ]; then
        echo "FAILED: $t left crash inputs in fuzz/artifacts/$t" >&2
        exit 1
    fi
done
