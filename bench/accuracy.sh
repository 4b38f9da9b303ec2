#!/usr/bin/env bash
# The accuracy suite, one command: fetches the labelled real runs (accuracy/fetch.sh; set
# CORONER_MIRROR to read a local mirror instead of GitHub), builds coroner (debug: accuracy, not
# speed, is measured), classifies them and scores coroner against the hand labels, writing
# docs/accuracy.md. Not part of `cargo test`: it needs the data, which stays out of the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d accuracy/data/mini-swebench/swebench_results/20251118_gemini-3-pro-74pct/trajs ]; then
  accuracy/fetch.sh --full
fi
cargo build --locked --quiet
python3 bench/accuracy.py --coroner target/debug/coroner --commit "$(git rev-parse --short HEAD)$(git diff --quiet || echo +)" "$@"
