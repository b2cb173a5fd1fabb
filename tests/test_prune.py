"""Prune and Block.eval (the Block and Scope design's Eval): keep exactly the ops the
targets depend on."""
import numpy as np
import pytest

import paddle_nb as pd


def _types(prog):
    return [op.type for op in prog.global_block().ops]


def test_chain_keeps_only_the_prefix():
    x = pd.data("x", [None, 3])
    a = pd.relu(x)
    b = pd.sigmoid(a)
    pd.tanh(b)
    assert _types(pd.prune(pd.default_main_program(), [a])) == ["relu"]
    assert _types(pd.prune(pd.default_main_program(), [b.name])) == ["relu", "sigmoid"]


def test_fan_in_keeps_both_branches():
    x = pd.data("x", [None, 3])
    a = pd.relu(x)                       # branch 1
    b = pd.layers.exp(x)                 # branch 2
    pd.sigmoid(x)                        # unrelated
    s = pd.add(a, b)
    pruned = pd.prune(pd.default_main_program(), [s])
    assert _types(pruned) == ["relu", "exp", "elementwise_add"]
    assert not any(v.startswith("sigmoid") for v in pruned.global_block().vars)


def test_fan_out_keeps_only_the_targeted_consumer():
    x = pd.data("x", [None, 3])
    shared = pd.layers.square(x)
    left = pd.relu(shared)
    right = pd.sigmoid(shared)
    assert _types(pd.prune(pd.default_main_program(), [left])) == ["square", "relu"]
    assert _types(pd.prune(pd.default_main_program(), [right])) == ["square", "sigmoid"]
    both = pd.prune(pd.default_main_program(), [left, right])
    assert _types(both) == ["square", "relu", "sigmoid"]


def test_prune_keeps_parameters_and_leaves_the_original_alone():
    x = pd.data("x", [None, 3])
    h = pd.layer.fc(x, 4)
    pd.layer.fc(h, 2)
    main = pd.default_main_program()
    before = main.to_bytes()
    pruned = pd.prune(main, [h])
    assert main.to_bytes() == before
    assert [p.name for p in pruned.all_parameters()] == [
        "fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]   # persistable vars are kept
    assert _types(pruned) == ["mul", "elementwise_add"]


def test_prune_recurses_into_sub_blocks():
    """An op that owns a block keeps the inner ops writing its outputs, and the outer
    ops its block reads."""
    main = pd.default_main_program()
    x = pd.data("x", [None, 3])
    feeds_inner = pd.layers.square(x)
    pd.layers.exp(x)                                  # unrelated
    gb = main.global_block()
    gb.create_var("out_inner", [-1, 3])               # an outer var the block writes
    sub = main.create_block()
    keep = sub.append_op("relu", {"X": [feeds_inner]}, {"Out": ["out_inner"]})
    sub.create_var("dead", [-1, 3])
    sub.append_op("sigmoid", {"X": [x]}, {"Out": ["dead"]})
    main.rollback()
    gb.create_var("result", [-1, 3])
    owner = gb.append_op("assign", {"X": [x]}, {"Out": ["result"]},
                         {"sub_block": sub})   # a stand-in owner with a BLOCK attribute
    assert keep.type == "relu" and owner.sub_block_indices() == [1]
    # BLOCK attribute written by Block.idx: check through the desc
    pruned = pd.prune(main, ["result"])
    assert _types(pruned) == ["square", "assign"]
    assert [op.type for op in pruned.block(1).ops] == ["relu"]


def test_eval_runs_only_what_the_target_needs(exe):
    x = pd.minibatch([[1.0, -2.0, 3.0]])
    a = pd.relu(x)
    bad = pd.layers.log(pd.layers.scale(x, -1.0))         # would make NaNs; eval never runs it
    del bad
    got, = pd.default_main_program().global_block().eval([a], scope=pd.Scope())
    np.testing.assert_allclose(got, [[1, 0, 3]])


def test_prune_target_must_be_declared():
    pd.relu(pd.data("x", [None, 3]))
    with pytest.raises(pd.BuildError, match="not declared"):
        pd.prune(pd.default_main_program(), ["nope"])
