"""Executes notebooks top to bottom with nbclient, as `notebooks/run.sh` does.

    python notebooks/execute.py --root REPO --out DIR NOTEBOOK.ipynb...

Each notebook runs in a fresh kernel whose working directory is the repository root, with the
environment of this process (COR_OUT, COR_BIN, COR_ROOT). The executed copies, outputs and
all, go to DIR, never over the committed notebooks. A notebook with a cell that raised is
reported with the cell and its traceback; the others still run; the last line counts them
(`notebooks: N passed, M failed`) and the exit code is 1 when any failed.
"""
import argparse
import os
import sys
import time

import nbformat
from nbclient import NotebookClient

KERNEL = "coroner-notebooks"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the repository root (the kernels' working directory)")
    ap.add_argument("--out", required=True, help="where the executed copies go")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one cell may take")
    ap.add_argument("notebooks", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    failed = 0
    for path in a.notebooks:
        name = os.path.basename(path)
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=a.timeout,
            kernel_name=KERNEL,
            allow_errors=False,
            resources={"metadata": {"path": a.root}},
        )
        started = time.monotonic()
        print(f"executing {name} ...", flush=True)
        try:
            client.execute()
        except Exception as e:  # CellExecutionError, a timeout, a dead kernel: all fail the run
            nbformat.write(nb, os.path.join(a.out, name))
            print(f"error: {name} failed; its executed copy is {os.path.join(a.out, name)}\n{e}", file=sys.stderr, flush=True)
            failed += 1
            continue
        nbformat.write(nb, os.path.join(a.out, name))
        cells = sum(1 for c in nb.cells if c.cell_type == "code")
        print(f"  ok: {cells} code cells in {time.monotonic() - started:.1f} s", flush=True)
    print(f"notebooks: {len(a.notebooks) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
