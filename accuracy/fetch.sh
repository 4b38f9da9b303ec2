#!/usr/bin/env bash
# Materializes the accuracy suite's data under accuracy/data/<source>/: every path the labelled
# trajectories need (accuracy/candidates.csv, column `fetch`), from each source repository at its
# pinned commit. With --full, also the whole 500-trajectory mini-swe-agent SWE-bench run (for
# the ingest check and the flag rates of docs/accuracy.md).
#
# The repositories come from a local mirror when CORONER_MIRROR points at one (a directory of
# <owner>+<name>/repo git directories), else from GitHub (a blobless clone in accuracy/.cache).
# The data is third-party and stays out of the repository (.gitignore).
set -euo pipefail
cd "$(dirname "$0")"
FULL=0
[ "${1:-}" = "--full" ] && FULL=1
OUT=data
mkdir -p "$OUT" .cache

repo_dir() { # owner/name -> a git directory that has the pinned commits
  local repo=$1 key=${1/\//+}
  if [ -n "${CORONER_MIRROR:-}" ] && [ -d "$CORONER_MIRROR/$key/repo" ]; then
    echo "$CORONER_MIRROR/$key/repo"
    return
  fi
  if [ ! -d ".cache/$key" ]; then
    git clone --quiet --filter=blob:none --no-checkout "https://github.com/$repo" ".cache/$key" >&2
  fi
  echo ".cache/$key"
}

materialize() { # source repo commit path...
  local source=$1 repo=$2 commit=$3
  shift 3
  local dir
  dir=$(repo_dir "$repo")
  mkdir -p "$OUT/$source"
  # `git archive` writes exactly the tree at the pinned commit; a mirror that lacks some large
  # blobs (terminal recordings) gets the files it has, one by one, and says what it skipped.
  if ! git -C "$dir" archive --format=tar "$commit" -- "$@" 2>/dev/null | tar -x -C "$OUT/$source" 2>/dev/null; then
    local missing=0 f
    while IFS= read -r -d '' f; do
      if git -C "$dir" cat-file -e "$commit:$f" 2>/dev/null; then
        mkdir -p "$OUT/$source/$(dirname "$f")"
        git -C "$dir" show "$commit:$f" > "$OUT/$source/$f"
      else
        missing=$((missing + 1))
      fi
    done < <(git -C "$dir" ls-tree -r -z --name-only "$commit" -- "$@")
    echo "  $missing files absent from $dir (over the mirror's size limit)" >&2
  fi
}

python3 - "$FULL" <<'PY' > .cache/plan.tsv
import csv, sys
from collections import defaultdict
want = defaultdict(set)
pinned = {}
for r in csv.DictReader(open("candidates.csv")):
    pinned[r["source"]] = (r["source"], r["repo"], r["commit"])
    for p in r["fetch"].split(";"):
        if p:
            want[pinned[r["source"]]].add(p)
# The source's own verdict for the Magentic-One runs: the Who&When failures AgentRx annotated.
want[pinned["agentrx"]].add("data/ground_truth/magentic_one_ground_truth.json")
if sys.argv[1] == "1":
    want[pinned["mini-swebench"]].add("swebench_results/20251118_gemini-3-pro-74pct")
for (s, repo, commit), paths in sorted(want.items()):
    print("\t".join([s, repo, commit, *sorted(paths)]))
PY
while IFS=$'\t' read -r -a row; do
  echo "fetch: ${row[0]} (${row[1]} @ ${row[2]}): $((${#row[@]} - 3)) paths" >&2
  materialize "${row[@]}"
done < .cache/plan.tsv
echo "accuracy data in $(pwd)/$OUT" >&2
