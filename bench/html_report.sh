#!/usr/bin/env bash
# The HTML report at scale (issue: "a 10,000-trajectory study writes its site in seconds and the
# overview opens fast; trajectory pages with 5,000 steps render without freezing"):
#   - the time, peak memory and size of `report --html` for a generated study of 10,000
#     mini-swe-agent trajectories, beside `report` alone on the same files;
#   - first paint, DOMContentLoaded and load in headless Chromium of the overview, the search
#     page, the largest trajectory page of that study, and of one generated 5,000-step run.
# Prints a Markdown section for BENCHMARKS.md.
#
#   bench/html_report.sh
#
# Settings (environment): COUNT=10000 trajectories, SEED=7, DIR=target/bench-html (reused),
# BIN=target/release/coroner (built with --features bench when it is the default).
# Needs: Chromium (CORONER_CHROMIUM, else /usr/bin/chromium), `npm ci` in tests/browser,
# /usr/bin/time. Nothing here runs in `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-10000}
SEED=${SEED:-7}
DIR=${DIR:-target/bench-html}
if [ -z "${BIN:-}" ]; then
  BIN=target/release/coroner
  cargo build --release --locked --quiet --features bench
fi

if [ ! -d "$DIR/corpus/mini-v1" ]; then
  rm -rf "$DIR/corpus"
  "$BIN" gen-corpus --out "$DIR/corpus" --formats mini-v1 --count "$COUNT" --seed "$SEED" -q
fi
INPUT_MB=$(du -sm "$DIR/corpus/mini-v1" | cut -f1)
cat $(find "$DIR/corpus/mini-v1" -type f) >/dev/null  # into the page cache

measure() { # label, args... → "wall user sys peakKB"
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/stderr.txt" || { cat "$DIR/stderr.txt"; exit 1; }
  cat "$DIR/time.txt"
}
rm -rf "$DIR/site"
read -r W1 U1 S1 M1 < <(measure "$BIN" report "$DIR/corpus/mini-v1" -q)
read -r W2 U2 S2 M2 < <(measure "$BIN" report "$DIR/corpus/mini-v1" --html "$DIR/site" -q)
SITE_MB=$(du -sm "$DIR/site" | cut -f1)
PAGES=$(find "$DIR/site" -name '*.html' | wc -l)

rm -rf "$DIR/long" "$DIR/long-site"
python3 bench/long_trajectory.py "$DIR/long" 5000
"$BIN" report "$DIR/long" --html "$DIR/long-site" -q >/dev/null 2>&1
LARGEST=$(find "$DIR/site/t" -name '*.html' -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2)
LONG=$(find "$DIR/long-site/t" -name '*.html' | sort | tail -n1)
PAINT=$(cd tests/browser && node paint.mjs "../../$DIR/site/index.html" "../../$DIR/site/search.html" "../../$LARGEST" "../../$LONG")

cat <<MD
## The HTML report at scale ($(date -u +%Y-%m-%d))

$(nproc) cores, page cache warm, release build. A generated study of $COUNT mini-swe-agent v1
trajectories (\`coroner gen-corpus --formats mini-v1 --count $COUNT --seed $SEED\`, $INPUT_MB MB),
one arm per model. Command: \`bench/html_report.sh\`.

| run | wall | user CPU | system CPU | peak RSS |
|---|---:|---:|---:|---:|
| \`report\` (tables only) | $W1 s | $U1 s | $S1 s | $((M1 / 1024)) MB |
| \`report --html\` | $W2 s | $U2 s | $S2 s | $((M2 / 1024)) MB |

The site: $PAGES pages, $SITE_MB MB (a trajectory page holds its run's text, escaped, with long
outputs folded but present).

Opening pages in headless Chromium from the file system (median of 3 cold loads;
\`tests/browser/paint.mjs\`):

\`\`\`text
$(echo "$PAINT" | sed "s|\.\./\.\./$DIR/||")
\`\`\`

The last line is one generated run of 5,000 steps (\`bench/long_trajectory.py\`).
MD
