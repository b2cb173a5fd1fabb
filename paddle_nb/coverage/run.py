"""Run one Paddle API's saved program here and compare with what Paddle computed.

Each API runs on its own: a fresh scope and executor, every error caught and turned into
an outcome, so one failing API never stops the others. The outcomes:

- ``covered``: the program loads, runs, and every fetched output and gradient matches
  Paddle's (same shape and dtype; values within rtol and atol 1e-5; for an API with random
  outputs, shape and dtype only; for a value Paddle computed wrongly, listed in
  paddle_wrong.py, shape and dtype only, and the outcome's detail says so).
- ``missing_ops``: op types the program holds that are not registered here.
- ``error``: a PaddleNBError (ours, on purpose): its first line.
- ``mismatch``: it ran, but a value differs: which one, and by how much.
- ``crash``: any other exception, from deep inside (also when an executor error only
  wraps it): its type, message and where it was raised. That is a bug to fix here, so it is
  reported, never hidden.
- ``skipped`` / ``host`` / ``no_call``: the maker's status, passed through.
"""
from __future__ import annotations

import os
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

import paddle_nb as pd      # the programs run through the public API, as a user's would

from ..core import registry
from .paddle_wrong import note, wrong_in_paddle
from .table import ApiTable, load_table

RTOL = ATOL = 1e-5
FAILURES = ("missing_ops", "error", "mismatch", "crash", "no_call")
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Outcome:
    key: str
    module: str
    status: str                 # covered, a FAILURES entry, skipped or host
    detail: str = ""            # one line: why (empty when covered)
    missing: tuple = ()         # unregistered op types (status missing_ops)
    full: str = field(default="", repr=False)   # the whole error, for --api

    def as_dict(self) -> dict:
        return {"api": self.key, "module": self.module, "status": self.status,
                "detail": self.detail, "missing_ops": list(self.missing)}


def run_api(key: str, table: ApiTable | None = None) -> Outcome:
    """The outcome of one API (never raises for what the API's program does)."""
    table = table or load_table()
    row = table.rows[key]
    if row["status"] != "built":
        detail = row.get("reason", "")
        if row.get("detail"):
            detail = f"{detail}: {row['detail']}"
        return Outcome(key, row["module"], row["status"], detail)
    try:
        program = pd.Program.from_bytes(table.program_bytes(key))
        types = {op.type for block in program.blocks for op in block.ops}
        missing = tuple(sorted(t for t in types if not registry.is_registered(t)))
        if missing:
            return Outcome(key, row["module"], "missing_ops",
                           "unregistered op types: " + ", ".join(missing), missing)
        got = _run(pd, program, table, key, row)
        problem = _compare(got, table, key, row)
    except pd.PaddleNBError as e:
        cause = e.__cause__      # a located error over one that was not raised on purpose
        if cause is not None and not isinstance(cause, pd.PaddleNBError):
            return Outcome(key, row["module"], "crash", _crash_line(cause),
                           full=traceback.format_exc())
        first = (str(e).strip().splitlines() or [""])[0]
        return Outcome(key, row["module"], "error", f"{type(e).__name__}: {first}",
                       full=traceback.format_exc())
    except Exception as e:   # noqa: BLE001 -- a bug here: reported with where it happened
        return Outcome(key, row["module"], "crash", _crash_line(e),
                       full=traceback.format_exc())
    if problem:
        return Outcome(key, row["module"], "mismatch", problem)
    return Outcome(key, row["module"], "covered", note(key))   # (paddle_wrong.py's note)


def run_all(keys, table: ApiTable | None = None, progress=None) -> list[Outcome]:
    table = table or load_table()
    outcomes = []
    for key in keys:
        outcomes.append(run_api(key, table))
        if progress is not None:
            progress(outcomes[-1])
    return outcomes


def _run(pd, program, table, key, row):
    """Paddle's startup values in a fresh scope, the feeds fed, Paddle's fetch list."""
    scope = pd.Scope()
    for name in row["params"]:
        scope.var(name).set(table.value(key, "param", name))
    feed = {name: table.value(key, "feed", name) for name in row["feeds"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return pd.Executor(pd.CPUPlace()).run(program, feed=feed,
                                                  fetch_list=table.fetched(key), scope=scope)


def _compare(got, table, key, row) -> str:
    """'' when every fetched value matches Paddle's, else the first difference."""
    shape_only = row.get("compare") == "shape"
    known_wrong = wrong_in_paddle(key)      # Paddle's value is wrong: shape and dtype only
    for name, value in zip(table.fetched(key), got):   # (Paddle's None: not run)
        want = table.value(key, "fetch", name)
        value = np.asarray(value)
        if value.shape != want.shape:
            return f"{name}: shape {list(value.shape)}, Paddle {list(want.shape)}"
        if value.dtype != want.dtype:
            return f"{name}: dtype {value.dtype}, Paddle {want.dtype}"
        if shape_only or value.size == 0 or name in known_wrong:
            continue
        if want.dtype.kind in "fc":
            close = np.isclose(value, want, rtol=RTOL, atol=ATOL, equal_nan=True)
            if not close.all():
                wide = np.complex128 if want.dtype.kind == "c" else np.float64
                diff = np.abs(value.astype(wide) - want)
                worst = np.where(close, 0.0, np.where(np.isnan(diff), np.inf, diff)).max()
                return (f"{name}: max difference {worst:.3g} "
                        f"({int((~close).sum())} of {want.size} values)")
        elif not np.array_equal(value, want):
            return f"{name}: {int((value != want).sum())} of {want.size} values differ"
    return ""


def _crash_line(e: BaseException) -> str:
    """Type, message and the innermost frame inside paddle_nb (else the innermost)."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    frame = (ours or frames or [None])[-1]
    where = ""
    if frame is not None:
        path = os.path.relpath(frame.filename, os.path.dirname(_PACKAGE_DIR))
        where = f" at {path}:{frame.lineno}"
    message = (str(e).strip().splitlines() or [""])[0][:160]
    return f"{type(e).__name__}: {message}{where}"
