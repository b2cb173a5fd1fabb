"""fc_fuse: ``mul`` + ``elementwise_add`` (+ ``relu``) into one ``fc`` op, as Paddle's
``fc_fuse_pass`` does.

``pd.layer.fc`` builds ``mul(X, W)`` then ``elementwise_add(_, b)`` and maybe an
activation: three ops, each writing a whole [batch, size] array that the next reads once.
The fused ``fc`` op (ops/fc.py) writes one array and adds and rectifies it in place.

The pattern, in one block: a ``mul`` whose weights are a persistable 2-D matrix
(``y_num_col_dims`` 1); its output read by exactly one op, an ``elementwise_add`` of a
persistable bias of one value per column, aligned to the last dim; optionally that sum read
by exactly one op, a ``relu``. The intermediates must be read by nothing else in the whole
program (a gradient op reads them in a training program, so training programs are left as
they are), must not be persistable or kept, and no op between the first and the last of
the three may write what they read. The ``fc`` op takes the place of the last of them and
carries the ``mul``'s creating line, so an error still points at the user's ``fc`` call.
"""
from __future__ import annotations

from ..core.program import Program
from ..core.symbol_table import var_shape
from .matching import copy_line, reader_counts, untouched_between


def run(program: Program, keep=frozenset()) -> int:
    """Fuse every match in every block of ``program`` (in place); returns how many."""
    count = 0
    for block in program.blocks:
        while True:
            match = _find(program, block, keep)
            if match is None:
                break
            _fuse(block, *match)
            count += 1
    return count


def _find(program, block, keep):
    ops = block.ops
    readers = reader_counts(program)

    def only_reader(name, i, op_type):
        """The index of the one op after ``i`` reading ``name``, if it is an ``op_type``."""
        desc = block.table.find_var(name)
        if name in keep or desc is None or desc.persistable or readers.get(name) != 1:
            return None
        for j in range(i + 1, len(ops)):
            if name in ops[j].input_arg_names:
                return j if ops[j].type == op_type else None
        return None

    for i, mul in enumerate(ops):
        if mul.type != "mul" or mul.attr("y_num_col_dims", 1) != 1:
            continue
        w = block.lookup(mul.input("Y")[0])
        w_shape = list(var_shape(w) or ()) if w is not None else []
        if w is None or not w.persistable or len(w_shape) != 2:
            continue
        product = mul.output("Out")[0]
        j = only_reader(product, i, "elementwise_add")
        if j is None:
            continue
        add = ops[j]
        bias = block.lookup(add.input("Y")[0])
        n_col = mul.attr("x_num_col_dims", 1)
        if add.input("X") != [product] or bias is None or not bias.persistable or \
                list(var_shape(bias) or ()) != [w_shape[1]] or \
                add.attr("axis", -1) not in (-1, n_col):
            continue
        last, out, act = j, add.output("Out")[0], ""
        k = only_reader(out, j, "relu")
        if k is not None:
            last, out, act = k, ops[k].output("Out")[0], "relu"
        if not untouched_between(ops, i, last, [mul.input("X")[0], w.name, bias.name]):
            continue        # something rewrites an input before the last op: moving unsafe
        dropped = [product] + ([add.output("Out")[0]] if act else [])
        return i, j, (k if act else None), out, act, dropped
    return None


def _fuse(block, i, j, k, out, act, dropped) -> None:
    ops = block.ops
    mul, add = ops[i], ops[j]
    last = k if k is not None else j
    inputs = {"Input": mul.input("X"), "W": mul.input("Y"), "Bias": add.input("Y")}
    attrs = {"in_num_col_dims": mul.attr("x_num_col_dims", 1), "activation_type": act}
    fc = block._insert_op(last + 1, "fc", inputs, {"Out": [out]}, attrs, infer_shape=False)
    copy_line(mul, fc)
    for index in sorted({i, j, last}, reverse=True):
        block._remove_op(index)
    for name in dropped:
        block._remove_var(name)
