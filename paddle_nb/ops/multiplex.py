"""multiplex: each row of Out taken from the X that Ids names for it, and its gradient
(Fluid's slots, as ``paddle.multiplex`` saves them).

With candidates X[0..K-1], all of one shape [N, ...], and Ids [N, 1],
``Out[i] = X[Ids[i]][i]``: row i comes from candidate Ids[i], at the same row. Each id is
range-checked against K first (kernels/check.py; Paddle 2.6.2 refuses one too). The
candidates are stacked into one (K * N, ...) tensor, and row i of Out is its row
``Ids[i] * N + i`` (the places' ``linear_index`` of the pairs (Ids[i], i)), one ``take``;
the gradient puts each dOut row back there (``scatter_add``) and cuts the stack into the K
candidates' gradients, zero in the rows they did not give.

In a compiled block both are kernels/cpu/structured.py's loops (multiplexed and its
_grads: the same copies, each dOut row added into zeros), the ids range-checked there.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels import check
from ..kernels.cpu import structured as KS
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's CPU kernel is registered for
MULTIPLEXABLE = ("int32", "int64", "float32", "float64")


def _multiplex_infer(ctx):
    ctx.require_dtype("Ids", "int")
    shapes = ctx.shapes("X")
    for i, s in enumerate(shapes):
        if dtypes.name(ctx.dtype("X", i)) not in MULTIPLEXABLE:
            ctx.fail("multiplex needs int32, int64, float32 or float64 elements (Paddle's "
                     "CPU kernels)", slot="X", expected="one of those",
                     given=ctx.describe_input("X", i))
        if ctx.dtype("X", i) != ctx.dtype("X") or len(s) != len(shapes[0]) or any(
                a >= 0 and b >= 0 and a != b for a, b in zip(s, shapes[0])):
            ctx.fail("every candidate must have X[0]'s shape and element type", slot="X",
                     expected=ctx.describe_input("X"), given=ctx.describe_input("X", i))
    xs, ids = shapes[0], ctx.shape("Ids")
    if not xs:
        ctx.fail("multiplex picks rows: the candidates need rank 1 or more", slot="X",
                 expected="rank >= 1", given=ctx.describe_input("X"))
    if len(ids) != 2 or ids[1] not in (1, -1) or (ids[0] >= 0 and xs[0] >= 0
                                                  and ids[0] != xs[0]):
        ctx.fail("Ids holds one candidate number per row", slot="Ids",
                 expected=f"shape [{xs[0]}, 1]", given=ctx.describe_input("Ids"))
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _positions(place, ctx, xs):
    """Row ``Ids[i] * N + i`` of the stacked candidates for each row i, checked."""
    ids = ctx.input("Ids")
    n, k = int(xs[0].shape[0]), len(xs)
    if tuple(int(d) for d in ids.shape) != (n, 1) or any(
            tuple(x.shape) != tuple(xs[0].shape) for x in xs):
        raise ValueError(f"multiplex: slot Ids: expected shape [{n}, 1] and candidates of "
                         f"one shape, given Ids {list(ids.shape)} and candidates "
                         f"{[list(x.shape) for x in xs]}")
    check.indices(ids, k, slot="Ids", what="candidate number", counted=f"{k} candidates")
    pairs = arrays.concat([arrays.astype(ids, np.int64),
                           place.arange(n, 0, 1, np.int64).reshape((n, 1))], axis=1)
    return place.linear_index(pairs, (k, n))


def _stacked_shape(xs) -> tuple[int, ...]:
    return (len(xs) * int(xs[0].shape[0]),) + tuple(int(d) for d in xs[0].shape[1:])


def _multiplex(place):
    def run(ctx):
        xs = ctx.inputs("X")
        at = _positions(place, ctx, xs)
        check_tensor_size(_stacked_shape(xs), xs[0].dtype, "multiplex")
        stacked = arrays.stack(xs, 0).reshape(_stacked_shape(xs))
        ctx.set_output("Out", place.take(stacked, at, 0))
    return run


def _multiplex_grad(place):
    """dX[k]: dOut's rows where Ids chose candidate k, zeros in the others."""
    def run(ctx):
        xs, dout = ctx.inputs("X"), ctx.input("Out@GRAD")
        at = _positions(place, ctx, xs)
        dout = arrays.astype(dout, xs[0].dtype).reshape(tuple(int(d) for d in xs[0].shape))
        spread = place.scatter_add(_stacked_shape(xs), at, dout, 0)
        grads = arrays.split(spread, [int(xs[0].shape[0])] * len(xs), 0)
        ctx.set_outputs("X@GRAD", grads)
    return run


def _lowered(grad: bool):
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in MULTIPLEXABLE or info.ndim("X") == 0 or \
                info.dtype("Ids").kind != "i" or \
                (grad and info.dtype("Out@GRAD") != dtype):
            return None
        if grad:
            return Call(KS.multiplexed_grads, ("Ids", "X", "Out@GRAD"), ("X@GRAD",))
        return Call(KS.multiplexed, ("Ids", "X"), ("Out",))
    return lowered


register(OpDef(
    "multiplex", [Slot("Ids", "which candidate each row comes from ([N, 1], int)"),
                  Slot("X", "the candidates, all of one shape [N, ...]", duplicable=True)],
    [Slot("Out", "row i of candidate Ids[i], for each row i")], [],
    comment="Out[i] = X[Ids[i]][i].", infer_shape=_multiplex_infer,
    kernels={"cpu": _multiplex(CPU), "cuda": _multiplex(CUDA)}, lowered=_lowered(False),
    grad=Grad(reads=["Ids", "X"], grads_of=["Out"], writes=["X"],
              kernel=_multiplex_grad(CPU), cuda_kernel=_multiplex_grad(CUDA),
              lowered=_lowered(True))))
