"""hierarchical_sigmoid: the hierarchical sigmoid loss (Morin and Bengio's binary tree of
classes), and its gradient; Fluid's slots and attributes, as ``F.hsigmoid_loss`` and
``nn.HSigmoidLoss`` save them in Paddle 2.6.2 (X, W, Label, PathTable, PathCode, Bias ->
Out, PreOut, W_Out).

Each class is a leaf of a binary tree whose inner nodes are the rows of W (and of Bias);
a sample's loss is the binary cross-entropy of the branch taken at every node on the path
from the root to its label's leaf:

    z_j = clip(W[node_j] . X + Bias[node_j], -40, 40)
    Out = sum_j softplus(z_j) - sum_{j: bit_j set} z_j

The default tree (no PathTable) is the complete binary tree over ``num_classes`` leaves
(num_classes - 1 nodes); a custom tree gives each sample's nodes in PathTable and bits in
PathCode, padded with -1 (kernels/cpu/hierarchical_sigmoid.py describes both). PreOut
[N, L] keeps softplus(z) for the gradient, L being the longest path (the default tree:
the bit length of num_classes - 1; a custom one: PathTable's width). As in Paddle, the
steps past a shorter path hold softplus(0) = log 2 and are added into Out too (Paddle's
kernel notes this; every sample of a class has the same constant, so its gradient is
untouched).

The gradient of each step is (sigmoid(z) - bit) * dOut, added into dX (W's rows), dW
(X) and dBias. Paddle's ``is_sparse`` makes W@GRAD a SelectedRows of the visited rows;
here W@GRAD is always the dense tensor that SelectedRows stands for (the same values;
an optimizer updates every row, the unvisited ones by zero).

In a compiled block both ops are kernels/cpu/hierarchical_sigmoid.py's loops after the
same index checks (hsigmoid_loss, hsigmoid_loss_grad), on new arrays.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import hierarchical_sigmoid as CPU_HS
from ..kernels.cuda import hierarchical_sigmoid as CUDA_HS
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA
from .common import int_shape, require_element_type

FLOATS = ("float32", "float64")      # Paddle 2.6.2's CPU kernels


def default_code_length(num_classes: int) -> int:
    """The longest path of the default tree: the bit length of num_classes - 1."""
    return int(num_classes - 1).bit_length()


def _num_classes_ok(value) -> str | None:
    if isinstance(value, int) and value < 2:
        return f"num_classes={value}; expected at least 2 (a tree needs two leaves)"
    return None


def host_weight_grads(x, w) -> tuple:
    """(dX, dW, dBias) on the host for a CPU kernel to fill: one dBias per row of W
    (hierarchical_sigmoid's inner nodes, nce's classes)."""
    return (np.empty(x.shape, x.dtype), np.empty(w.shape, x.dtype),
            np.empty(int(w.shape[0]), x.dtype))


def set_weight_grads(ctx, x_slot: str, w_slot: str, dx, dw, dbias) -> None:
    """``x_slot@GRAD`` and ``w_slot@GRAD``, and Bias@GRAD in Bias's shape where the program
    asks for it."""
    ctx.set_output(f"{x_slot}@GRAD", dx)
    ctx.set_output(f"{w_slot}@GRAD", dw)
    if ctx.has_output("Bias@GRAD"):
        ctx.set_output("Bias@GRAD", dbias.reshape(int_shape(ctx.input("Bias"))))


def require_int64(ctx, slot: str) -> None:
    """Paddle's kernel reads ``slot`` as int64 indices, and only that."""
    if dtypes.name(ctx.dtype(slot)) != "int64":
        ctx.fail(f"{ctx.op_def.type} reads {slot} as int64 indices", slot=slot,
                 expected="int64", given=ctx.describe_input(slot))


def _infer(ctx):
    for slot in ("X", "W"):
        require_element_type(ctx, slot, FLOATS, "hierarchical_sigmoid needs float32 or "
                             "float64 values (Paddle's kernels)", expected="float32 or float64")
    ctx.require_same_dtype("W", "X")
    xs, ws = ctx.shape("X"), ctx.shape("W")
    if len(xs) != 2 or len(ws) != 2:
        bad = "X" if len(xs) != 2 else "W"
        ctx.fail("X is [N, D] and W is [nodes, D]", slot=bad, expected="a 2-D tensor",
                 given=ctx.describe_input(bad))
    if xs[1] >= 0 and ws[1] >= 0 and xs[1] != ws[1]:
        ctx.fail("each row of W is a node's weights over X's D features", slot="W",
                 expected=f"[nodes, {xs[1]}]", given=ctx.describe_input("W"))
    require_int64(ctx, "Label")
    ls = ctx.shape("Label")
    if not (len(ls) == 1 or (len(ls) == 2 and ls[1] == 1)) or \
            (ls[0] >= 0 and xs[0] >= 0 and ls[0] != xs[0]):
        ctx.fail("Label holds one class per sample", slot="Label",
                 expected=f"[{xs[0]}, 1] or [{xs[0]}]", given=ctx.describe_input("Label"))
    custom = ctx.has_input("PathTable")
    if custom != ctx.has_input("PathCode"):
        ctx.fail("a custom tree needs both PathTable and PathCode", slot="PathCode",
                 expected="both given or neither", given="one of them")
    if custom:
        code_length = _infer_custom(ctx, xs[0])
    else:
        num_classes = ctx.attr("num_classes")
        code_length = default_code_length(num_classes)
        if ws[0] >= 0 and ws[0] < num_classes - 1:
            ctx.fail("the default tree over num_classes leaves has num_classes - 1 nodes, "
                     "one row of W each", slot="W",
                     expected=f"at least {num_classes - 1} rows", given=ctx.describe_input("W"))
    if ctx.has_input("Bias"):
        ctx.require_same_dtype("Bias", "X")
        bs = ctx.shape("Bias")
        if ws[0] >= 0 and bs not in ([ws[0]], [ws[0], 1]):
            ctx.fail("Bias holds one value per node (row of W)", slot="Bias",
                     expected=f"[{ws[0]}, 1]", given=ctx.describe_input("Bias"))
    ctx.set_output("Out", [xs[0], 1], ctx.dtype("X"))
    ctx.set_output("PreOut", [xs[0], code_length], ctx.dtype("X"))
    if ctx.has_output("W_Out"):
        ctx.set_output("W_Out", ws, ctx.dtype("W"))


def _infer_custom(ctx, n: int) -> int:
    for slot in ("PathTable", "PathCode"):
        require_int64(ctx, slot)
        shape = ctx.shape(slot)
        if len(shape) != 2 or (n >= 0 and shape[0] >= 0 and shape[0] != n):
            ctx.fail("a custom tree gives each sample's path as one row", slot=slot,
                     expected=f"[{n}, path length]", given=ctx.describe_input(slot))
    if ctx.shape("PathCode") != ctx.shape("PathTable"):
        ctx.fail("PathCode holds one bit per PathTable node", slot="PathCode",
                 expected=str(ctx.shape("PathTable")), given=ctx.describe_input("PathCode"))
    return ctx.shape("PathTable")[1]


def _inputs(ctx, place):
    """(x, w, labels [N] int64, table, code (None: the default tree), num_classes,
    code_length), the indices checked: labels in [0, num_classes) for the default tree
    (its nodes then fit W, as shape inference checked), PathTable's nodes rows of W."""
    x, w = ctx.input("X"), ctx.input("W")
    n, nodes = int(x.shape[0]), int(w.shape[0])
    num_classes = int(ctx.attr("num_classes"))
    labels = ctx.input("Label").reshape((n,))
    table, code = ctx.input_or_none("PathTable"), ctx.input_or_none("PathCode")
    if table is None:
        check.indices(labels, num_classes, slot="Label", what="class",
                      counted=f"num_classes={num_classes}")
        if nodes < num_classes - 1:
            raise check.IndexOutOfRange(
                f"hierarchical_sigmoid: slot W: the default tree over {num_classes} classes "
                f"needs {num_classes - 1} rows; expected at least {num_classes - 1}, given "
                f"{nodes}", slot="W", value=nodes, position=None, low=num_classes - 1,
                high=None)
        code_length = default_code_length(num_classes)
    else:
        check.indices(table, nodes, slot="PathTable", what="node", ignore=-1,
                      counted=f"W has {nodes} rows", ignored_as="-1",
                      ignored_means="to end the path")
        code_length = int(table.shape[1])
    if place is CPU:
        x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
        labels = np.ascontiguousarray(labels)
    return x, w, labels, table, code, num_classes, code_length


def _bias(ctx):
    bias = ctx.input_or_none("Bias")
    return None if bias is None else bias.reshape((int(bias.size),))


def _hsigmoid(place):
    def run(ctx):
        x, w, labels, table, code, num_classes, code_length = _inputs(ctx, place)
        bias = _bias(ctx)
        if place is CPU:
            n = int(x.shape[0])
            out = ctx.out("Out", (n, 1), x.dtype)
            pre_out = ctx.out("PreOut", (n, code_length), x.dtype)
            CPU_HS.hierarchical_sigmoid(
                x, w, np.zeros(1, x.dtype) if bias is None else np.ascontiguousarray(bias),
                bias is not None, labels,
                CPU_HS.NO_TABLE if table is None else np.ascontiguousarray(table),
                CPU_HS.NO_TABLE if code is None else np.ascontiguousarray(code),
                table is not None, num_classes, pre_out, out)
        else:
            out, pre_out = CUDA_HS.hierarchical_sigmoid(x, w, bias, labels, table, code,
                                                           num_classes, code_length)
        ctx.set_output("Out", out)
        ctx.set_output("PreOut", pre_out)
        if ctx.has_output("W_Out"):          # Paddle's prefetch slot: W itself, unchanged
            ctx.set_output("W_Out", ctx.input("W"))
    return run


def _hsigmoid_grad(place):
    """dX, dW and dBias from PreOut (the forward's softplus values) and dOut."""
    def run(ctx):
        x, w, labels, table, code, num_classes, code_length = _inputs(ctx, place)
        pre_out = ctx.input("PreOut")
        n = int(x.shape[0])
        if tuple(int(d) for d in pre_out.shape) != (n, code_length):
            raise ValueError(f"hierarchical_sigmoid_grad: slot PreOut: expected "
                             f"{[n, code_length]} (the forward's), given {list(pre_out.shape)}")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape((n,))
        if place is CPU:
            dx, dw, dbias = host_weight_grads(x, w)
            CPU_HS.hierarchical_sigmoid_grad(
                x, w, labels, CPU_HS.NO_TABLE if table is None else np.ascontiguousarray(table),
                CPU_HS.NO_TABLE if code is None else np.ascontiguousarray(code),
                table is not None, num_classes, np.ascontiguousarray(pre_out),
                np.ascontiguousarray(dout), dx, dw, dbias)
        else:
            dx, dw, dbias = CUDA_HS.hierarchical_sigmoid_grad(x, w, labels, table, code,
                                                                 num_classes, pre_out, dout)
        set_weight_grads(ctx, "X", "W", dx, dw, dbias)
    return run


# --- in a compiled block (kernels/lowered.py): the CPU kernels' loops, after their checks ----
def _tree_slots(info) -> tuple:
    """PathTable and PathCode where given (int64, as the kernels read them), else ()."""
    return ("PathTable", "PathCode") if info.has_input("PathTable") else ()


def _lowered_operands(info, slots) -> bool:
    """float32/float64 X, W (and ``slots``) of one dtype, int64 indices."""
    dtype = info.dtype("X")
    return dtype.name in FLOATS and all(info.dtype(s) == dtype for s in slots) and \
        all(info.dtype(s).name == "int64" for s in ("Label", *_tree_slots(info)))


def _lowered_hsigmoid(grad: bool):
    """kernels/cpu/hierarchical_sigmoid.hsigmoid_loss (or its _grad): the op's checks, then
    its kernel's loop. Their operands: X, W, Label, (PreOut, dOut,) PathTable, PathCode,
    Bias; the generated call passes those the op has in order, then None for Bias where
    it has none (an entry point without the two tree slots serves the default tree)."""
    def lowered(info):
        bias = ("Bias",) if info.has_input("Bias") else ()
        middle = ("PreOut", "Out@GRAD") if grad else ()
        if not _lowered_operands(info, ("W", *bias, *middle)):
            return None
        tree = _tree_slots(info)
        num_classes = int(info.attr("num_classes"))
        consts = (*(() if bias else (None,)), num_classes, default_code_length(num_classes))
        if grad:
            fn = CPU_HS.hsigmoid_loss_grad if tree else CPU_HS.hsigmoid_loss_grad_default_tree
            writes = ("X@GRAD", "W@GRAD", "Bias@GRAD")
        else:
            fn = CPU_HS.hsigmoid_loss if tree else CPU_HS.hsigmoid_loss_default_tree
            writes = ("Out", "PreOut", "W_Out")
        return Call(fn, ("X", "W", "Label", *middle, *tree, *bias), writes, consts)
    return lowered


_KEPT = [Attr("trainer_id", A.INT, 0, "kept for Paddle compatibility (parameter servers)",
              extra=True),
         Attr("height_sections", A.LONGS, [], "kept for Paddle compatibility", extra=True),
         Attr("epmap", A.STRINGS, [], "kept for Paddle compatibility", extra=True),
         Attr("table_names", A.STRINGS, [], "kept for Paddle compatibility", extra=True)]

register(OpDef(
    "hierarchical_sigmoid",
    [Slot("X", "the features, [N, D]"),
     Slot("W", "one row of weights per inner node of the tree, [nodes, D]"),
     Slot("Label", "the class of each sample, int64 [N, 1]"),
     Slot("PathTable", "a custom tree: each sample's nodes root first, -1 padded, [N, L]",
          dispensable=True),
     Slot("PathCode", "a custom tree: the branch (0 or 1) at each of those nodes, [N, L]",
          dispensable=True),
     Slot("Bias", "one bias per inner node, [nodes, 1]", dispensable=True)],
    [Slot("Out", "the loss of each sample, [N, 1]"),
     Slot("PreOut", "softplus of each step's clipped pre-activation, [N, L]",
          intermediate=True),
     Slot("W_Out", "W itself (Paddle's slot for prefetched weights)", intermediate=True,
          dispensable=True)],
    [Attr("num_classes", A.INT, 2, "how many classes (leaves of the default tree)",
          check=_num_classes_ok),
     Attr("is_sparse", A.BOOLEAN, False, "Paddle: W@GRAD as SelectedRows (here dense)"),
     *_KEPT],
    comment="Out = sum over the label's tree path of softplus(z) - bit * z, z = "
            "clip(W[node] . X + Bias[node], -40, 40).",
    infer_shape=_infer, kernels={"cpu": _hsigmoid(CPU), "cuda": _hsigmoid(CUDA)},
    lowered=_lowered_hsigmoid(grad=False),
    grad=Grad(reads=["X", "W", "Label", "PathTable", "PathCode", "Bias", "PreOut"],
              grads_of=["Out"], writes=["X", "W", "Bias"],
              kernel=_hsigmoid_grad(CPU), cuda_kernel=_hsigmoid_grad(CUDA),
              lowered=_lowered_hsigmoid(grad=True))))
