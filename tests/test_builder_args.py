"""Every public builder checks its arguments (issue 20, item 6: "builders accept nonsense
silently"): a BuildError naming the builder and the argument, what was expected and what
was given, raised before anything is appended to the program. What Paddle accepts
(negative axes, -1 in reshape shapes, numpy integers as sizes) still builds."""
from __future__ import annotations

import types

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb import initializer as init
from paddle_nb import variable as pv

L = pd.layers


@pytest.fixture
def v():
    """The variables the rows build on (made before the op count is taken)."""
    return types.SimpleNamespace(
        x=pd.data("x", [-1, 4]), b=pd.data("b", [1], "bool"),
        rows=pd.data("rows", [-1, 1], "bool"), label=pd.data("label", [-1, 1], "int64"),
        i=pd.data("i", [1], "int64"), arr=pd.create_array("float32"))


def _f():
    return None


def _in_rnn(build):
    """``build(rnn, v)`` inside an RNN's step block."""
    def run(v):
        rnn = pd.rnn()
        with rnn.step():
            build(rnn, v)
    return run


def _in_true_block(build):
    def run(v):
        ie = pd.ifelse()
        with ie.true_block():
            build(ie, v)
    return run


def _in_switch(condition):
    def run(v):
        with pd.switch() as s:
            with s.case(condition(v)):
                pass
    return run


# (builder as the message names it, argument, the call)
ROWS = [
    # --- declaring variables ---
    ("data", "name", lambda v: pd.data(3, [2])),
    ("data", "shape", lambda v: pd.data("d", "3")),
    ("data", "shape", lambda v: pd.data("d", [3.5])),
    ("data", "shape", lambda v: pd.data("d", [True, 2])),
    ("data", "shape", lambda v: pd.data("d", [-2, 2])),
    ("data", "dtype", lambda v: pd.data("d", [2], "floaty")),
    ("data", "lod_level", lambda v: pd.data("d", [2], lod_level=-1)),
    ("var", "value", lambda v: pd.var("abc")),
    ("var", "value", lambda v: pd.var(v.x)),
    ("var", "dtype", lambda v: pd.var(1, dtype="nope")),
    ("var", "param", lambda v: pd.var(1, param="yes")),
    ("minibatch", "values", lambda v: pd.minibatch([[1, 2], [3]])),
    ("minibatch", "lod_level", lambda v: pd.minibatch([1, 2], lod_level=1.5)),
    ("sequence", "name", lambda v: pd.sequence([1, 2], name=7)),
    ("create_parameter", "shape", lambda v: pd.create_parameter([-1, 3])),
    ("create_parameter", "shape", lambda v: pd.create_parameter([2, "3"])),
    ("create_parameter", "initializer", lambda v: pd.create_parameter([2], initializer="xavier")),
    ("create_parameter", "trainable", lambda v: pd.create_parameter([2], trainable=1)),
    ("get_variable", "name", lambda v: pd.get_variable(3, [2])),
    ("get_variable", "reuse", lambda v: pd.get_variable("w", [2], reuse="no")),
    # --- fc ---
    ("fc", "input", lambda v: pd.layer.fc("x", 3)),
    ("fc", "size", lambda v: pd.layer.fc(v.x, "3")),
    ("fc", "size", lambda v: pd.layer.fc(v.x, 3.5)),
    ("fc", "size", lambda v: pd.layer.fc(v.x, 0)),
    ("fc", "size", lambda v: pd.layer.fc(v.x, True)),
    ("fc", "num_flatten_dims", lambda v: pd.layer.fc(v.x, 3, num_flatten_dims=2)),
    ("fc", "act", lambda v: pd.layer.fc(v.x, 3, act="rleu")),
    ("fc", "param_attr", lambda v: pd.layer.fc(v.x, 3, param_attr=3)),
    ("fc", "bias_attr", lambda v: pd.layer.fc(v.x, 3, bias_attr=1.5)),
    ("fc", "params", lambda v: pd.layer.fc(v.x, 3, params="w")),
    ("fc", "name", lambda v: pd.layer.fc(v.x, 3, name=5)),
    # --- activations and elementwise layers ---
    ("softmax", "axis", lambda v: pd.softmax(v.x, axis=2)),
    ("softmax", "axis", lambda v: pd.softmax(v.x, axis=1.0)),
    ("softmax", "x", lambda v: pd.softmax("x")),
    ("relu", "x", lambda v: pd.relu(3)),
    ("sigmoid", "x", lambda v: pd.sigmoid(None)),
    ("tanh", "x", lambda v: pd.tanh([1.0])),
    ("exp", "x", lambda v: L.exp(v.arr)),
    ("log", "x", lambda v: L.log("x")),
    ("square", "x", lambda v: L.square(2)),
    ("mean", "x", lambda v: pd.mean([v.x])),
    ("scale", "scale", lambda v: L.scale(v.x, "2")),
    ("scale", "bias", lambda v: L.scale(v.x, 2.0, None)),
    ("scale", "bias_after_scale", lambda v: L.scale(v.x, 2.0, 1.0, "yes")),
    ("cast", "dtype", lambda v: L.cast(v.x, "floaty")),
    ("cast", "x", lambda v: L.cast(3, "int32")),
    ("add", "y", lambda v: pd.add(v.x, "a")),
    ("add", "x", lambda v: pd.add(None, v.x)),
    ("add", "axis", lambda v: pd.add(v.x, v.x, axis=-2)),
    ("elementwise_sub", "x", lambda v: L.elementwise_sub([1, 2], v.x)),
    ("elementwise_mul", "axis", lambda v: L.elementwise_mul(v.x, v.x, axis=0.5)),
    ("elementwise_div", "y", lambda v: L.elementwise_div(v.x, {"y": 1})),
    ("greater_than", "y", lambda v: L.greater_than(v.x, "a")),
    ("less_than", "cond", lambda v: L.less_than(v.i, v.i, cond=v.x)),
    ("less_than", "y", lambda v: L.less_than(v.i, "5", cond=v.b)),
    ("equal", "y", lambda v: L.equal(v.i, None)),
    ("not_equal", "x", lambda v: L.not_equal("1", v.i)),
    ("add_scalar", "y", lambda v: L.add_scalar(v.x, "1")),
    ("add_scalar", "y", lambda v: L.add_scalar(v.x, v.x)),     # a batch is not a scalar
    ("logical_and", "y", lambda v: L.logical_and(v.b, 1)),
    ("logical_or", "x", lambda v: L.logical_or(True, v.b)),
    ("logical_not", "x", lambda v: L.logical_not("b")),
    ("matmul", "transpose_x", lambda v: pd.matmul(v.x, v.x, transpose_x=1)),
    ("matmul", "transpose_y", lambda v: pd.matmul(v.x, v.x, transpose_y="no")),
    ("matmul", "y", lambda v: pd.matmul(v.x, 3)),
    # --- reductions and shapes ---
    ("reduce_sum", "dim", lambda v: L.reduce_sum(v.x, 2)),
    ("reduce_sum", "dim", lambda v: L.reduce_sum(v.x, [0, -2])),
    ("reduce_sum", "dim", lambda v: L.reduce_sum(v.x, 1.0)),
    ("reduce_sum", "dim", lambda v: L.reduce_sum(v.x, True)),
    ("reduce_sum", "keep_dim", lambda v: L.reduce_sum(v.x, 1, keep_dim=1)),
    ("reduce_mean", "dim", lambda v: L.reduce_mean(v.x, -3)),
    ("reduce_mean", "x", lambda v: L.reduce_mean(np.ones(3))),
    ("sums", "xs", lambda v: L.sums([])),
    ("sums", "xs", lambda v: L.sums([v.x, 1.0])),
    ("reshape", "shape", lambda v: L.reshape(v.x, [-1, -1])),
    ("reshape", "shape", lambda v: L.reshape(v.x, "4")),
    ("reshape", "shape", lambda v: L.reshape(v.x, [2, -3])),
    ("reshape", "shape", lambda v: L.reshape(v.x, [2, 2.0])),
    ("reshape", "x", lambda v: L.reshape([1, 2], [2])),
    ("transpose", "perm", lambda v: L.transpose(v.x, [0, 0])),
    ("transpose", "perm", lambda v: L.transpose(v.x, [0, 1, 2])),
    ("transpose", "perm", lambda v: L.transpose(v.x, [0, 2])),
    ("transpose", "perm", lambda v: L.transpose(v.x, "10")),
    ("concat", "xs", lambda v: L.concat([])),
    ("concat", "xs", lambda v: L.concat([v.x, 3])),
    ("concat", "axis", lambda v: L.concat([v.x, v.x], axis=2)),
    ("split", "num_or_sections", lambda v: L.split(v.x, 0, 1)),
    ("split", "num_or_sections", lambda v: L.split(v.x, True, 1)),
    ("split", "num_or_sections", lambda v: L.split(v.x, [2, 0], 1)),
    ("split", "num_or_sections", lambda v: L.split(v.x, 5, 1)),     # 5 pieces of 4
    ("split", "num_or_sections", lambda v: L.split(v.x, "2", 1)),
    ("split", "dim", lambda v: L.split(v.x, 2, 2)),
    ("fill_constant", "shape", lambda v: L.fill_constant([-1], "float32", 0)),
    ("fill_constant", "shape", lambda v: L.fill_constant(3, "float32", 0)),
    ("fill_constant", "dtype", lambda v: L.fill_constant([1], "x", 0)),
    ("fill_constant", "value", lambda v: L.fill_constant([1], "float32", "a")),
    ("assign", "x", lambda v: L.assign("abc")),
    ("assign", "output", lambda v: L.assign(v.x, output=3)),
    # --- losses ---
    ("softmax_with_cross_entropy", "logits",
     lambda v: L.softmax_with_cross_entropy(v.label, v.label)),
    ("softmax_with_cross_entropy", "axis",
     lambda v: L.softmax_with_cross_entropy(v.x, v.label, axis=2)),
    ("softmax_with_cross_entropy", "soft_label",
     lambda v: L.softmax_with_cross_entropy(v.x, v.label, soft_label=1)),
    ("softmax_with_cross_entropy", "ignore_index",
     lambda v: L.softmax_with_cross_entropy(v.x, v.label, ignore_index=1.5)),
    ("cross_entropy", "input", lambda v: L.cross_entropy("p", v.label)),
    ("cross_entropy", "soft_label", lambda v: L.cross_entropy(v.x, v.label, soft_label="no")),
    ("cross_entropy", "label", lambda v: L.cross_entropy(v.x, [1, 2])),
    ("square_error_cost", "label", lambda v: L.square_error_cost(v.x, 3)),
    # --- operators on Variables ---
    ("operator +", "other", lambda v: v.x + "a"),
    ("operator +", "other", lambda v: np.ones((2, 4)) + v.x),     # numpy defers, then refused
    ("operator -", "other", lambda v: "a" - v.x),
    ("operator *", "other", lambda v: v.x * [1, 2]),
    ("operator /", "other", lambda v: v.x / 0),
    ("operator /", "other", lambda v: v.x / "a"),
    ("operator /", "other", lambda v: None / v.x),
    ("operator @", "other", lambda v: v.x @ 3),
    ("operator >", "other", lambda v: v.x > "a"),
    ("operator <", "other", lambda v: v.x < None),
    # --- optimizers ---
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD(0)),
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD(-0.1)),
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD(True)),
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD("0.1")),
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD(float("nan"))),
    ("SGD", "learning_rate", lambda v: pd.optimizer.SGD(v.x)),        # not one value
    ("SGD", "parameter_list", lambda v: pd.optimizer.SGD(0.1, parameter_list="w")),
    ("Momentum", "momentum", lambda v: pd.optimizer.Momentum(0.1, momentum=-0.1)),
    ("Momentum", "momentum", lambda v: pd.optimizer.Momentum(0.1, momentum=1.5)),
    ("Momentum", "use_nesterov", lambda v: pd.optimizer.Momentum(0.1, use_nesterov="yes")),
    ("Momentum", "learning_rate", lambda v: pd.optimizer.Momentum(0)),
    ("Adam", "beta1", lambda v: pd.optimizer.Adam(beta1=1.0)),
    ("Adam", "beta2", lambda v: pd.optimizer.Adam(beta2=-0.1)),
    ("Adam", "epsilon", lambda v: pd.optimizer.Adam(epsilon=-1e-8)),
    ("Adam", "epsilon", lambda v: pd.optimizer.Adam(epsilon="1e-8")),
    ("minimize", "loss", lambda v: pd.optimizer.SGD(0.1).minimize("loss")),
    ("minimize", "loss", lambda v: pd.optimizer.SGD(0.1).minimize(v.label)),
    ("minimize", "no_grad_set", lambda v: pd.optimizer.SGD(0.1).minimize(v.x, no_grad_set="x")),
    # --- initializers and ParamAttr ---
    ("Constant", "value", lambda v: init.Constant("0")),
    ("Uniform", "low", lambda v: init.Uniform("a")),
    ("Uniform", "high", lambda v: init.Uniform(1.0, -1.0)),
    ("Uniform", "seed", lambda v: init.Uniform(seed=-1)),
    ("Normal", "scale", lambda v: init.Normal(0.0, -1.0)),
    ("Normal", "loc", lambda v: init.Normal(None)),
    ("XavierUniform", "seed", lambda v: init.XavierUniform(seed=1.5)),
    ("NumpyArray", "value", lambda v: init.NumpyArray("abc")),
    ("ParamAttr", "name", lambda v: pd.ParamAttr(name=3)),
    ("ParamAttr", "initializer", lambda v: pd.ParamAttr(initializer="xavier")),
    ("ParamAttr", "trainable", lambda v: pd.ParamAttr(trainable="yes")),
    # --- the Framework design's variable API ---
    ("variable.new", "name", lambda v: pv.new(3)),
    ("variable.tensor", "estimated", lambda v: pv.tensor("t", estimated="yes")),
    ("variable.tensor", "shape", lambda v: pv.tensor("t", estimated=True)),
    ("variable.tensor", "dtype", lambda v: pv.tensor("t", shape=[2], dtype="nope")),
    ("variable.int", "value", lambda v: pv.int("n", 3.5)),
    ("variable.int", "value", lambda v: pv.int("n", True)),
    ("variable.int", "value", lambda v: pv.int("n", 2**70)),
    ("variable.float", "value", lambda v: pv.float("f", "a")),
    ("variable.bool", "value", lambda v: pv.bool("b2", 1)),
    # --- control flow ---
    ("cond", "pred", lambda v: pd.cond(v.x, _f, _f)),
    ("cond", "pred", lambda v: pd.cond(v.rows, _f, _f)),          # one per row: ifelse
    ("cond", "true_fn", lambda v: pd.cond(v.b, 3, _f)),
    ("cond", "false_fn", lambda v: pd.cond(v.b, _f, "f")),
    ("case", "pred_fn_pairs", lambda v: pd.case([])),
    ("case", "pred_fn_pairs[0][0]", lambda v: pd.case([(v.x, _f)])),
    ("case", "pred_fn_pairs[1][1]", lambda v: pd.case([(v.b, _f), (v.b, 3)])),
    ("case", "pred_fn_pairs[0]", lambda v: pd.case([v.b])),
    ("case", "default", lambda v: pd.case([(v.b, _f)], default=3)),
    ("switch_case", "branch_index", lambda v: pd.switch_case(v.x, [_f, _f])),
    ("switch_case", "branch_index", lambda v: pd.switch_case(1, [_f, _f])),
    ("switch_case", "branch_fns", lambda v: pd.switch_case(v.i, 3)),
    ("switch_case", "branch_fns", lambda v: pd.switch_case(v.i, {"a": _f})),
    ("switch_case", "branch_fns", lambda v: pd.switch_case(v.i, [(1, _f), (1, _f)])),
    ("switch_case", "default", lambda v: pd.switch_case(v.i, [_f], default=3)),
    ("Switch.case", "condition", _in_switch(lambda v: v.x)),
    ("Switch.case", "condition", _in_switch(lambda v: v.rows)),
    ("While", "cond", lambda v: pd.While(v.x)),
    ("While", "cond", lambda v: pd.While(v.rows)),
    ("While", "cond", lambda v: pd.While(True)),
    ("While", "is_test", lambda v: pd.While(v.b, is_test="no")),
    ("WhileOp", "cond", lambda v: pd.while_op(v.i)),
    ("while_loop", "cond", lambda v: pd.while_loop(3, _f, [v.i])),
    ("while_loop", "body", lambda v: pd.while_loop(_f, None, [v.i])),
    ("while_loop", "loop_vars", lambda v: pd.while_loop(_f, _f, [])),
    ("while_loop", "loop_vars", lambda v: pd.while_loop(_f, _f, [0])),
    ("create_array", "dtype", lambda v: pd.create_array("x")),
    ("array_write", "x", lambda v: pd.array_write("a", v.i)),
    ("array_write", "i", lambda v: pd.array_write(v.x, v.x)),
    ("array_write", "i", lambda v: pd.array_write(v.x, 0)),
    ("array_write", "array", lambda v: pd.array_write(v.x, v.i, v.x)),
    ("array_read", "array", lambda v: pd.array_read(v.x, v.i)),
    ("array_read", "i", lambda v: pd.array_read(v.arr, 1)),
    ("array_length", "array", lambda v: pd.array_length([v.x])),
    ("increment", "x", lambda v: pd.increment(3)),
    ("increment", "value", lambda v: pd.increment(v.i, "1")),
    ("increment", "in_place", lambda v: pd.increment(v.i, 1, in_place=1)),
    ("tensor_array_to_tensor", "array", lambda v: pd.tensor_array_to_tensor(v.x)),
    ("tensor_array_to_tensor", "axis", lambda v: pd.tensor_array_to_tensor(v.arr, 1.5)),
    ("tensor_array_to_tensor", "use_stack", lambda v: pd.tensor_array_to_tensor(v.arr, 0, 1)),
    ("IfElse", "cond", lambda v: pd.IfElse(v.x)),
    ("ifelse_0", "cond", lambda v: pd.ifelse()(v.x)),
    ("ifelse_0.output", "outs", _in_true_block(lambda ie, v: ie.output(v.x, 3))),
    ("rnn_0.step_input", "x", _in_rnn(lambda rnn, v: rnn.step_input(3))),
    ("rnn_0.memory", "init", _in_rnn(lambda rnn, v: rnn.memory(init=3))),
    ("rnn_0.memory", "shape", _in_rnn(lambda rnn, v: rnn.memory(shape="3", batch_ref=v.x))),
    ("rnn_0.memory", "init_value", _in_rnn(lambda rnn, v: rnn.memory(
        shape=[-1, 3], batch_ref=v.x, init_value="0"))),
    ("rnn_0.update_memory", "value", _in_rnn(lambda rnn, v: rnn.update_memory(
        rnn.memory(init=v.x), 3))),
    ("rnn_0.output", "outs", _in_rnn(lambda rnn, v: rnn.output(3))),
    ("rnn", "name", lambda v: pd.rnn(name=3)),
]


def _op_counts():
    """Ops in every block of both default programs, and the main program's variables."""
    main, startup = pd.default_main_program(), pd.default_startup_program()
    return ([len(b.ops) for b in main.blocks], [len(b.ops) for b in startup.blocks],
            sorted(main.global_block().vars))


@pytest.mark.parametrize("builder, argument, call", ROWS,
                         ids=[f"{b}-{a}-{i}" for i, (b, a, _) in enumerate(ROWS)])
def test_a_bad_argument_is_refused_naming_the_builder_and_the_argument(v, builder, argument,
                                                                       call):
    before = _op_counts()
    with pytest.raises(pd.BuildError) as err:
        call(v)
    message = str(err.value)
    assert message.startswith(f"{builder}: argument {argument} must be "), message
    assert ", got " in message                       # what was given
    ops, startup_ops, names = _op_counts()
    assert ops[:len(before[0])] == before[0] and not any(ops[len(before[0]):])
    assert startup_ops == before[1]
    assert names == before[2]                         # no temporary left behind


def test_the_message_says_what_was_expected_and_what_was_given(v):
    with pytest.raises(pd.BuildError, match=r"^transpose: argument perm must be a permutation "
                                            r"of \[0, 1\], got list \[0, 0\]$"):
        L.transpose(v.x, [0, 0])
    with pytest.raises(pd.BuildError, match=r"^Adam: argument beta1 must be a number in "
                                            r"\[0, 1\), got float 1.0$"):
        pd.optimizer.Adam(beta1=1.0)
    with pytest.raises(pd.BuildError, match=r"^While: argument cond must be a bool Variable "
                                            r"holding one value .*got Variable 'rows' "
                                            r"\(bool\[-1, 1\]\)$"):
        pd.While(v.rows)


# --- what Paddle accepts still builds --------------------------------------------------------
def test_what_paddle_accepts_still_builds(v):
    assert pd.layer.fc(v.x, np.int64(3)).shape == (-1, 3)       # a numpy integer size
    assert pd.softmax(v.x, axis=-2).shape == (-1, 4)             # counted from the end
    assert L.reduce_sum(v.x, np.int64(-1)).shape == (-1,)
    assert L.reduce_mean(v.x, [0, 1], keep_dim=np.bool_(True)).shape == (1, 1)
    assert L.reshape(v.x, [0, 2, 2]).shape == (-1, 2, 2)          # 0 copies the batch dim
    assert L.reshape(v.x, [-1, 2]).shape == (-1, 2)               # -1 is inferred
    assert L.reshape(v.x, (np.int32(2), -1)).shape == (2, -1)
    assert L.transpose(v.x, [-1, 0]).shape == (4, -1)             # Paddle's negative perm
    assert [o.shape for o in L.split(v.x, [1, -1], dim=-1)] == [(-1, 1), (-1, 3)]
    assert L.concat([v.x, v.x], axis=-1).shape == (-1, 8)
    assert pd.data("n", (None, np.int64(3))).shape == (-1, 3)
    assert L.fill_constant(np.array([2, 3]), "bool", True).dtype == "bool"
    assert (np.float32(2) * v.x).shape == (-1, 4)                 # a numpy scalar is a number
    assert (v.x + True).shape == (-1, 4)                          # as Python adds True: 1
    assert pd.optimizer.SGD(np.float32(0.5)).learning_rate == np.float32(0.5)
    assert init.Uniform(np.int64(-1), 1).low == -1.0
    lr = L.fill_constant([1], "float32", 0.1)
    assert pd.optimizer.SGD(lr)._lr_var is lr                      # a learning-rate Variable


def test_assign_takes_numbers_as_paddle_does(exe):
    """``assign(numpy array)`` is an assign_value op (Paddle's assign does the same)."""
    a = L.assign(np.arange(6, dtype=np.int64).reshape(2, 3))
    out = L.fill_constant([2], "float32", 0.0)
    L.assign([1.5, 2.5], output=out)
    got_a, got_out = exe.run(fetch_list=[a, out])
    assert got_a.dtype == np.int64 and got_a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert got_out.tolist() == [1.5, 2.5]
    assert [op.type for op in pd.default_main_program().global_block().ops].count(
        "assign_value") == 2


def test_pd_op_creators_check_attribute_types_through_the_registry(v):
    """``pd.op.<type>`` is the registry's own creator: its attributes are checked against
    the OpProto (the registry's check), and nothing is left behind on refusal."""
    before = _op_counts()
    with pytest.raises(pd.BuildError, match="op split, attribute axis: expected an integer"):
        pd.op.split(X=v.x, num=2, axis="1")
    for num in ("2", -3, 2.0):      # checked before num output variables are made
        with pytest.raises(pd.BuildError, match="pd.op.split: argument num must be an int "
                                                ">= 0"):
            pd.op.split(X=v.x, num=num, axis=1)
    with pytest.raises(pd.BuildError, match="pd.op.mul: no input slot or attribute "
                                            "'x_num_col_dim'"):
        pd.op.mul(X=v.x, Y=v.x, x_num_col_dim=1)
    assert _op_counts() == before
