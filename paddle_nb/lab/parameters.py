"""The parameters beside a program file, as the *Paddle program* tab lists them.

The tab shows each persistable tensor's name, shape and dtype, and its smallest and
largest value. None of that needs the values in memory: the headers say the first three
(``io.variables.stored_tensors`` walks the file from header to header, seeking past the
data, with every check a load makes), and min/max are computed in chunks of
``CHUNK_BYTES``, only for tensors of at most ``SUMMARY_MAX_TENSOR_BYTES`` and for at most
``SUMMARY_READ_BYTES`` in all per file. So a 125-byte program beside an 8 GiB parameter
file opens in a few KiB (before, the whole file was read into memory, and a copy made of
each tensor: MemoryError), and a tab holds a short list of numbers, never a tensor.
"""
from __future__ import annotations

import os

import numpy as np

from ..core.errors import PaddleNBError
from ..core.limits import human_bytes
from ..io.files import open_checked
from ..io.tensor_format import elements
from ..io.variables import is_persistable, stored_tensors

SUMMARY_MAX_TENSOR_BYTES = 64 * 2 ** 20   # min/max of a tensor up to this size
SUMMARY_READ_BYTES = 256 * 2 ** 20        # and of this much data in all, per tab
CHUNK_BYTES = 4 * 2 ** 20                 # read at a time (a whole number of any element)


# Program files whose parameters are X.pdiparams beside X.<suffix>: Paddle 2's ProgramDesc and
# Paddle 3's PIR program (the same parameter format).
PAIRED_SUFFIXES = (".pdmodel", ".json")


def params_source(model_path: str) -> tuple[str, str | None] | None:
    """(folder, combined file name or None for one file per variable) of the parameters
    beside a program file, or None where there are none."""
    folder, name = os.path.split(model_path)
    for suffix in PAIRED_SUFFIXES:
        if name.endswith(suffix):
            combined = name[:-len(suffix)] + ".pdiparams"
            return (folder, combined) if os.path.isfile(os.path.join(folder, combined)) \
                else None
    if os.path.isfile(os.path.join(folder, "__params__")):
        return folder, "__params__"
    others = [n for n in os.listdir(folder) if n != name and not n.startswith(".")]
    return (folder, None) if others else None


def summaries(program, folder: str, filename: str | None, inside) -> list[dict]:
    """The persistable tensors of ``program`` stored in ``folder`` (``filename``: one
    combined file, None: a file each), checked as a load checks them, each summarised.
    ``inside(path)`` says whether a file may be read (the server's root); raises
    PaddleNBError naming the fault."""
    if filename is not None:
        _check_inside(os.path.join(folder, filename), inside)
    stored = stored_tensors(folder, program, predicate=is_persistable, filename=filename)
    for t in stored:                 # one file each: a name with '/' is a subfolder
        _check_inside(t.path, inside)
    budget = SUMMARY_READ_BYTES
    out = []
    for t in stored:
        h = t.header
        entry = {"name": t.name, "shape": list(h.dims), "dtype": str(h.dtype),
                 "bytes": h.nbytes}
        if not h.nbytes or h.dtype.kind not in "fiub":    # nothing to range over
            out.append(entry)
            continue
        if h.nbytes > SUMMARY_MAX_TENSOR_BYTES:
            entry["note"] = (f"min/max not read: {human_bytes(h.nbytes)}, more than "
                             f"{human_bytes(SUMMARY_MAX_TENSOR_BYTES)}")
        elif h.nbytes > budget:
            entry["note"] = (f"min/max not read: this tab reads at most "
                             f"{human_bytes(SUMMARY_READ_BYTES)} of values")
        else:
            budget -= h.nbytes
            entry.update(_min_max(t))
        out.append(entry)
    return out


def _check_inside(path: str, inside) -> None:
    if not inside(path):
        raise PaddleNBError(f"{path} leads outside the folder this server serves (a "
                            f"symlink?); it is not read")


def _min_max(t) -> dict:
    """min and max of the finite values of a stored tensor, read a chunk at a time, and
    how many are NaN or infinite (JSON has no NaN: the page gets a count instead)."""
    h = t.header
    lo = hi = None
    nonfinite = 0
    with open_checked(t.path, f"the values of {t.name!r}", "MAX_PARAMS_BYTES") as (f, _):
        f.seek(t.offset)
        left = h.nbytes
        while left:
            raw = f.read(min(CHUNK_BYTES, left))
            if not raw or len(raw) % h.dtype.itemsize:
                raise PaddleNBError(f"{t.path} changed while it was read (the values of "
                                    f"{t.name!r} end early)")
            left -= len(raw)
            a = elements(raw, h.dtype)
            if h.dtype.kind == "f":
                finite = np.isfinite(a)
                nonfinite += int(a.size - np.count_nonzero(finite))
                a = a[finite]
            if a.size:
                lo = a.min() if lo is None else min(lo, a.min())
                hi = a.max() if hi is None else max(hi, a.max())
    out = {"nonfinite": nonfinite} if nonfinite else {}
    if lo is not None:
        out.update(min=float(lo), max=float(hi))
    return out
