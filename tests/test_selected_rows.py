"""SelectedRows, Paddle's sparse gradient of an embedding (core/selected_rows.py), end to end.

The value type; the gradient an embedding with is_sparse=True writes (rows = the ids as
given, value = Out@GRAD's rows, the padding id's included, as Paddle's sparse kernel);
sgd, momentum and adam applying it as Paddle 2.6.2's CPU kernels do (checked here
against numpy written from Paddle's kernels, and against Paddle itself in
tests/test_paddle_recipes.py), lazy_mode included; sum; the backward's VarType
declarations; the builders' refusals; every other op's refusal; fetch; the scope view.
Each on the CPU and on CUDA (numba's simulator), whose row loops add in the same order.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.framework_pb2 import VarType
from paddle_nb.core.selected_rows import SelectedRows
from paddle_nb.notebook.scope_model import find_var, scope_model

PLACES = [pd.CPUPlace(), pd.CUDAPlace(0)]
IDS = ["cpu", "cuda"]


def host(x):
    if isinstance(x, SelectedRows):
        return x.to_host()
    return x.copy_to_host() if hasattr(x, "copy_to_host") and \
        not isinstance(x, np.ndarray) else np.asarray(x)


def sr(rows, value, height):
    return SelectedRows(np.int64(rows), np.asarray(value), height)


# --- the value type ---------------------------------------------------------------------------
def test_a_selected_rows_is_rows_and_values_of_a_taller_tensor():
    g = sr([3, 7, 7, 0], np.arange(8, dtype=np.float32).reshape(4, 2), 10)
    assert g.shape == (10, 2) and g.dtype == np.float32 and g.ndim == 2
    assert g.nbytes == 4 * 8 + 8 * 4
    dense = g.to_dense()
    assert dense.shape == (10, 2)
    np.testing.assert_array_equal(dense[7], [2 + 4, 3 + 5])      # repeats add up
    np.testing.assert_array_equal(dense[[0, 3]], [[6, 7], [0, 1]])
    assert not dense[[1, 2, 4, 5, 6, 8, 9]].any()
    merged = g.merged()
    np.testing.assert_array_equal(merged.rows, [0, 3, 7])
    np.testing.assert_array_equal(merged.value, [[6, 7], [0, 1], [6, 8]])
    np.testing.assert_array_equal(merged.to_dense(), dense)
    np.testing.assert_array_equal(g.touched_rows(), [0, 3, 7])
    assert repr(g) == "SelectedRows height=10, rows [3, 7, 7, 0], value float32[4, 2]"
    long = sr(np.arange(12), np.zeros((12, 3)), 20)
    assert repr(long) == ("SelectedRows height=20, rows [0, 1, 2, 3, 4, 5, 6, 7, ... "
                          "(12 rows)], value float64[12, 3]")


def test_a_selected_rows_says_what_it_is_not():
    g = sr([1, 1], np.ones((2, 3), np.float32), 4)
    with pytest.raises(TypeError, match=r"not a dense tensor.*use \.to_dense\(\) for the "
                                        r"dense \[4, 3\] tensor"):
        np.asarray(g)
    with pytest.raises(AttributeError, match=r"has no attribute 'reshape': it is Paddle's "
                                             r"sparse gradient.*sgd, momentum, adam and sum"):
        g.reshape(-1)
    for rows, value, height, what in (
            (np.int32([1]), np.ones((1, 2)), 3, "1-D int64"),
            (np.int64([[1]]), np.ones((1, 2)), 3, "1-D int64"),
            (np.int64([1, 2]), np.ones((3, 2)), 3, "one row per entry"),
            (np.int64([1]), np.ones((1, 2)), -1, "height must be an int >= 0")):
        with pytest.raises(pd.ExecutionError, match=what):
            SelectedRows(rows, value, height)
    with pytest.raises(pd.ExecutionError, match=r"rows\[1\] = 5 is not a row of a tensor of "
                                                r"height 4"):
        sr([0, 5], np.ones((2, 1)), 4).to_dense()


def test_a_scope_holds_a_selected_rows_as_its_own_kind():
    scope = pd.Scope()
    g = sr([3, 7, 7, 0], np.ones((4, 8), np.float32), 20)
    scope.var("g").set(g)
    var = scope.find_var("g")
    assert var.kind == "selected_rows" and var.get() is g
    assert "g: SelectedRows height=20, rows [3, 7, 7, 0], value float32[4, 8]" in scope.tree()
    assert repr(var) == "<ScopeVariable SelectedRows height=20, rows [3, 7, 7, 0], value " \
                        "float32[4, 8]>"
    assert scope.held_bytes() == g.nbytes


def test_the_scope_view_shows_a_selected_rows_and_the_rows_it_touches():
    scope = pd.Scope()
    scope.var("emb@GRAD").set(sr([3, 7, 7, 0], np.arange(32, dtype=np.float32).reshape(4, 8),
                                 20))
    v = find_var(scope_model(scope)["root"], "emb@GRAD")
    assert v["kind"] == "selected_rows" and v["shape"] == [20, 8] and v["dtype"] == "float32"
    assert v["text"] == ("SelectedRows height=20, rows [3, 7, 7, 0], value float32[4, 8]; "
                         "rows touched: 0, 3, 7 (3 of 20)")
    p = v["preview"]
    assert p["type"] == "selected_rows" and p["height"] == 20 and p["n_rows"] == 4
    assert p["rows"] == [3, 7, 7, 0] and p["touched"] == [0, 3, 7] and p["n_touched"] == 3
    assert [i for i, on in enumerate(p["strip"]) if on] == [0, 3, 7]     # 20 rows, 20 bins
    assert p["value"]["type"] == "heatmap" and p["value"]["rows"] == 4
    assert v["stats"]["min"] == 0 and v["stats"]["max"] == 31
    tall = scope_model(_scope_with(sr([0, 999, 500], np.ones((3, 2)), 1000)))["root"]
    strip = find_var(tall, "g")["preview"]["strip"]
    assert len(strip) == 64 and sum(strip) == 3 and strip[0] and strip[-1]


def _scope_with(value):
    scope = pd.Scope()
    scope.var("g").set(value)
    return scope


# --- the embedding's sparse gradient -----------------------------------------------------------
def _embedding_program(op_type, ids_shape, is_sparse, padding_idx=2):
    w = pd.data("w", [6, 3])
    w.stop_gradient = False
    ids = pd.data("ids", ids_shape, "int64")
    out = getattr(pd.op, op_type)(W=w, Ids=ids, padding_idx=padding_idx, is_sparse=is_sparse)
    weight = pd.data("weight", list(out.shape))
    grad, = pd.gradients([pd.layers.reduce_sum(out * weight)], [w])
    return out, grad


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["lookup_table_v2", "lookup_table"])
def test_a_sparse_gradient_is_the_ids_and_their_rows_padding_included(place, op_type):
    """d sum(Out * weight) / dW: rows = the ids in order (repeats kept), value = weight's
    rows, the padding id's too (Paddle's sparse kernel ignores padding_idx; the dense
    gradient leaves the padding row out, as its zero output does not depend on W)."""
    legacy = op_type == "lookup_table"
    ids = np.int64([[1, 2, 4], [4, 4, 0]])
    ids_shape = [2, 3, 1] if legacy else [2, 3]
    weight = np.random.default_rng(3).uniform(-1, 1, (2, 3, 3)).astype(np.float32)
    feed = {"w": np.ones((6, 3), np.float32), "ids": ids.reshape(ids_shape),
            "weight": weight}
    out, grad = _embedding_program(op_type, ids_shape, True)
    assert grad.block.var(grad.name).type == VarType.SELECTED_ROWS
    got, = pd.Executor(place).run(feed=feed, fetch_list=[grad])
    assert isinstance(got, SelectedRows) and not got.on_device and got.height == 6
    np.testing.assert_array_equal(got.rows, ids.reshape(-1))
    assert got.rows.dtype == np.int64
    np.testing.assert_array_equal(got.value, weight.reshape(6, 3))
    pd.reset()
    _, dense_grad = _embedding_program(op_type, ids_shape, False)
    assert dense_grad.block.var(dense_grad.name).type == VarType.LOD_TENSOR
    dense, = pd.Executor(place).run(feed=feed, fetch_list=[dense_grad])
    sparse = got.to_dense()
    np.testing.assert_allclose(sparse[[0, 1, 3, 4, 5]], dense[[0, 1, 3, 4, 5]], rtol=1e-6)
    assert not dense[2].any() and sparse[2].any()          # the padding row


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_int32_ids_make_int64_rows(place):
    w = pd.data("w", [4, 2])
    w.stop_gradient = False
    ids = pd.data("ids", [3], "int32")
    grad, = pd.gradients([pd.mean(pd.op.lookup_table_v2(W=w, Ids=ids, is_sparse=True))], [w])
    got, = pd.Executor(place).run(feed={"w": np.ones((4, 2), np.float32),
                                        "ids": np.int32([3, 0, 3])}, fetch_list=[grad])
    assert got.rows.dtype == np.int64 and got.rows.tolist() == [3, 0, 3]
    np.testing.assert_allclose(got.value, np.full((3, 2), 1 / 6, np.float32))


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [6, -1, 10**9])
def test_the_sparse_gradient_checks_its_ids(place, bad):
    """The gradient op alone (its forward skipped by feeding Out) refuses an id outside
    W's rows before it writes anything, as the dense one does."""
    out, grad = _embedding_program("lookup_table_v2", [2, 2], True)
    feed = {"w": np.ones((6, 3), np.float32), "ids": np.int64([[0, 2], [bad, 5]]),
            "weight": np.ones((2, 2, 3), np.float32), out.name: np.ones((2, 2, 3), np.float32)}
    with pytest.raises(pd.IndexRangeError, match=rf"lookup_table_v2_grad: slot Ids: id {bad} "
                                                 rf"at Ids\[1, 0\] is out of range; expected 0 "
                                                 rf"<= Ids < 6 \(W has 6 rows\)"):
        pd.Executor(place).run(feed=feed, fetch_list=[grad])


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_the_sparse_gradients_paddle_made_are_ours_bit_for_bit(place):
    """tests/fixtures/paddle/make_sparse_grad_fixture.py: lookup_table_v2 and lookup_table
    with is_sparse, padding_idx and repeated ids, int64 and int32 ids, float32 and
    float64, in Paddle 2.6.2's own program with its backward: the same rows, values and
    height, and the gradient declared SELECTED_ROWS."""
    io = dict(np.load(os.path.join(FIXTURES, "sparse_grad_io.npz")))
    program = pd.Program.from_bytes(
        open(os.path.join(FIXTURES, "sparse_grad_ops.pdesc"), "rb").read())
    grads, outs = json.loads(str(io["grad_names"])), json.loads(str(io["out_names"]))
    feed = {k: v for k, v in io.items() if k.endswith(("_w", "_ids", "_weight"))}
    cases = sorted(grads)
    assert len(cases) == 6
    padding = io["v2_padding_float32_rows"] == 3          # Paddle keeps the padding id's rows
    assert padding.sum() == 5 and np.abs(io["v2_padding_float32_value"][padding]).min() > 0
    got = pd.Executor(place).run(program, feed=feed, fetch_list=[grads[c] for c in cases] +
                                 [outs[c] for c in cases])
    for case, grad, out in zip(cases, got, got[len(cases):]):
        assert program.global_block().var(grads[case]).type == VarType.SELECTED_ROWS
        np.testing.assert_array_equal(out, io[f"{case}_out"], err_msg=case)
        assert grad.height == int(io[f"{case}_height"]), case
        np.testing.assert_array_equal(grad.rows, io[f"{case}_rows"], err_msg=case)
        assert grad.value.dtype == io[f"{case}_value"].dtype
        np.testing.assert_array_equal(grad.value, io[f"{case}_value"], err_msg=case)


# --- sgd, momentum and adam on a SelectedRows ------------------------------------------------
def run_op(place, op_type, values, outputs, attrs=None):
    """One ``op_type`` op over ``values`` (slot -> array or SelectedRows, each in a
    persistable variable named after its slot); ``outputs``: slot -> the input slot whose
    variable it writes (Paddle's in-place update), or a new name. Returns {slot: host
    value} and the op's fetched outputs run on ``place``."""
    main = pd.Program()
    blk = main.global_block()
    scope = pd.Scope()
    ins, outs = {}, {}
    for slot, value in values.items():
        kind = VarType.SELECTED_ROWS if isinstance(value, SelectedRows) else VarType.LOD_TENSOR
        blk.create_var(slot.lower(), list(value.shape), str(value.dtype), persistable=True,
                       type=kind)
        scope.var(slot.lower()).set(value)
        ins[slot] = [slot.lower()]
    for slot, target in outputs.items():
        name = target.lower() if target in values else target
        if not blk.has_var(name):
            like = values[slot[:-3]]
            blk.create_var(name, list(like.shape), str(like.dtype), persistable=True)
        outs[slot] = [name]
    blk.append_op(op_type, ins, outs, attrs or {})
    pd.Executor(place).run(main, scope=scope)
    return {slot: host(scope.find_var(names[0]).get()) for slot, names in outs.items()}


def dense_of(rows, value, height):
    out = np.zeros((height,) + value.shape[1:], np.float64)
    for r, v in zip(rows, value):
        out[r] += v
    return out


ROWS = [4, 1, 4, 0, 4]           # repeats, and rows 2, 3, 5 not given
P = np.random.default_rng(1).uniform(-1, 1, (6, 3)).astype(np.float32)
V = np.random.default_rng(2).uniform(-1, 1, (5, 3)).astype(np.float32)
LR = np.float32([0.3])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_sgd_moves_only_the_given_rows_repeats_added(place):
    got = run_op(place, "sgd", {"Param": P, "Grad": sr(ROWS, V, 6), "LearningRate": LR},
                 {"ParamOut": "Param"})["ParamOut"]
    want = P - 0.3 * dense_of(ROWS, V, 6)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(got[[2, 3, 5]], P[[2, 3, 5]])      # untouched, bit for bit


def momentum_ref(p, g, v, lr, mu, nesterov=False, l2=0.0, rescale=1.0):
    g = g * rescale + l2 * p
    v = mu * v + g
    return (p - lr * (g + mu * v) if nesterov else p - lr * v), v


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("attrs", [{}, {"use_nesterov": True},
                                   {"regularization_method": "l2_decay",
                                    "regularization_coeff": 0.1, "rescale_grad": 0.5}])
def test_momentum_updates_every_row_with_the_merged_gradient(place, attrs):
    """Paddle's sparse momentum: zero gradient in the rows not given, so Velocity decays
    and moves them too (and an L2 decay reaches every row): the dense update."""
    velocity = np.random.default_rng(4).uniform(-1, 1, (6, 3)).astype(np.float32)
    got = run_op(place, "momentum", {"Param": P, "Grad": sr(ROWS, V, 6), "Velocity": velocity,
                                     "LearningRate": LR},
                 {"ParamOut": "Param", "VelocityOut": "Velocity"}, {"mu": 0.8, **attrs})
    want_p, want_v = momentum_ref(P, dense_of(ROWS, V, 6), velocity, 0.3, 0.8,
                                  attrs.get("use_nesterov", False),
                                  attrs.get("regularization_coeff", 0.0),
                                  attrs.get("rescale_grad", 1.0))
    np.testing.assert_allclose(got["ParamOut"], want_p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["VelocityOut"], want_v, rtol=1e-5, atol=1e-6)
    assert not np.array_equal(got["ParamOut"][2], P[2])           # a row not given moved


def adam_ref(p, rows, value, m1, m2, lr, b1p, b2p, beta1, beta2, eps, lazy, ahead):
    """Paddle 2.6.2's AdamDenseParamSparseGradKernel (CPU), in float64."""
    if ahead:                    # Beta1PowOut (= Beta1Pow's tensor) written before the update
        b1p, b2p = b1p * beta1, b2p * beta2
    g = dense_of(rows, value, p.shape[0])
    given = np.zeros(p.shape[0], bool)
    given[rows] = True
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    n1, n2 = beta1 * m1 + (1 - beta1) * g, beta2 * m2 + (1 - beta2) * g * g
    new = p - lr_t * n1 / (np.sqrt(n2) + eps * np.sqrt(1 - b2p))
    if lazy:
        keep = ~given
        n1[keep], n2[keep], new[keep] = m1[keep], m2[keep], p[keep]
    else:
        d1, d2 = beta1 * m1, beta2 * m2
        rest = p - lr_t * d1 / (np.sqrt(d2) + eps)          # epsilon not scaled here
        n1[~given], n2[~given], new[~given] = d1[~given], d2[~given], rest[~given]
    return new, n1, n2


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("lazy", [False, True], ids=["all_rows", "lazy"])
@pytest.mark.parametrize("aliased", [True, False], ids=["in_place_powers", "new_powers"])
def test_adam_on_a_selected_rows_is_paddles_cpu_kernel(place, lazy, aliased):
    rng = np.random.default_rng(5)
    m1 = rng.uniform(-0.1, 0.1, (6, 3)).astype(np.float32)
    m2 = rng.uniform(0.0, 0.01, (6, 3)).astype(np.float32)
    b1p, b2p = np.float32([0.9 ** 2]), np.float32([0.999 ** 2])
    outputs = {"ParamOut": "Param", "Moment1Out": "Moment1", "Moment2Out": "Moment2",
               "Beta1PowOut": "Beta1Pow" if aliased else "b1p_out",
               "Beta2PowOut": "Beta2Pow" if aliased else "b2p_out"}
    got = run_op(place, "adam", {"Param": P, "Grad": sr(ROWS, V, 6), "Moment1": m1,
                                 "Moment2": m2, "LearningRate": LR, "Beta1Pow": b1p,
                                 "Beta2Pow": b2p}, outputs,
                 {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-4, "lazy_mode": lazy})
    want = adam_ref(P.astype(np.float64), ROWS, V, m1, m2, 0.3, float(b1p[0]), float(b2p[0]),
                    0.9, 0.999, 1e-4, lazy, aliased)
    for slot, value in zip(("ParamOut", "Moment1Out", "Moment2Out"), want):
        np.testing.assert_allclose(got[slot], value, rtol=2e-5, atol=1e-6, err_msg=slot)
    np.testing.assert_allclose(got["Beta1PowOut"], b1p * 0.9, rtol=1e-6)
    np.testing.assert_allclose(got["Beta2PowOut"], b2p * 0.999, rtol=1e-6)
    if lazy:
        np.testing.assert_array_equal(got["ParamOut"][[2, 3, 5]], P[[2, 3, 5]])
        np.testing.assert_array_equal(got["Moment1Out"][[2, 3, 5]], m1[[2, 3, 5]])
    else:
        assert (got["ParamOut"][[2, 3, 5]] != P[[2, 3, 5]]).all()


def test_the_bias_correction_one_step_ahead_is_paddles_0_744x_first_step():
    """From zero moments, Adam's first step is lr * sign(g) (dense); with Paddle's powers
    advanced before they are read it is sqrt(1 - b2^2) / (1 - b1^2) over sqrt(1 - b2) /
    (1 - b1) = 0.744 times that."""
    zeros = np.zeros((6, 3), np.float32)
    values = {"Param": P, "Moment1": zeros, "Moment2": zeros, "LearningRate": LR,
              "Beta1Pow": np.float32([0.9]), "Beta2Pow": np.float32([0.999])}
    outs = {"ParamOut": "Param", "Moment1Out": "Moment1", "Moment2Out": "Moment2",
            "Beta1PowOut": "Beta1Pow", "Beta2PowOut": "Beta2Pow"}
    sparse = run_op(pd.CPUPlace(), "adam", dict(values, Grad=sr(ROWS, V, 6)), outs)["ParamOut"]
    dense = run_op(pd.CPUPlace(), "adam", dict(values, Grad=sr(ROWS, V, 6).to_dense()),
                   outs)["ParamOut"]
    ahead = (np.sqrt(1 - 0.999 ** 2) / (1 - 0.9 ** 2)) / (np.sqrt(1 - 0.999) / (1 - 0.9))
    assert ahead == pytest.approx(0.744, abs=5e-4)
    given = [0, 1, 4]
    np.testing.assert_allclose((sparse - P)[given], ahead * (dense - P)[given], rtol=1e-4)
    np.testing.assert_allclose(np.abs(dense - P)[given], 0.3, rtol=1e-4)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["sgd", "momentum", "adam"])
def test_a_gradient_with_no_rows_changes_nothing(place, op_type):
    """Paddle's sparse kernels return before writing when there are no rows (momentum's
    velocity does not decay, adam's powers do not advance)."""
    state = {"sgd": {}, "momentum": {"Velocity": np.ones((6, 3), np.float32)},
             "adam": {"Moment1": np.ones((6, 3), np.float32),
                      "Moment2": np.ones((6, 3), np.float32),
                      "Beta1Pow": np.float32([0.9]), "Beta2Pow": np.float32([0.999])}}[op_type]
    values = {"Param": P, "Grad": sr([], np.zeros((0, 3), np.float32), 6),
              "LearningRate": LR, **state}
    outs = {"ParamOut": "Param", **{f"{k}Out": k for k in state}}
    got = run_op(place, op_type, values, outs)
    for slot, src in outs.items():
        np.testing.assert_array_equal(got[slot], values[src], err_msg=slot)


def test_both_places_add_rows_in_the_same_order_to_the_same_bits():
    """The row loops (kernels/*/selected_rows.py) add a repeated row's values in the order
    of the ids on both places: sgd's step and the dense and merged gradients are the same
    bits. Momentum's and Adam's element updates are each place's own loop (the CPU's may
    fuse a multiply-add), equal to a few ulp."""
    from paddle_nb.kernels.cuda import device   # noqa: PLC0415
    from paddle_nb.ops import selected_rows as ops_rows   # noqa: PLC0415
    rows, value = np.int64(ROWS * 3), np.concatenate([V, V * 0.37, V * 1.9])
    cpu_dense = ops_rows.dense(rows, value, (6, 3))
    cuda_dense = ops_rows.dense(device.to_device(rows), device.to_device(value), (6, 3))
    np.testing.assert_array_equal(cpu_dense, cuda_dense.copy_to_host())
    cpu_merged, cuda_merged = ops_rows.merge(rows, value), \
        ops_rows.merge(device.to_device(rows), device.to_device(value))
    np.testing.assert_array_equal(cpu_merged[0], cuda_merged[0].copy_to_host())
    np.testing.assert_array_equal(cpu_merged[1], cuda_merged[1].copy_to_host())
    m = np.random.default_rng(6).uniform(0, 0.01, (6, 3)).astype(np.float32)
    for op_type, state in (("sgd", {}), ("momentum", {"Velocity": m}),
                           ("adam", {"Moment1": m, "Moment2": m, "Beta1Pow": np.float32([0.9]),
                                     "Beta2Pow": np.float32([0.999])})):
        values = {"Param": P, "Grad": SelectedRows(rows, value, 6), "LearningRate": LR,
                  **state}
        outs = {"ParamOut": "Param", **{f"{k}Out": k for k in state}}
        cpu, cuda = (run_op(place, op_type, values, outs) for place in PLACES)
        for slot in outs:
            if op_type == "sgd":
                np.testing.assert_array_equal(cpu[slot], cuda[slot])
            np.testing.assert_allclose(cpu[slot], cuda[slot], rtol=1e-6, atol=1e-8,
                                       err_msg=f"{op_type} {slot}")


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["sgd", "momentum", "adam"])
def test_rows_outside_param_are_refused_before_anything_is_written(place, op_type):
    state = {"sgd": {}, "momentum": {"Velocity": np.zeros((6, 3), np.float32)},
             "adam": {"Moment1": np.zeros((6, 3), np.float32),
                      "Moment2": np.zeros((6, 3), np.float32),
                      "Beta1Pow": np.float32([0.9]), "Beta2Pow": np.float32([0.999])}}[op_type]
    values = {"Param": P, "Grad": sr([1, 6], V[:2], 6), "LearningRate": LR, **state}
    with pytest.raises(pd.IndexRangeError, match=rf"{op_type}: slot Grad: row 6 at Grad\[1\] "
                                                 r"is out of range; expected 0 <= Grad < 6 "
                                                 r"\(Param has 6 rows\)"):
        run_op(place, op_type, values, {"ParamOut": "Param"})


def test_a_selected_rows_of_another_height_is_refused_by_the_shape_rule():
    """At build time from the declarations, at run time from the value a scope holds."""
    with pytest.raises(pd.ShapeError, match=r"sgd: slot Grad: must have the shape of Param"):
        run_op(pd.CPUPlace(), "sgd", {"Param": P, "Grad": sr([1], V[:1], 7),
                                      "LearningRate": LR}, {"ParamOut": "Param"})
    main = pd.Program()
    blk = main.global_block()
    for name, kind in (("p", VarType.LOD_TENSOR), ("g", VarType.SELECTED_ROWS)):
        blk.create_var(name, [6, 3], persistable=True, type=kind)
    blk.create_var("lr", [1], persistable=True)
    blk.append_op("sgd", {"Param": ["p"], "Grad": ["g"], "LearningRate": ["lr"]},
                  {"ParamOut": ["p"]})
    scope = pd.Scope()
    for name, value in (("p", P), ("g", sr([1], V[:1], 7)), ("lr", LR)):
        scope.var(name).set(value)
    with pytest.raises(pd.ExecutionError, match=r"sgd: at run time, slot Grad: must have the "
                                                r"shape of Param(?s:.*)expected: \[6, 3\]"):
        pd.Executor(pd.CPUPlace()).run(main, scope=scope)


# --- sum ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_sum_of_selected_rows_merges_them_and_with_a_tensor_is_dense(place):
    a, b = sr([3, 0, 3], V[:3], 6), sr([5, 0], V[3:], 6)
    main = pd.Program()
    blk = main.global_block()
    scope = pd.Scope()
    for name, value in (("a", a), ("b", b), ("t", P)):
        blk.create_var(name, [6, 3], persistable=True, type=VarType.SELECTED_ROWS
                       if isinstance(value, SelectedRows) else VarType.LOD_TENSOR)
        scope.var(name).set(value)
    for name, kind in (("ab", VarType.SELECTED_ROWS), ("at", VarType.LOD_TENSOR)):
        blk.create_var(name, [6, 3], persistable=True, type=kind)
    blk.append_op("sum", {"X": ["a", "b"]}, {"Out": ["ab"]})
    blk.append_op("sum", {"X": ["a", "t"]}, {"Out": ["at"]})
    pd.Executor(place).run(main, scope=scope)
    merged = host(scope.find_var("ab").get())
    assert isinstance(merged, SelectedRows) and merged.height == 6
    np.testing.assert_array_equal(merged.rows, [0, 3, 5])
    np.testing.assert_allclose(merged.value, [V[1] + V[4], V[0] + V[2], V[3]], rtol=1e-6)
    np.testing.assert_allclose(host(scope.find_var("at").get()), a.to_dense() + P, rtol=1e-6)


# --- programs: the backward's declarations, the builders, training --------------------------------
def _model(make_optimizer, is_sparse=True, twice=False, padding_idx=0):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        ids = pd.data("ids", [4, 3], "int64")
        weight = pd.data("weight", [4, 3, 4])
        e = pd.layer.embedding(ids, size=[10, 4], padding_idx=padding_idx,
                               is_sparse=is_sparse)
        loss = pd.layers.reduce_sum(e * weight)
        if twice:                # the same table looked up again: two parts, summed
            table = main.global_block().var("embedding_0.w_0")
            again = pd.op.lookup_table_v2(Ids=pd.data("ids2", [2], "int64"), W=table,
                                          is_sparse=is_sparse)
            loss = loss + pd.layers.reduce_sum(again)
        make_optimizer().minimize(loss)
    return main, startup


FEED = {"ids": np.int64([[1, 2, 2], [0, 3, 9], [1, 1, 0], [5, 5, 5]]),
        "weight": np.random.default_rng(7).uniform(-1, 1, (4, 3, 4)).astype(np.float32),
        "ids2": np.int64([2, 7])}


def _kinds(program):
    return {n: VarType.Type.Name(d.type.type)
            for n, d in program.global_block().table.vars.items() if "w_0@GRAD" in n}


def test_the_backward_declares_sparse_gradients_selected_rows_as_paddle_does():
    main, _ = _model(lambda: pd.optimizer.SGD(0.1), twice=True)
    assert _kinds(main) == {"embedding_0.w_0@GRAD@RENAME@0": "SELECTED_ROWS",
                            "embedding_0.w_0@GRAD@RENAME@1": "SELECTED_ROWS",
                            "embedding_0.w_0@GRAD": "SELECTED_ROWS"}
    pd.reset()
    main, _ = _model(lambda: pd.optimizer.SGD(0.1), is_sparse=False, twice=True)
    assert set(_kinds(main).values()) == {"LOD_TENSOR"}
    pd.reset()
    main, _ = _model(lambda: pd.optimizer.SGD(0.1, weight_decay=0.01))
    assert _kinds(main) == {"embedding_0.w_0@GRAD": "SELECTED_ROWS",     # Paddle's names
                            "embedding_0.w_0@GRAD@NEWGRAD@": "LOD_TENSOR"}
    sgd, = [op for op in main.global_block().ops if op.type == "sgd"]
    assert sgd.input("Grad") == ["embedding_0.w_0@GRAD@NEWGRAD@"]


def _train(main, startup, place, feed, steps=2, stepped=False, init=None):
    scope = pd.Scope()
    exe = pd.Executor(place)
    exe.run(startup, scope=scope)
    if init is not None:                       # start where another run started
        scope.var("embedding_0.w_0").set(init.copy())
    start = host(scope.find_var("embedding_0.w_0").get()).copy()
    feed = {k: v for k, v in feed.items() if main.global_block().has_var(k)}
    for _ in range(steps):
        if stepped:                            # the interpreter: one op per step
            for _ in exe.steps(main, feed=feed, scope=scope):
                pass
        else:
            exe.run(main, feed=feed, scope=scope)
    return start, host(scope.find_var("embedding_0.w_0").get())


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_sparse_sgd_trains_the_rows_looked_up_and_the_padding_row(place):
    """Against the dense gradient: every row but the padding one ends the same; the
    padding row moves only with the sparse one (its output's gradient is not zero)."""
    start, sparse = _train(*_model(lambda: pd.optimizer.SGD(0.1)), place, FEED)
    pd.reset()
    _, dense = _train(*_model(lambda: pd.optimizer.SGD(0.1), is_sparse=False), place, FEED,
                      init=start)
    np.testing.assert_allclose(sparse[1:], dense[1:], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(dense[0], start[0])
    padding_grad = FEED["weight"][FEED["ids"] == 0].sum(axis=0)
    np.testing.assert_allclose(sparse[0], start[0] - 2 * 0.1 * padding_grad, rtol=1e-5)
    np.testing.assert_array_equal(sparse[[4, 6, 7, 8]], start[[4, 6, 7, 8]])  # never looked up


@pytest.mark.parametrize("make", [
    lambda: pd.optimizer.SGD(0.1, weight_decay=pd.regularizer.L1Decay(0.01)),
    lambda: pd.optimizer.Momentum(0.1, 0.9, weight_decay=0.01),
    lambda: pd.optimizer.Adam(0.1),
    lambda: pd.optimizer.Adam(0.1, lazy_mode=True)], ids=["sgd_l1", "momentum_l2", "adam",
                                                           "adam_lazy"])
def test_sparse_training_is_the_same_run_or_stepped_and_on_both_places(make):
    main, startup = _model(make, twice=True)
    start, compiled = _train(main, startup, pd.CPUPlace(), FEED)
    _, stepped = _train(main, startup, pd.CPUPlace(), FEED, stepped=True, init=start)
    _, cuda = _train(main, startup, pd.CUDAPlace(0), FEED, init=start)
    np.testing.assert_array_equal(compiled, stepped)
    np.testing.assert_allclose(cuda, compiled, rtol=1e-6, atol=1e-7)


def test_the_optimizers_that_do_not_take_a_selected_rows_say_so_when_built():
    for make, what in (
            (lambda: pd.optimizer.AdamW(0.1), r"AdamW: the gradient of embedding_0\.w_0 is a "
                                              r"SelectedRows.*adamw op does not take"),
            (lambda: pd.optimizer.Adagrad(0.1), r"Adagrad.*adagrad op does not take"),
            (lambda: pd.optimizer.SGD(0.1, grad_clip=pd.ClipGradByGlobalNorm(1.0)),
             r"ClipGradByGlobalNorm: the gradient of embedding_0\.w_0 is a SelectedRows"),
            (lambda: pd.optimizer.SGD(0.1, grad_clip=pd.ClipGradByValue(1.0)),
             r"ClipGradByValue.*is_sparse=False")):
        pd.reset()
        with pytest.raises(pd.BuildError, match=what):
            _model(make)
    pd.reset()
    main, _ = _model(lambda: pd.optimizer.Adagrad(0.1, weight_decay=0.01))
    assert [op.type for op in main.global_block().ops][-1] == "adagrad"   # decayed: dense


def _lookup_in(control_flow):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        ids = pd.data("ids", [3], "int64")
        w = pd.create_parameter([5, 2], "float32", name="w")
        look = lambda: pd.op.lookup_table_v2(Ids=ids, W=w, is_sparse=True)   # noqa: E731
        if control_flow == "cond":
            out = pd.cond(pd.data("p", [1], "bool"), look, look)
        else:
            two = pd.layers.fill_constant([1], "int64", 2)
            _, out = pd.while_loop(lambda i, acc: pd.layers.less_than(i, two),
                                   lambda i, acc: [i + 1, acc + look()],
                                   [pd.layers.fill_constant([1], "int64", 0),
                                    pd.layers.fill_constant([3, 2], "float32", 0.0)])
        pd.optimizer.SGD(0.6).minimize(pd.mean(out))
    return main, startup


def test_a_sparse_lookup_inside_cond_trains_and_inside_a_loop_is_refused():
    main, startup = _lookup_in("cond")
    scope = pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(startup, scope=scope)
    before = scope.find_var("w").get().copy()
    exe.run(main, feed={"ids": np.int64([1, 1, 3]), "p": np.array([True])}, scope=scope)
    step = (scope.find_var("w").get() - before) / -0.6 * 6          # d mean / d row, * 6
    np.testing.assert_allclose(step, [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]], atol=1e-5)
    pd.reset()
    with pytest.raises(pd.BuildError, match=r"while: lookup_table_v2_grad in its block makes "
                                            r"a sparse gradient.*is_sparse=False"):
        _lookup_in("while")
    with pytest.raises(TypeError, match=r"does not add with \+.*the sum op adds"):
        sr([1], np.ones((1, 2)), 3) + sr([1], np.ones((1, 2)), 3)


# --- every other op refuses one -----------------------------------------------------------------
@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_an_op_that_does_not_take_a_selected_rows_names_itself_and_the_slot(place):
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        w = pd.create_parameter([5, 2], "float32", name="w")
        y = pd.layers.scale(w, 2.0)
    scope = pd.Scope()
    scope.var("w").set(sr([1, 1], np.ones((2, 2), np.float32), 5))
    with pytest.raises(pd.ExecutionError, match=(
            r"op 0 scale: at run time, slot X: 'w' holds a SelectedRows \(the sparse gradient "
            r"of an embedding with is_sparse=True\), which scale does not take\n  expected: a "
            r"dense tensor \(the ops that take a SelectedRows: adam \(Grad\), momentum \(Grad\), "
            r"sgd \(Grad\), sum \(X\);(?s:.*)given:    SelectedRows height=5, rows \[1, 1\]")):
        pd.Executor(place).run(main, fetch_list=[y], scope=scope)
    scope.var("w").set(np.ones((5, 2), np.float32))       # the same program, a dense value
    np.testing.assert_array_equal(pd.Executor(place).run(main, fetch_list=[y], scope=scope)[0],
                                  np.full((5, 2), 2.0, np.float32))


def test_an_optimizer_without_a_sparse_kernel_refuses_one():
    with pytest.raises(pd.ExecutionError, match=r"op 0 adagrad: at run time, slot Grad: "
                                                r"'grad' holds a SelectedRows"):
        run_op(pd.CPUPlace(), "adagrad", {"Param": P, "Grad": sr(ROWS, V, 6),
                                          "Moment": np.zeros((6, 3), np.float32),
                                          "LearningRate": LR},
               {"ParamOut": "Param", "MomentOut": "Moment"})


def test_check_nan_inf_looks_inside_a_selected_rows():
    value = np.ones((2, 3), np.float32)
    value[1, 2] = np.nan
    main = pd.Program()
    blk = main.global_block()
    for name in ("g", "s"):
        blk.create_var(name, [4, 3], persistable=True, type=VarType.SELECTED_ROWS)
    blk.append_op("sum", {"X": ["g", "g"]}, {"Out": ["s"]})
    scope = pd.Scope()
    scope.var("g").set(sr([2, 0], value, 4))
    with pytest.raises(pd.ExecutionError, match=r"op 0 sum: output Out \(var 's'\) has 1 NaN "
                                                r"and 0 Inf"):
        pd.Executor(pd.CPUPlace(), check_nan_inf=True).run(main, scope=scope)


def test_a_selected_rows_value_moves_to_the_device_and_back():
    g = sr([2, 0], np.ones((2, 3), np.float32), 4)
    scope = pd.Scope()
    scope.var("g").set(g)
    main = pd.Program()
    blk = main.global_block()
    blk.create_var("g", [4, 3], persistable=True, type=VarType.SELECTED_ROWS)
    blk.create_var("s", [4, 3], persistable=True, type=VarType.SELECTED_ROWS)
    blk.append_op("sum", {"X": ["g", "g"]}, {"Out": ["s"]})
    got, = pd.Executor(pd.CUDAPlace(0)).run(main, fetch_list=["s"], scope=scope)
    assert scope.find_var("g").get().on_device                 # moved on first read, kept
    assert isinstance(got, SelectedRows) and not got.on_device
    np.testing.assert_array_equal(got.rows, [0, 2])
    np.testing.assert_array_equal(got.value, np.full((2, 3), 2, np.float32))
    with pytest.raises(pd.ExecutionError, match=r"call \.to_host\(\) first"):
        scope.find_var("g").get().to_dense()

# The device kernels' launches here are compiled for a real GPU by test_cuda_compile.py
# (tests/cuda_signatures.py records this file's CUDA tests too).
