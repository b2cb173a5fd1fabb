"""The block compiler (paddle_nb/compiler/) computes what the interpreter computes.

``pd.CompiledProgram(program)`` runs runs of ops as generated numba functions. Every
op-table row whose op has a lowered form, and every model the course trains, runs both
ways here: the same numbers (bit for bit where the compiled code adds in the interpreter's
order, else within 1e-6), no compiled run that failed, and the ops really in a segment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.compiler.compiled_program import MAX_DECLINES
from paddle_nb.core import registry
from paddle_nb.ops import while_op

from benchmarks_path import ifelse_bench, mlp_bench, rnn_bench
from test_fast_path import MODELS
from test_lowered_forms import REORDERED_SUMS, assert_near, build_program, run_programs
from test_ops_table import CASES, PLACES, expected_outputs, run_case

# why a row of an op with a lowered form may still run in the interpreter: its ufunc
# would cast (an int32 X of a float kernel), its operands broadcast both ways, a tensor
# gives an attribute, the form has none for these dtypes (integer division, int scale),
# a pooling large enough for the interpreter's parallel loop, an output its kernel leaves
# unwritten (rmsprop's MeanGradOut without MeanGrad)
KNOWN_REASONS = ("its kernel would cast", "its operands broadcast",
                 "an attribute given by a tensor", "no lowered form for these dtypes",
                 "large: the interpreter splits it", "MeanGradOut (")


def _lowered(op_type: str) -> bool:
    return registry.lookup(op_type).lowered is not None


LOWERED_ROWS = [c for c in CASES if c.op not in ("feed", "fetch") and _lowered(c.op)
                and c.compare_values and not c.attrs.get("seed", 0)]


def _close(got, want, where, exact):
    assert got.shape == want.shape and got.dtype == want.dtype, where
    if exact:
        assert np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"), where
    else:
        assert_near(got, want, where)


@pytest.mark.parametrize("case", LOWERED_ROWS, ids=[f"{c.op}-{c.id}" for c in LOWERED_ROWS])
def test_op_table_rows_run_compiled_as_interpreted(case):
    expected = expected_outputs(case)
    interpreted, _ = run_case(case, expected, PLACES["cpu"])
    made = {}

    def compiled_runs(exe, prog, feed, fetch_names):
        made["c"] = compiled = pd.CompiledProgram(prog)
        scope = pd.Scope()
        runs = [exe.run(compiled, feed=feed, fetch_list=fetch_names, scope=scope)
                for _ in range(3)]           # learned, then compiled twice
        made["runs"] = runs
        return runs[-1]
    run_case(case, expected, PLACES["cpu"], run=compiled_runs)
    compiled = made["c"]
    assert compiled.failures == []
    if not compiled.segments():         # the op ran in the interpreter: say why it may
        reason = compiled.source().split("interpreted (")[-1]
        assert reason.startswith(KNOWN_REASONS), compiled.source()
    exact = case.op not in REORDERED_SUMS
    fetched = [a for slot in expected for a in interpreted[slot]]
    for k, values in enumerate(made["runs"]):
        for i, want in enumerate(fetched):
            _close(values[i], want, f"{case.op} output {i}, compiled run {k}", exact)


def _trains_the_same(main, startup, loss, feed, steps: int, where: str):
    """``steps`` training steps compiled and plain from one start: the same losses and
    parameters (1e-6), no failed compiled run, no scope left behind. The CompiledProgram."""
    exe = pd.Executor()
    compiled_scope, plain_scope = pd.Scope(), pd.Scope()
    exe.run(startup, scope=compiled_scope)
    exe.run(startup, scope=plain_scope)
    compiled = pd.CompiledProgram(main)
    for step in range(steps):
        got, = exe.run(compiled, feed=feed, fetch_list=[loss], scope=compiled_scope)
        want, = exe.run(main, feed=feed, fetch_list=[loss], scope=plain_scope)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{where} step {step}")
    for p in main.global_block().all_parameters():
        assert_near(compiled_scope.find_var(p.name).get(),
                    plain_scope.find_var(p.name).get(), f"{where}: {p.name}")
    assert compiled.failures == []
    assert compiled_scope.kids == []
    return compiled


@pytest.mark.parametrize("name", list(MODELS))
def test_models_train_the_same_compiled(name):
    _trains_the_same(*MODELS[name](), steps=4, where=name)


def _mlp(batch=8):
    main, startup, loss = mlp_bench.build(in_dim=20, hidden=16, classes=5)
    return main, startup, loss, mlp_bench.batch(batch=batch, in_dim=20, classes=5)


def test_source_shows_each_op_with_its_line_and_the_fused_loop():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    assert "not compiled yet" in compiled.source()
    exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
    text = compiled.source()
    assert "def block0_segment_0(" in text
    assert "# op 1 elementwise_add: X=fc_0.tmp_0, Y=b1 -> Out=fc_0.tmp_1    [mlp.py:" in text
    assert "# ops 1-2: one loop" in text              # the bias add and relu fused
    assert "for i in range(" in text
    segments = compiled.segments()
    assert segments[1] == segments[2]
    for index, op in enumerate(main.global_block().ops):
        assert (index in segments) == (f"# op {index} {op.type}: interpreted" not in text)


@pytest.mark.parametrize("shift, scale, reads", [
    # an [N, C, H, W] image plus a broadcast operand, times another, in one loop; how the
    # loop reads each operand (no integer division per element where a row/column does)
    (((5,), -1), ((3,), 1), ("[col]", "(row // (shape0[2])) % ")),   # bias W, channel C
    (((3,), 1), ((3, 4), 1), ("[row % ", "[row % ")),               # C, then C x H
    (((4, 5), 2), ((5,), -1), ("[col]", "[col % ")),                # H x W, then W
    (((4,), 2), ((3, 4, 5), 1), ("[row % ", "[i % ")),              # H, then C x H x W
])
def test_a_fused_loop_reads_broadcast_operands_by_row_and_column(shift, scale, reads):
    """A bias over the last dims is read at the loop's column, a channel scale once per
    row; an operand spanning both at ``i % n``. The numbers are the interpreter's, bit for
    bit, for two batch sizes."""
    def build():
        x = pd.data("x", [None, 3, 4, 5])
        b = pd.data("b", list(shift[0]))
        s = pd.data("s", list(scale[0]))
        y = pd.layers.elementwise_add(x, b, axis=shift[1])
        return [pd.layers.elementwise_mul(pd.layers.relu(y), s, axis=scale[1])]
    rng = np.random.default_rng(3)

    def feed(n):
        return {"x": rng.standard_normal((n, 3, 4, 5)).astype(np.float32),
                "b": rng.standard_normal(shift[0]).astype(np.float32),
                "s": rng.standard_normal(scale[0]).astype(np.float32)}
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [feed(2), feed(2), feed(3)])
    text = compiled.source()
    assert "# ops 0-2: one loop" in text and "for row in range(rows0):" in text
    for read in reads:
        assert read in text, text


def test_another_batch_size_reuses_the_machine_code():
    main, startup, loss, feed = _mlp(batch=8)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
    before = compiled.source()
    first = {seg.number: seg.fn for seg in compiled._latest[0].segments}
    other = mlp_bench.batch(batch=13, in_dim=20, classes=5)
    for _ in range(2):
        exe.run(compiled, feed=other, fetch_list=[loss], scope=scope)
    assert compiled.source() == before
    for seg in compiled._latest[0].segments:
        assert seg.fn is first[seg.number]
        assert len(seg.fn.signatures) == 1          # not compiled again for 13 rows


def test_a_compiled_run_that_fails_is_undone_and_run_again_interpreted(monkeypatch):
    main, startup, loss, feed = _mlp()
    exe = pd.Executor()
    compiled_scope, plain_scope = pd.Scope(), pd.Scope()
    exe.run(startup, scope=compiled_scope)
    exe.run(startup, scope=plain_scope)
    compiled = pd.CompiledProgram(main)
    exe.run(compiled, feed=feed, fetch_list=[loss], scope=compiled_scope)
    exe.run(main, feed=feed, fetch_list=[loss], scope=plain_scope)
    segment = compiled._latest[0].segments[-1]

    def broken(*args):
        raise RuntimeError("a compiler bug")
    monkeypatch.setattr(segment, "fn", broken)
    got, = exe.run(compiled, feed=feed, fetch_list=[loss], scope=compiled_scope)
    want, = exe.run(main, feed=feed, fetch_list=[loss], scope=plain_scope)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(compiled.failures) == 1 and "a compiler bug" in compiled.failures[0]
    assert "compiled run failed" in compiled.source()
    for p in main.global_block().all_parameters():
        assert_near(compiled_scope.find_var(p.name).get(),
                    plain_scope.find_var(p.name).get(), p.name)


def test_a_users_error_is_the_interpreters_naming_the_op():
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [None, 3])
        y = pd.data("y", [None])
        out = pd.relu(pd.layers.elementwise_add(x, y))
    compiled = pd.CompiledProgram(main)
    exe = pd.Executor()
    feed = {"x": np.ones((2, 3), np.float32), "y": np.ones(3, np.float32)}
    for _ in range(2):
        exe.run(compiled, feed=feed, fetch_list=[out])
    with pytest.raises(pd.PaddleNBError, match="elementwise_add") as raised:
        exe.run(compiled, feed={"x": feed["x"], "y": np.ones(4, np.float32)}, fetch_list=[out])
    assert "compiled segment" not in str(raised.value)


def test_stepping_a_compiled_program_steps_the_program():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    steps = list(exe.steps(pd.CompiledProgram(main), feed=feed, fetch_list=[loss],
                           scope=scope))
    assert [s.op.type for s in steps] == [op.type for op in main.global_block().ops]


def test_build_strategy_turns_parts_off_and_refuses_fields_it_lacks():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    off = pd.CompiledProgram(main, build_strategy=pd.BuildStrategy(compile_blocks=False))
    exe.run(off, feed=feed, fetch_list=[loss], scope=scope)
    assert "runs as written" in off.source()
    unfused = pd.CompiledProgram(main, pd.BuildStrategy(fuse_elementwise=False))
    exe.run(unfused, feed=feed, fetch_list=[loss], scope=scope)
    assert "one loop" not in unfused.source()
    strategy = pd.BuildStrategy()
    with pytest.raises(AttributeError, match="fuse_elementwise"):
        strategy.fuse_elementwis = False
    with pytest.raises(AttributeError, match="no field 'enable_inplace'"):
        strategy.enable_inplace = True
    with pytest.raises(pd.ExecutionError, match="needs a Program"):
        pd.CompiledProgram("main")


_SECOND_PROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import paddle_nb as pd
from benchmarks import mlp
main, startup, loss = mlp.build(in_dim=20, hidden=16, classes=5)
feed = mlp.batch(batch=8, in_dim=20, classes=5)
exe, scope = pd.Executor(), pd.Scope()
exe.run(startup, scope=scope)
compiled = pd.CompiledProgram(main)
for _ in range(2):
    exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
segments = compiled._latest[0].segments
print(json.dumps({"hits": sum(sum(s.fn.stats.cache_hits.values()) for s in segments),
                  "misses": sum(sum(s.fn.stats.cache_misses.values()) for s in segments),
                  "segments": len(segments)}))
"""


def test_a_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, PADDLE_NB_CACHE_DIR=str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    counts = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _SECOND_PROCESS, root], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        counts.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = counts
    assert first["segments"] > 0 and first["misses"] == first["segments"]
    assert second["misses"] == 0 and second["hits"] == second["segments"]
    assert list((tmp_path / "segments").glob("segment_*.py"))


def test_most_rows_of_lowered_ops_run_compiled():
    """The op-table test above passes trivially for a row the compiler leaves to the
    interpreter: most rows must really be compiled."""
    compiled_rows = 0
    for case in LOWERED_ROWS:
        expected = expected_outputs(case)
        made = {}

        def runs(exe, prog, feed, fetch_names):
            made["c"] = compiled = pd.CompiledProgram(prog)
            return exe.run(compiled, feed=feed, fetch_list=fetch_names, scope=pd.Scope())
        run_case(case, expected, PLACES["cpu"], run=runs)
        compiled_rows += bool(made["c"].segments())
    assert compiled_rows >= 0.8 * len(LOWERED_ROWS), (compiled_rows, len(LOWERED_ROWS))


def test_an_rnn_and_its_gradient_compile_into_loops_in_one_segment():
    """The recurrent op and recurrent_grad as loops calling the step blocks' compiled
    functions: the whole training step is one segment, with the interpreter's numbers."""
    main, startup, loss = rnn_bench.build(t=5, b=3, d=4, h=6)
    feed = rnn_bench.sequence(t=5, b=3, d=4)
    compiled = _trains_the_same(main, startup, loss, feed, steps=3, where="rnn")
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "r1 = block1_segment_0(" in text and "block2_segment_0(" in text
    assert text.count("block1_segment_0(") == 1         # one call site: one inlined copy
    assert "for s1 in range(T1):" in text and "for s5 in range(T1):" in text
    off = _run_with(main, startup, loss, feed, compile_loops=False)
    assert "op 1 recurrent: interpreted" in off.source()
    assert "def block1_segment_0(" in off.source(1)      # its steps: one call each


def _run_with(main, startup, loss, feed, **strategy):
    """A CompiledProgram of ``main`` with these BuildStrategy fields, run twice."""
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main, pd.BuildStrategy(**strategy))
    for _ in range(2):
        exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
    return compiled


def _ifelse(batch=12):
    main, startup, loss = ifelse_bench.build(in_dim=6, classes=3)
    return main, startup, loss, ifelse_bench.batch(batch=batch, in_dim=6, classes=3)


def test_an_ifelse_and_its_gradient_compile_into_one_segment():
    """Each conditional_block an `if` calling its branch's compiled function, its gradient
    a call taking the branch's values from the first: the training step is one segment,
    with the interpreter's numbers."""
    main, startup, loss, feed = _ifelse()
    compiled = _trains_the_same(main, startup, loss, feed, steps=3, where="ifelse")
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "raise Declined(" in text and "c5 = block1_segment_0(" in text
    assert "q15 = block4_segment_0(" in text and "c5[0]" in text      # fc_0.tmp_0, kept
    assert "rows_merged(" in text                                     # merge_lod_tensor
    off = _run_with(main, startup, loss, feed, compile_branches=False)
    assert "op 5 conditional_block: interpreted (a conditional_block compiles" in off.source()
    assert "def block1_segment_0(" in off.source(1)     # its branch: one call


def test_a_branch_not_taken_hands_that_run_to_the_interpreter():
    """Learned with rows in both branches, a batch whose rows all go one way makes no value
    for the other branch: the compiled code declines (before storing anything) and the
    interpreter runs that run, which is no failure; after MAX_DECLINES such runs the
    branches stay interpreted, and source() says why."""
    main, startup, loss, feed = _ifelse()
    one_way = dict(feed, x=np.abs(feed["x"]))         # every row's sum > 0: all true
    exe = pd.Executor()
    compiled_scope, plain_scope = pd.Scope(), pd.Scope()
    exe.run(startup, scope=compiled_scope)
    exe.run(startup, scope=plain_scope)
    compiled = pd.CompiledProgram(main)

    def both(f):
        got, = exe.run(compiled, feed=f, fetch_list=[loss], scope=compiled_scope)
        want, = exe.run(main, feed=f, fetch_list=[loss], scope=plain_scope)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    for f in (feed, feed, one_way, feed):
        both(f)
    assert compiled.failures == [] and compiled.declined == 1
    assert len(compiled.segments()) == 20                  # still compiled whole
    for _ in range(MAX_DECLINES):
        both(one_way)
    both(feed)
    both(feed)
    assert compiled.failures == [] and compiled.declining_off
    assert "conditional_blocks and whiles are no longer compiled" in compiled.source()
    assert "op 5 conditional_block: interpreted" in compiled.source()
    for p in ifelse_bench.PARAMS:
        np.testing.assert_allclose(compiled_scope.find_var(p).get(),
                                   plain_scope.find_var(p).get(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["rnn", "ifelse"])
def test_inference_compiles_its_control_flow_from_the_blocks_own_plans(name):
    """program.clone(for_test=True) keeps no step or branch scopes: the recurrent op and
    the conditional_blocks compile from their blocks' own plans, with the same numbers."""
    if name == "rnn":
        main, startup, loss = rnn_bench.build(t=5, b=3, d=4, h=6)
        feed = rnn_bench.sequence(t=5, b=3, d=4)
    else:
        main, startup, loss, feed = _ifelse()
    test = main.clone(for_test=True)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(test)
    want, = exe.run(test, feed=feed, fetch_list=[loss], scope=scope)
    for _ in range(3):
        got, = exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
        np.testing.assert_array_equal(got, want)
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert ("for s1 in range(T1):" if name == "rnn" else "c5 = block1_segment_0(") in text
    assert compiled.failures == [] and scope.kids == []


def _counted_loop(train: bool = False):
    """h = x; for n (fed) steps: h = tanh(h @ W + x); the loop count is data. Trained:
    mean(h * h) by SGD (a while and its while_grad). (main, h or the loss, an executor, a
    scope the startup ran in, feed(steps))."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        n = pd.data("n", [1], "int64")
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.7, 4))
        i = pd.layers.fill_constant([1], "int64", 0)
        _, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                             lambda i, h: [pd.increment(i, in_place=False),
                                           pd.tanh(pd.matmul(h, W) + x)],
                             [i, pd.layers.scale(x, 1.0)])
        if train:
            h = pd.mean(h * h)
            pd.optimizer.SGD(0.1).minimize(h)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    xs = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.25]])
    return main, h, exe, scope, lambda steps: {"x": xs, "n": np.array([steps], np.int64)}


def test_a_while_that_keeps_no_step_scopes_compiles_into_a_loop():
    """The body one call per step of a loop in block 0's segment, the count read from the
    data each run: the interpreter's numbers for any count, no step at all included."""
    main, h, exe, scope, feed = _counted_loop()
    compiled = pd.CompiledProgram(main)
    for steps in (3, 3, 5, 1, 0, 7):
        got, = exe.run(compiled, feed=feed(steps), fetch_list=[h], scope=scope)
        want, = exe.run(main, feed=feed(steps), fetch_list=[h], scope=scope)
        np.testing.assert_array_equal(got, want)
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "    while True:" in text and "stop_if_interrupted()" in text
    assert compiled.failures == [] and compiled.declined == 0


def test_a_compiled_while_stops_at_the_step_limit_with_the_interpreters_error(monkeypatch):
    monkeypatch.setattr(while_op, "MAX_STEPS", 50)
    main, h, exe, scope, feed = _counted_loop()
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=feed(3), fetch_list=[h], scope=scope)
    with pytest.raises(pd.ExecutionError) as compiled_error:
        exe.run(compiled, feed=feed(10 ** 9), fetch_list=[h], scope=scope)
    with pytest.raises(pd.ExecutionError) as interpreted_error:
        exe.run(main, feed=feed(10 ** 9), fetch_list=[h], scope=scope)
    assert str(compiled_error.value) == str(interpreted_error.value)
    assert "while ran 50 steps and its condition" in str(compiled_error.value)
    assert "test_compiler.py" in str(compiled_error.value)          # the user's line
    assert compiled.failures == []                 # raised as it is: no rerun, no failure


@pytest.mark.parametrize("steps", [[3, 3, 5], [40, 17]])
def test_a_training_while_and_its_gradient_compile_into_two_loops(steps):
    """The forward loop stacks what each step's gradient reads (stacks that grow: 40
    steps pass the first 16), the backward loop walks the steps last first: the
    interpreter's losses and parameter, run after run."""
    main, loss, exe, compiled_scope, feed = _counted_loop(train=True)
    plain_scope = pd.Scope()                                   # the same start
    for name in compiled_scope.local_var_names():
        plain_scope.var(name).set(compiled_scope.find_var(name).get())
    compiled = pd.CompiledProgram(main)
    for n in [steps[0]] + steps:
        got, = exe.run(compiled, feed=feed(n), fetch_list=[loss], scope=compiled_scope)
        want, = exe.run(main, feed=feed(n), fetch_list=[loss], scope=plain_scope)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(compiled_scope.find_var("W").get(),
                                  plain_scope.find_var("W").get())
    text = compiled.source()
    assert "# block 0: 1 compiled segment(s), 0 op(s) interpreted" in text
    assert "grown(st3_0)" in text and "for s12 in range(n3):" in text
    assert compiled.failures == [] and compiled_scope.kids == []


def test_a_compiled_training_while_keeps_the_byte_limit_and_declines_no_step(monkeypatch):
    """Past MAX_KEPT_BYTES: the interpreter's error, word for word (the bytes counted as
    a kept step scope holds them). A loop that runs no step has nothing for its gradient
    to walk: the interpreter runs that run, which is no failure."""
    main, loss, exe, scope, feed = _counted_loop(train=True)
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=feed(3), fetch_list=[loss], scope=scope)
    exe.run(compiled, feed=feed(0), fetch_list=[loss], scope=scope)
    assert compiled.declined == 1 and compiled.failures == []
    monkeypatch.setattr(while_op, "MAX_KEPT_BYTES", 2000)
    compiled = pd.CompiledProgram(main)      # compiled anew, with this limit
    for _ in range(2):
        exe.run(compiled, feed=feed(3), fetch_list=[loss], scope=scope)
    errors = []
    for program in (compiled, main):
        with pytest.raises(pd.ExecutionError) as raised:
            exe.run(program, feed=feed(50), fetch_list=[loss], scope=scope)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "past the limit of" in errors[0]
    assert compiled.failures == []


def test_jupyters_interrupt_stops_a_compiled_loop_within_a_second(monkeypatch):
    """SIGINT (Kernel > Interrupt) while a compiled while spins: a KeyboardInterrupt that
    says where, soon, and the run undone (the parameter as it was)."""
    monkeypatch.setattr(while_op, "MAX_STEPS", 10 ** 12)
    main, h, exe, scope, feed = _counted_loop()
    compiled = pd.CompiledProgram(main)
    for _ in range(2):
        exe.run(compiled, feed=feed(3), fetch_list=[h], scope=scope)
    before = scope.find_var("W").get().copy()
    subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -INT {os.getpid()}"])
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt) as stopped:
        exe.run(compiled, feed=feed(10 ** 11), fetch_list=[h], scope=scope)
    assert time.perf_counter() - start < 1.5
    assert "interrupted in block 0 > compiled segment 0" in "\n".join(stopped.value.__notes__)
    np.testing.assert_array_equal(scope.find_var("W").get(), before)
    assert compiled.failures == []


def test_on_cuda_the_blocks_run_interpreted_and_source_says_so():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(pd.CUDAPlace(0)), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    got, = exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
    assert np.isfinite(got)
    assert "CUDAPlace" in compiled.source() and compiled.segments() == {}
