#!/usr/bin/env bash
# Runs every fuzz target in turn for SECONDS each (nightly and cargo-fuzz required:
# `cargo install cargo-fuzz --locked`), after building each target's seed corpus in
# fuzz/corpus/<target>/ from samples/ and fuzz/seeds/<target>/.
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# The seed rules are those of `coroner::fuzzing::seeds` (which `cargo test` replays):
#   ingest, ingest_forced, classify  every file under samples/ (not samples/hostile/fuzz/), framed
#                                     as "<parent dir>/<file name>\n<bytes>"
#   shell        samples named commands.txt or *.sh      python       samples named *.py
#   study        samples named study*.toml               predictions  *.toml under a predictions/ dir
#   lock         samples named *.lock
# plus fuzz/seeds/<target>/*; seeds over 1 MiB are left out.
#
# A crash stops that target (libFuzzer stops at the first), is saved in fuzz/artifacts/<target>/,
# and the next target runs. Minimize one with
#   cargo +nightly fuzz tmin -O --debug-assertions -s none TARGET fuzz/artifacts/TARGET/crash-...
# and keep it as samples/hostile/fuzz/TARGET/<short-name> (tests/fuzz_replay.rs replays it).
# CARGO_TARGET_DIR is honoured (default: fuzz/target). Exit status: 1 when a target crashed.
set -uo pipefail

secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
all=(ingest ingest_forced classify shell python study predictions lock)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
flags=(-O --debug-assertions -s none)
max_len=$((1 << 20))

cd "$here" || exit 2
# Built once, then each target's binary is run directly: `cargo fuzz run` would rebuild
# between targets whenever a source file changed meanwhile. FUZZ_NO_BUILD=1 runs what is built.
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
    cargo +nightly fuzz build "${flags[@]}" || exit 2
fi
bin_dir="$CARGO_TARGET_DIR/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

# Seed files under samples/ (NUL-separated), for one target.
sample_seeds() {
    local find_args
    case $1 in
        ingest | ingest_forced | classify) find_args=(-type f) ;;
        shell) find_args=(-type f '(' -name commands.txt -o -name '*.sh' ')') ;;
        python) find_args=(-type f -name '*.py') ;;
        study) find_args=(-type f -name 'study*.toml') ;;
        predictions) find_args=(-type f -name '*.toml' -path '*/predictions/*') ;;
        lock) find_args=(-type f -name '*.lock') ;;
        *) return ;;
    esac
    find "$root/samples" -path "$root/samples/hostile/fuzz" -prune -o "${find_args[@]}" -size -$((max_len + 1))c -print0
}

seed_corpus() {
    local t=$1 dir="$here/corpus/$1" f rel n=0
    mkdir -p "$dir"
    while IFS= read -r -d '' f; do
        rel=${f#"$root/"}
        case $t in
            ingest | ingest_forced | classify)
                { printf '%s/%s\n' "$(basename "$(dirname "$f")")" "$(basename "$f")"; cat "$f"; } > "$dir/seed-${rel//\//__}" ;;
            *) cp "$f" "$dir/seed-${rel//\//__}" ;;
        esac
        n=$((n + 1))
    done < <(sample_seeds "$t"; [ -d "$here/seeds/$t" ] && find "$here/seeds/$t" -type f -size -$((max_len + 1))c -print0)
    echo "$n"
}

declare -A result
status=0
for t in "${targets[@]}"; do
    n=$(seed_corpus "$t")
    log="$here/artifacts/$t.log"
    mkdir -p "$here/artifacts/$t"
    echo "== $t: $n seeds, $secs s"
    start=$(date +%s)
    "$bin_dir/$t" "$here/corpus/$t" -artifact_prefix="$here/artifacts/$t/" \
        -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
        > "$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -ao 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    crash=$(grep -ao "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
    if [ $rc -ne 0 ]; then
        status=1
        panic=$(grep -a -m1 -A1 "panicked at" "$log" | tr '\n' ' ')
        result[$t]="CRASH after ${took}s, ${execs:-?} execs: ${crash:-no artifact} ${panic}"
    else
        result[$t]="ok: ${took}s, ${execs:-?} execs, $cov"
    fi
    echo "   ${result[$t]} (log: ${log#"$root/"})"
done

echo
echo "== summary ($secs s per target)"
for t in "${targets[@]}"; do
    printf '%-14s %s\n' "$t" "${result[$t]}"
done
exit $status
