"""gather_tree: the whole sequences of a beam search, found by walking each beam back
through its parents (Fluid's slots, as ``F.gather_tree`` and ``nn.dynamic_decode`` with a
``BeamSearchDecoder`` save them).

Ids and Parents are [steps, batch, beam]: at step t, beam k of a batch entry chose token
``Ids[t, b, k]`` and continued the beam ``Parents[t, b, k]`` of step t - 1. Out[:, b, k] is
the sequence that ends in beam k at the last step: ``Out[T-1] = Ids[T-1]``, and going
back, ``Out[t, b, k] = Ids[t, b, p]`` where p is the parent the walk reached at step t + 1.
Every parent must be a beam (``0 <= p < beam``), checked before the walk (Paddle 2.6.2
checks those it visits). No gradient: the ids are integers.

The CPU walks each beam back in one njit loop (kernels/cpu/gather_tree.walk), which is
also the op in a compiled block (it checks the parents itself and raises, so that the
compiler reruns the op here for the named error); CUDA runs one thread per beam
(kernels/cuda/gather_tree.py).
"""
from __future__ import annotations

from ..core import dtypes
from ..core.registry import NO_GRADIENT, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import gather_tree as cpu_gather_tree
from ..kernels.cuda import gather_tree as cuda_gather_tree
from ..kernels.lowered import Call

_ID_TYPES = ("int32", "int64")


def _gather_tree_infer(ctx):
    for slot in ("Ids", "Parents"):
        if dtypes.name(ctx.dtype(slot)) not in _ID_TYPES:
            ctx.fail("gather_tree needs int32 or int64 ids and parents", slot=slot,
                     expected="int32 or int64", given=ctx.describe_input(slot))
    ids, parents = ctx.shape("Ids"), ctx.shape("Parents")
    if len(ids) != 3:
        ctx.fail("Ids is [steps, batch, beam]", slot="Ids", expected="a rank-3 tensor",
                 given=ctx.describe_input("Ids"))
    if len(parents) != 3 or any(a >= 0 and b >= 0 and a != b for a, b in zip(ids, parents)) \
            or ctx.dtype("Parents") != ctx.dtype("Ids"):
        ctx.fail("Parents must have Ids' shape and element type", slot="Parents",
                 expected=ctx.describe_input("Ids"), given=ctx.describe_input("Parents"))
    ctx.set_output("Out", ids, ctx.dtype("Ids"))


def _checked(ctx):
    ids, parents = ctx.input("Ids"), ctx.input("Parents")
    if tuple(ids.shape) != tuple(parents.shape) or ids.ndim != 3:
        raise ValueError(f"gather_tree: slot Parents: expected Ids' shape [steps, batch, "
                         f"beam], given Ids {list(ids.shape)}, Parents {list(parents.shape)}")
    beam = int(ids.shape[2])
    check.indices(parents, beam, slot="Parents", what="parent beam",
                  counted=f"beam size {beam}")
    return ids, parents


def _cpu_gather_tree(ctx):
    ids, parents = _checked(ctx)
    ctx.set_output("Out", cpu_gather_tree.walk(ids, parents))


def _cuda_gather_tree(ctx):
    ids, parents = _checked(ctx)
    ctx.set_output("Out", cuda_gather_tree.gather_tree(ids, parents))


register(OpDef(
    "gather_tree", [Slot("Ids", "the token each beam chose at each step [steps, batch, "
                                "beam]"),
                    Slot("Parents", "the beam of the step before each beam continued")],
    [Slot("Out", "the whole sequence of each final beam [steps, batch, beam]")], [],
    comment="Out[:, b, k] = the tokens along beam k's chain of parents, back from the "
            "last step.",
    infer_shape=_gather_tree_infer,
    kernels={"cpu": _cpu_gather_tree, "cuda": _cuda_gather_tree},
    lowered=lambda info: Call(cpu_gather_tree.walk, ("Ids", "Parents"), ("Out",)),
    grad=NO_GRADIENT))
