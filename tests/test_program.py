"""SymbolTable, Block and Program (the Block and Scope design's compile step) and the
name helpers."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.framework_pb2 import BlockDesc


def test_symbol_table_chain_and_compile():
    prog = pd.Program()
    outer = prog.global_block().table
    outer.declare("x", shape=[-1, 4], dtype="float32")
    inner = prog.create_block().table
    inner.var("h")
    assert inner.find_var("x") is outer.vars["x"]              # recursive by default
    assert inner.find_var("x", recursive=False) is None
    assert outer.find_var("h") is None                          # never downwards
    op = inner.new_op("relu")
    op.inputs.add(parameter="X", arguments=["x"])
    assert inner.find_op("relu") is op and inner.find_op(0) is op
    compiled = inner.compile()
    assert isinstance(compiled, BlockDesc)
    assert (compiled.idx, compiled.parent_idx) == (1, 0)
    assert [v.name for v in compiled.vars] == ["h"] and compiled.ops[0].type == "relu"


def test_redeclaring_with_another_shape_or_dtype_shows_both():
    table = pd.Program().global_block().table
    table.declare("x", shape=[-1, 4], dtype="float32")
    table.declare("x", shape=[-1, 4], dtype="float32")          # same: fine
    with pytest.raises(pd.BuildError) as e:
        table.declare("x", shape=[-1, 5], dtype="float64")
    msg = str(e.value)
    assert "float32[-1, 4]" in msg and "float64[-1, 5]" in msg and "shape and dtype" in msg


def test_create_block_and_rollback_follow_fluid_numbering():
    prog = pd.Program()
    assert prog.current_block().idx == 0 and prog.global_block().parent_idx == -1
    b1 = prog.create_block()
    assert (b1.idx, b1.parent_idx, prog.current_block_idx) == (1, 0, 1)
    b2 = prog.create_block()
    assert (b2.idx, b2.parent_idx) == (2, 1)
    prog.rollback()
    assert prog.current_block_idx == 1
    b3 = prog.create_block()
    assert (b3.idx, b3.parent_idx) == (3, 1)
    prog.rollback()
    prog.rollback()
    assert prog.current_block() is prog.global_block()
    with pytest.raises(pd.BuildError, match="no enclosing block"):
        prog.rollback()
    assert [b.idx for b in prog.blocks] == [0, 1, 2, 3]
    assert prog.block(2) is b2
    with pytest.raises(pd.BuildError, match="no block 7"):
        prog.block(7)


def test_block_views_over_the_desc():
    x = pd.data("x", [None, 4])
    y = pd.layer.fc(x, 2)
    gb = pd.default_main_program().global_block()
    assert gb.has_var("x") and gb.var("x") == x
    assert [op.type for op in gb.ops] == ["mul", "elementwise_add"]
    assert [p.name for p in gb.all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]
    assert y.shape == (-1, 2) and y.dtype == "float32"
    # a view writes through to the VarDesc message: no mirrored state
    y.stop_gradient = True
    assert gb.table.vars[y.name].stop_gradient
    with pytest.raises(pd.BuildError, match="did you mean x"):
        gb.var("xx")


def test_unique_names_follow_fluid():
    x = pd.data("x", [None, 4])
    h = pd.layer.fc(x, 8, act="relu")
    pd.layer.fc(h, 3)
    names = list(pd.default_main_program().global_block().vars)
    assert names[:6] == ["x", "fc_0.w_0", "fc_0.tmp_0", "fc_0.b_0", "fc_0.tmp_1", "fc_0.tmp_2"]
    assert "fc_1.w_0" in names and "fc_1.b_0" in names
    startup_ops = [op.type for op in pd.default_startup_program().global_block().ops]
    assert startup_ops == ["uniform_random", "fill_constant"] * 2


def submodel(namespace, x):       # the Block design's example
    with pd.namespace(namespace):
        W = pd.get_variable("W", shape=[3, 3], reuse=True)
        return pd.matmul(x, W)


def test_namespace_gives_each_submodel_its_own_w_and_reuses_it():
    a, b, c = (pd.data(n, [None, 3]) for n in "abc")
    submodel("model_a", a), submodel("model_b", b), submodel("model_c", c)
    d = pd.relu(a)
    again = submodel("model_a", d)
    params = [p.name for p in pd.default_main_program().all_parameters()]
    assert params == ["model_a/W", "model_b/W", "model_c/W"]
    reuse_op = pd.default_main_program().global_block().ops[-1]
    assert reuse_op.input("Y") == ["model_a/W"] and reuse_op.output("Out") == [again.name]
    assert again.name.startswith("model_a/")


def test_get_variable_errors():
    pd.get_variable("W", shape=[2, 2])
    with pytest.raises(pd.BuildError, match=r"exists with shape \[2, 2\], asked for \[3, 3\]"):
        pd.get_variable("W", shape=[3, 3])
    with pytest.raises(pd.BuildError, match="reuse=True"):
        pd.get_variable("W", shape=[2, 2], reuse=False)
    with pytest.raises(pd.BuildError, match="no shape"):
        pd.get_variable("V")
    assert pd.get_variable("W").shape == (2, 2)


def test_program_guard_and_default_programs():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        assert pd.default_main_program() is main
        pd.layer.fc(pd.data("x", [None, 2]), 2)
    assert pd.default_main_program() is not main
    assert len(main.global_block().ops) == 2 and len(startup.global_block().ops) == 2
    assert not pd.default_main_program().global_block().ops


def test_clone_is_independent_and_equal():
    x = pd.data("x", [None, 4])
    pd.layer.fc(x, 2)
    main = pd.default_main_program()
    copy = main.clone()
    assert copy.to_bytes() == main.to_bytes()
    copy.global_block().append_op("relu", {"X": ["x"]}, {"Out": ["r"]})
    assert len(main.global_block().ops) == 2 and len(copy.global_block().ops) == 3
    test_prog = main.clone(for_test=True)
    assert test_prog.to_bytes() == main.to_bytes()   # no op here has is_test


def test_variable_api_of_the_framework_design():
    n = pd.variable.int("n", 10)
    w = pd.variable.tensor("w", np.ones((2, 2), np.float32), estimated=True)
    t = pd.variable.tensor("t", shape=[3], dtype="float32")
    raw = pd.variable.new("anything")
    assert n.dtype == "int64" and n.shape == (1,)
    assert isinstance(w, pd.Parameter) and w.estimated and w.persistable
    w.estimated = False
    assert w.stop_gradient
    assert t.shape == (3,) and raw.dtype == "none"


def test_var_with_value_and_param():
    y = pd.var(1)
    W = pd.var(0.314, param=True)
    x = pd.minibatch([10, 20, 30])
    assert y.shape == (1,) and y.stop_gradient
    assert x.shape == (-1, 1)
    assert isinstance(W, pd.Parameter)
    assert W.name in pd.default_startup_program().global_block().vars
    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    got = exe.run(fetch_list=[x, y, W])
    np.testing.assert_allclose(got[0], [[10], [20], [30]])
    np.testing.assert_allclose(got[1], [1])
    np.testing.assert_allclose(got[2], [0.314], rtol=1e-6)


def test_python_operators_build_ops():
    x = pd.data("x", [None, 2])
    w = pd.var(np.float32([[1, 2], [3, 4]]))
    exprs = [x + 1, 1 + x, x - 1, 3 - x, x * 2, x / 2, -x, x @ w, x + x, x * x, x - x,
             x / (x + 10), 2 / (x + 1), x > 1.5, x < 1.5]
    exe = pd.Executor()
    xs = np.float32([[1, 2], [3, 4]])
    got = exe.run(feed={"x": xs}, fetch_list=exprs)
    want = [xs + 1, 1 + xs, xs - 1, 3 - xs, xs * 2, xs / 2, -xs, xs @ xs, xs + xs, xs * xs,
            xs - xs, xs / (xs + 10), 2 / (xs + 1), xs > 1.5, xs < 1.5]
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g, w_, rtol=1e-6)
