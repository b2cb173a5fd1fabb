"""The fast path (core/fast_path.py) computes exactly what the interpreter does.

``Executor.run`` binds a block's names once per block run and reuses output buffers;
``Executor.steps`` (the debugger's path) looks every name up as it goes. Every op-table
program and every model the course trains is run both ways here and must give the same
bits: fetched values and, for training, every parameter after several steps (which also
exercises the buffers a later run reuses)."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import fast_path

import models
from benchmarks_path import drained, ifelse_bench, mlp_bench, rnn_bench
from test_ops_table import CASES, PLACES, as_list, expected_outputs, run_case


def _run_twice(exe, prog, feed, fetch_names):
    """The fast path, twice: the second run meets the first run's buffers."""
    first = exe.run(prog, feed=feed, fetch_list=fetch_names, scope=pd.Scope())
    second = exe.run(prog, feed=feed, fetch_list=fetch_names, scope=pd.Scope())
    return [first, second]


def _same(a, b, where, rewritten):
    if rewritten:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=where)
    else:
        _same_bits(a, b, where)


def _same_bits(a, b, where):
    assert a.shape == b.shape and a.dtype == b.dtype, where
    assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where


# feed and fetch rows run through a variable in the scope, not a program fed and fetched
# (test_ops_table.run_feed_case): the fast path is what their own run already takes
FED_ROWS = [c for c in CASES if c.op not in ("feed", "fetch")]


@pytest.mark.parametrize("case", FED_ROWS, ids=[f"{c.op}-{c.id}" for c in FED_ROWS])
def test_op_table_rows_run_compiled_as_stepped(case):
    expected = expected_outputs(case)
    stepped, _ = run_case(case, expected, PLACES["cpu"])
    runs = []

    def compiled(*args):
        runs.extend(_run_twice(*args))
        return runs[-1]
    compiled_values, _ = run_case(case, expected, PLACES["cpu"], run=compiled)
    # random ops without a seed draw new numbers each run: shapes and dtypes only
    same_numbers = case.compare_values or case.attrs.get("seed", 0) != 0
    for slot in expected:
        for i, want in enumerate(stepped[slot]):
            where = f"{case.op} output {slot}[{i}]"
            for k, values in enumerate(runs):
                got = values[_index(expected, slot, i)]
                if same_numbers:
                    _same_bits(got, want, f"{where}, compiled run {k + 1}")
                else:
                    assert (got.shape, got.dtype) == (want.shape, want.dtype), where


def _index(expected, slot, i):
    """Position of output ``slot``'s i-th array in the fetch list run_case builds."""
    slots = list(expected)
    return sum(len(as_list(expected[s])) for s in slots[:slots.index(slot)]) + i


# --- the course's models, trained both ways -----------------------------------------------
def _digits():
    from paddle_nb.examples import digits   # noqa: PLC0415
    m = digits.build()
    x, y, _, _ = digits.load_data()
    return m.main, m.startup, m.loss, {"x": x[:32], "label": y[:32]}


def _mlp():
    main, startup, loss = mlp_bench.build(in_dim=20, hidden=16, classes=5)
    return main, startup, loss, mlp_bench.batch(batch=8, in_dim=20, classes=5)


def _ifelse():
    main, startup, loss = ifelse_bench.build(in_dim=6, classes=3)
    return main, startup, loss, ifelse_bench.batch(batch=10, in_dim=6, classes=3)


def _rnn():
    main, startup, loss = rnn_bench.build(t=5, b=3, d=4, h=6)
    return main, startup, loss, rnn_bench.sequence(t=5, b=3, d=4)


def _rnn_inference():
    main, startup, hs = models.tanh_rnn(4, 2, 3, 5)
    with pd.program_guard(main, startup):
        loss = pd.mean(hs)
    return main, startup, loss, {"x": np.random.default_rng(3).standard_normal(
        (4, 2, 3)).astype(np.float32)}


def _while():
    from test_while import _while_loop_program   # noqa: PLC0415
    main, startup, h, loss = _while_loop_program()
    with pd.program_guard(main, startup):
        pd.optimizer.SGD(0.1).minimize(loss)
    return main, startup, loss, {"x": np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.25]])}


def _while_in_cond():
    from test_nested_control_flow import _while_in_ifelse   # noqa: PLC0415
    main, startup, out, loss = _while_in_ifelse()
    with pd.program_guard(main, startup):
        pd.optimizer.Adam(0.05).minimize(loss)
    return main, startup, loss, {"x": np.array([[0.5, 0.2], [0.1, 0.4]])}


MODELS = {"digits": _digits, "mlp": _mlp, "ifelse": _ifelse, "rnn": _rnn,
          "rnn_inference": _rnn_inference, "while": _while, "while_in_cond": _while_in_cond}


# the models with an elementwise_add then an activation (or a recurrent projection)
FUSED_BY_PASSES = {"digits", "mlp", "rnn", "rnn_inference", "while"}


@pytest.mark.parametrize("name", list(MODELS))
def test_models_train_the_same_bits_both_ways(name):
    main, startup, loss, feed = MODELS[name]()
    exe = pd.Executor()
    fast, slow = pd.Scope(), pd.Scope()
    exe.run(startup, scope=fast)
    exe.run(startup, scope=slow)
    # the fast path runs a rewritten copy of most of them (fused elementwise ops,
    # fc, the RNN's hoisted projection); only the hoisting may change float rounding (one
    # product over all steps), fusion runs the same kernels and gives the same bits
    fused = pd.passes.for_fast_path(main, frozenset(feed) | {loss.name})
    assert (fused is not None) == (name in FUSED_BY_PASSES)
    rewritten = name.startswith("rnn")
    for step in range(4):
        got, = exe.run(main, feed=feed, fetch_list=[loss], scope=fast)
        want, = drained(exe, main, feed=feed, fetch_list=[loss], scope=slow)
        _same(got, want, f"{name}: loss at step {step}", rewritten)
    params = [v.name for v in main.global_block().all_parameters()]
    assert params
    for p in params:
        _same(fast.find_var(p).get(), slow.find_var(p).get(), f"{name}: {p}", rewritten)
    assert fast.kids == [] and slow.kids == []


# --- buffers: reused only where nobody holds them -----------------------------------------
def _relu_program():
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [4, 64])
        out = pd.relu(pd.relu(x) * 2.0)
    return main, out


@pytest.mark.parametrize("rows", [4, 256])
def test_a_fetched_array_is_never_written_by_a_later_run(rows):
    """4 rows: fetch copies; 256 rows (64 kB): the run scope's array itself is handed
    over, so the op's buffer is then the user's and the next run must make another."""
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [rows, 64])
        out = pd.relu(pd.relu(x) * 2.0)
    exe, scope = pd.Executor(), pd.Scope()
    ones = np.ones((rows, 64), np.float32)
    kept = [exe.run(main, feed={"x": ones * k}, fetch_list=[out], scope=scope)[0]
            for k in range(1, 5)]
    for k, value in enumerate(kept, start=1):
        np.testing.assert_array_equal(value, np.full((rows, 64), 2.0 * k, np.float32))


def test_buffers_are_reused_when_nobody_holds_them():
    """A large intermediate (not fetched) is made once and written again by later runs."""
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [256, 256])
        mid = pd.relu(x)
        out = pd.mean(mid)
    exe, scope = pd.Executor(), pd.Scope()
    feed = {"x": np.ones((256, 256), np.float32)}
    relu = exe.prepare(main).ops[0]
    assert relu.op.type == "relu"
    exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    made = [id(b) for b in relu.buffers.d["Out"] if b is not None]
    for _ in range(3):
        exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    assert made and all(id(b) in made for b in relu.buffers.d["Out"] if b is not None)
    # stepping never takes a buffer: what a learner sees in a step stays as it was
    gen = exe.steps(main, feed=feed, fetch_list=[mid], scope=scope)
    step = next(gen)
    seen = step.scope.find_var(mid.name).get()
    assert id(seen) not in made
    gen.close()


def test_parameters_take_turns_between_two_buffers():
    """SGD writes the new value into the array the parameter held two steps ago (after
    the run that replaced it ended), so a training loop allocates no parameter arrays;
    an array the user kept is never one of them."""
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    name = main.global_block().all_parameters()[0].name
    ids = set()
    for _ in range(6):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        ids.add(id(scope.find_var(name).get()))
    assert len(ids) <= 3              # the startup's array, then two in turn
    held = scope.find_var(name).get()
    copy = held.copy()
    for _ in range(3):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    np.testing.assert_array_equal(held, copy)


def test_a_failed_run_leaves_parameters_as_they_were():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    before = {p.name: scope.find_var(p.name).get().copy()
              for p in main.global_block().all_parameters()}
    bad = dict(feed, label=np.full_like(feed["label"], 99))     # a class out of range
    with pytest.raises(pd.PaddleNBError):
        exe.run(main, feed=bad, fetch_list=[loss], scope=scope)
    for name, value in before.items():
        np.testing.assert_array_equal(scope.find_var(name).get(), value)


def test_the_guard_still_refuses_a_new_shape_after_skipping():
    """Skipping the per-op allocation guard is keyed on the block's entry shapes: a feed
    of a new shape runs the guard again (and an error names the op)."""
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [-1, 3])
        y = pd.data("y", [-1, 3])
        out = pd.mean(x + y)
    exe, scope = pd.Executor(), pd.Scope()
    a = np.ones((4, 3), np.float32)
    for _ in range(2):
        exe.run(main, feed={"x": a, "y": a}, fetch_list=[out], scope=scope)
    assert exe.prepare(main).passed_entry is not None
    with pytest.raises(pd.PaddleNBError, match="elementwise_add"):
        exe.run(main, feed={"x": a, "y": np.ones((5, 3), np.float32)}, fetch_list=[out],
                scope=scope)


def test_bind_slots_numbers_names_and_finds_block_entries():
    main, _ = _relu_program()
    prepared = pd.Executor().prepare(main)
    names, entry = fast_path.bind_slots(prepared.ops)
    assert names == prepared.names
    assert [names[i] for i in entry] == ["x"]        # the only value read before written
    for pop in prepared.ops:
        for slot, ix in pop.in_ix.items():
            assert [names[i] for i in ix] == pop.inputs[slot]


def test_an_error_in_a_rewritten_program_names_the_op_the_user_wrote():
    """The fast path runs the RNN with its projection hoisted (the step block has one
    op less); a run that fails there is undone and the program as written runs again, so
    the error names block 1's op as the user's program numbers it."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [4, -1, 3])
        h0 = pd.layers.fill_constant([2, 5], "float32", 0.0)      # batch 2, fixed
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = pd.tanh(pd.layer.fc(x_t, 5, bias_attr=False) + pd.layer.fc(h_pre, 5))
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        loss = pd.mean(rnn())
    fused = pd.passes.for_fast_path(main, frozenset({"x", loss.name}))
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    good = np.ones((4, 2, 3), np.float32)
    exe.run(main, feed={"x": good}, fetch_list=[loss], scope=scope)

    add = next(i for i, op in enumerate(main.block(1).ops)      # h's sum, then tanh
               if op.type == "elementwise_add" and op.output("Out")[0].startswith(
                   "elementwise_add"))
    fused_at = [op.type for op in fused.block(1).ops].index("fused_elemwise_add_activation")
    assert fused_at < add        # the hoisted mul (and fc_fuse) shortened the step
    with pytest.raises(pd.ExecutionError) as err:
        exe.run(main, feed={"x": np.ones((4, 3, 3), np.float32)}, fetch_list=[loss],
                scope=scope)
    assert f"(block 1) > op {add} elementwise_add" in str(err.value)
    assert scope.kids == []
