"""coroner from Python: ingest, classify and report on agent trajectories.

Each function runs the ``coroner`` command installed with this package (the Rust binary) and
reads what it writes — Parquet and JSON whose columns are documented in the project's
``schemas/`` — into polars DataFrames. Driving the binary rather than binding its library keeps
one build of the Rust code (a PyO3 module would compile all of it, polars included, a second
time into the wheel) and gives Python exactly the outputs the command line is tested on.

Errors: a run that fails (bad arguments, an unreadable study or rules file, no input left)
raises :class:`CoronerError`, which carries the exit code and coroner's diagnostics. Inputs that
were quarantined are not an error: they are listed in the result's ``quarantined``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

import polars as pl

__all__ = [
    "CoronerError",
    "Quarantined",
    "IngestResult",
    "ClassifyResult",
    "Report",
    "ingest",
    "classify",
    "report",
    "show",
    "spotcheck_sample",
    "spotcheck_score",
    "read_dataset",
    "binary",
    "run",
    "SpotcheckSample",
]

PathLike = Union[str, "os.PathLike[str]"]
Backend = Literal["polars", "pandas"]

#: Exit codes (the README's table): a gate, a usage error, quarantined inputs, an output error.
GATE, USAGE, PARTIAL, IO = 1, 2, 3, 4


class CoronerError(Exception):
    """A coroner run that stopped: ``code`` is its exit code, ``diagnostics`` what it printed
    on stderr (miette diagnostics naming the file, line and span), ``args`` the command."""

    def __init__(self, code: int, diagnostics: str, command: Sequence[str]):
        self.code = code
        self.diagnostics = diagnostics
        self.command = list(command)
        first = next((line.strip() for line in diagnostics.splitlines() if line.strip()), "")
        super().__init__(f"coroner exited {code}: {first}")

    def __reduce__(self) -> Any:
        # Rebuilt from its fields, so it crosses processes whole (a Ray task's error reaches
        # the driver as itself, not as an unpicklable stand-in).
        return (CoronerError, (self.code, self.diagnostics, self.command))


@dataclass(frozen=True)
class Quarantined:
    """An input coroner could not read, with why (``kind``) and where (``line``, ``column``)."""

    path: str
    kind: str
    message: str
    line: Optional[int] = None
    column: Optional[int] = None
    help: Optional[str] = None


@dataclass
class IngestResult:
    """Normalized trajectories (one row each; ``record`` holds the whole record as JSON) and the
    accounting of every input."""

    trajectories: Any
    summary: Dict[str, Any]
    quarantined: List[Quarantined] = field(default_factory=list)


@dataclass
class ClassifyResult:
    """One verdict per trajectory (the columns of ``verdicts.parquet``), and the accounting."""

    verdicts: Any
    summary: Dict[str, Any]
    quarantined: List[Quarantined] = field(default_factory=list)


@dataclass
class Report:
    """The report's tables (as ``report --out`` writes them, ``schemas/report-tables.json``), the
    comparison of two arms when there are two, the Markdown, and where the files are."""

    arms: Any
    failure_modes: Any
    mechanics: Any
    per_task: Any
    verdicts: Any
    comparison: Optional[Dict[str, Any]]
    markdown: str
    out: Optional[Path]
    html: Optional[Path]
    #: ``--fail-if`` thresholds crossed (each names itself and the arm); empty when all held.
    crossed: List[str] = field(default_factory=list)


def binary() -> str:
    """The coroner command: ``$CORONER_BIN``, else the one installed beside this package, else
    the first on ``PATH``."""
    given = os.environ.get("CORONER_BIN")
    if given:
        return given
    exe = "coroner.exe" if sys.platform == "win32" else "coroner"
    for scheme_dir in {sysconfig.get_path("scripts"), os.path.join(sys.prefix, "bin")}:
        candidate = os.path.join(scheme_dir, exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("coroner")
    if found:
        return found
    raise CoronerError(USAGE, "the coroner command is not installed (pip install coroner, or set CORONER_BIN)", ["coroner"])


def run(*args: str, ok: Sequence[int] = (0, PARTIAL), cwd: Optional[PathLike] = None) -> "subprocess.CompletedProcess[str]":
    """Runs ``coroner ARGS``; raises :class:`CoronerError` unless it exits with one of ``ok``."""
    cmd = [binary(), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode not in ok:
        raise CoronerError(p.returncode, p.stderr, cmd)
    return p


def _paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _many(flag: str, values: Union[None, PathLike, Sequence[PathLike]]) -> List[str]:
    if values is None:
        return []
    return [a for v in _paths(values) for a in (flag, v)]


def _parts(root: Path) -> List[Path]:
    """A dataset's parts, as coroner finds them: ``part-*.parquet`` at its top and in its hive
    partitions (directories named ``key=value``), in path order."""
    found = list(root.glob("part-*.parquet"))
    for d in root.iterdir() if root.is_dir() else []:
        if d.is_dir() and "=" in d.name:
            found += [p for p in d.rglob("part-*.parquet") if all("=" in q.name for q in p.relative_to(root).parents if q.name)]
    return sorted(found)


def read_dataset(path: PathLike, *, skip_unreadable: bool = False) -> pl.DataFrame:
    """The verdicts of a dataset written by ``coroner.ray.classify`` or ``coroner classify -o DIR/``:
    all its parts (``arm=…/part-K-of-N.parquet``), in path order, as the files hold them (a reader
    with hive partitioning on, such as ``pl.read_parquet(f"{path}/**/*.parquet",
    hive_partitioning=True)``, fills ``arm`` from the directory instead).

    A part that does not read raises, unless ``skip_unreadable``: then it is left out with a
    warning naming it, as ``coroner report`` quarantines it."""
    parts = _parts(Path(path))
    if not parts:
        raise FileNotFoundError(f"no part-*.parquet in {os.fspath(path)}")
    frames = []
    for p in parts:
        try:
            frames.append(pl.read_parquet(p))
        except pl.exceptions.PolarsError as e:
            if not skip_unreadable:
                raise
            warnings.warn(f"coroner: left out {p}, which does not read: {e}", stacklevel=2)
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame()


def _frame(df: pl.DataFrame, backend: Backend) -> Any:
    if backend == "polars":
        return df
    if backend == "pandas":
        try:
            return df.to_pandas()
        except ImportError as e:  # pandas or pyarrow missing
            raise ImportError("backend='pandas' needs pandas and pyarrow: pip install 'coroner[pandas]'") from e
    raise ValueError(f"backend must be 'polars' or 'pandas', not {backend!r}")


def _quarantined(summary: Dict[str, Any]) -> List[Quarantined]:
    bad = {f["path"]: f["detail"].get("kind", "") for f in summary.get("files", []) if f.get("status") == "quarantined"}
    out = []
    for d in summary.get("diagnostics", []):
        out.append(Quarantined(d.get("path", ""), d.get("kind", ""), d.get("message", ""), d.get("line"), d.get("column"), d.get("help")))
        bad.pop(d.get("path", ""), None)
    out.extend(Quarantined(p, k, f"failed to read {p}: {k}") for p, k in bad.items())
    return out


def _common(fmt: Optional[str], rules: Optional[PathLike], verdicts: Union[None, PathLike, Sequence[PathLike]], flag: str = "--format") -> List[str]:
    a: List[str] = []
    if fmt:
        a += [flag, fmt]
    if rules:
        a += ["--rules", os.fspath(rules)]
    return a + _many("--verdicts", verdicts)


def ingest(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    format: Optional[str] = None,
    verdicts: Union[None, PathLike, Sequence[PathLike]] = None,
    rules: Optional[PathLike] = None,
    backend: Backend = "polars",
) -> IngestResult:
    """Reads transcripts (files or run directories) into one row per trajectory.

    ``format`` forces a format (``coroner ingest --list-formats``); ``verdicts`` are outcome files
    that win over those found beside the transcripts; ``rules`` a directory of format mappings
    and harness profiles. Quarantined inputs are in the result's ``quarantined``."""
    with tempfile.TemporaryDirectory(prefix="coroner-") as tmp:
        out, summary = Path(tmp, "trajectories.parquet"), Path(tmp, "summary.json")
        run("ingest", *_paths(paths), *_common(format, rules, verdicts), "-o", str(out), "--summary-json", str(summary), "-q")
        s = json.loads(summary.read_text())
        return IngestResult(_frame(pl.read_parquet(out), backend), s, _quarantined(s))


def classify(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    registry: Union[None, PathLike, Sequence[PathLike]] = None,
    verdicts: Union[None, PathLike, Sequence[PathLike]] = None,
    rules: Optional[PathLike] = None,
    format: Optional[str] = None,
    backend: Backend = "polars",
) -> ClassifyResult:
    """Classifies every failed trajectory under ``paths``: one verdict per trajectory with its
    classes, flags, mechanics and evidence (the columns of ``verdicts.parquet``).

    ``registry`` files (or harness source directories) say which tools the harness offered, so a
    call is hallucinated only against them."""
    with tempfile.TemporaryDirectory(prefix="coroner-") as tmp:
        out, summary = Path(tmp, "verdicts.parquet"), Path(tmp, "summary.json")
        args = ["classify", *_paths(paths), *_many("--registry", registry), *_common(format, rules, verdicts, "--input-format")]
        run(*args, "-o", str(out), "--summary-json", str(summary), "-q")
        s = json.loads(summary.read_text())
        return ClassifyResult(_frame(pl.read_parquet(out), backend), s, _quarantined(s))


def report(
    study: Union[PathLike, Sequence[PathLike]],
    *,
    out: Optional[PathLike] = None,
    html: Optional[PathLike] = None,
    fail_if: Sequence[str] = (),
    rules: Optional[PathLike] = None,
    registry: Union[None, PathLike, Sequence[PathLike]] = None,
    backend: Backend = "polars",
) -> Report:
    """The report on a study file (``study.toml``) or on transcripts (one arm per harness and
    model): arms, failure modes, mechanics, the per-task matrix and the verdicts.

    ``out`` keeps every file ``report --out`` writes (else they go to a temporary directory);
    ``html`` writes the HTML report there. ``fail_if`` thresholds (``"infrastructure > 5%"``) are
    checked; the crossed ones are listed in ``crossed`` rather than raised, so a notebook can
    look at the tables either way."""
    keep = out is not None
    with tempfile.TemporaryDirectory(prefix="coroner-") as tmp:
        where = Path(out) if out is not None else Path(tmp)
        args = ["report", *_paths(study), "--out", str(where), "--charts", "svg", "-q"]
        if html is not None:
            args += ["--html", os.fspath(html)]
        elif not keep:
            args.append("--no-html")
        if rules:
            args += ["--rules", os.fspath(rules)]
        args += _many("--registry", registry)
        for t in fail_if:
            args += ["--fail-if", t]
        p = run(*args, ok=(0, GATE, PARTIAL))
        crossed: List[str] = []
        if p.returncode == GATE:
            line = next((ln for ln in p.stderr.splitlines() if "threshold crossed:" in ln), "")
            crossed = [c.strip() for c in line.split("threshold crossed:", 1)[-1].split(";") if c.strip()]

        def read(name: str) -> Any:
            return _frame(pl.read_parquet(where / f"{name}.parquet"), backend)

        comparison_file = where / "comparison.json"
        return Report(
            arms=read("arms"),
            failure_modes=read("failure_modes"),
            mechanics=read("mechanics"),
            per_task=read("per_task"),
            # A dataset is its own verdicts (`report` does not write them again).
            verdicts=read("verdicts")
            if (where / "verdicts.parquet").exists()
            else _frame(read_dataset(_paths(study)[0], skip_unreadable=True), backend),
            comparison=json.loads(comparison_file.read_text()) if comparison_file.exists() else None,
            markdown=(where / "report.md").read_text(),
            out=where if keep else None,
            html=Path(html) if html is not None else (where / "html" if keep else None),
            crossed=crossed,
        )


def show(
    target: PathLike,
    *,
    id: Optional[str] = None,  # noqa: A002 (the CLI's name)
    task: Optional[str] = None,
    step: Optional[int] = None,
    markdown: bool = False,
) -> str:
    """One trajectory as ``coroner show`` prints it: steps, calls and results, the evidence steps
    marked, terminal controls made visible. ``target`` is a transcript or run directory."""
    args = ["show", os.fspath(target)]
    if id is not None:
        args += ["--id", id]
    if task is not None:
        args += ["--task", task]
    if step is not None:
        args += ["--step", str(step)]
    if markdown:
        args += ["--format", "markdown"]
    text: str = run(*args).stdout
    return text


@dataclass
class SpotcheckSample:
    """A blind labelling sheet (CSV, ``human_label`` empty) and its key (JSON, coroner's labels
    and the strata the items were drawn from)."""

    sheet: Path
    key: Path


def spotcheck_sample(
    paths: Union[PathLike, Sequence[PathLike]],
    sheet: PathLike,
    key: PathLike,
    *,
    per_class: int = 5,
    passed: int = 0,
    seed: Optional[int] = None,
    registry: Union[None, PathLike, Sequence[PathLike]] = None,
) -> SpotcheckSample:
    """Draws a stratified blind sample to label by hand (``coroner spotcheck sample``)."""
    args = ["spotcheck", "sample", *_paths(paths), "--per-class", str(per_class), "--passed", str(passed)]
    if seed is not None:
        args += ["--seed", str(seed)]
    args += _many("--registry", registry)
    run(*args, "-o", os.fspath(sheet), "--key", os.fspath(key), "-q")
    return SpotcheckSample(Path(sheet), Path(key))


def spotcheck_score(sheet: PathLike, key: PathLike) -> Dict[str, Any]:
    """Agreement between a labelled sheet and coroner (``coroner spotcheck score --format
    json``): agreement with its interval, Cohen's kappa, the confusion matrix."""
    score: Dict[str, Any] = json.loads(run("spotcheck", "score", os.fspath(sheet), "--key", os.fspath(key), "--format", "json").stdout)
    return score
