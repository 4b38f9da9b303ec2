"""The Python package as a user gets it: run with the wheel installed into a fresh virtualenv
(.ci/run builds the wheel with maturin and runs `pytest tests/python/test_api.py` there).
The API and the `coroner` command it installs, on the shipped samples."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import coroner

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "samples" / "study" / "study.toml"
ARMS = [ROOT / "samples" / "study" / "arm-a", ROOT / "samples" / "study" / "arm-b"]


def test_the_command_is_installed_beside_the_module():
    exe = coroner.binary()
    assert Path(exe).parent == Path(sys.executable).parent, exe
    assert shutil.which("coroner") == exe
    p = subprocess.run(["coroner", "report", "-q"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "8/34  23.5%" in p.stdout


def test_classify_returns_one_verdict_per_trajectory_with_evidence():
    r = coroner.classify(ARMS)
    v = r.verdicts
    assert isinstance(v, pl.DataFrame)
    assert v.height == 70
    for col in ["trajectory_id", "task_id", "outcome", "primary", "flags", "evidence", "evidence_steps", "source"]:
        assert col in v.columns, col
    failed = v.filter(pl.col("outcome") == "failed")
    assert failed.height > 0 and failed["primary"].null_count() == 0
    assert set(failed["primary"]) <= {
        "infrastructure", "budget_exhausted", "hallucinated_tool", "plan_without_execution",
        "early_resignation", "worked_then_wrong", "unclassified",
    }
    assert r.quarantined == []
    assert r.summary["trajectories"] == 70


def test_quarantined_inputs_are_returned_not_raised(tmp_path):
    shutil.copytree(ROOT / "samples" / "hostile" / "hostile__h0st1le", tmp_path / "good")
    (tmp_path / "broken.traj.json").write_text('{"info": {"exit_status": "Submitted"}, "messages": [{"role": ')
    r = coroner.classify([tmp_path])
    assert r.verdicts.height == 1
    assert len(r.quarantined) == 1
    q = r.quarantined[0]
    assert q.path.endswith("broken.traj.json") and q.kind and q.message.startswith("failed to")


def test_ingest_returns_records_and_the_accounting():
    r = coroner.ingest(ARMS[0])
    assert r.trajectories.height == 35
    assert r.summary["trajectories"] == 35
    assert any(f["status"] == "ingested" for f in r.summary["files"])


def test_report_returns_the_tables_of_the_parquet_outputs(tmp_path):
    rep = coroner.report(STUDY, out=tmp_path / "out")
    assert rep.arms["arm"].to_list() == ["mini-swe-agent, think", "terminus-2, no think"]
    a = rep.arms.row(0, named=True)
    assert (a["passed"], a["evaluated"]) == (8, 34)
    assert abs(a["pass_at_1"] - 8 / 34) < 1e-12
    assert rep.comparison is not None and rep.comparison["verdict"].startswith("no detectable difference")
    assert rep.failure_modes.height > 0 and rep.per_task.height == 68 and rep.verdicts.height == 70
    assert "## Sample study" in rep.markdown
    assert (tmp_path / "out" / "arms.parquet").exists()
    assert rep.html is not None and (rep.html / "index.html").exists()


def test_report_lists_crossed_thresholds_and_writes_html_on_request(tmp_path):
    rep = coroner.report(STUDY, fail_if=["infrastructure > 2%", "pass_rate < 10%"], html=tmp_path / "site")
    assert len(rep.crossed) == 2 and all("infrastructure > 2%" in c for c in rep.crossed), rep.crossed
    assert (tmp_path / "site" / "index.html").exists()
    assert coroner.report(STUDY, fail_if=["infrastructure > 5%"]).crossed == []


def test_errors_carry_the_exit_code_and_the_diagnostic():
    with pytest.raises(coroner.CoronerError) as e:
        coroner.report(STUDY, fail_if=["infrastructure > 5"])
    assert e.value.code == 2
    assert "a fraction or a percentage?" in e.value.diagnostics
    with pytest.raises(coroner.CoronerError) as e:
        coroner.report(ROOT / "no" / "such" / "study.toml")
    assert e.value.code == 2 and "no/such/study.toml" in e.value.diagnostics
    # A missing input is not an error but an input accounted for: quarantined, with why.
    r = coroner.classify(ROOT / "no" / "such" / "dir")
    assert r.verdicts.height == 0 and r.quarantined[0].path.endswith("no/such/dir")


def test_pandas_on_request():
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"coroner\[pandas\]"):
            coroner.classify(ARMS[0], backend="pandas")
    else:
        df = coroner.classify(ARMS[0], backend="pandas").verdicts
        assert len(df) == 35
    with pytest.raises(ValueError):
        coroner.classify(ARMS[0], backend="arrow")  # type: ignore[arg-type]


def test_coroner_bin_overrides_the_installed_command(monkeypatch):
    monkeypatch.setenv("CORONER_BIN", "/nonexistent/coroner")
    with pytest.raises(FileNotFoundError):
        coroner.classify(ARMS[0])
    monkeypatch.delenv("CORONER_BIN")
    assert os.path.exists(coroner.binary())


def test_show_and_spotcheck_round_trip(tmp_path):
    text = coroner.show(ROOT / "samples" / "hostile" / "hostile__h0st1le")
    assert "early_resignation" in text and "\x1b" not in text
    s = coroner.spotcheck_sample(ARMS, tmp_path / "sheet.csv", tmp_path / "key.json", per_class=2, seed=7)
    rows = s.sheet.read_text().splitlines()
    assert rows[0].startswith("item,") and len(rows) > 3
    score = coroner.spotcheck_score(s.sheet, s.key)
    assert "kappa" in score or "agreement" in score, list(score)


def test_errors_cross_processes_whole():
    import pickle

    e = coroner.CoronerError(2, "coroner::report::fail_if\n  x failed to read --fail-if", ["coroner", "report"])
    back = pickle.loads(pickle.dumps(e))
    assert (back.code, back.diagnostics, back.command, str(back)) == (e.code, e.diagnostics, e.command, str(e))
