"""Kernels that index by data check their range first (kernels/check.py; issue
"Robustness II"): a class label, a branch mask or an array position out of range is a
``pd.IndexRangeError`` naming the op, its block path, the slot, the bad value and where it
sits, raised before anything is written, on CPU and on CUDA (numba's simulator here).

Before: a label of 3 for 3 classes ran and gave garbage (the gradient kernel wrote past
the row), -1 wrapped to the last class, 10**9 and -2**40 killed the process (SIGSEGV).
The process-killing values run in a subprocess, so a regression fails this test instead
of taking pytest down.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.kernels import check

PLACES = [pd.CPUPlace(), pd.CUDAPlace(0)]
IDS = ["cpu", "cuda"]


def _classifier(op_type: str, classes: int = 3, ignore_index: int = -100):
    """x [-1, 4] -> fc -> (softmax) -> the loss op on label y; SGD on its mean."""
    x = pd.data("x", [-1, 4])
    y = pd.data("y", [-1, 1], "int64")
    logits = pd.layer.fc(x, classes)
    if op_type == "softmax_with_cross_entropy":
        loss = pd.layer.softmax_with_cross_entropy(logits, y, ignore_index=ignore_index)
    else:
        loss = pd.op.cross_entropy(X=pd.softmax(logits), Label=y, ignore_index=ignore_index)
    avg = pd.layer.mean(loss)
    pd.optimizer.SGD(0.1).minimize(avg)
    return avg


def _feed(labels):
    return {"x": np.linspace(-1, 1, 4 * len(labels), dtype=np.float32).reshape(-1, 4),
            "y": np.array(labels, np.int64).reshape(-1, 1)}


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["softmax_with_cross_entropy", "cross_entropy"])
@pytest.mark.parametrize("bad", [3, -1, 7])
def test_a_label_out_of_range_is_named_and_changes_nothing(place, op_type, bad):
    avg = _classifier(op_type)
    exe, scope = pd.Executor(place), pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    params = {n: np.array(scope.find_var(n).get()) for n in ("fc_0.w_0", "fc_0.b_0")}
    with pytest.raises(pd.IndexRangeError) as err:
        exe.run(feed=_feed([0, 1, 2, bad, 1]), fetch_list=[avg], scope=scope)
    e = err.value
    msg = str(e)
    index = 2 if op_type == "softmax_with_cross_entropy" else 3    # (after fc's 2 ops)
    assert f"block 0 > op {index} {op_type}: slot Label: class index {bad} at Label[3, 0] " \
           f"is out of range; expected 0 <= Label < 3 (3 classes)" in msg
    assert "op created at:" in msg and "test_index_ranges.py" in msg
    assert (e.slot, e.value, e.position, e.low, e.high) == ("Label", bad, (3, 0), 0, 3)
    if bad == 3:
        assert "Numbered 1..3 instead of 0..2? Subtract 1" in msg
    if bad < 0:
        assert "Negative values do not count from the end" in msg
    for n, before in params.items():          # the failed run left the parameters alone
        value = scope.find_var(n).get()
        value = value.copy_to_host() if hasattr(value, "copy_to_host") else value
        np.testing.assert_array_equal(value, before)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["softmax_with_cross_entropy", "cross_entropy"])
def test_the_gradient_kernels_check_too(place, op_type):
    """The grad op reads the labels again: checked there as well (a program can feed the
    grad op's Label from anywhere; here the forward op is skipped by feeding its outputs)."""
    avg = _classifier(op_type)
    exe = pd.Executor(place)
    exe.run(pd.default_startup_program())
    grad_ops = [op for op in pd.default_main_program().global_block().ops
                if op.type == f"{op_type}_grad"]
    assert len(grad_ops) == 1
    program = pd.default_main_program()
    fwd = next(op for op in program.global_block().ops if op.type == op_type)
    feed = _feed([0, 1, 2, 5])
    outs = {n: np.zeros((4, 3) if s != "Loss" and s != "Y" else (4, 1), np.float32) + 0.25
            for s in fwd.outputs for n in fwd.output(s)}
    feed.update(outs)
    with pytest.raises(pd.IndexRangeError, match=rf"{op_type}_grad: slot Label: class index 5 "
                                                 r"at Label\[3, 0\]"):
        exe.run(feed=feed, fetch_list=[avg])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_ignore_index_keeps_working(place):
    avg = _classifier("softmax_with_cross_entropy", ignore_index=-100)
    exe = pd.Executor(place)
    exe.run(pd.default_startup_program())
    loss, = exe.run(feed=_feed([0, -100, 2, 1]), fetch_list=[avg])
    assert np.isfinite(loss)
    pd.reset()
    avg = _classifier("cross_entropy", ignore_index=2)   # a class number may be ignored too
    exe.run(pd.default_startup_program())
    loss, = exe.run(feed=_feed([0, 2, 2, 1]), fetch_list=[avg])
    assert np.isfinite(loss)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("mask", [-1, 2, 1000])
def test_select_input_checks_its_mask(place, mask):
    a = pd.layers.fill_constant([2], "float32", 1.0)
    b = pd.layers.fill_constant([2], "float32", 2.0)
    m = pd.layers.fill_constant([1], "int32", mask)
    out = pd.op.select_input(X=[a, b], Mask=m)
    with pytest.raises(pd.IndexRangeError, match=rf"op 3 select_input: slot Mask: branch "
                                                 rf"{mask} at Mask\[0\] is out of range; "
                                                 rf"expected 0 <= Mask < 2 \(the 2 variables "
                                                 rf"of X\)"):
        pd.Executor(place).run(fetch_list=[out])


def test_float_labels_are_refused_not_truncated():
    """A label 1.5 must not be read as class 1: float labels are refused when the op is
    built, and at run time in a program built without shape inference (as a loaded one)."""
    x = pd.data("x", [-1, 3])
    y = pd.data("y", [-1, 1], "float32")
    gb = pd.default_main_program().global_block()
    sm = gb.create_var("sm", shape=[-1, 3])
    loss = gb.create_var("loss", shape=[-1, 1])
    args = ("softmax_with_cross_entropy", {"Logits": [x], "Label": [y]},
            {"Softmax": [sm], "Loss": [loss]})
    with pytest.raises(pd.ShapeError, match="(?s)slot Label: .*int elements.*y: float32"):
        gb.append_op(*args)
    gb.append_op(*args, infer_shape=False)
    with pytest.raises(pd.ExecutionError, match="(?s)slot Label: .*int elements.*float32"):
        pd.Executor().run(feed={"x": np.ones((2, 3), np.float32),
                                "y": np.array([[0.0], [1.5]], np.float32)}, fetch_list=[loss])


def test_the_check_helper_on_its_own():
    """The helper every data-indexing kernel calls: numpy and device arrays alike."""
    from paddle_nb.kernels.cuda import device
    ok = np.array([[0, 2], [1, -100]], np.int64)
    for values in (ok, device.to_device(ok)):
        check.indices(values, 3, slot="Label", ignore=-100)        # passes
        with pytest.raises(check.IndexOutOfRange) as err:
            check.indices(values, 2, slot="Label", ignore=-100)
        assert (err.value.value, err.value.position) == (2, (0, 1))
    check.indices(np.empty((0, 1), np.int64), 0, slot="Label")     # nothing to check
    big = np.zeros(100_000, np.int32)
    big[77_777] = -5
    with pytest.raises(check.IndexOutOfRange, match=r"-5 at ids\[77777\]"):
        check.indices(big, 10, slot="ids")


_CRASHERS = textwrap.dedent("""
    import os, sys
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    import numpy as np
    import paddle_nb as pd
    x = pd.data("x", [-1, 3]); y = pd.data("y", [-1, 1], "int64")
    loss = pd.layer.mean(pd.layer.softmax_with_cross_entropy(pd.layer.fc(x, 3), y))
    pd.optimizer.SGD(0.1).minimize(loss)
    for place in (pd.CPUPlace(), pd.CUDAPlace(0)):
        exe = pd.Executor(place)
        exe.run(pd.default_startup_program())
        for bad in (10**9, -2**40, 2**62):
            try:
                exe.run(feed={"x": np.ones((3, 3), np.float32),
                              "y": np.array([[0], [bad], [1]], np.int64)}, fetch_list=[loss])
            except pd.IndexRangeError as e:
                assert f"class index {bad} at Label[1, 0]" in str(e), str(e)
            else:
                sys.exit(f"label {bad} ran")
    print("all refused")
""")


def test_labels_that_used_to_crash_the_process_are_refused():
    done = subprocess.run([sys.executable, "-c", _CRASHERS], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "all refused" in done.stdout


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [5, -1, 10**9])
def test_gather_checks_its_indices_forward_and_backward(place, bad):
    x = pd.data("x", [5, 3])
    x.stop_gradient = False
    index = pd.data("index", [3], "int64")
    out = pd.op.gather(X=x, Index=index)
    grads = pd.gradients([pd.mean(out)], [x])
    feed = {"x": np.ones((5, 3), np.float32), "index": np.int64([0, bad, 2])}
    with pytest.raises(pd.IndexRangeError, match=r"gather.*Index.*gather index "
                                                 rf"{bad}.*\[1\]"):
        pd.Executor(place).run(feed=feed, fetch_list=[out])
    with pytest.raises(pd.IndexRangeError, match=r"gather"):
        pd.Executor(place).run(feed=feed, fetch_list=grads)


def _forward_and_gradient_refuse(place, out, grads, feed, forward, backward):
    """The forward op refuses the feed; so does its gradient op alone (the forward op is
    skipped by feeding its output)."""
    with pytest.raises(pd.IndexRangeError, match=forward):
        pd.Executor(place).run(feed=feed, fetch_list=[out])
    feed = dict(feed, **{out.name: np.ones(out.shape, np.float32)})
    with pytest.raises(pd.IndexRangeError, match=backward):
        pd.Executor(place).run(feed=feed, fetch_list=grads)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [3, -1, 10**9])
def test_gather_nd_checks_each_index_column_against_its_axis(place, bad):
    x = pd.data("x", [2, 3, 4])
    x.stop_gradient = False
    index = pd.data("index", [2, 2], "int64")
    out = pd.op.gather_nd(X=x, Index=index)
    grads = pd.gradients([pd.mean(out)], [x])
    feed = {"x": np.ones((2, 3, 4), np.float32), "index": np.int64([[1, 2], [0, bad]])}
    _forward_and_gradient_refuse(
        place, out, grads, feed,
        rf"gather_nd: slot Index: gather_nd index {bad} at Index\[1, 1\] is out of range; "
        r"expected 0 <= Index < 3 \(X's axis 1 has 3 entries\)",
        rf"gather_nd_grad: slot Index: gather_nd index {bad} at Index\[1, 1\]")


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [4, -1, 10**9])
def test_scatter_checks_its_ids_forward_and_backward(place, bad):
    x = pd.data("x", [4, 2])
    x.stop_gradient = False
    ids = pd.data("ids", [3], "int64")
    updates = pd.data("updates", [3, 2])
    updates.stop_gradient = False
    out = pd.op.scatter(X=x, Ids=ids, Updates=updates, overwrite=False)
    grads = pd.gradients([pd.mean(out)], [x, updates])
    feed = {"x": np.ones((4, 2), np.float32), "ids": np.int64([0, 3, bad]),
            "updates": np.ones((3, 2), np.float32)}
    _forward_and_gradient_refuse(
        place, out, grads, feed,
        rf"scatter: slot Ids: row {bad} at Ids\[2\] is out of range; expected 0 <= Ids < 4 "
        r"\(X has 4 rows\)", rf"scatter_grad: slot Ids: row {bad} at Ids\[2\]")


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [4, -1, 10**9])
def test_index_select_checks_its_index_forward_and_backward(place, bad):
    x = pd.data("x", [2, 4])
    x.stop_gradient = False
    index = pd.data("index", [3], "int32")
    out = pd.op.index_select(X=x, Index=index, dim=1)
    grads = pd.gradients([pd.mean(out)], [x])
    feed = {"x": np.ones((2, 4), np.float32), "index": np.int32([bad, 0, 1])}
    bad32 = int(np.int32(bad % 2**32 if bad > 2**31 else bad))     # as int32 holds it
    _forward_and_gradient_refuse(
        place, out, grads, feed,
        rf"index_select: slot Index: index {bad32} at Index\[0\] is out of range; "
        r"expected 0 <= Index < 4 \(X's axis 1 has 4 entries\)",
        rf"index_select_grad: slot Index: index {bad32} at Index\[0\]")


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type,bad", [("top_k_v2", 5), ("cross_entropy2", 3)])
def test_gradient_ops_check_the_positions_they_read(place, op_type, bad):
    """top_k_v2_grad puts dOut at Indices, cross_entropy_grad2 at Label: both come from
    tensors (here fed in place of the forward op's outputs)."""
    x = pd.data("x", [2, 3 if op_type == "cross_entropy2" else 5])
    x.stop_gradient = False
    if op_type == "top_k_v2":
        out, positions = pd.op.top_k_v2(X=x, k=2)
        feed = {out.name: np.ones((2, 2), np.float32),
                positions.name: np.int64([[0, 1], [bad, 2]])}
        slot, where = "Indices", r"position 5 at Indices\[1, 0\]"
    else:
        label = pd.data("label", [2, 1], "int64")
        out = pd.op.cross_entropy2(X=x, Label=label)
        feed = {"label": np.int64([[0], [bad]])}
        slot, where = "Label", r"class index 3 at Label\[1, 0\]"
    grads = pd.gradients([pd.mean(out)], [x])
    feed.update(x=np.full(x.shape, 0.25, np.float32))
    if op_type == "cross_entropy2":
        with pytest.raises(pd.IndexRangeError, match=rf"cross_entropy2: slot Label: {where}"):
            pd.Executor(place).run(feed=feed, fetch_list=[out])
        block = pd.default_main_program().global_block()
        fwd = next(op for op in block.ops if op.type == "cross_entropy2")
        feed.update({n: np.full((2, 1), 0.25, np.float32) for n in fwd.output("Y")
                     + fwd.output("MatchX")})
        feed.update({n: np.zeros((2, 3, 0), np.float32) for n in fwd.output("XShape")})
    grad_type = "top_k_v2_grad" if op_type == "top_k_v2" else "cross_entropy_grad2"
    with pytest.raises(pd.IndexRangeError, match=rf"{grad_type}: slot {slot}: {where}"):
        pd.Executor(place).run(feed=feed, fetch_list=grads)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [4, -1])
def test_one_hot_checks_its_classes(place, bad):
    x = pd.data("x", [2], "int64")
    out = pd.op.one_hot_v2(X=x, depth=4)
    with pytest.raises(pd.IndexRangeError, match=rf"one_hot_v2.*X.*class {bad}"):
        pd.Executor(place).run(feed={"x": np.int64([1, bad])}, fetch_list=[out])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("op_type", ["lookup_table_v2", "lookup_table"])
@pytest.mark.parametrize("bad", [6, -1, 10**9])
def test_embedding_checks_its_ids_forward_and_backward(place, op_type, bad):
    """An id outside W's rows (and not padding_idx) is refused by the lookup and by its
    gradient op alone; the padding id itself passes (a row of zeros)."""
    w = pd.data("w", [6, 3])
    w.stop_gradient = False
    legacy = op_type == "lookup_table"
    ids = pd.data("ids", [2, 2, 1] if legacy else [2, 2], "int64")
    out = getattr(pd.op, op_type)(W=w, Ids=ids, padding_idx=2)
    grads = pd.gradients([pd.mean(out)], [w])
    values = np.int64([[0, 2], [bad, 5]])
    feed = {"w": np.ones((6, 3), np.float32), "ids": values[..., None] if legacy else values}
    where = r"Ids\[1, 0, 0\]" if legacy else r"Ids\[1, 0\]"
    _forward_and_gradient_refuse(
        place, out, grads, feed,
        rf"op 0 {op_type}: slot Ids: id {bad} at {where} is out of range; expected 0 <= Ids "
        r"< 6 \(W has 6 rows\), or 2 \(padding_idx\) for a row of zeros",
        rf"{op_type}_grad: slot Ids: id {bad} at {where}")
    feed["ids"] = np.where(feed["ids"] == bad, 2, feed["ids"])      # the padding id: fine
    got, dw = pd.Executor(place).run(feed=feed, fetch_list=[out, grads[0]])
    assert not got[1, 0].any() and not got[0, 1].any() and not dw[2].any()


@pytest.mark.parametrize("padding_idx", [-3, 6, 2**40])
def test_embedding_refuses_a_padding_idx_that_is_not_a_row(padding_idx):
    """Paddle's Python stores a negative padding_idx p as V + p: a saved program holds -1
    (none) or a row of W, so anything else is refused when the op is built."""
    w = pd.data("w", [6, 3])
    ids = pd.data("ids", [4], "int64")
    with pytest.raises(pd.ShapeError, match=r"padding_idx must be -1 \(no padding\) or a row "
                                            r"of W(?s:.*)0 <= padding_idx < 6"):
        pd.op.lookup_table_v2(W=w, Ids=ids, padding_idx=padding_idx)
