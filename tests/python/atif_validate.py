"""Validates ATIF files against Harbor's own trajectory models, strictly.

Used by the write-back round trip (tests/write_back.rs) when CORONER_ATIF_PYTHON names a Python
that has them: `.ci/run` installs the pinned harbor wheel (requirements-atif.txt) with pydantic
only; the models need nothing else. Exit 0 when every file validates, 1 otherwise.
"""

import pathlib
import sys

from pydantic import ValidationError
from harbor.models.trajectories import Trajectory

bad = 0
for name in sys.argv[1:]:
    try:
        t = Trajectory.model_validate_json(pathlib.Path(name).read_bytes(), strict=True)
        print(f"ok   {name} ({t.schema_version}, {len(t.steps)} steps)")
    except ValidationError as e:
        bad += 1
        print(f"FAIL {name}\n{e}", file=sys.stderr)
sys.exit(1 if bad else 0)
