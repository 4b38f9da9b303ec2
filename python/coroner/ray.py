"""coroner on Ray: a classification split into shards, one Ray task each, written as one Parquet
dataset that polars, DuckDB, Spark and pandas read as it is.

The driver lists the inputs once (``coroner manifest``: paths, sizes, hashes, detected formats);
each task runs ``coroner classify --manifest … --shard K/N`` (a deterministic 1/N of the
transcripts, chosen by a hash of each one's path relative to its input root; see the README's
"Scale out"), which opens only its own files, their companions and the outcome files, and writes
its verdicts as hive-partitioned parts, ``arm=…/part-K-of-N.parquet``, with the accounting of the
files it owns in ``_accounting/``.
The parts union into exactly what one ``coroner classify`` of the same inputs writes. A task
writes to a temporary name and renames, so a retried task (Ray retries a failed one) leaves the
same part, byte for byte, and never a half-written one.

Inputs are paths every worker can read: local paths on one machine, or a shared file system on a
cluster. Needs ``ray`` (``pip install 'coroner[ray]'``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import polars as pl

from . import PathLike, _many, _paths, run

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
    """The verdicts of a dataset written by :func:`classify` or ``coroner classify -o DIR/``: all
    its parts (``arm=…/part-K-of-N.parquet``), in path order, as the files hold them (a reader
    with hive partitioning on, such as ``pl.read_parquet(f"{path}/**/*.parquet",
    hive_partitioning=True)``, fills ``arm`` from the directory instead)."""
    parts = sorted(Path(path).rglob("part-*.parquet"))
    if not parts:
        raise FileNotFoundError(f"no part-*.parquet in {path}")
    return pl.concat([pl.read_parquet(p) for p in parts], how="vertical")


def _shard(args: List[str], out: str, k: int, n: int, threads: int) -> str:
    """One shard, in a Ray worker: ``coroner classify --shard K/N -o OUT/``, which writes the
    shard's hive-partitioned parts (each under a temporary name, then renamed) and its accounting."""
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    run("classify", *args, "--shard", f"{k}/{n}", "-o", out.rstrip("/") + "/", "-q")
    return out


def classify(
    paths: Union[PathLike, Sequence[PathLike]],
    out: PathLike,
    *,
    shards: Optional[int] = None,
    registry: Union[None, PathLike, Sequence[PathLike]] = None,
    verdicts: Union[None, PathLike, Sequence[PathLike]] = None,
    rules: Optional[PathLike] = None,
    format: Optional[str] = None,
    cpus_per_shard: int = 1,
    max_retries: int = 3,
) -> Dataset:
    """Classifies ``paths`` on the Ray cluster this process is connected to (``ray.init`` first;
    without it Ray starts a local one) and returns the dataset written to ``out``.

    ``shards`` defaults to four per CPU of the cluster, so a slow shard does not hold the rest
    back; each shard's task takes ``cpus_per_shard`` CPUs and runs coroner with as many threads."""
    import ray  # type: ignore[import-not-found,unused-ignore]

    if not ray.is_initialized():
        ray.init()
    n = shards or max(1, 4 * int(ray.cluster_resources().get("CPU", 1)))
    outp = Path(out)
    (outp / "_accounting").mkdir(parents=True, exist_ok=True)
    for stale in [*outp.rglob("part-*.parquet"), *(outp / "_accounting").glob("part-*.json")]:
        stale.unlink()
    # Workers run elsewhere (another directory, another machine): every path absolute.
    def absolute(v: Union[None, PathLike, Sequence[PathLike]]) -> Optional[List[str]]:
        return None if v is None else [os.path.abspath(p) for p in _paths(v)]

    # The inputs are walked and detected once, here; each shard opens only its own files,
    # their companions and the outcome files (`coroner manifest`, then `--manifest`).
    manifest = outp.resolve() / "_manifest.jsonl"
    listing = ["manifest", *(absolute(paths) or []), "-o", str(manifest)]
    if rules:
        listing += ["--rules", os.path.abspath(rules)]
    if format:
        listing += ["--input-format", format]
    run(*listing)
    args = ["--manifest", str(manifest)]
    args += _many("--registry", absolute(registry)) + _many("--verdicts", absolute(verdicts))
    if rules:
        args += ["--rules", os.path.abspath(rules)]
    if format:
        args += ["--input-format", format]
    task = ray.remote(num_cpus=cpus_per_shard, max_retries=max_retries)(_shard)
    ray.get([task.remote(args, str(outp.resolve()), k, n, cpus_per_shard) for k in range(1, n + 1)])
    return Dataset(outp, n)
