"""The lowered forms of the ops that index by data compute what their kernels compute.

Programs as users hold them: a label turned one-hot, an argmax accuracy, rows gathered by
ids, values picked along an axis, a mask built in the program with ``where`` or
``sequence_mask``, trained with SGD where the op has a gradient. Each runs plainly and
through ``pd.CompiledProgram`` from one start (tests/test_lowered_forms.py's helpers),
bit for bit: the forms (kernels/cpu/indexing.py) copy values, and their gradients add
into zeros in the order of the indices, which is the order ``np.add.at`` adds in. An
index out of range, fed to a compiled program, raises the interpreter's error naming the
op, and the parameters are not touched.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import build_program, assert_compiled, data, floats, run_both, run_programs

RNG = np.random.default_rng(11)


def _ids(high, *shape, dtype=np.int64):
    return RNG.integers(0, high, shape).astype(dtype)


# --- labels: one-hot targets, an argmax accuracy ------------------------------------------
@pytest.mark.parametrize("label_dtype", ["int64", "int32"])
def test_a_classifier_with_one_hot_targets_and_an_argmax_accuracy(label_dtype):
    def build():
        x, label = pd.data("x", [None, 6]), pd.data("label", [None], label_dtype)
        logits = pd.layer.fc(pd.layer.fc(x, 8, act="relu"), 4)
        target = pd.op.one_hot_v2(X=label, depth=4, dtype=5)
        loss = pd.mean(pd.layers.square(pd.softmax(logits) - target))
        predicted = pd.op.arg_max(X=logits, axis=1, dtype=pd.core.dtypes.to_code(label_dtype))
        accuracy = pd.mean(pd.layers.cast(pd.layers.equal(predicted, label), "float32"))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, accuracy, predicted, target]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6), "label": _ids(4, n, dtype=np.dtype(label_dtype))}
             for n in (10, 10, 6, 13)]             # another batch: the same machine code
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "one_hot_v2", "arg_max", "sgd")


@pytest.mark.parametrize("op_type", ["arg_max", "arg_min"])
@pytest.mark.parametrize("attrs", [dict(axis=0), dict(axis=-1, keepdims=True),
                                   dict(flatten=True), dict(flatten=True, keepdims=True),
                                   dict(axis=1, dtype=2)])
def test_argmax_and_argmin_with_ties_and_nans(op_type, attrs):
    """Ties go to the first position, a NaN wins wherever it is (numpy's rule)."""
    def build():
        return [getattr(pd.op, op_type)(X=pd.data("x", [4, 5, 3]), **attrs)]
    x = RNG.integers(0, 3, (4, 5, 3)).astype(np.float32)
    x[1, 2, 0] = x[3, 0, 2] = np.nan
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, op_type)


# --- rows by ids ------------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, attrs", [("gather", dict(axis=0)),
                                            ("gather", dict(axis=1)),
                                            ("index_select", dict(dim=0)),
                                            ("index_select", dict(dim=-1))])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_rows_gathered_by_ids_train_the_same(op_type, attrs, index_dtype):
    """Repeated ids: their gradients add up, in the ids' order, as np.add.at adds."""
    def build():
        w = pd.layers.create_parameter([7, 6], "float32", name="w")
        ids = pd.data("ids", [6], np.dtype(index_dtype).name)
        rows = getattr(pd.op, op_type)(X=w, Index=ids, **attrs)
        loss = pd.mean(pd.layers.square(pd.layer.fc(rows, 3)))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [rows, loss, w]
    ids = np.array([3, 0, 3, 5, 3, 1], index_dtype)
    main, compiled = run_both(build, {"ids": ids})
    assert_compiled(main, compiled, op_type, op_type + "_grad", "sgd")


def test_gather_with_a_0d_index_drops_the_axis():
    def build():
        x = data("x", [4, 5])
        out = pd.op.gather(X=x, Index=pd.data("at", [], "int64"), axis=1)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(4, 5), "at": np.array(3)})
    assert_compiled(main, compiled, "gather", "gather_grad")


def test_gather_nd_picks_points_and_rows():
    def build():
        x = data("x", [4, 3, 5], "float64")
        points = pd.op.gather_nd(X=x, Index=pd.data("points", [6, 2], "int32"))
        rows = pd.op.gather_nd(X=x, Index=pd.data("rows", [2, 2, 1], "int64"))
        loss = pd.mean(points * points) + pd.mean(rows)
        return [points, rows, *pd.gradients(loss, [x])]
    points = np.stack([_ids(4, 6), _ids(3, 6)], axis=1).astype(np.int32)
    points[1] = points[4]                        # one point twice: its gradients add up
    feed = {"x": floats(4, 3, 5, dtype=np.float64), "points": points,
            "rows": np.array([[[1], [3]], [[1], [0]]])}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "gather_nd", "gather_nd_grad")


@pytest.mark.parametrize("overwrite", [True, False])
def test_rows_scattered_into_a_parameter(overwrite):
    def build():
        table = pd.layers.create_parameter([6, 4], "float32", name="table")
        x = pd.data("x", [3, 5])
        updates = pd.layer.fc(x, 4)
        out = pd.op.scatter(X=table, Ids=pd.data("ids", [3], "int64"), Updates=updates,
                            overwrite=overwrite)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [out, loss, table]
    feed = {"x": floats(3, 5), "ids": np.array([4, 1, 4])}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "scatter", "scatter_grad", "sgd")


# --- positions along an axis ------------------------------------------------------------------
@pytest.mark.parametrize("axis, index_shape", [(1, [2, 7, 3]), (-1, [4, 5, 2]),
                                               (0, [6, 2, 3])])
def test_take_along_axis_and_its_gradient(axis, index_shape):
    """Index may be shorter than Input along the other axes (the leading block)."""
    def build():
        x = data("x", [4, 5, 3])
        out = pd.op.take_along_axis(Input=x, Index=pd.data("at", index_shape, "int64"),
                                    Axis=axis)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    n = (4, 5, 3)[axis]
    main, compiled = run_both(build, {"x": floats(4, 5, 3), "at": _ids(n, *index_shape)})
    assert_compiled(main, compiled, "take_along_axis", "take_along_axis_grad")


def test_index_sample_picks_each_rows_targets():
    def build():
        scores = pd.layer.fc(pd.data("x", [None, 5]), 6)
        picked = pd.op.index_sample(X=scores, Index=pd.data("at", [None, 3], "int32"))
        loss = pd.mean(pd.layers.square(picked))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [picked, loss]
    feed = {"x": floats(8, 5), "at": _ids(6, 8, 3, dtype=np.int32)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "index_sample", "index_sample_grad", "sgd")


# --- adding and writing into a tensor at data's positions ------------------------------------
@pytest.mark.parametrize("axis", [0, -1])
def test_index_add_and_its_gradients(axis):
    """Out = X + (the added slices summed onto zeros in Index's order), as the kernel."""
    def build():
        x = data("x", [5, 4])
        index = pd.data("at", [3], "int64")
        value = data("value", [3, 4] if axis == 0 else [5, 3])
        out = pd.op.index_add(X=x, Index=index, AddValue=value, axis=axis)
        return [out, *pd.gradients(pd.mean(out * out), [x, value])]
    feed = {"x": floats(5, 4), "at": np.array([2, 0, 2]),
            "value": floats(3, 4) if axis == 0 else floats(5, 3)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "index_add", "index_add_grad")


def test_scatter_nd_add_and_its_gradients():
    def build():
        x = data("x", [4, 3, 2], "float64")
        updates = data("updates", [5, 2], "float64")
        out = pd.op.scatter_nd_add(X=x, Index=pd.data("at", [5, 2], "int64"), Updates=updates)
        return [out, *pd.gradients(pd.mean(out * out), [x, updates])]
    at = np.array([[0, 1], [3, 2], [0, 1], [1, 0], [0, 1]])
    feed = {"x": floats(4, 3, 2, dtype=np.float64), "at": at,
            "updates": floats(5, 2, dtype=np.float64)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "scatter_nd_add", "scatter_nd_add_grad")


@pytest.mark.parametrize("reduce, include_self", [("assign", True), ("add", True),
                                                  ("add", False)])
def test_put_along_axis_and_its_gradients(reduce, include_self):
    def build():
        x, value = data("x", [4, 5]), data("value", [4, 3])
        out = pd.op.put_along_axis(Input=x, Index=pd.data("at", [4, 3], "int64"),
                                   Value=value, Axis=1, Reduce=reduce,
                                   Include_self=include_self)
        return [out, *pd.gradients(pd.mean(out * out), [x, value])]
    at = _ids(5, 4, 3)
    at[0] = [1, 1, 4]                        # a position written twice
    main, compiled = run_both(build, {"x": floats(4, 5), "value": floats(4, 3), "at": at})
    assert_compiled(main, compiled, "put_along_axis", "put_along_axis_grad")


# --- masks --------------------------------------------------------------------------------
@pytest.mark.parametrize("both", [True, False])
def test_a_mask_built_with_where(both):
    """``where(x > 0, a, b)``: with ``both`` each branch is a layer (both gradients),
    otherwise b is a constant (only X@GRAD)."""
    def build():
        x = pd.data("x", [None, 6])
        a = pd.layer.fc(x, 6)
        b = pd.layer.fc(x, 6, act="tanh") if both else \
            pd.layers.fill_constant([8, 6], "float32", -1.0)
        mask = pd.layers.greater_than(x, pd.layers.fill_constant([8, 6], "float32", 0.0))
        out = pd.op.where(Condition=mask, X=a, Y=b)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [out, loss]
    main, compiled = run_both(build, {"x": floats(8, 6)})
    assert_compiled(main, compiled, "where", "where_grad", "sgd")


@pytest.mark.parametrize("maxlen, out_dtype", [(-1, 5), (6, 5), (4, 3), (5, 0)])
def test_sequence_mask_of_lengths(maxlen, out_dtype):
    def build():
        lengths = pd.data("lengths", [None], "int64")
        mask = pd.op.sequence_mask(X=lengths, maxlen=maxlen, out_dtype=out_dtype)
        fetch = [mask]
        if out_dtype == 5:                       # masked values, and their gradient
            x = data("x", [3, 5 if maxlen < 0 else maxlen])
            masked = x * mask
            fetch += [masked, *pd.gradients(pd.mean(masked * masked), [x])]
        return fetch
    feed = {"lengths": np.array([2, 5, 0])}
    if out_dtype == 5:
        feed["x"] = floats(3, 5 if maxlen < 0 else maxlen)
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "sequence_mask")


# --- range checks ---------------------------------------------------------------------------
def _gather_rows(w):
    return pd.op.gather(X=w, Index=pd.data("ids", [4], "int64"))


def _one_hot_rows(w):
    return pd.layers.matmul(pd.op.one_hot_v2(X=pd.data("ids", [4], "int64"), depth=7, dtype=5),
                            w)


def _nd_rows(w):
    return pd.op.gather_nd(X=w, Index=pd.data("ids", [4, 1], "int64"))


def _rows_added(w):
    return pd.op.index_add(X=w, Index=pd.data("ids", [4], "int64"),
                           AddValue=pd.layers.fill_constant([4, 3], "float32", 1.0))


def _picked_along(w):
    at = pd.layers.reshape(pd.data("ids", [4], "int64"), [4, 1])
    return pd.op.take_along_axis(Input=w, Index=at, Axis=0)


@pytest.mark.parametrize("pick, op_type, ids_shape", [
    (_gather_rows, "gather", [4]), (_one_hot_rows, "one_hot_v2", [4]),
    (_nd_rows, "gather_nd", [4, 1]), (_picked_along, "take_along_axis", [4]),
    (_rows_added, "index_add", [4])])
@pytest.mark.parametrize("bad", [7, -1])
def test_an_index_out_of_range_raises_the_interpreters_error(pick, op_type, ids_shape, bad):
    """After compiled training steps, a bad index raises the interpreter's error (which
    names the op and the slot) and no parameter moves; good ids still run compiled."""
    main, startup, fetch = build_program(lambda: _trained(pick))
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    good = {"ids": np.array([0, 6, 3, 3]).reshape(ids_shape)}
    for _ in range(2):
        exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == op_type)
    assert index in compiled.segments()
    params = {p.name: scope.find_var(p.name).get().copy()
              for p in main.global_block().all_parameters()}
    slot = "X" if op_type == "one_hot_v2" else "Index"
    bad_ids = {"ids": np.array([0, bad, 3, 3]).reshape(ids_shape)}
    with pytest.raises(pd.IndexRangeError, match=f"op {index} {op_type}: slot {slot}"):
        exe.run(compiled, feed=bad_ids, fetch_list=fetch, scope=scope)
    for name, before in params.items():
        assert np.array_equal(scope.find_var(name).get(), before), name
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None


def _trained(pick):
    w = pd.layers.create_parameter([7, 3], "float32", name="w")
    loss = pd.mean(pd.layers.square(pick(w)))
    pd.optimizer.SGD(0.5).minimize(loss)
    return [loss]
