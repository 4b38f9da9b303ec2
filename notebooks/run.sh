#!/usr/bin/env bash
# Creates the notebooks' environment and executes every notebook top to bottom against freshly
# generated coroner outputs; exits non-zero when a cell raises. Safe to run again: the venv is
# reused while notebooks/requirements.txt is unchanged.
#
#   bash notebooks/run.sh
#
# Environment:
#   COR_BIN   the coroner binary the notebooks' `coroner` module drives (default: build it with
#             cargo: release when a release build exists, else debug)
#   COR_OUT   where the notebooks' `coroner.report(out=...)` writes and the executed notebooks go (default: a new
#             temporary directory, removed on success unless COR_KEEP=1)
#   COR_VENV  the virtualenv (default: notebooks/.venv)
#   PYTHON    the interpreter that creates the venv (default: python3.11, else python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

say() { printf 'notebooks: %s\n' "$*" >&2; }

# 1. The environment: created once, reinstalled only when the pins change.
venv="${COR_VENV:-$here/.venv}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
    if command -v python3.11 >/dev/null 2>&1; then python=python3.11; else python=python3; fi
fi
req="$here/requirements.txt"
want="$(sha256sum "$req" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ]; then
        say "error: $venv exists and is not a virtualenv; remove it or set COR_VENV"
        exit 2
    fi
    version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    [ "$version" = "3.11" ] || say "warning: the pins are for CPython 3.11; $python is $version"
    say "creating $venv with $python $version"
    "$python" -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req"
    "$venv/bin/python" -m ipykernel install --sys-prefix --name coroner-notebooks \
        --display-name "Python (coroner notebooks)" >/dev/null
    echo "$want" >"$stamp"
else
    say "reusing $venv"
fi

# 2. The binary.
if [ -n "${COR_BIN:-}" ]; then
    bin="$COR_BIN"
else
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$root/$target" ;; esac
    if [ -x "$target/release/coroner" ]; then
        cargo build --release --locked --quiet
        bin="$target/release/coroner"
    else
        cargo build --locked --quiet
        bin="$target/debug/coroner"
    fi
fi
say "coroner: $bin"

# 3. Fresh outputs.
temporary=0
if [ -n "${COR_OUT:-}" ]; then
    out="$COR_OUT"
    mkdir -p "$out"
else
    out="$(mktemp -d "${TMPDIR:-/tmp}/coroner-notebooks.XXXXXX")"
    temporary=1
fi
out="$(cd "$out" && pwd)"

# 4. Execute, top to bottom, in a kernel from the venv. The notebooks call coroner through its
# Python module (python/coroner, on PYTHONPATH), which drives this binary; each writes the
# report it reads into COR_OUT.
export COR_OUT="$out" CORONER_BIN="$bin" COR_ROOT="$root" PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export JUPYTER_PLATFORM_DIRS=1 MPLCONFIGDIR="$venv/mplconfig" IPYTHONDIR="$venv/ipython"
if "$venv/bin/python" "$here/execute.py" --root "$root" --out "$out/notebooks" "$here"/[0-9][0-9]-*.ipynb; then
    if [ "$temporary" = 1 ] && [ "${COR_KEEP:-0}" != 1 ]; then
        rm -rf "$out"
    else
        say "outputs and executed notebooks: $out"
    fi
else
    say "error: a notebook failed; outputs and executed notebooks kept in $out"
    exit 1
fi
