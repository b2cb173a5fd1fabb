"""Small pieces the op declarations share: slots, shape rules and kernel adapters."""
from __future__ import annotations


from ..core.registry import Slot
from ..core.infer_shape import dims_compatible

X = Slot("X", "the input tensor")
Y = Slot("Y", "the second input tensor")
OUT = Slot("Out", "the result")


def same_shape_as_x(ctx) -> None:
    """Out has X's shape and dtype (unary elementwise ops)."""
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def aligned_y_shape(x_rank: int, y_shape, axis: int) -> list[int]:
    """Fluid's elementwise broadcast: Y's dims line up with X's starting at ``axis``
    (``-1``: aligned to the end); Y's trailing 1s may be dropped first."""
    y_shape = list(y_shape)
    if axis == -1 or axis is None:
        axis = x_rank - len(y_shape)
    while len(y_shape) > 1 and y_shape[-1] == 1 and axis + len(y_shape) > x_rank:
        y_shape.pop()
    return [1] * axis + y_shape + [1] * (x_rank - axis - len(y_shape))


def broadcast_shapes(a, b) -> list[int] | None:
    """Numpy broadcasting of declared shapes (-1 = unknown); None if they cannot fit."""
    out = []
    for da, db in zip(a, b):
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif dims_compatible(da, db):
            out.append(da if da >= 0 else db)
        else:
            return None
    return out


def dtype_to_numpy(code_or_name):
    from ..core import dtypes   # noqa: PLC0415
    return dtypes.to_numpy(dtypes.to_code(code_or_name))


def dtype_code_check(kinds: str = "biufc", minus_one: bool = False):
    """An ``Attr(check=...)`` for a ``dtype`` attribute: a VarType code of an element type
    (whose numpy kind letter is in ``kinds``; ``-1`` too where it means "X's type"). A code
    such as -1 or 2**31 would otherwise reach the kernel as a bare TypeError."""
    from ..core import dtypes   # noqa: PLC0415

    def check(value):
        if minus_one and value == -1:
            return None
        try:
            kind = dtypes.to_numpy(dtypes.to_code(value)).kind
        except TypeError:
            kind = None
        if kind is None or kind not in kinds:
            allowed = [n for c, n in sorted(dtypes._NAMES.items())
                       if c in dtypes._TO_NUMPY and dtypes._TO_NUMPY[c].kind in kinds]
            codes = ", ".join(f"{dtypes.to_code(n)} ({n})" for n in allowed)
            return (f"{value!r} is not a data type code this op makes; expected one of "
                    f"{codes}" + (" or -1 (X's type)" if minus_one else ""))
        return None
    return check
