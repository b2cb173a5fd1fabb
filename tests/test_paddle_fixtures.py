"""Programs saved by real PaddlePaddle 3.3 (legacy IR) run on our executor.

The fixtures were made by tests/fixtures/paddle/make_fixtures.py in a scratch virtualenv
with paddlepaddle installed; paddlepaddle is not a dependency of this project.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
META = json.load(open(os.path.join(FIXTURES, "meta.json")))


def _load(name):
    return pd.Program.from_bytes(open(os.path.join(FIXTURES, name), "rb").read())


def _scope_with_paddle_params():
    scope = pd.Scope()
    for name, value in np.load(os.path.join(FIXTURES, "params.npz")).items():
        scope.var(name).set(value)
    return scope


def test_training_program_parses_with_forward_backward_and_sgd_ops():
    prog = _load("mlp_train.pdesc")
    assert [op.type for op in prog.global_block().ops] == META["op_types_main"]
    assert sorted(p.name for p in prog.all_parameters()) == sorted(META["parameters"])


def test_forward_part_pruned_to_the_output_matches_paddle(exe):
    prog = _load("mlp_train.pdesc")
    forward = pd.prune(prog, [META["fetch"]])
    assert [op.type for op in forward.global_block().ops] == [
        "mul", "elementwise_add", "relu", "mul", "elementwise_add", "softmax"]
    x = np.load(os.path.join(FIXTURES, "x.npy"))
    prob, = exe.run(forward, feed={"x": x}, fetch_list=[META["fetch"]],
                    scope=_scope_with_paddle_params())
    np.testing.assert_allclose(prob, np.load(os.path.join(FIXTURES, "prob.npy")), atol=1e-5)


def test_unpruned_training_program_names_the_missing_op(exe):
    prog = _load("mlp_train.pdesc")
    with pytest.raises(pd.ExecutionError, match="op 7 reduce_mean|softmax_with_cross_entropy"):
        exe.run(prog, feed={"x": np.load(os.path.join(FIXTURES, "x.npy"))},
                scope=_scope_with_paddle_params())


def test_inference_model_with_feed_and_fetch_ops_runs(exe):
    prog = _load("mlp_infer.pdmodel")
    types = [op.type for op in prog.global_block().ops]
    assert types[0] == "feed" and types[-1] == "fetch"
    x = np.load(os.path.join(FIXTURES, "x.npy"))
    scope = _scope_with_paddle_params()
    prob, = exe.run(prog, feed={"x": x}, fetch_list=[META["fetch"]], scope=scope)
    np.testing.assert_allclose(prob, np.load(os.path.join(FIXTURES, "prob.npy")), atol=1e-5)
    # the program's own fetch op filled the fetch list, as in Paddle
    np.testing.assert_allclose(scope.find_var("fetch").get()[0], prob)


def test_misc_ops_match_paddle(exe):
    """scale, reshape2, transpose2, concat, reduce_sum, matmul_v2 (with trans_x),
    elementwise_add/mul as Paddle wrote them, pruned away from its control flow."""
    prog = _load("ops_misc.pdesc")
    want = np.load(os.path.join(FIXTURES, "misc_out.npz"))
    names = [META["misc_names"][k] for k in ("y", "z", "t", "c", "s", "m", "m2", "e", "e2")]
    pruned = pd.prune(prog, names)
    assert "conditional_block" not in [op.type for op in pruned.global_block().ops]
    got = exe.run(pruned, feed={"x": np.load(os.path.join(FIXTURES, "x.npy"))},
                  fetch_list=names, scope=pd.Scope())
    for name, value in zip(names, got):
        np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-5, err_msg=name)
