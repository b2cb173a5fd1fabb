"""recurrent_hoist: a recurrent op's input projection, once for all time steps.

A StaticRNN step often starts with ``mul(x_t, W)``: the step's slice of a sequence times a
weight matrix. Run per step, that is T small products and, in the backward pass, T more for
``W@GRAD`` (summed by ``recurrent_grad`` step by step). None of them depends on the
recurrence, so they can run before it as one product over the whole sequence, and the
weight gradient after it as one product over all steps: the rewrite Paddle's fused RNN ops
do inside, done here on the program where a learner can print and step it.

The rewrite, for a ``recurrent`` op R in block P whose step block S holds
``A = mul(X=[x], Y=[W])`` with ``x`` one of R's step inputs and ``W`` one of its
parameters, each read in S by that mul only (and in the gradient block only by its
``mul_grad``):

* P gains ``A_all = mul(x, W)`` before R (``x_num_col_dims`` one more: the time dim stays a
  row dim), R steps over ``A_all`` instead of ``x`` and no longer lists ``W``, and S loses the
  mul and reads ``A_all`` (its step slice) where it read ``A``.
* If the program has R's ``recurrent_grad`` RG with step block G: G loses the ``mul_grad``
  and writes ``A_all@GRAD`` where it wrote ``A@GRAD``; RG gives ``A_all@GRAD`` as the input's
  gradient (all steps) and no longer sums ``W@GRAD``; and P gains ``mul_grad(x, W,
  A_all@GRAD)`` after RG, which makes ``W@GRAD`` (and ``x@GRAD`` if it was asked for) in one
  product each.

The numbers equal the original's up to float rounding (a product over T*B rows sums the
same terms as T products over B rows, but BLAS may order them differently; the weight
gradient's sum over steps is one product instead of T additions).
"""
from __future__ import annotations

from ..core.grad_maker import EMPTY_VAR, grad_name
from ..core.program import Program
from ..core.symbol_table import var_dtype, var_shape
from .matching import copy_line


def run(program: Program, keep=frozenset()) -> int:
    """Hoist every projection that qualifies (in place); returns how many."""
    count = 0
    while True:
        found = _find(program, keep)
        if found is None:
            return count
        _hoist(program, *found)
        count += 1


def _readers(block, name: str) -> list:
    return [op for op in block.ops if name in op.input_arg_names]


def _grad_op_of(parent, recurrent):
    """R's recurrent_grad in the same block: it reads R's step scopes."""
    scopes = recurrent.output("step_scopes")
    for op in parent.ops:
        if op.type == "recurrent_grad" and scopes and op.input("step_scopes") == scopes:
            return op
    return None


def _find(program, keep):
    for parent in program.blocks:
        for r_op in parent.ops:
            if r_op.type != "recurrent":
                continue
            step = program.block(r_op.attr("sub_block"))
            rg_op = _grad_op_of(parent, r_op)
            grad_block = program.block(rg_op.attr("sub_block")) if rg_op is not None else None
            inputs, params = r_op.input("inputs"), r_op.input("parameters")
            kept_names = set(r_op.attr("states") or []) | set(r_op.attr("ex_states") or []) \
                | set(r_op.output("outputs"))
            for m_op in step.ops:
                if m_op.type != "mul" or m_op.attr("y_num_col_dims", 1) != 1:
                    continue
                x, w = m_op.input("X")[0], m_op.input("Y")[0]
                product = m_op.output("Out")[0]
                if x not in inputs or w not in params or product in kept_names or \
                        product in keep or len(_readers(step, x)) != 1 or \
                        len(_readers(step, w)) != 1:
                    continue
                mg_op = None
                if grad_block is not None:
                    mg_op = next((o for o in grad_block.ops if o.type == "mul_grad" and
                                  o.input("X") == [x] and o.input("Y") == [w]), None)
                    others = [o for o in grad_block.ops if o.desc is not mg_op.desc and
                              (x in o.input_arg_names or w in o.input_arg_names)]
                    if mg_op is None or others:
                        continue
                return parent, r_op, step, m_op, rg_op, grad_block, mg_op
    return None


def _rename(block, mapping: dict) -> None:
    """Every op of ``block`` reads and writes ``mapping[name]`` where it used ``name``."""
    for op in block.ops:
        for slots in (op.desc.inputs, op.desc.outputs):
            for v in slots:
                v.arguments[:] = [mapping.get(a, a) for a in v.arguments]
    block.table.touch()


def _set_slot(op, outputs: bool, slot: str, names) -> None:
    for v in (op.desc.outputs if outputs else op.desc.inputs):
        if v.parameter == slot:
            v.arguments[:] = list(names)
    op.block.table.touch()


def _fresh(program, base: str) -> str:
    name, i = base, 0
    while program.find_var_block(name) is not None or \
            program.find_var_block(grad_name(name)) is not None:
        i += 1
        name = f"{base}_{i}"
    return name


def _hoist(program, parent, r_op, step, m_op, rg_op, grad_block, mg_op) -> None:
    x, w = m_op.input("X")[0], m_op.input("Y")[0]
    product = m_op.output("Out")[0]
    n_col = m_op.attr("x_num_col_dims", 1) + 1         # the time dim stays a row dim
    x_desc, w_desc = parent.lookup(x), parent.lookup(w)
    x_shape, w_shape = var_shape(x_desc) or [], var_shape(w_desc) or []
    hoisted = _fresh(program, f"{product}.all_steps")
    parent.table.declare(hoisted, shape=list(x_shape[:n_col]) + list(w_shape[1:]),
                         dtype=var_dtype(x_desc))

    # forward: one product before the recurrent op, which steps over it
    r_index = r_op.idx
    new = parent._insert_op(r_index, "mul", {"X": [x], "Y": [w]}, {"Out": [hoisted]},
                            {"x_num_col_dims": n_col, "y_num_col_dims": 1}, infer_shape=False)
    copy_line(m_op, new)
    inputs = r_op.input("inputs")
    _set_slot(r_op, False, "inputs", [hoisted if n == x else n for n in inputs])
    _set_slot(r_op, False, "parameters", [p for p in r_op.input("parameters") if p != w])
    step._remove_op(m_op.idx)
    _rename(step, {product: hoisted})
    if step.table.find_var(product, recursive=False) is not None:
        step._remove_var(product)
    if rg_op is None:
        return

    # backward: the step block's gradient of the product is the hoisted one's, step by step
    g_product, g_hoisted = grad_name(product), grad_name(hoisted)
    grad_block._remove_op(mg_op.idx)
    _rename(grad_block, {product: hoisted, g_product: g_hoisted})
    if grad_block.table.find_var(g_product, recursive=False) is not None:
        grad_block._remove_var(g_product)
    grad_block.table.declare(g_hoisted, dtype=var_dtype(x_desc))
    parent.table.declare(g_hoisted, shape=list(x_shape[:n_col]) + list(w_shape[1:]),
                         dtype=var_dtype(x_desc))
    params = rg_op.input("parameters")
    at = params.index(w)
    input_grads = rg_op.output("inputs@GRAD")
    i = rg_op.input("inputs").index(x)
    x_grad = input_grads[i] if i < len(input_grads) else EMPTY_VAR
    _set_slot(rg_op, False, "inputs", [hoisted if n == x else n for n in rg_op.input("inputs")])
    _set_slot(rg_op, False, "parameters", [p for p in params if p != w])
    param_grads = rg_op.output("parameters@GRAD")
    w_grad = param_grads[at]
    _set_slot(rg_op, True, "parameters@GRAD", [g for k, g in enumerate(param_grads) if k != at])
    _set_slot(rg_op, True, "inputs@GRAD",
              [g_hoisted if k == i else g for k, g in enumerate(input_grads)])
    # one product for W@GRAD (and x@GRAD) over all steps, after the recurrent gradient
    grad = parent._insert_op(rg_op.idx + 1, "mul_grad",
                             {"X": [x], "Y": [w], "Out@GRAD": [g_hoisted]},
                             {"X@GRAD": [x_grad], "Y@GRAD": [w_grad]},
                             {"x_num_col_dims": n_col, "y_num_col_dims": 1},
                             infer_shape=False)
    copy_line(mg_op, grad)
    for name in ("op_role",):
        if mg_op.has_attr(name):
            grad._set_attr(name, mg_op.attr(name))
