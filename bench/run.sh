#!/usr/bin/env bash
# coroner's benchmark suite, one command: builds the release binaries once, generates the
# corpus (if it is not there already with the same options), sets up a venv with Inspect AI,
# runs every measurement and rewrites BENCHMARKS.md.
#
#   bench/run.sh
#
# Settings (environment):
#   SIZE=2G              corpus size on disk (gen-corpus --target-bytes)
#   SEED=1               corpus seed
#   CORPUS=target/bench-corpus   where the corpus lives (not committed; reused between runs)
#   OUT=target/bench-results     raw results (results.json, perf data, peer outputs)
#   PASSES=2             runs per coroner measurement; the fastest is reported
#   INSPECT_SUBSET=60M   Inspect's reader is slow: it and coroner are compared on the first
#                        .eval files totalling this many bytes
#   PROFILE=1            record a perf profile of classify (0 to skip)
#   REPORT_ONLY=1        rewrite BENCHMARKS.md from OUT/results.json without measuring
#
# Nothing here runs in `cargo test`. Needs: cargo, python3 (3.11+), /usr/bin/time, network
# access to PyPI the first time (inspect_ai), perf for the profile (optional).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-2G}
SEED=${SEED:-1}
CORPUS=${CORPUS:-target/bench-corpus}
OUT=${OUT:-target/bench-results}
PASSES=${PASSES:-2}
INSPECT_SUBSET=${INSPECT_SUBSET:-60M}
PROFILE=${PROFILE:-1}
VENV=target/bench-venv

log() { echo "[bench $(date +%T)] $*" >&2; }
bytes() {
    python3 -c "import sys; s=sys.argv[1].upper(); m={'K':10**3,'M':10**6,'G':10**9}; print(int(float(s[:-1])*m[s[-1]]) if s[-1] in m else int(s))" "$1"
}

if [ "${REPORT_ONLY:-0}" = 1 ]; then
    exec python3 bench/suite.py --corpus "$CORPUS" --out "$OUT" --only-report
fi

log "building release binaries (once; target/ stays warm)"
# `cargo build --release --bench` shares the release artifacts (`cargo bench` would build
# everything again under the bench profile).
cargo build --release --features bench --bin coroner --bench parse_floor
FLOOR=$(cargo build --release --features bench --bench parse_floor --message-format=json 2>/dev/null |
    python3 -c "import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get('reason') == 'compiler-artifact' and m['target']['name'] == 'parse_floor' and m.get('executable'):
        print(m['executable'])")
BIN=target/release/coroner

want="seed = $SEED"
target="target_bytes = $(bytes "$SIZE")"
if [ -f "$CORPUS/corpus.toml" ] && grep -qx "$want" "$CORPUS/corpus.toml" && grep -qx "$target" "$CORPUS/corpus.toml"; then
    log "corpus $CORPUS is current ($SIZE, seed $SEED)"
else
    log "generating the corpus: $SIZE, seed $SEED, into $CORPUS"
    rm -rf "$CORPUS"
    "$BIN" gen-corpus --out "$CORPUS" --target-bytes "$SIZE" --seed "$SEED"
fi

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import inspect_ai" 2>/dev/null; then
    log "installing inspect_ai from PyPI into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet inspect_ai
fi

args=(--corpus "$CORPUS" --out "$OUT" --coroner "$BIN" --floor "$FLOOR" --venv-python "$VENV/bin/python"
    --passes "$PASSES" --inspect-subset "$(bytes "$INSPECT_SUBSET")")
if [ "$PROFILE" = 1 ] && command -v perf >/dev/null; then
    args+=(--profile)
fi
log "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/suite.py "${args[@]}"
log "done: BENCHMARKS.md"
