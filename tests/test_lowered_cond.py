"""Paddle's ``cond`` in a compiled block, its condition flipping from run to run.

``cond(pred, true_fn, false_fn)`` is two scalar ``conditional_block``s (the second on
``logical_not(pred)``) whose outputs ``select_input`` merges by ``cast(pred)``. A learning
run takes one branch; the first run that takes the other declines (the compiled code has
nothing learned for it) and the block is learned again, remembering the first branch.
From then on both branches are compiled: the one not taken gives placeholders that
select_input never picks, and its gradient op zeros, so every run is one call. Each test
runs the program plainly and compiled from one start, comparing every fetched value.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import assert_compiled, build_program, run_programs

RNG = np.random.default_rng(5)


def _model(train: bool):
    def build():
        x = pd.data("x", [None, 3])
        h = pd.layer.fc(x, 4)
        pred = pd.mean(x) > 0.0
        out = pd.cond(pred, lambda: pd.layers.relu(h) * 2.0, lambda: pd.tanh(h) - 1.0)
        loss = pd.mean(out * out)
        if train:
            pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out] + pd.default_main_program().global_block().all_parameters()
    return build


def _feeds(signs):
    return [{"x": (np.abs(RNG.standard_normal((4, 3))) * s).astype(np.float32)}
            for s in signs]


@pytest.mark.parametrize("train", [False, True], ids=["inference", "training"])
def test_a_cond_whose_condition_flips_runs_compiled_both_ways(train):
    signs = [1, 1, -1, -1, 1, -1, 1, 1, -1]
    main, startup, fetch = build_program(_model(train))
    compiled = run_programs(main, startup, fetch, _feeds(signs))
    assert compiled.declined == 1           # the first run the other way: learned again
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "taken" in text and "picked((" in text
    assert_compiled(main, compiled, "conditional_block", "select_input")
    if train:
        assert_compiled(main, compiled, "conditional_block_grad", "select_output")


def test_a_cond_learned_one_way_declines_the_other_once():
    """Before the first flip, the branch never taken is a stand-in that declines if it
    must run: that run is the interpreter's, and the next learns both ways."""
    main, startup, fetch = build_program(_model(train=True))
    compiled = run_programs(main, startup, fetch, _feeds([1, 1, 1]))
    assert compiled.declined == 0
    assert "its branch was not learned yet" in compiled.source()


def test_switch_case_runs_compiled_with_the_interpreters_numbers():
    """switch_case is nested conds (case on branch_index == key): every branch taken in
    turn, the same numbers, no failed compiled run."""
    def build():
        x = pd.data("x", [None, 3])
        index = pd.data("index", [1], "int64")
        h = pd.layer.fc(x, 3)
        out = pd.switch_case(index, {0: lambda: h * 2.0, 1: lambda: pd.tanh(h),
                                     2: lambda: h - 1.0})
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    feeds = [{"x": RNG.standard_normal((4, 3)).astype(np.float32),
              "index": np.array([k], np.int64)} for k in (0, 1, 2, 0, 2, 1, 1, 0)]
    main, startup, fetch = build_program(build)
    run_programs(main, startup, fetch, feeds)
