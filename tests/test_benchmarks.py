"""The benchmarks measure; these tests check that what they measure is the same computation
on both sides: each numpy (and, when installed, torch) reference against paddle_nb on
small sizes, so a reference that drifts from the program fails here. And the command line
gives rows with the keys the JSON promises."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:            # `benchmarks` is a folder of the repo, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import (batch_norm, conv, cuda, elementwise,  # noqa: E402
                        executor_overhead, ifelse, matmul, mlp, rnn, softmax, vs_paddle)
from benchmarks.common import params_of, runner  # noqa: E402

ROW_KEYS = {"case", "paddle_nb_s", "numpy_s", "torch_s", "vs_numpy", "vs_torch",
            "target_vs_numpy", "target_vs_torch", "target_s", "target", "target_met", "note"}


# --- one-op programs: output and kernel alone equal the numpy reference -------------------
@pytest.mark.parametrize("op", list(elementwise.OPS))
def test_elementwise_program_kernel_and_numpy_agree(op):
    main, feed, out = elementwise.build(op, 1000)
    got, = runner(main, None, feed, [out])()
    _, kernel, ref, _, _ = elementwise.OPS[op]
    want = ref(feed["x"], feed["y"])
    assert want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kernel(feed["x"], feed["y"]), want, rtol=1e-5, atol=1e-6)


def test_softmax_program_kernel_and_numpy_agree():
    main, feed, out = softmax.build(7, 13)
    got, = runner(main, None, feed, [out])()
    want = softmax.numpy_softmax(feed["x"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(softmax.K.row_softmax(feed["x"]), want, rtol=1e-5, atol=1e-7)



def test_batch_norm_program_kernels_and_numpy_agree():
    """Y, dX, dScale, dBias of the benchmark's program, of the kernels alone and of its
    hand-written numpy (training mode), on a small batch."""
    main, feed, fetch, stats = batch_norm.build((4, 3, 5, 5))
    go = runner(main, None, feed, fetch)
    for name, value in stats.items():
        go.scope.var(name).set(value)
    args = [feed[n] for n in ("x", "scale", "bias", "dy")]
    want = batch_norm.numpy_batch_norm(*args)
    for got, alone, w in zip(go(), batch_norm.kernels_alone(*args), want):
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(alone, w, rtol=1e-4, atol=1e-5)

def test_conv_program_and_numpy_agree():
    """Output, dX and dFilter of the benchmark's program and of its numpy (small sizes)."""
    for backward in (False, True):
        main, feed, fetch = conv.build(backward, n=2, c=3, hw=5, cout=4)
        got = runner(main, None, feed, fetch)()
        want = (conv.numpy_conv_backward if backward else conv.numpy_conv)(feed["x"],
                                                                           feed["w"])
        for g, w in zip(got, want if backward else want[:1]):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_matmul_program_and_numpy_agree():
    main, feed, out = matmul.build(16)
    got, = runner(main, None, feed, [out])()
    np.testing.assert_allclose(got, feed["a"] @ feed["b"], rtol=1e-5, atol=1e-5)


def test_executor_overhead_program_is_scale_ops_of_identity():
    main, feed, out = executor_overhead.build(5)
    assert [op.type for op in main.global_block().ops] == ["scale"] * 5
    got, = runner(main, None, feed, [out])()
    np.testing.assert_array_equal(got, feed["x"])
    np.testing.assert_array_equal(executor_overhead.kernel_alone(feed["x"]), feed["x"])


# --- training steps: same loss, same parameter updates ------------------------------------
def _step_both(module, build_args, feed, numpy_call):
    """(start params, paddle_nb's after one step, numpy's after one step, losses)."""
    main, startup, loss = module.build(*build_args)
    go = runner(main, startup, feed, [loss])
    start = params_of(go.scope, module.PARAMS)
    mine = {k: v.copy() for k, v in start.items()}
    loss_np = numpy_call(mine)
    loss_pd, = go()
    return start, params_of(go.scope, module.PARAMS), mine, (loss_pd, loss_np)


def _same_update(start, a, b):
    for k in start:
        np.testing.assert_allclose(a[k] - start[k], b[k] - start[k], rtol=1e-4, atol=1e-7,
                                   err_msg=k)
        assert np.abs(a[k] - start[k]).max() > 1e-4, f"{k} did not move: a weak test"


def test_mlp_numpy_step_is_the_programs_step():
    feed = mlp.batch(8, 20, 5)
    start, got, mine, (loss_pd, loss_np) = _step_both(
        mlp, (20, 16, 5), feed, lambda p: mlp.numpy_step(p, feed["x"], feed["label"]))
    np.testing.assert_allclose(loss_pd, loss_np, rtol=1e-5)
    _same_update(start, got, mine)


def test_rnn_numpy_bptt_is_the_programs_step():
    feed = rnn.sequence(5, 3, 4)
    # loss = mean(h): its gradients are small, so a large learning rate makes the update
    # big enough to compare
    start, got, mine, (loss_pd, loss_np) = _step_both(
        rnn, (5, 3, 4, 6, 50.0), feed, lambda p: rnn.numpy_step(p, feed["x"], lr=50.0))
    np.testing.assert_allclose(loss_pd, loss_np, rtol=1e-5)
    _same_update(start, got, mine)


def test_ifelse_numpy_step_is_the_programs_step():
    feed = ifelse.batch(12, 6, 3)
    mask = feed["x"].sum(axis=1) > 0
    assert 0 < mask.sum() < len(mask), "both branches must get rows"
    start, got, mine, (loss_pd, loss_np) = _step_both(
        ifelse, (6, 3, 1.0), feed, lambda p: ifelse.numpy_step(p, feed["x"], feed["label"],
                                                               lr=1.0))
    np.testing.assert_allclose(loss_pd, loss_np, rtol=1e-5)
    _same_update(start, got, mine)


@pytest.mark.parametrize("module, sizes, lr", [
    (mlp, ((20, 16, 5), (8, 20, 5)), 0.1),
    (rnn, ((5, 3, 4, 6), (5, 3, 4)), 50.0),
    (ifelse, ((6, 3), (12, 6, 3)), 1.0),
], ids=["mlp", "rnn", "ifelse"])
def test_torch_references_are_the_numpy_step(module, sizes, lr):
    t = pytest.importorskip("torch", reason="PyTorch is the benchmark's contender, never a "
                            "dependency of paddle_nb (CI does not install it)")
    build_sizes, data_sizes = sizes
    main, startup, _ = module.build(*build_sizes)
    go = runner(main, startup, {}, [])
    start = params_of(go.scope, module.PARAMS)
    feed = (module.sequence if module is rnn else module.batch)(*data_sizes)
    mine = {k: v.copy() for k, v in start.items()}
    tp = {k: t.tensor(v, requires_grad=True) for k, v in start.items()}
    if module is rnn:
        loss_np = module.numpy_step(mine, feed["x"], lr=lr)
        loss_t = module.torch_step(t, tp, t.from_numpy(feed["x"]), lr=lr)
    else:
        loss_np = module.numpy_step(mine, feed["x"], feed["label"], lr=lr)
        loss_t = module.torch_step(t, tp, t.from_numpy(feed["x"]),
                                   t.from_numpy(feed["label"].ravel()), lr=lr)
    np.testing.assert_allclose(loss_t.item(), loss_np, rtol=1e-5)
    _same_update(start, {k: v.detach().numpy() for k, v in tp.items()}, mine)


def test_the_torch_encoder_is_the_programs_step():
    """The transformer benchmark's torch layers hold our parameters and take the same SGD
    step: the loss and every parameter after it agree."""
    t = pytest.importorskip("torch", reason="PyTorch is the benchmark's contender, never a "
                            "dependency of paddle_nb (CI does not install it)")
    from benchmarks import transformer   # noqa: PLC0415
    main, startup, loss = transformer.build(b=2, t=5, e=8, heads=2, ff=16, lr=0.5)
    feed = transformer.batch(b=2, t=5, e=8)
    go = runner(main, startup, feed, [loss])
    names = transformer.params(main)
    start = params_of(go.scope, names)
    layers = transformer.torch_layers(t, start, names, heads=2, ff=16)
    loss_t = transformer.torch_step(t, layers, t.from_numpy(feed["x"]), lr=0.5)
    (loss_pd,) = go()
    np.testing.assert_allclose(loss_t.item(), loss_pd, rtol=1e-5)
    after = transformer.torch_layers(t, params_of(go.scope, names), names, heads=2, ff=16)
    for ours, theirs in zip(after, layers):
        for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=name)


def test_the_torch_lstm_is_the_programs_step():
    """The LSTM benchmark's nn.LSTM holds our parameters (same layout and gate order) and
    takes the same SGD step: the loss and every parameter after it agree."""
    t = pytest.importorskip("torch", reason="PyTorch is the benchmark's contender, never a "
                            "dependency of paddle_nb (CI does not install it)")
    from benchmarks import lstm   # noqa: PLC0415
    main, startup, loss = lstm.build(t=5, b=3, d=4, h=3, lr=0.5)
    feed = lstm.sequence(t=5, b=3, d=4)
    go = runner(main, startup, feed, [loss])
    module = lstm.torch_lstm(t, params_of(go.scope, lstm.PARAMS))
    loss_t = lstm.torch_step(t, module, t.from_numpy(feed["x"]), lr=0.5)
    (loss_pd,) = go()
    np.testing.assert_allclose(loss_t.item(), loss_pd, rtol=1e-5)
    after = params_of(go.scope, lstm.PARAMS)
    for ours, theirs in zip(lstm.PARAMS, lstm.TORCH_NAMES):
        np.testing.assert_allclose(after[ours], getattr(module, theirs).detach().numpy(),
                                   rtol=1e-4, atol=1e-6, err_msg=ours)


@pytest.mark.parametrize("variant", vs_paddle.VARIANTS)
@pytest.mark.parametrize("name", list(vs_paddle.recorded()["cases"]))
def test_paddles_saved_programs_give_paddles_losses(name, variant):
    """Each ProgramDesc PaddlePaddle 2.6.2 made for the vs_paddle rows runs in paddle_nb
    from Paddle's parameters and gives the losses Paddle computed (benchmarks/paddle26/
    paddle26.json): both sides time the same computation."""
    check = vs_paddle.loss_check(vs_paddle.recorded()["cases"][name], variant)
    assert check["losses_agree"], check


# --- the harness --------------------------------------------------------------------------
def test_command_line_writes_rows_with_every_key(tmp_path, monkeypatch):
    from benchmarks import __main__ as cli
    from benchmarks import timing
    monkeypatch.setattr(timing, "steady_allocator", lambda: False)   # keep this process's
    monkeypatch.setattr(timing, "SETTLE_S", 0.0)
    monkeypatch.setattr(executor_overhead, "N_OPS", 20)
    out = tmp_path / "bench.json"
    assert cli.main(["--quick", "--only", "overhead", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["quick"] is True and data["environment"]["cpus"]
    rows = data["rows"]
    assert [r["case"] for r in rows][-1].startswith("executor overhead per op")
    for r in rows:
        assert ROW_KEYS <= set(r), ROW_KEYS - set(r)
        assert r["group"] == "overhead" and "others_busy_cores" in r
    last = rows[-1]
    assert last["target_s"] == executor_overhead.TARGET_S and last["target"] == "<=3 us"
    assert last["target_met"] is (last["paddle_nb_s"] <= 3e-6)


def test_paths_times_run_against_steps(monkeypatch, capsys):
    """python -m benchmarks.paths: one line per case with both times and the ratio."""
    from benchmarks import paths, timing
    monkeypatch.setattr(timing, "SETTLE_S", 0.0)
    monkeypatch.setattr(executor_overhead, "N_OPS", 20)
    assert paths.main(["--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:1] == ["case"] and len(lines) == 5
    for line in lines[1:]:
        ratio = float(line.split("us")[-1].split()[0])
        assert 0 < ratio < 10, line


def test_a_failing_case_is_a_row_not_a_crash(monkeypatch):
    from benchmarks import __main__ as cli

    def broken(quick):
        raise RuntimeError("kernel renamed")
    monkeypatch.setattr(cli.CASES["softmax"], "run", broken)
    rows = cli.run_case("softmax", True)
    assert rows[0]["paddle_nb_s"] is None and "kernel renamed" in rows[0]["note"]


def test_cuda_rows_are_skipped_with_a_reason_without_a_gpu():
    # tests run numba's CUDA simulator (conftest), which must never be timed
    reason = cuda.why_no_gpu()
    if reason is None:
        pytest.skip("a real GPU is here")
    rows = cuda.run(quick=True)
    assert len(rows) == 3 and all(r["paddle_nb_s"] is None for r in rows)
    assert all(r["note"].startswith("skipped: ") for r in rows)


def _one_call_each(contenders, quick):
    """timing.compare without the timing: each contender called once, 1 ms each."""
    return {k: (f(), 1e-3)[1] if f is not None else None for k, f in contenders.items()}


def test_cuda_cases_run_their_path_on_the_cpu_place(monkeypatch):
    import paddle_nb as pd
    monkeypatch.setattr(cuda, "compare", _one_call_each)
    monkeypatch.setattr(cuda, "_torch_device", lambda device: None)
    rows = cuda.time_place(pd.CPUPlace(), "cpu", True, "CPU place")
    assert [r["paddle_nb_s"] for r in rows] == [1e-3] * 3, [r["note"] for r in rows]


@pytest.mark.slow
def test_cuda_cases_run_their_path_in_the_simulator(monkeypatch):
    """The CUDA place's path, tiny, in numba's simulator (no timing: one call each)."""
    import paddle_nb as pd
    monkeypatch.setattr(cuda, "compare", _one_call_each)
    monkeypatch.setattr(cuda, "_torch_device", lambda device: None)
    rows = cuda.time_place(pd.CUDAPlace(0), "cuda", True, "CUDA", size="tiny")
    assert [r["paddle_nb_s"] for r in rows] == [1e-3] * 3, [r["note"] for r in rows]


def test_doc_update_replaces_only_the_block_between_the_markers(tmp_path):
    from benchmarks import doc
    from benchmarks.common import row
    page = tmp_path / "perf.md"
    page.write_text(f"# before\n{doc.BEGIN}\nold table\n{doc.END}\nafter\n")
    rows = [row("matmul 256", 2e-4, 1e-4, vs_numpy=1.05), row("no target", 1e-3),
            row("overhead", 2e-6, max_s=3e-6)]
    doc.update(str(page), ["the table"], rows)
    text = page.read_text()
    assert text.startswith("# before\n") and text.endswith(f"{doc.END}\nafter\n")
    assert "old table" not in text and "the table" in text
    assert "| matmul 256 | 2.00x numpy | <=1.05x np | **no** |" in text
    assert "| overhead | 2.0 us | <=3 us | yes |" in text and "no target" not in text


# --- honest measurement: contenders in turns, spread reported --------------------------------
def test_compare_times_contenders_in_turns_and_reports_the_spread(monkeypatch):
    from benchmarks import timing
    from benchmarks.common import row
    monkeypatch.setattr(timing, "SETTLE_S", 0.0)
    calls = []
    clock = iter(range(10**6))
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock) * 1e-3)

    def contender(name):
        return lambda: calls.append(name)
    got = timing.compare({"a": contender("a"), "b": contender("b"), "c": None}, quick=True)
    assert got["c"] is None and len(got["a"].samples) == len(got["b"].samples) == 7
    # every round times both (not all of a's samples, then all of b's)
    switches = sum(1 for x, y in zip(calls, calls[1:]) if x != y)
    assert switches >= 7
    assert got["a"].low <= got["a"] <= got["a"].high
    r = row("case", got["a"], got["b"], vs_numpy=1.0)
    assert r["vs_numpy_low"] <= r["vs_numpy"] <= r["vs_numpy_high"]
    assert r["paddle_nb_low_s"] == got["a"].low


def test_compare_pairs_ratios_round_by_round():
    from benchmarks.timing import Timing, ratios
    a, b = Timing([2.0, 4.0, 8.0]), Timing([1.0, 2.0, 4.0])   # a slow machine hits both
    assert ratios(a, b) == (2.0, 2.0, 2.0)
    assert ratios(a, None) is None
