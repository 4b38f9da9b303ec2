#!/usr/bin/env bash
# Byte-for-byte comparison of what two coroner binaries write: `classify` verdicts and `ingest`
# records of every sample directory, the generated benchmark corpus and the real run when they
# are there, or of the paths given. A speed-up must not change a byte; this is how that is shown.
#
#   bench/same_verdicts.sh BEFORE AFTER [PATH...]
#
# Both binaries run with 2 threads (output is the same for any thread count; the tests check
# that). Exits 1 when any output differs, naming the path and the first differing line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
A=$1 B=$2
shift 2
paths=("$@")
if [ ${#paths[@]} -eq 0 ]; then
    for d in samples/*/; do paths+=("${d%/}"); done
    for d in target/bench-corpus target/bench-real accuracy/data/*/; do
        d=${d%/}
        [ -d "$d" ] && paths+=("$d")
    done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
differ=0 same=0
for p in "${paths[@]}"; do
    for cmd in classify ingest; do
        for side in a b; do
            bin=$A
            [ "$side" = b ] && bin=$B
            # Exit codes 0-3 are verdicts about the input (quarantined files, failed gates);
            # both sides must give the same one.
            set +e
            RAYON_NUM_THREADS=2 "$bin" "$cmd" -q "$p" -o "$tmp/$side.out" 2> "$tmp/$side.err"
            echo $? > "$tmp/$side.code"
            set -e
            [ -f "$tmp/$side.out" ] || : > "$tmp/$side.out"
        done
        if cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.code" "$tmp/b.code"; then
            same=$((same + 1))
        else
            differ=$((differ + 1))
            echo "DIFFERENT: $cmd $p (exit $(cat "$tmp/a.code") vs $(cat "$tmp/b.code"))"
            diff <(head -c 2000000 "$tmp/a.out") <(head -c 2000000 "$tmp/b.out") | head -4 | cut -c1-300 || true
        fi
        rm -f "$tmp/a.out" "$tmp/b.out"
    done
done
echo "same_verdicts: $same outputs identical, $differ different (${#paths[@]} paths, classify and ingest each)"
[ "$differ" -eq 0 ]
