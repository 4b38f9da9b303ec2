#!/usr/bin/env bash
# The steps of coroner's GitHub Action (action.yml), as one script so they can run anywhere:
# .ci/run runs it on the sample study. Reads its inputs from the environment:
#
#   CORONER_STUDY        study file or transcript directories (space-separated), required
#   CORONER_FAIL_IF      thresholds, one per line (`infrastructure > 5%`), optional
#   CORONER_PREDICTIONS  a predictions file to check (`predict check`), optional
#   CORONER_LOCK         its lock file (default: the predictions file's .lock beside it)
#   CORONER_OUT          where the report goes (default: coroner-report)
#   GITHUB_STEP_SUMMARY  the job summary file (GitHub sets it; else the summary goes to stdout)
#
# Exit code: 0 when every gate held, 1 when a threshold was crossed or a prediction refuted,
# 2 on a usage error (a malformed threshold, a broken seal) — coroner's own codes; 3 alone
# (quarantined inputs) does not fail the step, the summary says how many.
set -uo pipefail

: "${CORONER_STUDY:?set CORONER_STUDY to a study file or transcript directories}"
OUT="${CORONER_OUT:-coroner-report}"
SUMMARY="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
mkdir -p "$OUT"

read -r -a study <<<"$CORONER_STUDY"
args=(report "${study[@]}" --out "$OUT" --format markdown -q)
gates=()
while IFS= read -r t; do
    [ -n "${t// /}" ] && gates+=(--fail-if "$t")
done <<<"${CORONER_FAIL_IF:-}"
# --junit lists the thresholds, so it goes only with them.
[ "${#gates[@]}" = 0 ] || args+=("${gates[@]}" --junit "$OUT/thresholds.xml")

coroner "${args[@]}" >"$OUT/summary.md" 2>"$OUT/report.stderr"
report_code=$?
cat "$OUT/summary.md" >>"$SUMMARY"
if [ "$report_code" = 1 ]; then
    printf '\n**coroner: %s**\n' "$(grep -h 'threshold crossed' "$OUT/report.stderr" | sed 's/^coroner report: //')" >>"$SUMMARY"
elif [ "$report_code" = 3 ]; then
    printf '\n_coroner: some inputs were quarantined; see report.stderr in the artifact._\n' >>"$SUMMARY"
elif [ "$report_code" != 0 ]; then
    cat "$OUT/report.stderr" >&2
fi

predict_code=0
if [ -n "${CORONER_PREDICTIONS:-}" ]; then
    lock="${CORONER_LOCK:-${CORONER_PREDICTIONS%.toml}.lock}"
    coroner predict check "$CORONER_PREDICTIONS" "${study[@]}" --lock "$lock" \
        --markdown "$OUT/predictions.md" --junit "$OUT/predictions.xml" >"$OUT/predict.stdout" 2>"$OUT/predict.stderr"
    predict_code=$?
    [ -f "$OUT/predictions.md" ] && cat "$OUT/predictions.md" >>"$SUMMARY"
    [ "$predict_code" = 0 ] || cat "$OUT/predict.stderr" >&2
fi

# A usage or output error (2, 4) first, then a crossed gate (1); quarantine (3) does not fail.
code=0
for c in "$report_code" "$predict_code"; do
    case "$c" in
    2 | 4) code=$c ;;
    1) [ "$code" = 0 ] && code=1 ;;
    esac
done
exit "$code"
