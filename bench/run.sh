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
#   REAL_RUN=1           the real-run section: a public mini-swe-agent SWE-bench run (500
#                        trajectories, fetched once into target/bench-real from a pinned commit;
#                        CORONER_MIRROR=DIR reads it from a local mirror instead), coroner
#                        against Python's json.load; REAL_RUN=only measures that alone (and
#                        rewrites BENCHMARKS.md from the results already in OUT)
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

REAL_RUN=${REAL_RUN:-1}
REAL_REPO=gruckion/mini-swe-agent
REAL_COMMIT=d12a71affd95403b036b2bdbd827349b77bfffb9
REAL_PATH=swebench_results/20251118_gemini-3-pro-74pct
REAL_DIR=target/bench-real

# The real run, as published: one directory at the pinned commit, from a sparse blobless clone
# (or `git archive` from a local mirror of <owner>+<name>/repo git directories).
fetch_real_run() {
    if [ -f "$REAL_DIR/.complete" ] && [ "$(cat "$REAL_DIR/.complete")" = "$REAL_COMMIT" ]; then
        return
    fi
    rm -rf "$REAL_DIR" && mkdir -p "$REAL_DIR"
    local mirror="${CORONER_MIRROR:-}/${REAL_REPO/\//+}/repo"
    if [ -n "${CORONER_MIRROR:-}" ] && [ -d "$mirror" ]; then
        log "extracting $REAL_PATH at ${REAL_COMMIT:0:8} from $mirror"
        git -C "$mirror" archive --format=tar "$REAL_COMMIT" -- "$REAL_PATH" | tar -x -C "$REAL_DIR"
    else
        # A sparse checkout fetches the directory's blobs in one batch (`git archive` on a
        # blobless clone would fetch them one by one).
        local clone=target/bench-real-git
        if [ ! -d "$clone/.git" ]; then
            log "cloning $REAL_REPO (blobless, sparse)"
            git clone --quiet --filter=blob:none --no-checkout --sparse "https://github.com/$REAL_REPO" "$clone"
        fi
        git -C "$clone" sparse-checkout set --no-cone "/$REAL_PATH/"
        git -C "$clone" checkout --quiet "$REAL_COMMIT"
        mkdir -p "$REAL_DIR/$(dirname "$REAL_PATH")"
        cp -r "$clone/$REAL_PATH" "$REAL_DIR/$REAL_PATH"
    fi
    echo "$REAL_COMMIT" > "$REAL_DIR/.complete"
}

measure_real_run() {
    fetch_real_run
    python3 bench/real_run.py --coroner "$1" --run "$REAL_DIR/$REAL_PATH" --out "$OUT/real_run.json" --passes 3 \
        --source "$REAL_REPO@${REAL_COMMIT:0:8}:$REAL_PATH"
}

if [ "$REAL_RUN" = only ]; then
    # The same features as the full suite's build, so neither rebuilds the other's binary.
    cargo build --release --features bench --bin coroner
    mkdir -p "$OUT"
    measure_real_run "${CARGO_TARGET_DIR:-target}/release/coroner"
    exec python3 bench/suite.py --corpus "$CORPUS" --out "$OUT" --only-report
fi

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
BIN=${CARGO_TARGET_DIR:-target}/release/coroner

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
if [ "$REAL_RUN" = 1 ]; then
    mkdir -p "$OUT"
    measure_real_run "$BIN"
fi
python3 bench/suite.py "${args[@]}"
log "done: BENCHMARKS.md"
