"""shard_index: class ids made local to one shard of a model split by rows (Fluid's slots and
attributes, as ``paddle.shard_index`` saves them).

``index_num`` ids are split into ``nshards`` consecutive shards of
``shard_size = ceil(index_num / nshards)`` ids each. For shard ``shard_id``, an id inside
it becomes its position there (``id - shard_id * shard_size``), and any other id becomes
``ignore_value``. X is a tensor of ids whose last dim is 1 (Paddle's rule); every id must
be in ``[0, index_num)``, checked before anything is computed (Paddle 2.6.2 refuses one
too). The map is one ``@pointwise`` function of the id, its three numbers passed as
scalars. No gradient: ids are not differentiable.

In a compiled block it is one njit loop of the same function, after the same range check
(which raises there, so that the compiler reruns the op here for the named error): both in
kernels/cpu/shard_index.py.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import NO_GRADIENT, Attr, OpDef, register
from ..kernels import check
from ..kernels.cpu.shard_index import ID_TYPES, shard_local
from ..kernels.lowered import Call
from ..kernels.pointwise import KERNELS
from .common import OUT, X
from ..backends import CPU, CUDA

shard_local_id = KERNELS["shard_local_id"]      # (kernels/cpu/shard_index.py)


def _check_attrs(values: dict):
    if values["index_num"] <= 0 or values["nshards"] <= 0:
        return (f"index_num and nshards must be positive, given index_num="
                f"{values['index_num']}, nshards={values['nshards']}")
    if not 0 <= values["shard_id"] < values["nshards"]:
        return (f"shard_id must be in [0, nshards) = [0, {values['nshards']}), given "
                f"{values['shard_id']}")
    return None


def _shard_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in ID_TYPES:
        ctx.fail("shard_index needs int32 or int64 ids", slot="X", expected="int32 or int64",
                 given=ctx.describe_input("X"))
    xs = ctx.shape("X")
    if not xs or xs[-1] not in (1, -1):
        ctx.fail("X's last dim must be 1 (one id per row)", slot="X",
                 expected="shape [..., 1]", given=ctx.describe_input("X"))
    problem = _check_attrs({a: ctx.attr(a) for a in ("index_num", "nshards", "shard_id")})
    if problem:
        ctx.fail(problem, slot="X")
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _shard_index(place):
    def run(ctx):
        x = ctx.input("X")
        index_num, nshards = int(ctx.attr("index_num")), int(ctx.attr("nshards"))
        check.indices(x, index_num, slot="X", what="id", counted=f"index_num={index_num}")
        shard_size = (index_num + nshards - 1) // nshards
        scalars = [x.dtype.type(v) for v in (shard_size, ctx.attr("shard_id"),
                                             ctx.attr("ignore_value"))]
        ctx.set_output("Out", place.apply(shard_local_id, x, *scalars, out=None,
                                          out_dtype=x.dtype))
    return run


def _lowered_shard_index(info):
    dtype = info.dtype("X").type
    index_num, nshards = int(info.attr("index_num")), int(info.attr("nshards"))
    return Call(shard_local, ("X",), ("Out",),
                (index_num, dtype((index_num + nshards - 1) // nshards),
                 dtype(info.attr("shard_id")), dtype(info.attr("ignore_value"))))


register(OpDef(
    "shard_index", [X], [OUT],
    [Attr("index_num", A.INT, 0, "how many ids there are (ids are in [0, index_num))"),
     Attr("nshards", A.INT, 0, "how many shards the ids are split into"),
     Attr("shard_id", A.INT, 0, "the shard this op keeps"),
     Attr("ignore_value", A.INT, -1, "what an id of another shard becomes")],
    comment="Out = X - shard_id * shard_size where X is in shard shard_id, else "
            "ignore_value (shard_size = ceil(index_num / nshards)).",
    infer_shape=_shard_infer,
    kernels={"cpu": _shard_index(CPU), "cuda": _shard_index(CUDA)},
    lowered=_lowered_shard_index, grad=NO_GRADIENT, check_attrs=_check_attrs))
