#!/usr/bin/env bash
# A report over a partitioned dataset of generated verdicts (issue: "a report over 1,000,000
# verdicts runs in bounded memory"): wall time and peak RSS of `coroner report DIR` and
# `coroner compare A B DIR` for a dataset of N verdicts, for two sizes, so growth with N shows.
#
#   bench/dataset_report.sh
#
# Settings (environment):
#   N="100000 1000000"   dataset sizes (verdicts)
#   SHARDS=16            parts per arm (as 16 shards would write them)
#   TASKS=5000           distinct tasks (the tallies grow with these, not with N)
#   PY=python3           a Python with polars
#   DIR=target/bench-dataset
#
# The dataset is made from coroner's own verdicts of `samples/` (`classify -o DIR/`), tiled to
# N rows with new trajectory ids, tasks, trials and steps; not real runs. Nothing here runs in
# `cargo test`. Needs: cargo, /usr/bin/time, Python with polars.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-"100000 1000000"}
SHARDS=${SHARDS:-16}
TASKS=${TASKS:-5000}
PY=${PY:-python3}
DIR=${DIR:-target/bench-dataset}
BIN=${CARGO_TARGET_DIR:-target}/release/coroner

cargo build --release --locked --quiet --features bench
mkdir -p "$DIR"
rm -rf "$DIR/seed"
"$BIN" classify samples -o "$DIR/seed/" -q || true   # exit 3: samples hold quarantined inputs on purpose

for n in $N; do
  out="$DIR/n$n"
  if [ ! -d "$out" ]; then
    "$PY" - "$DIR/seed" "$out" "$n" "$SHARDS" "$TASKS" <<'PY'
import os, random, sys
import polars as pl
seed, out, n, shards, tasks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
base = pl.read_parquet(f"{seed}/**/*.parquet", hive_partitioning=False)
rng = random.Random(1)
df = base[[rng.randrange(base.height) for _ in range(n)]]
arm = ["arm a" if k % 2 == 0 else "arm b" for k in range(n)]
df = df.with_columns(
    pl.Series("arm", arm),
    pl.Series("task_id", [f"task-{(k // 2) % tasks:05d}" for k in range(n)]),
    pl.Series("trial", [k // (2 * tasks) + 1 for k in range(n)]).cast(base.schema["trial"]),
    pl.Series("trajectory_id", [f"run-{k:07d}" for k in range(n)]),
    pl.Series("source", [f"runs/{a}/{k:07d}.json" for a, k in zip(arm, range(n))]),
    pl.Series("steps", [rng.randrange(1, 120) for _ in range(n)]).cast(base.schema["steps"]),
)
for a in ("arm a", "arm b"):
    part = df.filter(pl.col("arm") == a)
    d = f"{out}/arm={a.replace(' ', '%20')}"
    os.makedirs(d, exist_ok=True)
    for k in range(shards):
        part.gather_every(shards, offset=k).write_parquet(f"{d}/part-{k + 1:05d}-of-{shards:05d}.parquet", row_group_size=8192)
PY
  fi
  for cmd in "report $out --format json" "compare 'arm a' 'arm b' $out --format json"; do
    /usr/bin/time -f "%e s, %M KB" -o "$DIR/time.txt" sh -c "$BIN $cmd > $DIR/out.json"
    echo "N=$n: coroner $cmd: $(cat "$DIR/time.txt")"
  done
done
