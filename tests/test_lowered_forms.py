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
from test_cuda_training import _ifelse_program

RNG = np.random.default_rng(7)

# ops whose lowered forms sum in another order than the interpreter's kernels: numpy's
# pairwise sums (the elementwise gradients), and loops vectorised with fastmath "reassoc",
# whose order LLVM picks for the function a loop lands in (the kernel's own, or the
# compiled segment it is inlined into): equal here, but seen to differ on another CPU
REORDERED_SUMS = {"elementwise_add_grad", "elementwise_sub_grad",
                  "layer_norm", "layer_norm_grad", "batch_norm", "batch_norm_grad",
                  "conv2d", "depthwise_conv2d", "conv2d_grad", "depthwise_conv2d_grad",
                  "group_norm", "group_norm_grad",
                  "instance_norm", "instance_norm_grad"}


def reorders_sums(program) -> bool:
    """Does ``program`` hold an op whose lowered form sums in another order than its
    kernel (a trained fc's bias gradient, elementwise_add_grad, is one)? Then its values
    after a training step agree to 1e-6, not always to the bit."""
    return any(op.type in REORDERED_SUMS for block in program.blocks for op in block.ops)


def assert_near(got, want, where: str = ""):
    """Equal to 1e-6 of the tensor's own scale: a sum taken in another order moves an
    element by a few ulps of the terms it adds, so an element near zero after
    cancellation (6e-4 from terms near 1) may differ by more than 1e-6 of itself."""
    want = np.asarray(want)
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind in "fc" else np.zeros(0)
    scale = float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=max(1e-6 * scale, 1e-7),
                               err_msg=where)


def build_program(build):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup), pd.unique_name.guard():
        fetch = build()
    return main, startup, fetch


def run_both(build, feed, runs: int = 3, exact: bool = True):
    """Build with ``build()`` (it returns the Variables to fetch), run the program plainly
    and compiled ``runs`` times each from one start, compare every fetched value; return
    (main program, the CompiledProgram)."""
    main, startup, fetch = build_program(build)
    return main, run_programs(main, startup, fetch, [feed] * runs, exact)


def run_programs(main, startup, fetch, feeds: list, exact: bool = True):
    """Run ``main`` plainly and compiled from one start, once per feed of ``feeds`` (the
    first compiled run learns, the others run compiled), comparing every fetched value (bit
    for bit if ``exact`` and no op of the program reorders sums, else assert_near);
    return the CompiledProgram."""
    exe = pd.Executor()
    plain, compiled_scope = pd.Scope(), pd.Scope()
    exe.run(startup, scope=plain)
    exe.run(startup, scope=compiled_scope)
    compiled = pd.CompiledProgram(main)
    exact = exact and not reorders_sums(main)
    for k, feed in enumerate(feeds):
        want = exe.run(main, feed=feed, fetch_list=fetch, scope=plain)
        got = exe.run(compiled, feed=feed, fetch_list=fetch, scope=compiled_scope)
        for var, g, w in zip(fetch, got, want):
            where = f"{var.name}, run {k}"
            assert g.shape == w.shape and g.dtype == w.dtype, where
            if exact:
                assert np.array_equal(g, w, equal_nan=True), where
            else:
                assert_near(g, w, where)
    assert compiled.failures == [], compiled.failures
    return compiled


def assert_compiled(main, compiled, *op_types):
    """Every op of ``op_types`` in the global block went into a compiled segment."""
    ops = main.global_block().ops
    found = {op.type for op in ops} & set(op_types)
    assert found == set(op_types), f"the program has no {set(op_types) - found}"
    segments = compiled.segments()
    for i, op in enumerate(ops):
        if op.type in op_types:
            assert i in segments, f"op {i} {op.type} was interpreted:\n{compiled.source()}"


def compiled_after_learning(build, feed, runs: int = 2):
    """Build with ``build()``, run its startup, then the program through a CompiledProgram
    ``runs`` times on ``feed`` (the first run learns, the others run compiled): (main,
    executor, scope, the CompiledProgram, the fetch list)."""
    main, startup, fetch = build_program(build)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    for _ in range(runs):
        exe.run(compiled, feed=feed, fetch_list=fetch, scope=scope)
    return main, exe, scope, compiled, fetch


def assert_refused_and_kept(exe, compiled, main, scope, feed, fetch, error, match):
    """Running ``compiled`` on ``feed`` raises ``error`` matching ``match`` (the compiled
    run fails, the interpreter's rerun names the op), and every parameter is as it was."""
    before = {p.name: np.array(scope.find_var(p.name).get())
              for p in main.global_block().all_parameters()}
    with pytest.raises(error, match=match):
        exe.run(compiled, feed=feed, fetch_list=fetch, scope=scope)
    for name, value in before.items():
        assert np.array_equal(scope.find_var(name).get(), value), name


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


@pytest.mark.parametrize("x_shape, y_shape, trans_y", [
    ((2, 3, 5), (5, 4), False),             # a stack times a matrix: rows folded
    ((2, 3, 5), (4, 5), True),
    ((2, 2, 3, 5), (2, 2, 4, 5), True),     # attention's scores: a product per matrix
    ((2, 3, 5), (2, 5, 4), False),
])
def test_a_batched_matmul_compiles(x_shape, y_shape, trans_y):
    def build():
        x, y = data("x", list(x_shape)), data("y", list(y_shape))
        out = pd.layers.matmul(x, y, transpose_y=trans_y)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(*x_shape), "y": floats(*y_shape)})
    assert_compiled(main, compiled, "matmul_v2", "matmul_v2_grad")


def test_a_large_batched_matmul_stays_in_the_interpreter():
    """Many products the interpreter runs in a prange across the cores (a compiled block
    is serial), and operands whose batch dims broadcast."""
    def build():
        x, y = data("x", [16, 32, 32]), data("y", [16, 32, 32])
        z = data("z", [1, 3, 5])
        return [pd.layers.matmul(x, y), pd.layers.matmul(data("w", [2, 3, 5]), z,
                                                         transpose_y=True)]
    _, compiled = run_both(build, {"x": floats(16, 32, 32), "y": floats(16, 32, 32),
                                   "w": floats(2, 3, 5), "z": floats(1, 3, 5)})
    reasons = [line.split("interpreted (", 1)[1] for line in compiled.source().splitlines()
               if " matmul_v2: interpreted" in line]
    assert reasons[0].startswith("large: the interpreter splits it across the cores")
    assert reasons[1].startswith("its operands broadcast")


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


# --- elementwise gradients and sum ----------------------------------------------------------
@pytest.mark.parametrize("op_type", ["elementwise_mul", "elementwise_div", "elementwise_max",
                                     "elementwise_min", "elementwise_pow"])
@pytest.mark.parametrize("x_shape, y_shape, axis, exact", [
    ((4, 5), (4, 5), -1, True),             # nothing broadcast
    ((4, 5), (5,), -1, True),               # a bias: dY sums rows, in numpy's order
    ((6, 7), (6, 1), -1, True),
    ((2, 3, 4, 5), (3,), 1, False),         # a channel scale: numpy sums pairwise inside
    ((3, 4), (1,), -1, False),              # one element: likewise
])
def test_elementwise_gradients(op_type, x_shape, y_shape, axis, exact):
    def build():
        x, y = data("x", list(x_shape)), data("y", list(y_shape))
        out = getattr(pd.op, op_type)(X=x, Y=y, axis=axis)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    feed = {"x": RNG.uniform(0.5, 2, x_shape).astype(np.float32),
            "y": RNG.uniform(0.5, 2, y_shape).astype(np.float32)}
    main, compiled = run_both(build, feed, exact=exact)
    assert_compiled(main, compiled, op_type, op_type + "_grad")


def test_elementwise_mul_grad_of_one_operand_in_float64():
    """Only dX asked for (Y is data): one Call."""
    def build():
        x, y = data("x", [3, 4], "float64"), pd.data("y", [4], "float64")
        out = pd.op.elementwise_mul(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 4, dtype=np.float64),
                                      "y": floats(4, dtype=np.float64)})
    assert_compiled(main, compiled, "elementwise_mul", "elementwise_mul_grad")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("count", [1, 3])
def test_sum_adds_in_the_interpreters_order(dtype, count):
    def build():
        xs = [pd.data(f"x{k}", [3, 4], dtype) for k in range(count)]
        return [pd.op.sum(X=xs)]
    feed = {f"x{k}": (floats(3, 4) * 100).astype(dtype) for k in range(count)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "sum")


def test_gradients_of_a_reused_variable_are_summed_compiled():
    """x read twice: its two gradients meet in a sum op."""
    def build():
        x = data("x", [5, 6])
        y = pd.layers.tanh(x) * x
        return [y, *pd.gradients(pd.mean(y), [x])]
    main, compiled = run_both(build, {"x": floats(5, 6)})
    assert_compiled(main, compiled, "sum", "elementwise_mul_grad")


# --- layout ---------------------------------------------------------------------------------
@pytest.mark.parametrize("reshape", [
    lambda x: pd.layers.reshape(x, [0, -1]),                 # [B, 12]
    lambda x: pd.layers.reshape(x, [-1, 2, 3]),              # dims split: sizes in the source
    lambda x: pd.op.flatten_contiguous_range(X=x, start_axis=1, stop_axis=2),
    lambda x: pd.op.squeeze2(X=pd.op.unsqueeze2(X=x, axes=[1, 3]), axes=[1]),
    lambda x: pd.layers.transpose(x, [2, 0, 1]),
])
def test_layout_ops_and_their_gradients(reshape):
    def build():
        x = data("x", [4, 3, 4])
        out = reshape(x)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(4, 3, 4)})
    grads = [op.type for op in main.global_block().ops if op.type.endswith("2_grad") or
             op.type.endswith("range_grad")]
    assert grads
    assert_compiled(main, compiled, *grads)


def test_a_reshape_serves_every_batch_size():
    """Out's batch dim is read from X: another batch size runs the same source."""
    main, startup, (out,) = build_program(lambda: [pd.op.flatten_contiguous_range(
        X=pd.data("x", [None, 3, 4]), start_axis=1, stop_axis=-1)])
    exe, scope = pd.Executor(), pd.Scope()
    compiled = pd.CompiledProgram(main)
    sources = []
    for batch in (2, 5):
        for _ in range(2):
            got, = exe.run(compiled, feed={"x": floats(batch, 3, 4)}, fetch_list=[out],
                           scope=scope)
        assert got.shape == (batch, 12)
        sources.append(compiled.source())
    assert sources[0] == sources[1] and 0 in compiled.segments()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_stack_shape_and_expand(axis):
    def build():
        a, b = data("a", [2, 3], "float64"), data("b", [2, 3], "float64")
        return [pd.layers.concat([a, b, a], axis=axis), pd.op.stack(X=[a, b], axis=axis),
                pd.op.shape(Input=a), pd.op.expand_v2(X=b, shape=[4, 2, -1])]
    main, compiled = run_both(build, {"a": floats(2, 3, dtype=np.float64),
                                      "b": floats(2, 3, dtype=np.float64)})
    assert_compiled(main, compiled, "concat", "stack", "shape", "expand_v2")


@pytest.mark.parametrize("op_type, attrs", [
    ("slice", dict(axes=[1], starts=[1], ends=[-1])),
    ("slice", dict(axes=[0, 2], starts=[-2, 0], ends=[100, 1], decrease_axis=[2])),
    ("strided_slice", dict(axes=[1, 2], starts=[3, 0], ends=[-1, 4], strides=[-1, 2])),
])
def test_slices_and_their_gradients(op_type, attrs):
    def build():
        x = data("x", [3, 5, 4], "float64")
        out = getattr(pd.op, op_type)(Input=x, **attrs)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 5, 4, dtype=np.float64)})
    assert_compiled(main, compiled, op_type, op_type + "_grad")


# --- embeddings ---------------------------------------------------------------------------
@pytest.mark.parametrize("op_type", ["lookup_table_v2", "lookup_table"])
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_lookups_and_their_dense_gradients(op_type, padding_idx):
    ids_shape = [4, 3, 1] if op_type == "lookup_table" else [4, 3]

    def build():
        w = pd.layers.create_parameter([7, 5], "float32", name="w")
        ids = pd.data("ids", ids_shape, "int64")
        out = getattr(pd.op, op_type)(W=w, Ids=ids, padding_idx=padding_idx)
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [out, loss, w]
    ids = RNG.integers(0, 7, ids_shape)
    ids.flat[:3] = 2                               # repeats, and the padding id
    main, compiled = run_both(build, {"ids": ids})
    assert_compiled(main, compiled, op_type, op_type + "_grad", "sgd")


def test_a_sparse_lookup_gradient_stays_in_the_interpreter():
    def build():
        w = pd.layers.create_parameter([7, 5], "float32", name="w")
        out = pd.op.lookup_table_v2(W=w, Ids=pd.data("ids", [4], "int64"), is_sparse=True)
        pd.optimizer.SGD(0.5).minimize(pd.mean(out))
        return [out, w]
    main, compiled = run_both(build, {"ids": RNG.integers(0, 7, [4])})
    assert_compiled(main, compiled, "lookup_table_v2")
    assert interpreted_because(compiled, "lookup_table_v2_grad").startswith(
        "W@GRAD ('w@GRAD') is not a dense tensor")


@pytest.mark.parametrize("bad_id", [7, -1])
def test_a_lookup_checks_its_ids(bad_id):
    def build():
        w = pd.data("w", [7, 5])
        return [pd.op.lookup_table_v2(W=w, Ids=pd.data("ids", [4], "int64"))]
    good = {"w": floats(7, 5), "ids": np.array([0, 6, 3, 3])}
    bad = dict(good, ids=np.array([0, bad_id, 3, 3]))
    _raises_the_interpreters_error(build, good, bad, "lookup_table_v2", slot="Ids")


def test_ops_with_a_list_of_outputs_and_their_gradients():
    """An LSTM cell as users write one (its gates split in four), a split by sections
    with a -1, a concat (concat_grad cuts dOut into a list), stack / unstack: each output
    of a list is one array of the compiled code, the whole training step one segment
    (unbind's rows are the op table's: tests/test_compiler.py)."""
    hidden = 5

    def build():
        x, c0 = data("x", [None, 6]), data("c0", [None, hidden])
        i, f, g, o = pd.layers.split(pd.layer.fc(x, 4 * hidden), 4, dim=1)
        c = pd.sigmoid(f) * c0 + pd.sigmoid(i) * pd.tanh(g)
        h = pd.sigmoid(o) * pd.tanh(c)
        a, b = pd.layers.split(h, [2, -1], dim=1)
        both = pd.layers.concat([h, c, a], axis=1)
        s = pd.op.stack(X=[a, a * 2.0], axis=1)
        u = pd.op.unstack(X=s, axis=2, num=2)
        loss = pd.mean(both) + pd.mean(b) + pd.mean(s) + pd.mean(u[0])
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h, c, u[1]]
    main, compiled = run_both(build, {"x": floats(4, 6), "c0": floats(4, hidden)})
    assert_compiled(main, compiled, "split", "concat", "concat_grad", "stack", "stack_grad",
                    "unstack", "unstack_grad")
    assert "interpreted (" not in compiled.source()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis, scale, shift", [(2, True, True), (1, True, True),
                                                (2, False, False)])
def test_layer_norm_and_its_gradient(dtype, axis, scale, shift):
    """A transformer's pre-norm as users write it: tokens [N, T, D] through an fc, each
    token normalised (axis 2) or each sample (axis 1), with or without Scale and Bias;
    trained by SGD, so Y's gradient reaches X, Scale and Bias. Equal to float rounding,
    not to the bit: the row sums are vectorised (fastmath "reassoc"), and LLVM picks their
    order for the function the loop lands in, the interpreter's kernel or the compiled
    segment it is inlined into; on some CPUs (the CI's) the two orders differ."""
    def build():
        x = data("x", [None, 5, 6], dtype)
        h = pd.layer.fc(x, 8, num_flatten_dims=2)
        y = pd.layers.layer_norm(h, scale=scale, shift=shift, begin_norm_axis=axis)
        loss = pd.mean(pd.tanh(y) * y)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, y]
    main, compiled = run_both(build, {"x": floats(4, 5, 6, dtype=np.dtype(dtype).type)},
                              exact=False)
    assert_compiled(main, compiled, "layer_norm", "layer_norm_grad")


# --- a row-wise IfElse and logical ops -----------------------------------------------------
def _both_ways(x):
    """``x`` with a row that goes each way of the IfElse (its row sum > 0 or not)."""
    x[0], x[1] = np.abs(x[0]), -np.abs(x[1])
    return x


def test_a_row_wise_ifelse_trains_the_same_compiled():
    """split_lod_tensor, merge_lod_tensor and the branches (and their gradients) compiled;
    the rows each branch gets change from feed to feed. A feed that gives a branch no rows
    is run by the interpreter (the compiled branch declines it: it has no value to give
    merge_lod_tensor), and the next one compiled again."""
    main, startup, out, loss = _ifelse_program()
    feeds = [{"x": np.abs(floats(6, 3)) if k == 2 else _both_ways(floats(6, 3))}
             for k in range(5)]                                 # 2: no false rows
    compiled = run_programs(main, startup, [out, loss], feeds)
    assert_compiled(main, compiled, "split_lod_tensor", "merge_lod_tensor", "sum",
                    "conditional_block", "conditional_block_grad")
    assert compiled.declined >= 1          # feed 2 (and any other with a branch empty)


def test_casts_as_users_write_them_and_their_gradients():
    """A mask cast to numbers, a float cast to an integer (NaN, infinities and values out
    of range included: converted as numpy's astype converts them), a float64 -> float32
    round trip with its gradient (a cast back)."""
    def build():
        x, big = data("x", [None, 4]), pd.data("big", [3], "float64")
        mask = pd.layers.cast(pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0, "float32")
        wide = pd.layers.cast(x, "float64")
        loss = pd.mean(pd.layers.cast(wide * wide, "float32") * mask)
        pd.append_backward(loss)
        cast = pd.layers.cast
        return [mask, cast(x, "int64"), cast(big, "int32"), cast(mask, "bool"), loss,
                main_grad("x")]
    feed = {"x": np.array([[1.5, -2.7, np.nan, np.inf], [-1.2, 0.4, 3.9, -np.inf],
                           [0.0, -0.0, 2.5, 1e-45]], np.float32),
            "big": np.array([3e10, -7.9, np.nan])}
    with np.errstate(invalid="ignore"):
        main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "cast")
    assert all(i in compiled.segments() for i, op in enumerate(main.global_block().ops)
               if op.type == "cast")


def main_grad(name):
    return pd.default_main_program().global_block().var(name + "@GRAD")


def test_logical_ops():
    def build():
        a, b = pd.data("a", [3, 4], "bool"), pd.data("b", [4], "bool")
        c = pd.data("c", [3, 4])
        return [pd.op.logical_and(X=a, Y=b), pd.op.logical_or(X=a, Y=b),
                pd.op.logical_xor(X=a, Y=b), pd.op.logical_not(X=a), pd.op.logical_not(X=c)]
    feed = {"a": RNG.integers(0, 2, (3, 4)).astype(bool), "b": RNG.integers(0, 2, 4).astype(bool),
            "c": np.where(RNG.integers(0, 2, (3, 4)) > 0, floats(3, 4), 0).astype(np.float32)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "logical_and", "logical_or", "logical_xor", "logical_not")


# --- pooling ----------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, attrs", [
    ("pool2d", dict(ksize=[2, 2], strides=[2, 2], pooling_type="max")),
    ("pool2d", dict(ksize=[3, 3], strides=[2, 1], paddings=[1, 1], pooling_type="avg",
                    exclusive=False, ceil_mode=True)),
    ("pool2d", dict(ksize=[2, 3], pooling_type="avg", adaptive=True)),
    ("pool2d", dict(ksize=[1, 1], pooling_type="max", global_pooling=True)),
    ("pool3d", dict(ksize=[2, 2, 2], strides=[1, 2, 2], pooling_type="max")),
])
def test_pooling_and_its_gradient(op_type, attrs):
    shape = [2, 3, 6, 5] if op_type == "pool2d" else [2, 2, 3, 6, 5]

    def build():
        x = data("x", shape, "float64")
        out = getattr(pd.op, op_type)(X=x, **attrs)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    x = floats(*shape, dtype=np.float64)
    x.flat[:4] = 1.0                                  # ties: the window's first gets dOut
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, op_type, op_type + "_grad")


def test_channels_last_pooling_stays_in_the_interpreter():
    def build():
        return [pd.op.pool2d(X=data("x", [2, 6, 5, 3]), ksize=[2, 2], data_format="NHWC")]
    _, compiled = run_both(build, {"x": floats(2, 6, 5, 3)})
    assert interpreted_because(compiled, "pool2d").startswith("no lowered form")


# --- dropout ------------------------------------------------------------------------------
@pytest.mark.parametrize("implementation", ["downgrade_in_infer", "upscale_in_train"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_in_test_mode_and_its_gradient(implementation, dtype):
    def build():
        x = data("x", [4, 5], dtype)
        out = pd.layers.dropout(x, 0.3, is_test=True, dropout_implementation=implementation)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(4, 5, dtype=dtype)})
    assert_compiled(main, compiled, "dropout", "dropout_grad")


def test_training_dropout_compiles_with_the_interpreters_mask():
    """A seeded training dropout draws its mask from a hash of (seed, index): the
    compiled run's mask is the interpreter's (tests/test_lowered_random.py trains with it)."""
    def build():
        return [pd.layers.dropout(data("x", [4, 5]), 0.3, seed=3)]
    main, compiled = run_both(build, {"x": floats(4, 5)})
    assert_compiled(main, compiled, "dropout")


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
def _raises_the_interpreters_error(build, good: dict, bad: dict, op_type: str,
                                   slot: str = "Label"):
    """Compiled runs with ``good``, then ``bad`` raises the error that names ``op_type``,
    and ``good`` still runs compiled after it."""
    main, startup, fetch = build_program(build)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == op_type)
    assert index in compiled.segments()
    with pytest.raises(pd.IndexRangeError, match=f"op {index} {op_type}: slot {slot}"):
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
