"""elewise_add_act_fuse: ``elementwise_add`` then an activation, as one op, forward and
backward, as Paddle's ``fuse_elewise_add_act_pass`` does.

Forward: ``E = elementwise_add(A, B)`` read only by ``O = act(E)`` becomes
``O = fused_elemwise_add_activation(A, B)`` with ``functor_list [act, elementwise_add]``
(act one of relu, tanh, sigmoid, or a scale without bias). E is gone from the program.

Backward: ``dE = act_grad(O, dO)`` read only by ``dA, dB = elementwise_add_grad(A, B, dE)``
becomes ``dA, dB = fused_elemwise_add_activation_grad(A, B, O, dO)`` with
``[act_grad, elementwise_add_grad]`` (relu, tanh, sigmoid: their derivative is read from
O). The two halves are matched apart, so either fuses where the other cannot.

So a training step of ``tanh(x @ W + h @ U)`` runs two ops fewer per time step and
computes the same bits (ops/fused_elemwise.py runs the same kernels back to back).
Like every pass, a name something else reads (another op anywhere in the program, a
persistable, a fetch named in ``keep``) is never fused away.
"""
from __future__ import annotations

from ..core.program import Program
from .matching import copy_line, reader_counts, untouched_between

ACTIVATIONS = ("relu", "tanh", "sigmoid", "scale")
GRAD_ACTIVATIONS = ("relu_grad", "tanh_grad", "sigmoid_grad")
FUSED = "fused_elemwise_add_activation"


def run(program: Program, keep=frozenset()) -> int:
    """Fuse every match in every block of ``program`` (in place); returns how many."""
    count = 0
    for block in program.blocks:
        for find, fuse in ((_find_forward, _fuse_forward), (_find_backward, _fuse_backward)):
            while (match := find(program, block, keep)) is not None:
                fuse(block, *match)
                count += 1
    return count


def _sole_reader(readers, block, keep, name: str, start: int, op_types):
    """The index of the one op after ``start`` in ``block`` that reads ``name``, if it is
    one of ``op_types`` and nothing else in the program (``readers``: reader_counts) reads
    or keeps ``name``."""
    desc = block.table.find_var(name)
    if name in keep or desc is None or desc.persistable or readers.get(name) != 1:
        return None
    for j in range(start + 1, len(block.ops)):
        if name in block.ops[j].input_arg_names:
            return j if block.ops[j].type in op_types else None
    return None


def _find_forward(program, block, keep):
    ops, readers = block.ops, reader_counts(program)
    for i, add in enumerate(ops):
        if add.type != "elementwise_add":
            continue
        j = _sole_reader(readers, block, keep, add.output("Out")[0], i, ACTIVATIONS)
        if j is None:
            continue
        act = ops[j]
        if act.type == "scale" and (act.attr("bias", 0.0) != 0.0 or act.input("ScaleTensor")):
            continue
        if untouched_between(ops, i, j, add.input("X") + add.input("Y")):
            return i, j
    return None


def _fuse_forward(block, i, j) -> None:
    add, act = block.ops[i], block.ops[j]
    attrs = {"functor_list": [act.type, "elementwise_add"], "axis": add.attr("axis", -1),
             "scale": float(act.attr("scale", 1.0)) if act.type == "scale" else 0.0,
             "save_intermediate_out": False}
    fused = block._insert_op(j + 1, FUSED, {"X": add.input("X"), "Y": add.input("Y")},
                             {"Out": act.output("Out")}, attrs, infer_shape=False)
    copy_line(add, fused)
    middle = add.output("Out")[0]
    block._remove_op(j)
    block._remove_op(i)
    block._remove_var(middle)


def _find_backward(program, block, keep):
    ops, readers = block.ops, reader_counts(program)
    for i, act_grad in enumerate(ops):
        if act_grad.type not in GRAD_ACTIVATIONS or not act_grad.output("X@GRAD"):
            continue
        j = _sole_reader(readers, block, keep, act_grad.output("X@GRAD")[0], i,
                         ("elementwise_add_grad",))
        if j is None or ops[j].input("Out@GRAD") != act_grad.output("X@GRAD"):
            continue
        reads = ops[j].input("X") + ops[j].input("Y") + act_grad.input("Out") + \
            act_grad.input("Out@GRAD")
        if untouched_between(ops, i, j, reads):
            return i, j
    return None


def _fuse_backward(block, i, j) -> None:
    act_grad, add_grad = block.ops[i], block.ops[j]
    attrs = {"functor_list": [act_grad.type, "elementwise_add_grad"],
             "axis": add_grad.attr("axis", -1), "scale": 0.0, "save_intermediate_out": False}
    outputs = {s: add_grad.output(s) for s in ("X@GRAD", "Y@GRAD") if add_grad.output(s)}
    fused = block._insert_op(
        j + 1, FUSED + "_grad",
        {"X": add_grad.input("X"), "Y": add_grad.input("Y"), "Out": act_grad.input("Out"),
         "Out@GRAD": act_grad.input("Out@GRAD")}, outputs, attrs, infer_shape=False)
    copy_line(act_grad, fused)
    middle = act_grad.output("X@GRAD")[0]
    block._remove_op(j)
    block._remove_op(i)
    block._remove_var(middle)
