"""accuracy and auc (ops/metrics.py) and the data checks of nll_loss and kldiv_loss
(ops/log_prob_losses.py) beyond the op table's one-run rows.

auc is stateful: ``paddle.static.auc`` makes persistable statistics that each run adds
its batch to (StatPosOut is StatPos's variable). The program Paddle 2.6.2 saved
(make_metrics_losses_fixture.py) is run three times on Paddle's batches in one scope,
and the AUCs and statistics after each run must be Paddle's, on both places.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import paddle_nb as pd

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
PLACES = {"cpu": pd.CPUPlace(), "cuda": pd.CUDAPlace(0)}


def _load(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return pd.Program.from_bytes(f.read())


def _auc_fixture():
    """(program, saved arrays, the stat names, a scope holding the startup's values)."""
    program = _load("auc_ops.pdesc")
    saved = np.load(os.path.join(FIXTURES, "auc_runs.npz"))
    scope = pd.Scope()
    stats = [k[len("init__"):] for k in saved.files if k.startswith("init__")]
    for name in stats:
        scope.var(name).set(saved[f"init__{name}"].copy())
    return program, saved, stats, scope


@pytest.mark.parametrize("place", list(PLACES))
def test_auc_accumulates_across_runs_as_paddle(place):
    program, saved, stats, scope = _auc_fixture()
    assert [op.type for op in program.global_block().ops].count("auc") == 2
    fetch = [str(n) for n in saved["fetch"]]
    exe = pd.Executor(PLACES[place])
    aucs = []
    for k in range(3):
        got = exe.run(program, feed={"predict": saved[f"predict_{k}"],
                                     "label": saved[f"label_{k}"]},
                      fetch_list=fetch, scope=scope)
        for name, value in zip(fetch, got):
            want = saved[f"{name}_{k}"]
            assert value.dtype == want.dtype, name
            np.testing.assert_allclose(value, want, rtol=1e-12, err_msg=f"{name} run {k}")
        aucs.append(float(got[0]))
        # the statistics live in the caller's scope, as the last run left them
        for name in stats:
            np.testing.assert_array_equal(scope.find_var(name).get(), saved[f"{name}_{k}"])
    assert len(set(aucs)) == 3          # each run's batch changed the streaming AUC


def test_auc_refuses_a_probability_outside_0_1_and_keeps_its_statistics(exe):
    program, saved, stats, scope = _auc_fixture()
    feed = {"predict": saved["predict_0"], "label": saved["label_0"]}
    exe.run(program, feed=feed, fetch_list=[], scope=scope)
    before = {name: scope.find_var(name).get().copy() for name in stats}
    bad = saved["predict_1"].copy()
    bad[3, 1] = 1.5
    with pytest.raises(pd.ExecutionError, match=r"auc.*Predict\[3, 1\] = 1\.5"):
        exe.run(program, feed={"predict": bad, "label": saved["label_1"]}, fetch_list=[],
                scope=scope)
    for name in stats:
        np.testing.assert_array_equal(scope.find_var(name).get(), before[name])


def _one_op(op_type, inputs, outputs, attrs=None):
    prog = pd.Program()
    blk = prog.global_block()
    ins = {slot: [blk.create_var(slot.lower(), list(a.shape), a.dtype.name)]
           for slot, a in inputs.items()}
    outs = {slot: [blk.create_var(f"{slot.lower()}_out")] for slot in outputs}
    blk.append_op(op_type, inputs=ins, outputs=outs, attrs=attrs or {})
    return prog, {slot.lower(): a for slot, a in inputs.items()}, \
        [f"{slot.lower()}_out" for slot in outputs]


@pytest.mark.parametrize("place", list(PLACES))
def test_nll_loss_names_a_label_outside_the_classes(place):
    prog, feed, fetch = _one_op(
        "nll_loss", {"X": np.zeros((3, 4), np.float32), "Label": np.int64([1, 4, -100])},
        ["Out", "Total_weight"])
    with pytest.raises(pd.IndexRangeError) as caught:
        pd.Executor(PLACES[place]).run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())
    text = str(caught.value)
    for part in ("nll_loss", "Label", "4", "Label[1]", "0 <= Label < 4", "-100"):
        assert part in text, (part, text)


@pytest.mark.parametrize("place", list(PLACES))
def test_accuracy_refuses_a_negative_label_and_never_matches_a_large_one(place):
    inputs = {"Out": np.ones((2, 2), np.float32), "Indices": np.int64([[0, 1], [2, 3]]),
              "Label": np.int64([[1], [100]])}
    prog, feed, fetch = _one_op("accuracy", inputs, ["Accuracy", "Correct", "Total"])
    exe = pd.Executor(PLACES[place])
    accuracy, correct, total = exe.run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())
    assert (float(accuracy), int(correct), int(total)) == (0.5, 1, 2)
    feed["label"] = np.int64([[1], [-1]])
    with pytest.raises(pd.ExecutionError, match=r"accuracy.*Label\[1\] = -1"):
        exe.run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())


def test_kldiv_loss_of_paddle_2_6_has_no_log_target_and_reads_false():
    """Paddle 2.6.2 saves kldiv_loss without log_target (Paddle 3 has it): the program
    loads, its kernels run with the declared default, False (the fixture test compares
    its numbers with Paddle's), and the saved bytes stay as they were."""
    from paddle_nb.core import registry   # noqa: PLC0415
    program = _load("metrics_losses_ops.pdesc")
    ops = [op for op in program.global_block().ops if op.type == "kldiv_loss"]
    assert ops and all(not op.has_attr("log_target") for op in ops)
    assert registry.lookup("kldiv_loss").attr("log_target").default is False
    with open(os.path.join(FIXTURES, "metrics_losses_ops.pdesc"), "rb") as f:
        assert program.to_bytes() == f.read()


def test_kldiv_loss_with_log_target_is_the_divergence_of_the_probabilities(exe):
    """log_target=True on log(T) gives what log_target=False gives on T."""
    rng = np.random.default_rng(3)
    x = np.log(rng.dirichlet(np.ones(4), 3))
    t = rng.dirichlet(np.ones(4), 3)
    results = []
    for target, log_target in ((t, False), (np.log(t), True)):
        prog, feed, fetch = _one_op("kldiv_loss", {"X": x, "Target": target}, ["Loss"],
                                    {"reduction": "batchmean", "log_target": log_target})
        results.append(exe.run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())[0])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    want = (t * (np.log(t) - x)).sum() / 3
    np.testing.assert_allclose(results[0], want, rtol=1e-12)
