#!/usr/bin/env bash
# One large Inspect AI log: ingest and classify throughput and peak memory on a single `.eval`
# archive of about 1 GB (issue: "peak RSS must be far below the file size"). Writes
# bench/large-eval.md.
#
#   bench/large_eval.sh
#
# Settings (environment):
#   SAMPLES=28000     samples in the archive (28,000 give 1.04 GB)
#   SEED=1            generator seed
#   DIR=target/bench-large-eval   where the archive lives (reused when it is there)
#
# Nothing here runs in `cargo test`. Needs: cargo, /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."

SAMPLES=${SAMPLES:-28000}
SEED=${SEED:-1}
DIR=${DIR:-target/bench-large-eval}
BIN=target/release/coroner

cargo build --release --locked --quiet --features bench
if ! ls "$DIR"/inspect/*/*.eval >/dev/null 2>&1; then
  rm -rf "$DIR"
  "$BIN" gen-corpus --out "$DIR" --formats inspect --count "$SAMPLES" --eval-samples "$SAMPLES" --seed "$SEED" -q
fi
EVAL=$(ls "$DIR"/inspect/*/*.eval | head -n1)
BYTES=$(stat -c %s "$EVAL")
cat "$EVAL" >/dev/null   # into the page cache, as for the main suite

# The same samples as one `.json` EvalLog document of about 1.1 GB (Inspect's older log format,
# which coroner streams above 64 MB instead of reading whole).
JSON="$DIR/large.json"
if [ ! -f "$JSON" ]; then
  python3 - "$EVAL" "$JSON" <<'PY'
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
header = json.loads(z.read("header.json"))
with open(sys.argv[2], "w") as out:
    out.write('{"version": 2, "status": "success", "eval": ' + json.dumps(header["eval"]) + ', "plan": ' + json.dumps(header.get("plan", {})) + ',\n "samples": [\n')
    size = 0
    for i, name in enumerate(n for n in z.namelist() if n.startswith("samples/")):
        body = z.read(name).decode()
        out.write((",\n" if i else "") + body)
        size += len(body)
        if size > 1.1e9:
            break
    out.write('\n],\n "results": ' + json.dumps(header.get("results", {})) + "}\n")
PY
fi
JSON_BYTES=$(stat -c %s "$JSON")
cat "$JSON" >/dev/null

measure() { # name, command... -> "name seconds peak_kb"
  local name=$1; shift
  local log
  log=$(mktemp)
  /usr/bin/time -v "$@" 2>"$log" >/dev/null
  local wall peak
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  peak=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  rm -f "$log"
  echo "$name $wall $peak"
}

{
  echo "# One large Inspect log"
  echo
  echo "Written by \`bench/large_eval.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), coroner commit \`$(git rev-parse --short HEAD)\`,"
  echo "$(nproc) cores. The archive: \`coroner gen-corpus --formats inspect --count $SAMPLES --eval-samples $SAMPLES --seed $SEED\`,"
  echo "one \`.eval\` of $SAMPLES samples, $(awk -v b="$BYTES" 'BEGIN{printf "%.2f GB", b/1e9}') on disk (read from the page cache; output to \`/dev/null\`)."
  echo
  echo "| command | wall | MB/s of the file | peak RSS | peak RSS / file size |"
  echo "|---|---:|---:|---:|---:|"
  for cmd in ingest classify; do
    read -r name wall peak < <(measure "$cmd" "$BIN" "$cmd" "$EVAL" -q -o /dev/null)
    awk -v n="$name" -v w="$wall" -v p="$peak" -v b="$BYTES" \
      'BEGIN{printf "| `coroner %s` | %.1f s | %.1f | %.0f MB | %.1f%% |\n", n, w, b/1e6/w, p/1024, 100*p*1024/b}'
  done
  for cmd in ingest classify; do
    read -r name wall peak < <(measure "$cmd" "$BIN" "$cmd" "$JSON" -q -o /dev/null)
    awk -v n="$name" -v w="$wall" -v p="$peak" -v b="$JSON_BYTES" \
      'BEGIN{printf "| `coroner %s` on the same samples as one %.2f GB `.json` log | %.1f s | %.1f | %.0f MB | %.1f%% |\n", n, b/1e9, w, b/1e6/w, p/1024, 100*p*1024/b}'
  done
  echo
  echo "Members are inflated one at a time with a bound on each (no archive is loaded whole), so"
  echo "peak memory follows the largest sample and the batches in flight, not the file. A \`.json\` log"
  echo "over 64 MB is scanned at the byte level for its header and sample boundaries, then read one"
  echo "sample at a time (on one thread)."
} > bench/large-eval.md
cat bench/large-eval.md
