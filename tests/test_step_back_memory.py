"""The step-back history's bound bounds memory (docs/robustness.md): what the timeline
accounts for (``history_bytes_held``) is what it keeps alive, and what it drops is freed.

A While whose body makes a 1 MiB temporary in each step's scope, stepped 1,300 times in
the Debugger with history_bytes=16 MiB, keeps the process memory flat once the history is
full (it grew by a MiB per loop step when the timeline kept each dead step scope's last
value). The RSS check runs in a subprocess so that other tests' memory does not count."""
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np

import paddle_nb as pd
from paddle_nb.interactive.debugger import Debugger

SIDE = 512                       # the loop's tensor: 512 x 512 float32, 1 MiB


def _loop(steps: int):
    """h = 0; while i < steps: h = h + x; i += 1 (inference: no backward, so the while
    keeps no step scopes). Each loop step is 4 debugger steps: the add (its output a 1 MiB
    temporary in the step's scope), the assign to h, increment, less_than."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [SIDE, SIDE], "float32")
        i = pd.layers.fill_constant([1], "int64", 0)
        n = pd.layers.fill_constant([1], "int64", steps)
        h = pd.layers.fill_constant([SIDE, SIDE], "float32", 0.0)
        cond = pd.layers.less_than(i, n)
        w = pd.While(cond)
        with w.block():
            pd.layers.assign(h + x, output=h)
            pd.increment(i)
            pd.layers.less_than(i, n, cond=cond)
        total = pd.layers.reduce_sum(h)
    return main, startup, {"x": np.ones((SIDE, SIDE), np.float32)}, total


def test_a_dropped_step_frees_the_value_its_dead_step_scope_held():
    """The add's output at loop step 1 (its scope deleted when the step ends): once the
    records that copied it are dropped, nothing keeps the array alive."""
    main, startup, feed, total = _loop(40)
    dbg = Debugger(main, feed, [total], startup=startup, history_bytes=8 * 2 ** 20)
    while True:
        step = dbg.step()
        if step.depth == 2 and step.op.type == "elementwise_add":
            if step.scope.name.endswith("step 1"):
                break
    var = step.scope.find_var(step.op.output_arg_names[0])
    value = weakref.ref(var.get())
    scope = weakref.ref(step.scope)
    del step, var
    for _ in range(100):                           # 25 loop steps: 25 MiB of records
        dbg.step()
    assert dbg.history_dropped > 10 and dbg.history_bytes_held <= 8 * 2 ** 20
    gc.collect()
    assert value() is None, "the timeline keeps a deleted step scope's value"
    assert scope() is None, "the timeline keeps a deleted step scope"
    assert dbg.run_to_end() is not None
    np.testing.assert_array_equal(dbg.results[0], np.float32(40 * SIDE * SIDE))


def test_stepping_back_into_a_dead_step_scope_and_on_again_still_frees_it():
    """Undo revives a step scope and redo buries it again (no new scope, no kernel): the
    value the revived scope held is freed once its records are dropped too."""
    main, startup, feed, total = _loop(40)
    dbg = Debugger(main, feed, [total], startup=startup, history_bytes=8 * 2 ** 20)
    while (step := dbg.step()).op.type != "less_than" or not \
            step.scope.name.endswith("step 2"):
        pass
    back = dbg.step_back(7)                        # the add of loop step 1, its scope back
    assert back.op.type == "elementwise_add" and back.scope.name.endswith("step 1")
    revived = back.scope
    assert revived.alive
    value = weakref.ref(revived.find_var(back.op.output_arg_names[0]).get())
    for _ in range(7):                             # replayed: the scope deleted again
        dbg.step()
    assert not revived.alive and dbg.redo_count == 0
    scope = weakref.ref(revived)
    del revived, back, step
    for _ in range(100):
        dbg.step()
    assert dbg.history_dropped > 10
    gc.collect()
    assert value() is None, "the timeline keeps a value a replayed deletion cleared"
    assert scope() is None, "the timeline keeps a deleted step scope"


RSS_SCRIPT = textwrap.dedent("""
    import gc, sys
    sys.path.insert(0, sys.argv[1])
    import numba
    numba.set_num_threads(1)
    from test_step_back_memory import _loop
    from paddle_nb.interactive.debugger import Debugger

    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024

    main, startup, feed, total = _loop(330)               # 1,326 steps
    dbg = Debugger(main, feed, [total], startup=startup, history_bytes=16 * 2 ** 20)
    for k in range(1, 1301):
        dbg.step()
        if k in (100, 700, 1300):
            gc.collect()
            print(k, rss_mb(), dbg.history_bytes_held, flush=True)
""")


def test_stepping_a_long_while_keeps_memory_within_the_history_bound():
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", RSS_SCRIPT, here], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    rss = {int(k): float(mb) for k, mb, _ in rows}
    held = [int(b) for _, _, b in rows]
    assert all(b <= 16 * 2 ** 20 for b in held)
    growth = rss[1300] - rss[100]
    assert growth < 50, f"RSS grew {growth:.0f} MB from step 100 to 1,300 " \
        f"(at 100 / 700 / 1300: {rss[100]:.0f} / {rss[700]:.0f} / {rss[1300]:.0f} MB) " \
        f"with history_bytes_held <= 16 MiB"
