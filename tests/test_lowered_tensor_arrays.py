"""Tensor arrays in a compiled block: paddle.nn.RNN's while loop, compiled whole.

In static mode ``nn.RNN(cell)`` is a ``while`` whose body slices the input at the step
counter (``x[:, t]``: slice's bounds given by tensors), reads the state from a tensor array
and writes the step's output and the new state into two more; its gradient is a
``while_grad`` reading and writing gradient arrays. Compiled, an array is the tuple of
kernels/cpu/tensor_array.py, and the while and its gradient become two loops in the
block's one segment. Each test runs the program plainly and as a ``pd.CompiledProgram``
from one start and compares every fetched value.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from models import while_running_sum
from test_lowered_forms import (assert_compiled, assert_near, assert_refused_and_kept,
                                build_program, compiled_after_learning, reorders_sums,
                                run_programs)
from test_nn_rnn import FIXTURE_NAMES, _feed, _fixture, _scope

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("name", list(FIXTURE_NAMES))
def test_paddles_nn_rnn_programs_train_compiled_in_one_segment(name):
    """Paddle 2.6.2's nn.RNN training programs (tests/test_nn_rnn.py): four SGD steps
    compiled and plain from Paddle's parameters give the same losses, gradients and
    parameters, and the while and while_grad ran as loops inside a compiled segment."""
    program, startup, saved = _fixture(name)
    exe = pd.Executor()
    plain, compiled_scope = _scope(startup, saved), _scope(startup, saved)
    params = [str(p) for p in saved["params"]]
    fetch = [str(saved["loss_name"])] + [p + "@GRAD" for p in params] + params
    compiled = pd.CompiledProgram(program)
    exact = not reorders_sums(program)
    for step in range(4):
        feed = _feed(saved, step % 2)
        want = exe.run(program, feed=feed, fetch_list=fetch, scope=plain)
        got = exe.run(compiled, feed=feed, fetch_list=fetch, scope=compiled_scope)
        for n, g, w in zip(fetch, got, want):
            if exact:
                assert np.array_equal(g, w), f"{name}: {n}, step {step}"
            else:
                assert_near(g, w, f"{name}: {n}, step {step}")
    assert compiled.failures == [] and compiled.declined == 0
    segments = compiled.segments()
    loops = [i for i, op in enumerate(program.global_block().ops)
             if op.type in ("while", "while_grad")]
    assert len(loops) == 2 and all(i in segments for i in loops), compiled.source()
    assert segments[loops[0]] == segments[loops[1]]
    text = "".join(compiled.source(b) for b in range(len(program.blocks)))
    assert "written(" in text and "entry_or_zeros(" in text and "sliced_by(" in text


def test_a_while_over_tensor_arrays_runs_as_one_loop():
    """A running sum over a sequence read from one array into another, stacked at the
    end (inference: no gradient), is one compiled segment: the arrays start empty in it
    and never leave it as lists."""
    def build():
        _, _, _, stacked = while_running_sum(5, 3)
        return [stacked]
    feeds = [{"x": RNG.standard_normal((5, 3)).astype(np.float32)} for _ in range(3)]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, feeds)
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "fresh(np.empty((0, 0, ), float32))" in text and "stacked_in_python(" in text
    assert_compiled(main, compiled, "write_to_array", "while", "tensor_array_to_tensor")


def _read_at_a_fed_position():
    """Two rows written into an array; the row at the fed position I read, through an fc
    trained by SGD."""
    x = pd.data("x", [2, 3])
    at = pd.data("at", [1], "int64")
    rows = pd.layers.split(x, 2, dim=0)
    array = pd.create_array("float32")
    for k in range(2):
        pd.array_write(rows[k], pd.layers.fill_constant([1], "int64", k), array)
    picked = pd.array_read(array, at)
    loss = pd.mean(pd.layer.fc(picked, 2))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


def test_a_position_read_from_a_fed_tensor_compiles():
    feeds = [{"x": RNG.standard_normal((2, 3)).astype(np.float32),
              "at": np.array([k % 2], np.int64)} for k in range(4)]
    main, startup, fetch = build_program(_read_at_a_fed_position)
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "write_to_array", "read_from_array", "sgd")


@pytest.mark.parametrize("position, error", [
    (5, r"read_from_array: slot I: position 5 at I\[0\] is out of range; expected 0 <= I "
        r"< 2 \(position 2 and later are past the end of an array of length 2\)"),
    (-1, r"read_from_array: slot I: position -1 at I\[0\] is out of range"),
])
def test_reading_past_an_arrays_end_in_a_compiled_run_gives_the_interpreters_error(
        position, error):
    """The compiled read checks the position before reading; the interpreter's rerun
    names the op, and no parameter moved."""
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    main, exe, scope, compiled, fetch = compiled_after_learning(
        _read_at_a_fed_position, {"x": x, "at": np.array([1], np.int64)})
    assert compiled.segments()
    assert_refused_and_kept(exe, compiled, main, scope,
                            {"x": x, "at": np.array([position], np.int64)}, fetch,
                            pd.ExecutionError, error)
    assert compiled.failures == []


def test_an_array_whose_entries_change_shape_hands_the_run_to_the_interpreter():
    """A compiled array holds one entry shape; entries of two shapes (the interpreter's
    lists hold any: here x's first ``end`` columns, then all of x) make the compiled run
    decline, and the interpreter runs it, the same concatenation, with no failure of the
    compiler."""
    def build():
        x = pd.data("x", [2, 3])
        end = pd.data("end", [1], "int64")
        array = pd.create_array("float32")
        part = pd.op.slice(Input=x, EndsTensorList=[end], axes=[1], starts=[0], ends=[-1],
                           infer_flags=[-1])
        pd.array_write(part, pd.layers.fill_constant([1], "int64", 0), array)
        pd.array_write(x, pd.layers.fill_constant([1], "int64", 1), array)
        joined, _ = pd.tensor_array_to_tensor(array, axis=1)
        return [joined]

    def feed(end):
        return {"x": RNG.standard_normal((2, 3)).astype(np.float32),
                "end": np.array([end], np.int64)}
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [feed(3), feed(3), feed(2), feed(3)])
    assert compiled.declined == 1
    assert_compiled(main, compiled, "write_to_array", "tensor_array_to_tensor")


def _slice_by_fed_bounds():
    """Columns [start, end) of x, the bounds fed as tensors (slice's StartsTensorList and
    EndsTensorList, as Paddle saves x[:, s:e] with tensor s and e), weighted by an fc of
    the row."""
    x = pd.data("x", [None, 5])
    x.stop_gradient = False
    start, end = pd.data("start", [1], "int64"), pd.data("end", [1], "int64")
    part = pd.op.slice(Input=x, StartsTensorList=[start], EndsTensorList=[end], axes=[1],
                       starts=[-1], ends=[-1], infer_flags=[-1])
    loss = pd.mean(part * pd.layer.fc(x, 1))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


def test_a_slice_whose_bounds_tensors_give_compiles_and_checks_them():
    """The bounds are read when the block runs (one compiled segment for every bound);
    an end before the start raises there, and the interpreter's rerun says so."""
    def feed(s, e, n=4):
        return {"x": RNG.standard_normal((n, 5)).astype(np.float32),
                "start": np.array([s], np.int64), "end": np.array([e], np.int64)}
    main, startup, fetch = build_program(_slice_by_fed_bounds)
    compiled = run_programs(main, startup, fetch, [feed(0, 2), feed(1, 3), feed(3, 5),
                                                  feed(-2, 5, n=3)])
    assert_compiled(main, compiled, "slice", "slice_grad", "sgd")
    assert "sliced_by(" in compiled.source()
    main, exe, scope, compiled, fetch = compiled_after_learning(_slice_by_fed_bounds,
                                                                feed(0, 2))
    assert_refused_and_kept(exe, compiled, main, scope, feed(3, 1), fetch,
                            pd.ExecutionError, "the end comes before the start")
