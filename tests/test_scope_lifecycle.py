"""The Block and Scope design's stack forest: kid scopes live while the backward pass needs
them and are destroyed when the minibatch completes; inference frees them at once. Long
training runs keep the number of live scopes and the process memory flat."""
import gc

import numpy as np

import paddle_nb as pd
from models import tanh_rnn


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def _rnn_training_program():
    T, B, D, H = 5, 4, 3, 8
    main, startup, hs = tanh_rnn(T, B, D, H, seed=1)
    with pd.program_guard(main, startup):
        loss = pd.mean(hs * hs)
        pd.optimizer.SGD(0.01).minimize(loss)
    return main, startup, loss, (T, B, D)


def test_training_keeps_the_forest_until_backward_then_drops_it():
    main, startup, loss, (T, B, D) = _rnn_training_program()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((T, B, D), np.float32)}
    seen = {}
    for step in exe.steps(main, feed=feed, scope=scope):
        if step.block_idx == 0 and step.op.type in ("recurrent", "recurrent_grad"):
            run_scope = step.scope
            seen[step.op.type] = [k.name for k in run_scope.kids]
    assert len(seen["recurrent"]) == T                 # one scope per step, kept ...
    assert seen["recurrent_grad"] == seen["recurrent"]  # ... through the backward pass
    assert scope.kids == []                            # and gone when the minibatch ends
    tree = run_scope.tree() if run_scope.alive else ""
    assert tree == ""                                  # the run scope itself is destroyed


def test_scope_tree_reports_the_live_forest():
    main, startup, loss, (T, B, D) = _rnn_training_program()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    for step in exe.steps(main, feed={"x": np.ones((T, B, D), np.float32)}, scope=scope):
        if step.op.type == "recurrent":
            tree = scope.tree()
            break
    lines = tree.splitlines()
    assert lines[0] == "Scope 'global'" and "  Scope 'run'" in lines
    step_scopes = [line for line in lines if line.startswith("    Scope 'recurrent@")]
    assert len(step_scopes) == T and step_scopes[-1].endswith("/step 4'")


def test_thousand_rnn_minibatches_keep_scopes_and_memory_flat():
    main, startup, loss, (T, B, D) = _rnn_training_program()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((T, B, D)).astype(np.float32) for _ in range(8)]
    counts, memory, losses = [], [], []
    for k in range(1000):
        value, = exe.run(main, feed={"x": batches[k % 8]}, fetch_list=[loss], scope=scope)
        losses.append(float(value))
        if k in (99, 999):
            gc.collect()
            counts.append(pd.scope.live_count())
            memory.append(_rss_mb())
    assert counts[0] == counts[1]
    assert scope.kids == []
    assert memory[1] - memory[0] < 5.0, memory           # MB over 900 minibatches
    assert np.mean(losses[-8:]) < np.mean(losses[:8])     # and it was really training
