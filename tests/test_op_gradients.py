"""The gradient of every differentiable op against central differences, in float64.

Each row builds a one-op program, weights each output by a fixed random tensor W
(so the scalar is  L = sum(Out * W)), asks ``pd.gradients`` for dL/dInput, and compares
with (L(x + eps) - L(x - eps)) / 2eps element by element. The gradient ops run through the
real executor and kernels. The rows are the ones below (inputs chosen for the gradient:
away from kinks, distributions for soft labels) and every op-table row marked
``grad=True`` (tests/test_ops_table.py), so a new op can be one row in that table.
``test_every_differentiable_op_has_a_gradient_row`` fails for an op declared with a
gradient but without a row.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import registry
from paddle_nb.core.grad_maker import differentiable_inputs

import op_kinds
import test_ops_table as table_rows

EPS = 1e-6
FP64 = 6


def f64(seed, *shape, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def away_from_zero(seed, *shape):
    """Values in +-[0.2, 1]: no input sits on relu's kink or near log's pole."""
    x = f64(seed, *shape, low=0.2, high=1.0)
    return x * np.where(np.random.default_rng(seed + 99).random(shape) < 0.5, -1, 1)


def probs(seed, *shape):
    e = np.exp(f64(seed, *shape, low=-1, high=1))
    return e / e.sum(axis=-1, keepdims=True)


def labels(seed, *shape, classes=3):
    return np.random.default_rng(seed).integers(0, classes, shape).astype(np.int64)


@dataclass
class GradCase:
    id: str
    op: str
    inputs: dict                      # slot -> array (or list of arrays for duplicable slots)
    attrs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=lambda: {"Out": 1})   # slot -> how many vars


CASES = [
    GradCase("same_shape", "elementwise_add", {"X": f64(1, 2, 3), "Y": f64(2, 2, 3)}),
    GradCase("axis1", "elementwise_add", {"X": f64(1, 2, 3, 4), "Y": f64(2, 3)}, {"axis": 1}),
    GradCase("scalar_y", "elementwise_sub", {"X": f64(1, 2, 3), "Y": f64(2, 1)}),
    GradCase("axis-1", "elementwise_mul", {"X": f64(1, 2, 3), "Y": f64(2, 3)}),
    GradCase("x_smaller", "elementwise_mul", {"X": f64(1, 3), "Y": f64(2, 2, 3)}),
    GradCase("axis0", "elementwise_div",
             {"X": f64(1, 3, 2), "Y": away_from_zero(2, 3)}, {"axis": 0}),
    GradCase("x", "relu", {"X": away_from_zero(1, 3, 4)}),
    GradCase("tanh_add_bias", "fused_elemwise_activation", {"X": f64(1, 3, 4), "Y": f64(2, 4)},
             {"functor_list": ["tanh", "elementwise_add"], "save_intermediate_out": True}),
    GradCase("mul_sigmoid_axis1", "fused_elemwise_activation",
             {"X": f64(1, 2, 3, 2), "Y": f64(2, 3)},
             {"functor_list": ["elementwise_mul", "sigmoid"], "axis": 1}),
    GradCase("scale_mul", "fused_elemwise_activation", {"X": f64(1, 2, 3), "Y": f64(2, 2, 3)},
             {"functor_list": ["scale", "elementwise_mul"], "scale": -1.5}),
    GradCase("mul_tanh_saved", "fused_elemwise_activation", {"X": f64(1, 2, 3), "Y": f64(2, 3)},
             {"functor_list": ["elementwise_mul", "tanh"], "save_intermediate_out": True},
             outputs={"Out": 1, "IntermediateOut": 1}),
    # relu(X + Y) has a kink wherever X = -Y, which the fuzzer finds (its gradient is
    # checked through the same bits as relu_grad + elementwise_add_grad, test_passes)
    GradCase("sigmoid_add", "fused_elemwise_add_activation",
             {"X": f64(1, 3, 4), "Y": f64(2, 3, 4)},
             {"functor_list": ["sigmoid", "elementwise_add"]}),
    GradCase("add_relu_broadcast", "fused_elemwise_add_activation",
             {"X": f64(1, 2, 3), "Y": away_from_zero(2, 3)},
             {"functor_list": ["elementwise_add", "relu"], "save_intermediate_out": True},
             outputs={"Out": 1, "IntermediateOut": 1}),
    GradCase("x", "sigmoid", {"X": f64(1, 3, 4, low=-4, high=4)}),
    GradCase("x", "tanh", {"X": f64(1, 3, 4, low=-2, high=2)}),
    GradCase("x", "exp", {"X": f64(1, 3, 4)}),
    GradCase("x", "log", {"X": f64(1, 3, 4, low=0.5, high=2)}),
    GradCase("x", "square", {"X": f64(1, 3, 4)}),
    GradCase("bias_after", "scale", {"X": f64(1, 2, 3)}, {"scale": 2.5, "bias": 1.0}),
    GradCase("bias_before", "scale", {"X": f64(1, 2, 3)},
             {"scale": -1.5, "bias": 0.5, "bias_after_scale": False}),
    GradCase("fp64", "cast", {"X": f64(1, 2, 3)}, {"in_dtype": FP64, "out_dtype": FP64}),
    GradCase("x", "assign", {"X": f64(1, 2, 3)}),
    GradCase("2d", "mul", {"X": f64(1, 3, 4), "Y": f64(2, 4, 2)}),
    GradCase("x_num_col_dims2", "mul", {"X": f64(1, 2, 3, 4), "Y": f64(2, 4, 5)},
             {"x_num_col_dims": 2}),
    GradCase("2d", "matmul_v2", {"X": f64(1, 3, 4), "Y": f64(2, 4, 2)}),
    GradCase("broadcast_batch", "matmul_v2", {"X": f64(1, 2, 3, 4), "Y": f64(2, 4, 2)}),
    GradCase("trans_x", "matmul_v2", {"X": f64(1, 2, 4, 3), "Y": f64(2, 2, 4, 2)},
             {"trans_x": True}),
    GradCase("trans_y", "matmul_v2", {"X": f64(1, 3, 4), "Y": f64(2, 2, 4)}, {"trans_y": True}),
    GradCase("trans_both", "matmul_v2", {"X": f64(1, 4, 3), "Y": f64(2, 2, 4)},
             {"trans_x": True, "trans_y": True}),
    # one Y for a batch of X (a linear layer on [B, T, E]): the batch folds into rows
    GradCase("batch_times_matrix_trans_y", "matmul_v2", {"X": f64(1, 2, 3, 4),
                                                         "Y": f64(2, 5, 4)}, {"trans_y": True}),
    GradCase("batch_times_matrix_alpha", "matmul", {"X": f64(1, 2, 2, 3, 4), "Y": f64(2, 4, 2)},
             {"alpha": -1.5}),
    GradCase("vector_y", "matmul_v2", {"X": f64(1, 2, 3), "Y": f64(2, 3)}),
    GradCase("vector_x", "matmul_v2", {"X": f64(1, 3), "Y": f64(2, 2, 3, 4)}),
    GradCase("alpha_transpose_y", "matmul", {"X": f64(1, 3, 4), "Y": f64(2, 2, 4)},
             {"transpose_Y": True, "alpha": 0.5}),
    GradCase("three", "sum", {"X": [f64(1, 2, 3), f64(2, 2, 3), f64(3, 2, 3)]}),
    GradCase("x", "mean", {"X": f64(1, 3, 4)}),
    GradCase("dim1", "reduce_sum", {"X": f64(1, 2, 3, 4)}, {"dim": [1]}),
    GradCase("keep_dim", "reduce_sum", {"X": f64(1, 2, 3, 4)}, {"dim": [0, 2], "keep_dim": True}),
    GradCase("reduce_all", "reduce_mean", {"X": f64(1, 2, 3)}, {"reduce_all": True}),
    GradCase("dim-1", "reduce_mean", {"X": f64(1, 2, 3)}, {"dim": [-1]}),
    GradCase("axis-1", "softmax", {"X": f64(1, 3, 4)}),
    GradCase("axis0", "softmax", {"X": f64(1, 3, 4)}, {"axis": 0}),
    GradCase("x", "reshape2", {"X": f64(1, 2, 6)}, {"shape": [0, 3, -1]},
             {"Out": 1, "XShape": 1}),
    GradCase("x", "transpose2", {"X": f64(1, 2, 3, 4)}, {"axis": [2, 0, 1]},
             {"Out": 1, "XShape": 1}),
    GradCase("axis1", "concat", {"X": [f64(1, 2, 3), f64(2, 2, 1)]}, {"axis": 1}),
    GradCase("num3", "split", {"X": f64(1, 2, 6)}, {"axis": 1, "num": 3}, {"Out": 3}),
    GradCase("sections", "split", {"X": f64(1, 5, 2)}, {"axis": 0, "sections": [2, -1]},
             {"Out": 2}),
    GradCase("hard", "softmax_with_cross_entropy",
             {"Logits": f64(1, 4, 3), "Label": labels(2, 4, 1)}, {},
             {"Softmax": 1, "Loss": 1}),
    GradCase("soft", "softmax_with_cross_entropy",
             {"Logits": f64(1, 4, 3), "Label": probs(2, 4, 3)}, {"soft_label": True},
             {"Softmax": 1, "Loss": 1}),
    GradCase("class_axis0", "softmax_with_cross_entropy",
             {"Logits": f64(1, 3, 2), "Label": labels(2, 1, 2)}, {"axis": 0},
             {"Softmax": 1, "Loss": 1}),
    GradCase("hard", "cross_entropy", {"X": probs(1, 4, 3), "Label": labels(2, 4, 1)}, {},
             {"Y": 1}),
    GradCase("soft", "cross_entropy", {"X": probs(1, 4, 3), "Label": probs(2, 4, 3)},
             {"soft_label": True}, {"Y": 1}),
    GradCase("mask1", "select_input", {"X": [f64(1, 2, 3), f64(2, 2, 3)],
                                       "Mask": np.int32([1])}),
    GradCase("rows", "split_lod_tensor",
             {"X": f64(1, 4, 2), "Mask": np.array([[True], [False], [True], [False]])},
             {}, {"OutTrue": 1, "OutFalse": 1}),
    GradCase("rows", "merge_lod_tensor",
             {"X": np.array([[True], [False], [True]]), "Mask": np.array([[True], [False], [True]]),
              "InTrue": f64(1, 2, 2), "InFalse": f64(2, 1, 2)}),
    GradCase("float", "increment", {"X": f64(1, 1)}, {"step": 2.0}),
    GradCase("copy", "rnn_memory_helper", {"X": f64(1, 2, 3)}),
]


def _from_table_row(case) -> GradCase:
    """An op-table row marked ``grad=True``, in float64 (integer and bool inputs, such as
    labels and masks, as they are)."""
    def wide(a):
        return a.astype(np.float64) if a.dtype.kind == "f" else a
    inputs = {slot: [wide(a) for a in v] if isinstance(v, list) else wide(v)
              for slot, v in case.inputs.items()}
    outputs = {slot: len(_as_list(v)) for slot, v in table_rows.expected_outputs(case).items()}
    outputs.update({slot: 1 for slot in case.unfetched})    # XShape: what the grad op reads
    return GradCase(f"{case.id}-table", case.op, inputs, dict(case.attrs), outputs)


def _as_list(v):
    return v if isinstance(v, list) else [v]


CASES += [_from_table_row(c) for c in table_rows.CASES if c.grad]


def _build(case):
    """The op in a program: (program, forward clone, differentiable inputs, other inputs,
    weighted outputs); inputs are (Variable, array) pairs."""
    prog = pd.Program()
    blk = prog.global_block()
    inputs, in_vars, fixed = {}, [], []      # fixed: inputs with no gradient (labels)
    for slot, value in case.inputs.items():
        inputs[slot] = []
        for i, a in enumerate(_as_list(value)):
            v = blk.create_var(f"{slot}{i}", list(a.shape), a.dtype.name,
                               stop_gradient=a.dtype.kind != "f")
            inputs[slot].append(v)
            if slot in differentiable_inputs(registry.lookup(case.op)) and a.dtype.kind == "f":
                in_vars.append((v, a))
            else:
                fixed.append((v, a))
    outputs = {slot: [blk.create_var(f"{slot}_out{i}") for i in range(n)]
               for slot, n in case.outputs.items()}
    blk.append_op(case.op, inputs=inputs, outputs=outputs, attrs=case.attrs)
    op_def = registry.lookup(case.op)
    weighted = [v for slot, vs in outputs.items() for v in vs
                if not op_def.output(slot).intermediate]
    return prog, prog.clone(), in_vars, fixed, weighted


def _loss(forward, feed, weighted, weights):
    outs = pd.Executor().run(forward, feed=feed, fetch_list=[v.name for v in weighted],
                             scope=pd.Scope())
    return sum(float((o * w).sum()) for o, w in zip(outs, weights))


def _with_gradients(case):
    """The row's program with dL/dInput appended, where L = sum(Out * W) for fixed random
    weights W fed as target gradients. Returns (program, forward clone, differentiable
    inputs, feed, gradient variables, weighted outputs, weights)."""
    prog, forward, in_vars, fixed, weighted = _build(case)
    rng = np.random.default_rng(7)
    inputs_feed = {v.name: a for v, a in in_vars + fixed}
    feed = dict(inputs_feed)
    weights, weight_vars = [], []
    blk = prog.global_block()
    shapes = [o.shape for o in pd.Executor().run(forward, feed=inputs_feed,
                                                 fetch_list=[v.name for v in weighted],
                                                 scope=pd.Scope())]
    for v, shape in zip(weighted, shapes):
        w = rng.uniform(-1, 1, shape)
        weights.append(w)
        weight_vars.append(blk.create_var(f"W_{v.name}", list(w.shape), "float64"))
        feed[weight_vars[-1].name] = w
    grads = pd.gradients(weighted, [v for v, _ in in_vars], target_gradients=weight_vars)
    assert all(g is not None for g in grads)
    return prog, forward, in_vars, feed, grads, weighted, weights


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.id}" for c in CASES])
def test_gradient_matches_central_differences(case):
    prog, forward, wrt, feed, grads, weighted, weights = _with_gradients(case)
    inputs_feed = {k: v for k, v in feed.items() if not k.startswith("W_")}
    got = pd.Executor().run(prog, feed=feed, fetch_list=[g.name for g in grads],
                            scope=pd.Scope())
    for (v, a), analytic in zip(wrt, got):
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            for sign in (1, -1):
                shifted = a.copy()
                shifted[idx] += sign * EPS
                numeric[idx] += sign * _loss(forward, {**inputs_feed, v.name: shifted},
                                             weighted, weights)
        numeric /= 2 * EPS
        assert analytic.shape == a.shape and analytic.dtype == np.float64
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"d/d{v.name} of {case.op}")


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.id}" for c in CASES])
def test_gradient_on_cuda_matches_cpu(case):
    """The same forward and grad ops on CUDAPlace (numba's simulator here) give what they
    give on CPUPlace, which the central differences above check; the grad ops' outputs
    stay on the device. Far cheaper than differences in the simulator."""
    from test_ops_table import run_checking_residency   # noqa: PLC0415

    prog, _, _, feed, grads, weighted, _ = _with_gradients(case)
    fetch = [g.name for g in grads] + [v.name for v in weighted]
    cpu = pd.Executor(pd.CPUPlace()).run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())
    outs = [n for op in prog.global_block().ops for n in op.output_arg_names]
    cuda = run_checking_residency(pd.Executor(pd.CUDAPlace(0)), prog, feed, fetch, outs)
    for name, want, got in zip(fetch, cpu, cuda):
        assert (got.shape, got.dtype) == (want.shape, want.dtype), name
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name} of {case.op} on CUDA")


# Differentiated through real control flow, against central differences: the ops that own
# a sub-block (conditional_block in test_cond.py, test_ifelse.py and
# test_nested_control_flow.py; while in test_while.py and test_nested_control_flow.py;
# recurrent in test_rnn.py), the tensor array ops (write_to_array and read_from_array in
# test_paddle_control_flow.py's while_array, tensor_array_to_tensor in test_while.py) and
# select_output (select_input's gradient, test_cond.py). tests/op_kinds.py asks the
# registry which ops own blocks (listen_and_serv and lod_array_length, which have no
# gradient, are in the set but asked for none).
TESTED_WITH_BLOCKS = op_kinds.BLOCK_OWNERS | op_kinds.TENSOR_ARRAY_OPS | {"select_output"}
# Gradients a table row's central differences cannot judge, checked in their own files:
# random noise (held by the program's random_seed) and data_norm's statistics, which are
# not derivatives; and gradients with respect to a symmetric X, as Paddle's (the op reads
# one triangle, so single-entry differences cannot see them): along symmetric directions.
TESTED_APART = {
    "rrelu": "test_layer_ops.py", "gumbel_softmax": "test_layer_ops.py",
    "data_norm": "test_layer_ops.py",
    "eigh": "test_spectral_ops.py", "eigvalsh": "test_spectral_ops.py",
    "cholesky": "test_triangular_factor.py",
}
# as_complex and as_real: each the other's gradient, through complex values the table's
# weighting cannot read; differentiated through a real loss in test_complex_view.py
TESTED_APART.update({"as_complex": "test_complex_view.py", "as_real": "test_complex_view.py"})
TESTED_ELSEWHERE = TESTED_WITH_BLOCKS | set(TESTED_APART)


def test_every_differentiable_op_has_a_gradient_row():
    covered = {c.op for c in CASES} | set(TESTED_ELSEWHERE)
    differentiable = [t for t in pd.registered_ops(include_grad=False)
                      if registry.lookup(t).grad not in (None, registry.NO_GRADIENT)]
    missing = [t for t in differentiable if t not in covered]
    assert not missing, f"ops with a gradient but no row in the gradient table: {missing}"


def test_every_grad_op_is_run_by_some_row():
    """Each registered <type>_grad op appears in the backward of at least one row."""
    ran = set()
    for case in CASES:
        prog, _, in_vars, _, weighted = _build(case)
        pd.gradients(weighted, [v for v, _ in in_vars])
        ran.update(op.type for op in prog.global_block().ops)
    grad_ops = [t for t in pd.registered_ops() if registry.lookup(t).grad_of
                and registry.lookup(t).grad_of not in TESTED_ELSEWHERE]
    assert not [t for t in grad_ops if t not in ran]


def test_ops_without_gradients_say_so():
    for t in ("feed", "fetch", "fill_constant", "greater_than", "uniform_random", "sgd",
              "fill_zeros_like", "logical_not"):
        assert registry.lookup(t).grad is registry.NO_GRADIENT, t
