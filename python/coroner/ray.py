"""coroner on Ray: a classification split into shards, one Ray task each, written as one Parquet
dataset that polars, DuckDB, Spark and pandas read as it is.

The inputs are listed once, in parallel: each task reads, hashes and detects the files its shard
owns (``coroner manifest --shard K/N``; the walk itself is cheap) and the driver joins the parts
(``coroner manifest --merge``). Each task then runs ``coroner classify --manifest … --shard K/N``
(a deterministic 1/N of the transcripts, chosen by a hash of each one's path relative to its
input root; see the README's "Scale out"), which opens only its own files, their companions and
the outcome files, and writes its verdicts as hive-partitioned parts, ``arm=…/part-K-of-N.parquet``,
with the accounting of the files it owns in ``_accounting/``.
The parts union into exactly what one ``coroner classify`` of the same inputs writes. A task
writes to a temporary name and renames, so a retried task (Ray retries a failed one) leaves the
same part, byte for byte, and never a half-written one.

Inputs are paths every worker can read (local paths on one machine, a shared file system on a
cluster) or URIs of any file system pyarrow reads (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``,
``file://``), with the credentials pyarrow finds. A URI's tree is copied into ``stage`` (by
default ``OUT/_inputs``, beside the parts, so it is where the workers read) by as many Ray tasks
as there are shards, keeping its paths relative to the URI: the shards, chosen by those relative
paths, are the ones a local copy gives. Needs ``ray`` (``pip install 'coroner[ray]'``), and
pyarrow for URIs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import polars as pl

from . import PathLike, _many, _parts, _paths, read_dataset, run

__all__ = ["classify", "read", "Dataset"]


@dataclass
class Dataset:
    """A classification written as Parquet parts: ``path`` holds ``arm=…/part-*.parquet`` and
    ``_accounting/part-*.json``."""

    path: Path
    shards: int

    def verdicts(self) -> pl.DataFrame:
        """Every part as one frame, in shard order."""
        return read(self.path)

    def accounting(self) -> Dict[str, Any]:
        """The parts' accounting merged: files and diagnostics of every shard, trajectories summed."""
        files: List[Any] = []
        diagnostics: List[Any] = []
        trajectories = 0
        for p in sorted((self.path / "_accounting").glob("part-*.json")):
            s = json.loads(p.read_text())
            files += s["files"]
            diagnostics += s["diagnostics"]
            trajectories += s["trajectories"]
        return {"files": files, "diagnostics": diagnostics, "trajectories": trajectories}


def read(path: PathLike) -> pl.DataFrame:
    """The verdicts of a dataset: :func:`coroner.read_dataset`."""
    return read_dataset(path)


def _is_uri(p: PathLike) -> bool:
    return "://" in os.fspath(p)


def _source(uri: str) -> Any:
    """The file system of ``uri`` and the path in it, without a trailing slash (``s3://b/runs``
    and ``s3://b/runs/`` are one source)."""
    from pyarrow import fs  # type: ignore[import-not-found,import-untyped,unused-ignore]

    source, root = fs.FileSystem.from_uri(uri)
    return source, root.rstrip("/") or root


def _copy_files(uri: str, rels: List[str], local: str) -> int:
    """In a Ray worker: copies the files ``rels`` (relative to ``uri``) into ``local``."""
    from pyarrow import fs  # type: ignore[import-not-found,import-untyped,unused-ignore]

    source, root = _source(uri)
    dest = fs.LocalFileSystem()
    for rel in rels:
        target = Path(local) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.copy_files(f"{root}/{rel}", str(target.resolve()), source_filesystem=source, destination_filesystem=dest)
    return len(rels)


def _stage(uri: str, into: Path, tasks: int, max_retries: int) -> str:
    """Copies the tree (or the file) at ``uri`` into ``into`` through pyarrow's file systems and
    returns the local path that stands for it. A tree is copied by ``tasks`` Ray tasks, each a
    share of its files, so no one node's bandwidth bounds it. A copy made before is reused only
    while the source lists the same files with the same sizes and modification times; otherwise
    it is made again."""
    import hashlib
    import shutil

    import ray  # type: ignore[import-not-found,unused-ignore]
    from pyarrow import fs  # type: ignore[import-not-found,import-untyped,unused-ignore]

    source, root = _source(uri)
    info = source.get_file_info(root)
    if info.type == fs.FileType.NotFound:
        raise FileNotFoundError(uri)
    if info.type == fs.FileType.File:
        files = [[Path(root).name, info.size, info.mtime_ns]]
    else:
        found = source.get_file_info(fs.FileSelector(root, recursive=True))
        files = sorted([i.path[len(root) :].lstrip("/"), i.size, i.mtime_ns] for i in found if i.type == fs.FileType.File)
    # One copy per source, named after its last name: ids hash the path relative to the input,
    # its own name included, so they are the ones a local copy of the tree gives.
    key = f"{source.type_name}:{root}"
    where = into / hashlib.sha256(key.encode()).hexdigest()[:16]
    local = where / (Path(root).name or "root")
    done = where.with_suffix(".staged")
    stamp = json.dumps({"source": key, "files": files})
    if not (done.exists() and done.read_text() == stamp and local.exists()):
        if where.exists():
            shutil.rmtree(where)
        where.mkdir(parents=True)
        if info.type == fs.FileType.File:
            fs.copy_files(root, str(local.resolve()), source_filesystem=source, destination_filesystem=fs.LocalFileSystem())
        else:
            local.mkdir()
            rels = [str(f[0]) for f in files]
            groups = [rels[k::tasks] for k in range(max(1, tasks))]
            # Spread over the nodes, so the copy is not one node's bandwidth.
            copy = ray.remote(max_retries=max_retries, scheduling_strategy="SPREAD")(_copy_files)
            ray.get([copy.remote(uri, g, str(local.resolve())) for g in groups if g])
        done.write_text(stamp)
    return str(local.resolve())


def _shard_task(threads: int, *argv: str) -> None:
    """One shard's coroner command in a Ray worker, on the CPUs the task was given: a part of the
    manifest (``coroner manifest --shard K/N``: the files it owns read, hashed and detected) or a
    shard of the run (``coroner classify --shard K/N -o OUT/``: its hive-partitioned parts, each
    under a temporary name then renamed, and its accounting)."""
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    run(*argv)


def classify(
    paths: Union[PathLike, Sequence[PathLike]],
    out: PathLike,
    *,
    shards: Optional[int] = None,
    registry: Union[None, PathLike, Sequence[PathLike]] = None,
    verdicts: Union[None, PathLike, Sequence[PathLike]] = None,
    rules: Optional[PathLike] = None,
    format: Optional[str] = None,
    cpus_per_shard: Optional[int] = None,
    max_retries: int = 3,
    stage: Optional[PathLike] = None,
) -> Dataset:
    """Classifies ``paths`` on the Ray cluster this process is connected to (``ray.init`` first;
    without it Ray starts a local one) and returns the dataset written to ``out``.

    Each shard's task takes ``cpus_per_shard`` CPUs (by default the CPUs of the smallest node)
    and runs coroner with as many threads; ``shards`` defaults to as many as the cluster runs at
    once. More shards cost more than they balance: every shard reads the whole manifest and every
    outcome file (``bench/ray_throughput.py``: 20,000 runs on 2 CPUs took 1.05 s in 2 shards,
    1.57 s in 8; one process, 0.98 s), and the hash spreads the transcripts evenly already.

    Inputs, verdict files, registries and rules given as URIs (``s3://bucket/runs``) are
    copied into ``stage`` (default ``OUT/_inputs``) first; a copy is reused while its source
    lists the same files."""
    import ray  # type: ignore[import-not-found,unused-ignore]

    if not ray.is_initialized():
        ray.init()
    if cpus_per_shard is None:
        per_node = [int(nd.get("Resources", {}).get("CPU", 0)) for nd in ray.nodes() if nd.get("Alive")]
        cpus_per_shard = min([c for c in per_node if c > 0] or [1])
    at_once = max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus_per_shard)
    n = shards or at_once
    outp = Path(out)
    (outp / "_accounting").mkdir(parents=True, exist_ok=True)
    for stale in [*_parts(outp), *(outp / "_accounting").glob("part-*.json")]:
        stale.unlink()
    staging = Path(stage) if stage is not None else outp / "_inputs"

    # Workers run elsewhere (another directory, another machine): every path absolute, every
    # URI a local copy.
    # Where each staged URI's copy lives, so the runs show the URI rather than the copy.
    shown: Dict[str, str] = {}

    def local_path(p: PathLike) -> str:
        if not _is_uri(p):
            return os.path.abspath(p)
        local = _stage(os.fspath(p), staging, n, max_retries)
        shown[local] = os.fspath(p).rstrip("/")
        return local

    def absolute(v: Union[None, PathLike, Sequence[PathLike]]) -> Optional[List[str]]:
        return None if v is None else [local_path(p) for p in _paths(v)]

    # The inputs are walked and detected once, here; each shard opens only its own files,
    # their companions and the outcome files (`coroner manifest`, then `--manifest`).
    manifest = outp.resolve() / "_manifest.jsonl"
    rules_dir = local_path(rules) if rules else None
    listing = [*(absolute(paths) or [])]
    if rules_dir:
        listing += ["--rules", rules_dir]
    if format:
        listing += ["--input-format", format]
    # As many tasks as run at once each read and hash the files of their part (each also walks
    # the whole tree, which is cheap next to reading it); the parts join into the one manifest.
    m = min(n, at_once)
    parts_dir = outp.resolve() / "_manifest"
    if parts_dir.exists():
        for old in parts_dir.glob("part-*.jsonl"):
            old.unlink()
    parts_dir.mkdir(parents=True, exist_ok=True)
    parts = [str(parts_dir / f"part-{k:05d}-of-{m:05d}.jsonl") for k in range(1, m + 1)]
    task = ray.remote(num_cpus=cpus_per_shard, max_retries=max_retries)(_shard_task)
    ray.get([task.remote(cpus_per_shard, "manifest", *listing, "-o", parts[k - 1], "--shard", f"{k}/{m}") for k in range(1, m + 1)])
    run("manifest", "--merge", *parts, "-o", str(manifest), *_many("--shown-as", [f"{k}={v}" for k, v in shown.items()] or None))
    args = ["--manifest", str(manifest)]
    args += _many("--registry", absolute(registry)) + _many("--verdicts", absolute(verdicts))
    if rules_dir:
        args += ["--rules", rules_dir]
    if format:
        args += ["--input-format", format]
    out = str(outp.resolve()).rstrip("/") + "/"
    ray.get([task.remote(cpus_per_shard, "classify", *args, "--shard", f"{k}/{n}", "-o", out, "-q") for k in range(1, n + 1)])
    return Dataset(outp, n)
