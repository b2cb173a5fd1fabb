"""Builders over whole tensors and their axes: ``softmax``, ``matmul``, the reductions
(``mean``, ``reduce_sum``, ``reduce_mean``), ``sums`` (of several tensors), ``concat``
and ``split``. (``reshape``, ``transpose`` and ``fill_constant`` live in ``base``: other
builders build with them.)
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..core import unique_name
from .base import append, current_block, temporary


def softmax(x, axis: int = -1):
    check.variable("softmax", "x", x)
    return append("softmax", {"X": [x]}, {"axis": check.axis("softmax", "axis", axis,
                                                               len(x.shape))})


def matmul(x, y, transpose_x: bool = False, transpose_y: bool = False):
    check.variable("matmul", "x", x)
    check.variable("matmul", "y", y)
    return append("matmul_v2", {"X": [x], "Y": [y]},
                  {"trans_x": check.boolean("matmul", "transpose_x", transpose_x),
                   "trans_y": check.boolean("matmul", "transpose_y", transpose_y)})


# --- reductions ------------------------------------------------------------------------------
def mean(x):
    check.variable("mean", "x", x)
    return append("mean", {"X": [x]})


def _reduce(op_type: str, x, dim, keep_dim):
    check.variable(op_type, "x", x)
    dims = [] if dim is None else check.axes(op_type, "dim", dim, len(x.shape))
    keep_dim = check.boolean(op_type, "keep_dim", keep_dim)
    return append(op_type, {"X": [x]}, {"dim": dims or [0], "keep_dim": keep_dim,
                                        "reduce_all": not dims})


def reduce_sum(x, dim=None, keep_dim: bool = False):
    """The sum over ``dim`` (an axis or a list of them), or over everything when None."""
    return _reduce("reduce_sum", x, dim, keep_dim)


def reduce_mean(x, dim=None, keep_dim: bool = False):
    """The mean over ``dim`` (an axis or a list of them), or over everything when None."""
    return _reduce("reduce_mean", x, dim, keep_dim)


def sums(xs):
    return append("sum", {"X": check.variables("sums", "xs", xs)})


# --- joining and cutting --------------------------------------------------------------------
def concat(xs, axis: int = 0):
    xs = check.variables("concat", "xs", xs)
    return append("concat", {"X": xs}, {"axis": check.axis("concat", "axis", axis,
                                                             len(xs[0].shape))})


def split(x, num_or_sections, dim: int = 0):
    """``x`` cut along ``dim`` into ``num`` equal pieces, or pieces of the sizes listed
    (one of them may be -1: the rest)."""
    check.variable("split", "x", x)
    dim = check.axis("split", "dim", dim, len(x.shape))
    if check.is_int(num_or_sections):
        n = check.positive_int("split", "num_or_sections", num_or_sections)
        attrs = {"num": n, "axis": dim}
    else:
        sections = check.shape("split", "num_or_sections", num_or_sections, reshape=True)
        if not sections or 0 in sections:
            raise check.refuse("split", "num_or_sections", "an int >= 1 or a non-empty list "
                               "of sizes >= 1 (one may be -1)", num_or_sections)
        n, attrs = len(sections), {"sections": sections, "axis": dim}
    size = x.shape[dim] if x.shape else -1
    if size >= 0 and n > max(size, 1):       # checked before n variables are made
        raise check.refuse("split", "num_or_sections", f"at most {size} pieces (dim {dim} of "
                           f"x has {size})", num_or_sections)
    layer = unique_name.generate("split")
    outs = [temporary(layer, x.dtype) for _ in range(n)]
    current_block().append_op("split", inputs={"X": [x]}, outputs={"Out": outs}, attrs=attrs)
    return outs

