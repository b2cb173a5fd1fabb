"""The lowered forms of the MLP's and the classifiers' ops compute what their kernels compute.

Each test builds a small program as a user writes it (pd.layer / pd.layers / pd.op), runs it
through ``pd.CompiledProgram`` and plainly from the same start, and asserts the same
fetched values on every run (bit for bit: the compiled forms call the kernels' own numba
loops and BLAS the way the kernels call them), no failed compiled run, and that the ops
went into a compiled segment. The range checks of the label-indexed kernels raise in the
compiled code, and the interpreter's rerun gives the error naming the op.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.kernels.cpu import loss as KL

RNG = np.random.default_rng(7)


def _program(build):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup), pd.unique_name.guard():
        fetch = build()
    return main, startup, fetch


def run_both(build, feed, runs: int = 3, exact: bool = True):
    """Build with ``build()`` (it returns the Variables to fetch), run the program plainly
    and compiled ``runs`` times each from one start, compare every fetched value; return
    (main program, the CompiledProgram)."""
    main, startup, fetch = _program(build)
    exe = pd.Executor()
    plain, compiled_scope = pd.Scope(), pd.Scope()
    exe.run(startup, scope=plain)
    exe.run(startup, scope=compiled_scope)
    compiled = pd.CompiledProgram(main)
    for k in range(runs):                  # the first run learns, the others are compiled
        want = exe.run(main, feed=feed, fetch_list=fetch, scope=plain)
        got = exe.run(compiled, feed=feed, fetch_list=fetch, scope=compiled_scope)
        for var, g, w in zip(fetch, got, want):
            where = f"{var.name}, run {k}"
            assert g.shape == w.shape and g.dtype == w.dtype, where
            if exact:
                assert np.array_equal(g, w, equal_nan=True), where
            else:
                np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=where)
    assert compiled.failures == []
    return main, compiled


def assert_compiled(main, compiled, *op_types):
    """Every op of ``op_types`` in the global block went into a compiled segment."""
    ops = main.global_block().ops
    found = {op.type for op in ops} & set(op_types)
    assert found == set(op_types), f"the program has no {set(op_types) - found}"
    segments = compiled.segments()
    for i, op in enumerate(ops):
        if op.type in op_types:
            assert i in segments, f"op {i} {op.type} was interpreted:\n{compiled.source()}"


def interpreted_because(compiled, op_type: str) -> str:
    """Why the source says ``op_type`` ran in the interpreter."""
    line = next(s for s in compiled.source().splitlines() if f" {op_type}: interpreted" in s)
    return line.split("interpreted (", 1)[1]


def data(name, shape, dtype="float32"):
    v = pd.data(name, shape, dtype)
    v.stop_gradient = False
    return v


def floats(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# --- products ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape, y_shape, xn, yn", [
    ((6, 3, 4), (12, 5), 1, 1),             # X flattened to 6 x 12
    ((2, 3, 4), (4, 5), 2, 1),              # Out [2, 3, 5]
    ((6, 4), (4, 2, 3), 1, 1),              # Y flattened to 4 x 6, Out [6, 2, 3]
])
def test_mul_and_its_gradients(dtype, x_shape, y_shape, xn, yn):
    def build():
        x, y = data("x", list(x_shape), dtype), data("y", list(y_shape), dtype)
        out = pd.op.mul(X=x, Y=y, x_num_col_dims=xn, y_num_col_dims=yn)
        loss = pd.mean(out * out)
        return [out, *pd.gradients(loss, [x, y])]
    feed = {"x": floats(*x_shape, dtype=dtype), "y": floats(*y_shape, dtype=dtype)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "mul", "mul_grad")


def test_mul_grad_writes_only_the_gradients_asked_for():
    """fc on data: mul_grad has no X@GRAD (the MLP's first layer)."""
    def build():
        x = pd.data("x", [None, 20])
        loss = pd.mean(pd.layer.fc(x, 7))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, compiled = run_both(build, {"x": floats(8, 20)})
    grad = next(op for op in main.global_block().ops if op.type == "mul_grad")
    assert not grad.output("X@GRAD")
    assert_compiled(main, compiled, "mul", "mul_grad", "sgd")


def test_a_large_product_runs_as_the_interpreter_runs_it():
    """A product OpenBLAS would thread goes through kernels/cpu/matmul.matmul2d (numpy's
    BLAS) in both: the same bits."""
    def build():
        x, y = data("x", [64, 300]), data("y", [300, 200])
        out = pd.op.mul(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out), [x, y])]
    main, compiled = run_both(build, {"x": floats(64, 300), "y": floats(300, 200)})
    assert_compiled(main, compiled, "mul", "mul_grad")


@pytest.mark.parametrize("trans_x", [False, True])
@pytest.mark.parametrize("trans_y", [False, True])
def test_matmul_v2_and_its_gradients(trans_x, trans_y):
    def build():
        x = data("x", [5, 3] if trans_x else [3, 5])
        y = data("y", [4, 5] if trans_y else [5, 4])
        out = pd.layers.matmul(x, y, transpose_x=trans_x, transpose_y=trans_y)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    feed = {"x": floats(*([5, 3] if trans_x else [3, 5])),
            "y": floats(*([4, 5] if trans_y else [5, 4]))}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "matmul_v2", "matmul_v2_grad")


def test_matmul_with_alpha_and_its_gradients():
    def build():
        x, y = data("x", [3, 5], "float64"), data("y", [4, 5], "float64")
        out = pd.op.matmul(X=x, Y=y, transpose_X=False, transpose_Y=True, alpha=0.3)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(3, 5, dtype=np.float64),
                                      "y": floats(4, 5, dtype=np.float64)})
    assert_compiled(main, compiled, "matmul", "matmul_grad")


def test_a_batched_matmul_stays_in_the_interpreter():
    def build():
        x, y = data("x", [2, 3, 5]), data("y", [5, 4])
        return [pd.layers.matmul(x, y)]
    _, compiled = run_both(build, {"x": floats(2, 3, 5), "y": floats(5, 4)})
    assert interpreted_because(compiled, "matmul_v2").startswith("no lowered form")


# --- losses and softmax -----------------------------------------------------------------
def test_softmax_with_cross_entropy_and_its_gradient():
    """Logits [B, T, C], one label per row, some rows ignored."""
    label = RNG.integers(0, 6, (4, 3, 1))
    label[1, 2, 0] = label[3, 0, 0] = -1

    def build():
        logits = data("logits", [4, 3, 6])
        lab = pd.data("label", [4, 3, 1], "int64")
        loss = pd.layers.softmax_with_cross_entropy(logits, lab, ignore_index=-1)
        return [loss, *pd.gradients(pd.mean(loss), [logits])]
    main, compiled = run_both(build, {"logits": floats(4, 3, 6), "label": label})
    assert_compiled(main, compiled, "softmax_with_cross_entropy",
                    "softmax_with_cross_entropy_grad", "mean", "mean_grad", "fill_constant")


def test_cross_entropy_and_its_gradient():
    def build():
        prob = pd.layers.softmax(data("x", [8, 5]))
        lab = pd.data("label", [8, 1], "int64")
        y = pd.op.cross_entropy(X=prob, Label=lab, ignore_index=2)
        return [y, *pd.gradients(pd.mean(y), [prob])]
    main, compiled = run_both(build, {"x": floats(8, 5), "label": RNG.integers(0, 5, (8, 1))})
    assert_compiled(main, compiled, "softmax", "cross_entropy", "cross_entropy_grad")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_and_its_gradient(dtype):
    def build():
        x = data("x", [3, 4, 7], dtype)
        out = pd.layers.softmax(x)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 4, 7, dtype=dtype)})
    assert_compiled(main, compiled, "softmax", "softmax_grad")


def test_a_softmax_along_another_axis_stays_in_the_interpreter():
    def build():
        return [pd.layers.softmax(data("x", [3, 4]), axis=0)]
    _, compiled = run_both(build, {"x": floats(3, 4)})
    assert interpreted_because(compiled, "softmax").startswith("no lowered form")


# --- reductions ---------------------------------------------------------------------------
@pytest.mark.parametrize("op_type", ["reduce_sum", "reduce_mean"])
@pytest.mark.parametrize("dim, keep_dim", [
    (None, False), (None, True), ([1], False), ([0, 2], True), ([-1], False), ([0], True)])
def test_reductions_and_their_gradients(op_type, dim, keep_dim):
    def build():
        x = data("x", [4, 5, 6])
        out = getattr(pd.layers, op_type)(x, dim=dim, keep_dim=keep_dim)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(4, 5, 6)})
    assert_compiled(main, compiled, op_type, op_type + "_grad")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mean_and_its_gradient(dtype):
    def build():
        x = data("x", [7, 3], dtype)
        out = pd.mean(x)
        return [out, *pd.gradients(out, [x])]
    main, compiled = run_both(build, {"x": floats(7, 3, dtype=dtype)})
    assert_compiled(main, compiled, "mean", "mean_grad", "fill_constant")


@pytest.mark.parametrize("shape, dtype, value", [
    ([], "float32", 0.1), ([2, 3], "float64", -2.5), ([4], "int64", 7), ([2, 2], "int32", -3),
    ([3], "bool", 1)])
def test_fill_constant(shape, dtype, value):
    def build():
        return [pd.layers.fill_constant(shape, dtype, value)]
    main, compiled = run_both(build, {})
    assert_compiled(main, compiled, "fill_constant")


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_fill_like_and_assign(dtype):
    """fill_zeros_like, fill_any_like (X's dtype, and another), assign and its gradient."""
    def build():
        x = data("x", [3, 4], dtype)
        zeros = pd.op.fill_zeros_like(X=x)
        twos = pd.op.fill_any_like(X=x, value=2.5)
        halves = pd.op.fill_any_like(X=x, value=0.5, dtype=6)         # VarType FP64
        copy = pd.op.assign(X=x)
        fetch = [zeros, twos, halves, copy]
        if dtype == "float32":
            fetch += pd.gradients(pd.mean(copy * copy), [x])
        return fetch
    main, compiled = run_both(build, {"x": (floats(3, 4) * 4).astype(dtype)})
    assert_compiled(main, compiled, "fill_zeros_like", "fill_any_like", "assign")


# --- optimizers ---------------------------------------------------------------------------
@pytest.mark.parametrize("optimizer, ops", [
    (lambda: pd.optimizer.SGD(0.1), ("sgd",)),
    (lambda: pd.optimizer.Momentum(0.1, 0.9, use_nesterov=True), ("momentum",)),
    (lambda: pd.optimizer.Adam(0.01), ("adam",)),
    (lambda: pd.optimizer.Adagrad(0.1), ("adagrad",)),
])
def test_a_classifier_trains_the_same_compiled(optimizer, ops):
    """fc relu, fc, softmax_with_cross_entropy, mean, and the update: five steps, every
    parameter and accumulator the same after each."""
    def build():
        x = pd.data("x", [None, 12])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, 16, act="relu")
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(pd.layer.fc(h, 4), label))
        optimizer().minimize(loss)
        block = pd.default_main_program().global_block()
        state = [v for v in block.vars.values() if v.persistable and v.name not in
                 ("x", "label")]
        return [loss, *state]
    feed = {"x": floats(10, 12), "label": RNG.integers(0, 4, (10, 1))}
    main, compiled = run_both(build, feed, runs=5)
    assert len(compiled.segments()) == len(main.global_block().ops)     # all of it
    assert_compiled(main, compiled, "mul_grad", *ops)


# --- range checks ---------------------------------------------------------------------------
def _raises_the_interpreters_error(build, good: dict, bad: dict, op_type: str):
    """Compiled runs with ``good``, then ``bad`` raises the error that names ``op_type``,
    and ``good`` still runs compiled after it."""
    main, startup, fetch = _program(build)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == op_type)
    assert index in compiled.segments()
    with pytest.raises(pd.IndexRangeError, match=f"op {index} {op_type}: slot Label"):
        exe.run(compiled, feed=bad, fetch_list=fetch, scope=scope)
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None


@pytest.mark.parametrize("bad_label", [3, -2])
def test_softmax_with_cross_entropy_checks_its_labels(bad_label):
    def build():
        logits, lab = data("logits", [4, 3]), pd.data("label", [4, 1], "int64")
        return [pd.layers.softmax_with_cross_entropy(logits, lab)]
    good = {"logits": floats(4, 3), "label": np.array([[0], [1], [2], [-100]])}
    bad = dict(good, label=np.array([[0], [bad_label], [2], [1]]))
    _raises_the_interpreters_error(build, good, bad, "softmax_with_cross_entropy")
    with pytest.raises(ValueError, match="out of range"):         # raised in compiled code
        KL.softmax_xent(good["logits"], bad["label"], -100)


def test_softmax_with_cross_entropy_grad_checks_its_labels():
    def build():
        softmax, lab = pd.data("softmax", [4, 3]), pd.data("label", [4, 1], "int64")
        dloss = pd.data("dloss", [4, 1])
        return [pd.op.softmax_with_cross_entropy_grad(
            Softmax=softmax, Label=lab, **{"Loss@GRAD": dloss})]
    good = {"softmax": np.full((4, 3), 1 / 3, np.float32), "label": np.array([[0], [1], [2], [0]]),
            "dloss": floats(4, 1)}
    bad = dict(good, label=np.array([[0], [1], [7], [0]]))
    _raises_the_interpreters_error(build, good, bad, "softmax_with_cross_entropy_grad")


def test_cross_entropy_checks_its_labels():
    def build():
        prob, lab = pd.data("prob", [4, 3]), pd.data("label", [4, 1], "int64")
        return [pd.op.cross_entropy(X=prob, Label=lab)]
    good = {"prob": np.full((4, 3), 1 / 3, np.float32), "label": np.array([[0], [1], [2], [0]])}
    bad = dict(good, label=np.array([[0], [3], [2], [0]]))
    _raises_the_interpreters_error(build, good, bad, "cross_entropy")


def test_cross_entropy_grad_checks_its_labels():
    def build():
        prob, lab = pd.data("prob", [4, 3]), pd.data("label", [4, 1], "int64")
        dy = pd.data("dy", [4, 1])
        return [pd.op.cross_entropy_grad(X=prob, Label=lab, **{"Y@GRAD": dy})]
    good = {"prob": np.full((4, 3), 1 / 3, np.float32), "label": np.array([[0], [1], [2], [0]]),
            "dy": floats(4, 1)}
    bad = dict(good, label=np.array([[-5], [1], [2], [0]]))
    _raises_the_interpreters_error(build, good, bad, "cross_entropy_grad")
