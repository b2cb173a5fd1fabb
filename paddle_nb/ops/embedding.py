"""Embeddings: lookup_table_v2 and the legacy lookup_table, and their gradients (Fluid's
slots and attributes, as Paddle 2.6.2 saves ``F.embedding`` / ``nn.Embedding`` /
``static.nn.embedding`` and Fluid's ``lookup_table``).

Out holds the rows of W [V, D] at Ids (int32 or int64): lookup_table_v2's Out is Ids.shape
+ [D]; lookup_table's Ids end in a dim of 1, which Out drops (Ids.shape[:-1] + [D]). A row
whose id is ``padding_idx`` is zeros in Out and gets no gradient. ``padding_idx`` is -1
for none, else a row of W: Paddle's Python stores a negative one given by the user as
V + padding_idx, so a saved program never holds another negative value (one that does is
refused here, as is one past W's last row).

Every id is checked before anything is read or written (kernels/check.py): an id outside
[0, V) that is not ``padding_idx`` is an ``IndexRangeError`` naming the op, the slot Ids,
the value and its position, forward and backward, on both places.

The gradient W@GRAD, with ``is_sparse=False`` (the default), is a dense tensor of W's shape:
the rows of Out@GRAD added at their ids, the padding id's left out (its row of W is never
used, so its gradient is zero). With ``is_sparse=True`` it is what Paddle 2.6.2 makes, a
SelectedRows (core/selected_rows.py): rows = the ids as given, flattened (repeats kept),
value = the rows of Out@GRAD in the same order, height = V. Paddle's sparse kernel
(EmbeddingSparseGradKernel, and Fluid's lookup_table sparse gradient) copies Out@GRAD
whole and ignores padding_idx, so the padding id is among the rows with whatever gradient
arrived at its (zero) output: an optimizer then moves the padding row, which the dense
gradient never does (tests/test_selected_rows.py, and the recipes Paddle trained,
tests/test_paddle_recipes.py). The backward declares such a W@GRAD VarType.SELECTED_ROWS,
as Paddle's programs do; sgd, momentum, adam and sum take it.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import embedding as CPU_EMBEDDING
from ..kernels.cuda import embedding as CUDA_EMBEDDING
from ..kernels.lowered import Call
from . import arrays, selected_rows

KERNELS = {"cpu": CPU_EMBEDDING, "cuda": CUDA_EMBEDDING}
FLOAT32, FLOAT64 = dtypes.to_code("float32"), dtypes.to_code("float64")
INT32, INT64 = dtypes.to_code("int32"), dtypes.to_code("int64")


# --- shape rule ----------------------------------------------------------------------------
def _padding_ok(padding_idx, rows: int) -> bool:
    """-1 (none) or a row of W (rows < 0: not known until run time)."""
    return padding_idx == -1 or (0 <= padding_idx and (rows < 0 or padding_idx < rows))


def _infer(legacy: bool):
    def infer(ctx):
        if ctx.dtype("W") not in (FLOAT32, FLOAT64):
            ctx.fail("the embedding table holds float32 or float64 values", slot="W",
                     expected="W float32 or float64", given=ctx.describe_input("W"))
        ws = ctx.shape("W")
        if len(ws) != 2:
            ctx.fail("the embedding table must be 2-D: one row of D values per id", slot="W",
                     expected="W of shape [V, D]", given=ctx.describe_input("W"))
        if ctx.dtype("Ids") not in (INT32, INT64):
            ctx.fail("ids are int32 or int64", slot="Ids", expected="Ids int32 or int64",
                     given=ctx.describe_input("Ids"))
        ids = ctx.shape("Ids")
        if legacy:
            if not ids or ids[-1] not in (1, -1):
                ctx.fail("lookup_table's Ids end in a dim of 1, which Out drops "
                         "(lookup_table_v2 takes Ids of any shape)", slot="Ids",
                         expected="Ids of shape [..., 1]", given=ctx.describe_input("Ids"))
            ids = ids[:-1]
        padding_idx = ctx.attr("padding_idx")
        if not _padding_ok(padding_idx, ws[0]):
            ctx.fail("padding_idx must be -1 (no padding) or a row of W (Paddle's Python "
                     "stores a negative padding_idx p as V + p)", slot="W",
                     expected=f"padding_idx = -1 or 0 <= padding_idx < {ws[0]}"
                     if ws[0] >= 0 else "padding_idx = -1 or >= 0",
                     given=f"padding_idx={padding_idx}, {ctx.describe_input('W')}")
        ctx.set_output("Out", list(ids) + [ws[1]], ctx.dtype("W"))
    return infer


# --- kernels ---------------------------------------------------------------------------------
def _checked_ids(ctx, op_type: str, rows: int):
    """(Ids as a flat array, the padding id for the kernels (-1: none), Out's leading
    shape), every id checked to be a row of W or the padding id."""
    ids = ctx.input("Ids")
    shape = tuple(int(d) for d in ids.shape)
    lead = shape[:-1] if op_type == "lookup_table" else shape
    padding_idx = ctx.attr("padding_idx")
    padding_idx = padding_idx if _padding_ok(padding_idx, rows) else -1   # (the rule refused)
    check.indices(ids, rows, slot="Ids", what="id",
                  ignore=padding_idx if padding_idx >= 0 else None,
                  counted=f"W has {rows} rows", ignored_as="padding_idx",
                  ignored_means="for a row of zeros")
    n = int(np.prod(lead, dtype=np.int64))
    if arrays.on_device(ids):
        return ids.reshape(n) if ids.ndim != 1 else ids, padding_idx, lead
    return np.ascontiguousarray(ids).reshape(n), padding_idx, lead


def _lookup(kind: str, op_type: str):
    kernels = KERNELS[kind]

    def run(ctx):
        w = ctx.input("W")
        if not arrays.on_device(w):
            w = np.ascontiguousarray(w)
        flat_ids, padding_idx, lead = _checked_ids(ctx, op_type, int(w.shape[0]))
        shape = lead + (int(w.shape[1]),)
        out = ctx.out("Out", shape, w.dtype)
        rows = None if out is None else out.reshape((flat_ids.shape[0], shape[-1]))
        rows = kernels.lookup(w, flat_ids, padding_idx, rows)
        ctx.set_output("Out", rows.reshape(shape) if out is None else out)
    return run


def _lookup_grad(kind: str, op_type: str):
    """W@GRAD: dense (W's shape and type), each row of Out@GRAD added at its id, rows of
    the padding id left out; with is_sparse a SelectedRows of the ids and those rows, the
    padding id's included (Paddle's sparse kernel ignores padding_idx)."""
    kernels = KERNELS[kind]

    def run(ctx):
        w = ctx.input("W")
        flat_ids, padding_idx, _ = _checked_ids(ctx, op_type, int(w.shape[0]))
        dout = arrays.astype(ctx.input("Out@GRAD"), w.dtype)
        width = int(w.shape[1])
        if not arrays.on_device(dout):
            dout = np.ascontiguousarray(dout)
        dout = dout.reshape((flat_ids.shape[0], width))
        if ctx.attr("is_sparse"):
            ctx.set_output("W@GRAD", selected_rows.from_lookup(flat_ids, dout,
                                                               int(w.shape[0])))
            return
        shape = (int(w.shape[0]), width)
        dw = kernels.lookup_grad(dout, flat_ids, padding_idx, shape,
                                 ctx.out("W@GRAD", shape, w.dtype))
        ctx.set_output("W@GRAD", dw)
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/embedding.looked_up ---------------
def _lowered_lookup(op_type: str, grad: bool):
    """The dense lookup and its dense gradient (dOut in W's dtype), padding_idx as the
    kernels take it; a sparse W@GRAD stays in the interpreter (a SelectedRows)."""
    def lowered(info):
        rows = info.shape("W")[0]
        padding_idx = info.attr("padding_idx")
        padding_idx = padding_idx if _padding_ok(padding_idx, rows) else -1
        if grad:
            if info.attr("is_sparse") or info.dtype("Out@GRAD") != info.dtype("W"):
                return None
            return Call(CPU_EMBEDDING.looked_up_grad, ("Ids", "W", "Out@GRAD"), ("W@GRAD",),
                        (padding_idx,))
        out_rank = info.ndim("Ids") + (0 if op_type == "lookup_table" else 1)
        return Call(CPU_EMBEDDING.looked_up, ("Ids", "W"), ("Out",), (padding_idx, out_rank))
    return lowered


# --- the two ops -------------------------------------------------------------------------------
_SPARSE = ("W@GRAD is a SelectedRows (the ids and their rows of Out@GRAD, padding id "
           "included, as Paddle's sparse kernel) instead of a dense tensor")
_KEPT = "kept for Paddle compatibility (distributed training)"
_W = Slot("W", "the embedding table [V, D] (float32 or float64)")
_IDS = Slot("Ids", "the ids to look up (int32 or int64)")
_PADDING = Attr("padding_idx", A.LONG, -1,
                "the id whose rows are zeros and get no gradient (-1: none)")
_DISTRIBUTED = [
    Attr("is_sparse", A.BOOLEAN, False, _SPARSE),     # (shown: it changes W@GRAD)
    Attr("is_distributed", A.BOOLEAN, False, _KEPT, extra=True),
    Attr("remote_prefetch", A.BOOLEAN, False, _KEPT, extra=True),
    Attr("trainer_id", A.INT, 0, _KEPT, extra=True),
    Attr("slot", A.INT, 0, _KEPT, extra=True),
    Attr("height_sections", A.LONGS, [], _KEPT, extra=True),
    Attr("epmap", A.STRINGS, [], _KEPT, extra=True),
    Attr("table_names", A.STRINGS, [], _KEPT, extra=True),
]
_LEGACY_ONLY = [
    Attr("entry_config", A.STRING, "", _KEPT, extra=True),
    Attr("is_test", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
    Attr("entry", A.STRING, "none", _KEPT, extra=True),
    Attr("table_class", A.STRING, "none", _KEPT, extra=True),
    Attr("grad_inplace", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
]
_DENSE = (" With is_sparse=True W@GRAD is a SelectedRows: rows = Ids (flat, repeats and the "
          "padding id kept), value = Out@GRAD's rows, as Paddle's sparse kernel (which "
          "ignores padding_idx).")

# (each op's slots in the order of Paddle's OpProto)
for _type, _slots, _attrs, _what in (
        ("lookup_table_v2", [_IDS, _W], [_PADDING] + _DISTRIBUTED,
         "Out = W's rows at Ids (Ids.shape + [D])"),
        ("lookup_table", [_W, _IDS], [_PADDING] + _DISTRIBUTED + _LEGACY_ONLY,
         "Out = W's rows at Ids, whose last dim of 1 Out drops (Ids.shape[:-1] + [D])")):
    register(OpDef(
        _type, _slots, [Slot("Out", "the rows looked up, W's type")], _attrs,
        comment=f"{_what}; zeros where an id is padding_idx.{_DENSE}",
        infer_shape=_infer(_type == "lookup_table"),
        kernels={"cpu": _lookup("cpu", _type), "cuda": _lookup("cuda", _type)},
        lowered=_lowered_lookup(_type, grad=False),
        grad=Grad(reads=["Ids", "W"], writes=["W"], kernel=_lookup_grad("cpu", _type),
                  cuda_kernel=_lookup_grad("cuda", _type), sparse_when="is_sparse",
                  lowered=_lowered_lookup(_type, grad=True),
                  comment=f"W@GRAD = Out@GRAD's rows added at Ids (padding_idx's left out)."
                          f"{_DENSE}")))
