"""What the executor checks before and while it runs (issue "Robustness II"):

- the allocation guard (core/runtime_shapes.py): each op's shape inference runs again on
  the values before its kernel, so an output past ``MAX_TENSOR_BYTES`` is refused before
  anything is allocated; feeds are measured by their logical size (a zero-stride view of
  2**40 rows is 2**40 rows to every op that reads it);
- block references and attribute types are checked once per program version
  (validate.check_before_run), so a ``sub_block`` stored as an INT is an error, not a
  RecursionError, and a FLOAT where an INT belongs names the op and the attribute;
- a step-scopes variable cannot be fetched (its scopes die with the run);
- a training While is bounded by the bytes its step scopes keep, not only by steps.
"""
import time

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import attrs as A
from paddle_nb.core import limits
from paddle_nb.core import validate as V
from paddle_nb.ops import while_op

from test_hostile_programs import _while_program


def _reduce_of_reshaped(shape_dtype=np.int64):
    """x [-1, 3] -> reshape2 by a Shape tensor -> reduce_sum over dim 0."""
    x = pd.data("x", [-1, 3])
    gb = pd.default_main_program().global_block()
    s = gb.create_var("s", dtype=np.dtype(shape_dtype).name, shape=[2])
    y = gb.create_var("y", shape=[-1, -1])
    xs = gb.create_var("xs", shape=[-1])
    gb.append_op("reshape2", {"X": [x], "Shape": [s]}, {"Out": [y], "XShape": [xs]},
                 {"shape": [-1, 3]})
    return pd.layer.reduce_sum(y, dim=[0])


def test_a_reduce_over_a_zero_row_reshape_is_sized_before_it_allocates():
    out = _reduce_of_reshaped()
    feed = {"x": np.zeros((0, 3), np.float32), "s": np.array([-1, 2 ** 40], np.int64)}
    start = time.perf_counter()
    with pytest.raises(pd.ExecutionError, match=r"block 0 > op 1 reduce_sum: output Out "
                                                r"\('reduce_sum_0.tmp_0'\) would have shape "
                                                r"\[1099511627776\] \(float32\), 4.0 TiB, for "
                                                r"inputs X \[0, 1099511627776\]; the limit is "
                                                r"paddle_nb.core.limits.MAX_TENSOR_BYTES = "
                                                r"16.0 GiB. Nothing was allocated.\n  op "
                                                r"created at: .*test_run_guards.py"):
        pd.Executor().run(feed=feed, fetch_list=[out])
    assert time.perf_counter() - start < 2
    feed["s"] = np.array([-1, 5], np.int64)               # the same program, sane sizes
    got, = pd.Executor().run(feed=feed, fetch_list=[out])
    assert got.shape == (5,) and not got.any()


def test_the_guard_limit_is_settable_and_checked_again_when_shapes_change(monkeypatch):
    out = _reduce_of_reshaped()
    exe = pd.Executor()
    small = {"x": np.zeros((0, 3), np.float32), "s": np.array([-1, 1000], np.int64)}
    exe.run(feed=small, fetch_list=[out])
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 2 ** 20)
    exe.run(feed=small, fetch_list=[out])                 # 4 KB: still fine
    small["s"] = np.array([-1, 2 ** 20], np.int64)        # 4 MiB: a new signature, checked
    with pytest.raises(pd.ExecutionError, match=r"4.0 MiB.*MAX_TENSOR_BYTES = 1.0 MiB"):
        exe.run(feed=small, fetch_list=[out])


@pytest.mark.parametrize("rows", [2 ** 40, 2 ** 31])
def test_a_zero_stride_feed_is_measured_by_its_logical_size(rows, monkeypatch):
    x = pd.data("x", [-1, 3], "float64")
    out = pd.layers.scale(x, 2.0)
    exe = pd.Executor()
    exe.run(feed={"x": np.ones((2, 3))}, fetch_list=[out])   # the feed's spec is cached now
    huge = np.broadcast_to(np.float64(1), (rows, 3))
    assert huge.base is not None and huge.strides == (0, 0)
    with pytest.raises(pd.FeedError, match=rf"feed 'x': shape \[{rows}, 3\] \(float64\) is "
                                           rf".*iB as a tensor \(a view with strides \(0, 0\): "
                                           rf"it takes little memory itself, but every op that "
                                           rf"reads it makes a result of this size\); the limit "
                                           rf"is paddle_nb.core.limits.MAX_TENSOR_BYTES"):
        exe.run(feed={"x": huge}, fetch_list=[out])
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 2 ** 10)        # a plain array too
    with pytest.raises(pd.FeedError, match=r"shape \[100, 3\] \(float64\) is 2.3 KiB as a "
                                           r"tensor; the limit .* = 1.0 KiB"):
        exe.run(feed={"x": np.ones((100, 3))}, fetch_list=[out])


def test_shapes_that_do_not_fit_at_run_time_are_named_by_the_op():
    a, b = pd.data("a", [-1, 3]), pd.data("b", [-1, 3])
    out = a + b
    with pytest.raises(pd.ExecutionError, match=r"(?s)block 0 > op 0 elementwise_add: at run "
                                                r"time, slot Y: X and Y cannot be broadcast "
                                                r"together.*given:    X a float32\[5, 3\], "
                                                r"Y b float32\[4, 3\]"):
        pd.Executor().run(feed={"a": np.ones((5, 3), np.float32),
                                "b": np.ones((4, 3), np.float32)}, fetch_list=[out])


def test_an_output_sized_by_data_is_refused_before_it_is_stored(monkeypatch):
    """An output whose size only the data decides (tensor_array_to_tensor joins however
    many items the array holds: shape inference says [-1, 16]) meets the limit in
    set_output, before a variable holds it."""
    x = pd.layers.fill_constant([16, 16], "float32", 1.0)          # 1 KiB
    array = pd.create_array("float32")
    for k in range(10):
        pd.array_write(x, pd.layers.fill_constant([1], "int64", k), array)
    joined = pd.op.tensor_array_to_tensor(X=array, axis=0)        # 10 KiB
    exe = pd.Executor()
    assert exe.run(fetch_list=[joined])[0].shape == (160, 16)
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 8 * 1024)
    with pytest.raises(pd.ExecutionError, match=r"tensor_array_to_tensor: output Out "
                                                r"\('.*'\) has shape \[160, 16\] \(float32\), "
                                                r"10.0 KiB; the limit is .* = 8.0 KiB"):
        exe.run(fetch_list=[joined])


# --- checked once per program version ----------------------------------------------------------
def _program_with(op_setup) -> pd.Program:
    x = pd.layers.fill_constant([1], "float32", 1.0)
    c = pd.layers.fill_constant([1], "bool", True)
    d = pd.default_main_program().desc
    op_setup(d.blocks[0].ops.add(), x.name, c.name)
    return pd.Program.from_bytes(d.SerializeToString())


def _int_sub_block(op, x, c):
    op.type = "conditional_block"
    op.inputs.add(parameter="Cond", arguments=[c])
    op.inputs.add(parameter="Input", arguments=[])
    op.outputs.add(parameter="Out", arguments=[])
    op.outputs.add(parameter="Scope", arguments=[])
    op.attrs.add(name="sub_block", type=A.INT, i=0)          # should be a BLOCK
    op.attrs.add(name="is_scalar_condition", type=A.BOOLEAN, b=True)


def _float_axis(op, x, c):
    op.type = "softmax"
    op.inputs.add(parameter="X", arguments=[x])
    op.outputs.add(parameter="Out", arguments=[x])
    op.attrs.add(name="axis", type=A.FLOAT, f=1.5)


@pytest.mark.parametrize("setup, message", [
    (_int_sub_block, r"block 0 > op 2 conditional_block: attribute sub_block: declared block "
                     r"by op conditional_block, given int \(0\)\n\(found before running it: "
                     r"nothing ran\)"),
    (_float_axis, r"block 0 > op 2 softmax: attribute axis: declared int by op softmax, given "
                  r"float \(1.5\)")])
def test_attribute_types_are_checked_before_a_run(setup, message):
    program = _program_with(setup)
    scope = pd.Scope()
    for attempt in ("run", "steps"):
        with pytest.raises(pd.ValidationError, match=message):
            if attempt == "run":
                pd.Executor().run(program, scope=scope)
            else:
                next(pd.Executor().steps(program, scope=scope))
    assert scope.kids == []


def test_the_check_runs_once_per_version(monkeypatch):
    calls = []
    real = V.check_before_run
    monkeypatch.setattr(V, "check_before_run", lambda p: calls.append(1) or real(p))
    x = pd.data("x", [-1, 2])
    y = pd.relu(x)
    exe, feed = pd.Executor(), {"x": np.ones((1, 2), np.float32)}
    for _ in range(3):
        exe.run(feed=feed, fetch_list=[y])
    assert len(calls) == 1
    z = pd.tanh(y)                                       # the program changed: again
    exe.run(feed=feed, fetch_list=[z])
    assert len(calls) == 2


# --- fetches ------------------------------------------------------------------------------------
def test_a_step_scopes_variable_cannot_be_fetched():
    main, startup, loss, _ = _while_program(training=True, endless=False)
    scopes = [n for n, d in main.global_block().table.vars.items()
              if d.type.type == d.type.STEP_SCOPES]
    assert scopes
    exe = pd.Executor()
    exe.run(startup)
    with pytest.raises(pd.FetchError, match=rf"cannot fetch '{scopes[0]}': it holds the step "
                                            rf"scopes a control-flow op kept for its gradient"):
        exe.run(main, feed={"x": np.ones((3, 2))}, fetch_list=[loss, scopes[0]])


# --- a training While is bounded by bytes ------------------------------------------------
def test_a_training_while_that_never_ends_stops_at_the_byte_limit(monkeypatch):
    monkeypatch.setattr(while_op, "MAX_KEPT_BYTES", 64 * 1024)
    main, startup, loss, cond = _while_program(training=True, endless=True)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    start = time.perf_counter()
    with pytest.raises(pd.ExecutionError, match=rf"while: while kept \d+ step scopes holding "
                                                rf"6\d.\d KiB of tensors for its gradient "
                                                rf"\(training keeps every step\), past the "
                                                rf"limit of 64.0 KiB; its condition '{cond}' "
                                                rf"still holds. If the loop is meant to be this "
                                                rf"long, raise paddle_nb.ops.while_op."
                                                rf"MAX_KEPT_BYTES \(or the environment variable "
                                                rf"PADDLE_NB_MAX_WHILE_BYTES\)"):
        exe.run(main, feed={"x": np.ones((32, 2))}, fetch_list=[loss], scope=scope)
    assert time.perf_counter() - start < 10
    assert scope.kids == []                                # the step scopes went with the run
    monkeypatch.setattr(while_op, "MAX_KEPT_BYTES", 2 ** 31)
    good, good_startup, good_loss, _ = _while_program(training=True, endless=False)
    exe.run(good_startup, scope=scope)
    got, = exe.run(good, feed={"x": np.ones((32, 2))}, fetch_list=[good_loss], scope=scope)
    assert np.isfinite(got)


def test_the_byte_limit_comes_from_the_environment():
    env = while_op.MAX_KEPT_BYTES_ENV
    assert env == "PADDLE_NB_MAX_WHILE_BYTES"
    assert while_op.max_kept_bytes_from_env({}) == while_op.DEFAULT_MAX_KEPT_BYTES == 2 ** 31
    assert while_op.max_kept_bytes_from_env({env: "4096"}) == 4096
    with pytest.warns(UserWarning, match="is not a positive integer"):
        assert while_op.max_kept_bytes_from_env({env: "-3"}) == 2 ** 31


# --- attributes out of range in a program nobody re-inferred (a loaded or edited one) ---------
def _one(x):
    return pd.layers.fill_constant([4], "float32", 1.0)


ATTR_CASES = [
    ("softmax", lambda x: pd.softmax(x), "axis", 99, r"axis 99 is out of range for a rank-2 X"),
    ("reduce_sum", lambda x: pd.layer.reduce_sum(x, dim=[0]), "dim", [99],
     r"dim \[99\] is out of range for a rank-2 X"),
    ("elementwise_add", lambda x: pd.layer.elementwise_add(x, _one(x)), "axis", 7,
     r"axis=7 does not fit a rank-1 Y into a rank-2 X"),
    ("reshape2", lambda x: pd.layers.reshape(x, [-1, 2]), "shape", [-5, 2],
     r"every dim of shape is -1 \(inferred\), 0 \(X's dim\) or a size"),
    ("split", lambda x: list(pd.layers.split(x, 2, dim=0)), "num", 2,
     r"dim 0 of X \(7\) does not split into 2 equal parts"),
    ("transpose2", lambda x: pd.layers.transpose(x, [1, 0]), "axis", [1, 1],
     r"axis must be a permutation of X's dims"),
    ("concat", lambda x: pd.layers.concat([x, x], axis=0), "axis", 5,
     r"axis 5 is out of range for rank-2 inputs"),
]


@pytest.mark.parametrize("op_type, build, attr, value, message", ATTR_CASES,
                         ids=[c[0] for c in ATTR_CASES])
def test_attribute_values_out_of_range_are_refused_at_run_time(op_type, build, attr, value,
                                                               message):
    """Before: each of these ran (softmax axis=99 wrapped, split(x, 2) of 7 rows gave 3 and
    4 rows). The build-time checks cannot see a batch of -1 or an attribute edited into a
    desc; the executor's run-time shape inference (core/runtime_shapes.py) sees the values."""
    x = pd.data("x", [-1, 4])
    out = build(x)
    op = pd.default_main_program().global_block().ops[-1]
    assert op.type == op_type
    op._set_attr(attr, value)
    fetch = out if isinstance(out, list) else [out]
    for place in (pd.CPUPlace(), pd.CUDAPlace(0)):
        with pytest.raises(pd.ExecutionError, match=rf"block 0 > op \d+ {op_type}: at run time, "
                                                    rf"slot \w+: {message}"):
            pd.Executor(place).run(feed={"x": np.ones((7, 4), np.float32)}, fetch_list=fetch)
