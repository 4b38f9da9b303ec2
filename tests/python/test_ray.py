"""coroner on a real local Ray cluster (ray.init(num_cpus=2)): 20,000 generated trajectories
classified in shards, one Ray task each, give the same verdicts, record for record, as one
`coroner classify` of the same inputs in one process. Run by .ci/run with the wheel installed."""

import json
import time
from pathlib import Path

import polars as pl
import pytest

import coroner

ray = pytest.importorskip("ray", reason="coroner.ray needs ray (pip install 'coroner[ray]'); .ci/run installs it")
import coroner.ray as cray  # noqa: E402

N = 20_000


def write_corpus(root: Path, n: int = N) -> Path:
    """N small mini-swe-agent v1 runs (generated, not real), and a verdict file: every third
    passed, the rest failed in a few different ways."""
    root.mkdir(parents=True)
    rows = ["task_id,outcome"]
    for i in range(n):
        task = f"gen__task-{i:05d}"
        kind = i % 6
        cmds = {
            0: ["ls", "sed -i 's/a/b/' src/x.py", "pytest -q"],
            1: ["ls", "cat src/x.py"],
            2: ["ls", "sed -i 's/a/b/' src/x.py", "python -m pytest tests/test_x.py"],
            3: ["grep -rn foo src"],
            4: ["ls", "echo 'def f(): pass' > src/y.py", "pytest -q"],
            5: ["cat README.md"],
        }[kind]
        msgs = [
            {"role": "system", "content": "You are a helpful assistant that can interact with a computer shell."},
            {"role": "user", "content": f"<pr_description>\nFix bug {i} in src/x.py.\n</pr_description>"},
        ]
        for j, c in enumerate(cmds):
            msgs.append({"role": "assistant", "content": f"THOUGHT: step {j}.\n\n```bash\n{c}\n```"})
            rc = 1 if ("pytest" in c and kind == 0) else 0
            msgs.append({"role": "user", "content": f"<returncode>{rc}</returncode>\n<output>\nline {i}.{j}\n</output>"})
        msgs.append({"role": "assistant", "content": "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"})
        status = "Submitted" if kind != 5 else "LimitsExceeded"
        patch = f"diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a{i}\n+b{i}\n" if kind in (0, 2, 4) else ""
        d = {"info": {"exit_status": status, "submission": patch, "mini_version": "1.9.1",
                      "model_stats": {"instance_cost": 0.01, "api_calls": len(cmds) + 1}},
             "messages": msgs, "trajectory_format": "mini-swe-agent-1", "instance_id": task}
        sub = root / f"shard-dir-{i % 50:02d}" / task
        sub.mkdir(parents=True)
        (sub / f"{task}.traj.json").write_text(json.dumps(d))
        rows.append(f"{task},{'passed' if i % 3 == 0 else 'failed'}")
    verdicts = root.parent / "verdicts.csv"
    verdicts.write_text("\n".join(rows) + "\n")
    return verdicts


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_a_ray_classification_equals_one_process(tmp_path, cluster):
    corpus = tmp_path / "corpus"
    verdicts = write_corpus(corpus)

    t0 = time.perf_counter()
    one = coroner.classify([str(corpus)], verdicts=str(verdicts)).verdicts
    t1 = time.perf_counter()
    ds = cray.classify([str(corpus)], tmp_path / "dataset", shards=8, verdicts=str(verdicts))
    t2 = time.perf_counter()
    merged = ds.verdicts()
    print(f"\n{N} trajectories: one process {t1 - t0:.1f} s; Ray, 8 shards on 2 CPUs {t2 - t1:.1f} s")

    assert one.height == N and merged.height == N
    assert one.filter(pl.col("outcome") == "failed")["primary"].null_count() == 0
    assert len(set(one["primary"].drop_nulls())) >= 3, "the corpus fails in several ways"
    a, b = one.sort("trajectory_id"), merged.sort("trajectory_id")
    assert a.columns == b.columns
    assert a.equals(b), "the dataset's verdicts are the single process's, record for record"

    acct = ds.accounting()
    assert acct["trajectories"] == N
    paths = [f["path"] for f in acct["files"]]
    assert len(paths) == len(set(paths)), "every file accounted for by one shard"
    assert sum(f["status"] == "ingested" for f in acct["files"]) == N

    # The dataset is a study for the report: its verdicts table is the classification's.
    rep = coroner.report(str(ds.path))
    assert rep.verdicts.sort("trajectory_id").equals(a)
    assert rep.arms["trials"].to_list() == [N] and rep.arms["passed"].to_list() == [N // 3 + 1]

    # A shard run again (as Ray retries a failed task) leaves the same part, byte for byte.
    parts = sorted((tmp_path / "dataset").rglob("part-*.parquet"))
    assert len(parts) == 8 and all(p.parent.name == "arm=mini-swe-agent" for p in parts), parts
    hive = pl.read_parquet(str(tmp_path / "dataset" / "**" / "*.parquet"), hive_partitioning=True)
    assert hive.height == N and hive["arm"].unique().to_list() == ["mini-swe-agent"]
    part = parts[3]
    before = part.read_bytes()
    again = cray.classify([str(corpus)], tmp_path / "dataset", shards=8, verdicts=str(verdicts))
    assert part.read_bytes() == before and again.verdicts().height == N


def test_inputs_at_a_uri_are_staged_and_classified_as_the_local_copy(tmp_path, cluster):
    """A URI of a file system pyarrow reads (here `file://`; s3:// and gs:// go the same way
    with credentials) is copied into the stage and sharded by its paths relative to the URI:
    the verdicts are those of the local tree, record for record, and their sources name the URI.
    A verdict file may be a URI too. The copy is reused while the source lists the same files,
    and made again when not."""
    pytest.importorskip("pyarrow", reason="URIs are read through pyarrow's file systems; .ci/run installs it")
    corpus = tmp_path / "bucket" / "runs"
    verdicts = write_corpus(corpus, n=300)
    local = coroner.classify([str(corpus)], verdicts=str(verdicts)).verdicts
    uri, verdicts_uri = corpus.resolve().as_uri(), verdicts.resolve().as_uri()
    ds = cray.classify([uri + "/"], tmp_path / "dataset", shards=3, verdicts=verdicts_uri)
    merged = ds.verdicts()
    assert merged.height == 300
    key = ["trajectory_id"]
    # Read from the copy, shown as the URI: the verdicts are the local tree's, the URI for its path.
    as_uri = local.with_columns(pl.col("source").str.replace(str(corpus.resolve()), uri, literal=True))
    assert as_uri.sort(key).equals(merged.sort(key))
    assert merged["source"].str.starts_with(uri + "/").all()
    assert merged.filter(pl.col("outcome") == "passed").height == 100, "the verdict file given as a URI was read"
    stage = tmp_path / "dataset" / "_inputs"
    stamps = sorted(stage.glob("*.staged"))
    assert len(stamps) == 2, stamps  # the tree and the verdict file
    before = {p: p.read_text() for p in stamps}
    # A staged transcript: copied again, it would be written again.
    copied = next(f for f in stage.rglob("*") if f.is_file() and f.suffix != ".staged")
    written = copied.stat().st_mtime_ns
    # The same source again (with or without the slash): the copy is reused, and the stage is
    # not mistaken for parts of the dataset.
    again = cray.classify([uri], tmp_path / "dataset", shards=3, verdicts=verdicts_uri)
    assert again.verdicts().height == 300
    assert {p: p.read_text() for p in sorted(stage.glob("*.staged"))} == before
    assert copied.stat().st_mtime_ns == written, f"{copied} was copied again"
    # A part that does not read: the report quarantines it and reads the rest (exit 3 is not
    # raised), and its verdicts frame leaves it out with a warning naming it.
    part = sorted((tmp_path / "dataset").rglob("part-*.parquet"))[0]
    whole = part.read_bytes()
    part.write_bytes(whole[: len(whole) // 2])
    with pytest.warns(UserWarning, match=part.name):
        rep = coroner.report(str(tmp_path / "dataset"))
    assert 0 < rep.verdicts.height < 300
    assert rep.arms["trials"].sum() == rep.verdicts.height
    part.write_bytes(whole)
    # A source that changed is copied again.
    one = next(corpus.rglob("*.traj.json"))
    one.write_text(one.read_text() + "\n")
    cray.classify([uri], tmp_path / "dataset", shards=3, verdicts=verdicts_uri)
    after = {p: p.read_text() for p in sorted(stage.glob("*.staged"))}
    assert after != before and len(after) == 2
