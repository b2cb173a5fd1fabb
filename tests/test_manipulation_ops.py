"""argsort, masked_select, roll, meshgrid and tril_triu beyond their op-table rows (which
check values, gradients and the fuzzer's hostile inputs): the choices each op makes where
Paddle leaves room, and the refusals of their gradient ops when a program hands them
values that cannot be right. Paddle 2.6.2's own numbers are the manipulation fixture's
(tests/test_paddle_fixtures.py)."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.grad_maker import grad_name

PLACES = [pd.CPUPlace(), pd.CUDAPlace(0)]
IDS = ["cpu", "cuda"]


@pytest.mark.parametrize("descending", [False, True])
def test_argsort_keeps_ties_in_the_order_of_their_positions_in_long_rows(exe, descending):
    """Paddle's CPU kernel (std::sort) does so for rows of up to 16 values only; every row
    here is sorted that way, the one order that is the same on every place and run."""
    values = np.random.default_rng(5).integers(0, 3, (2, 40)).astype(np.float32)
    x = pd.data("x", [2, 40])
    out, indices = pd.op.argsort(X=x, axis=1, descending=descending)
    got_out, got_indices = exe.run(feed={"x": values}, fetch_list=[out, indices])
    want = np.argsort(-values if descending else values, axis=1, kind="stable")
    np.testing.assert_array_equal(got_indices, want)
    np.testing.assert_array_equal(got_out, np.take_along_axis(values, want, axis=1))


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_argsort_grad_checks_the_positions_it_reads(place):
    """argsort_grad puts each dOut where Indices says (here fed in place of the forward
    op's outputs): a position outside the axis is refused before anything is written."""
    x = pd.data("x", [2, 5])
    x.stop_gradient = False
    out, indices = pd.op.argsort(X=x, axis=1)
    grads = pd.gradients([pd.mean(out)], [x])
    feed = {"x": np.zeros((2, 5), np.float32), out.name: np.ones((2, 5), np.float32),
            indices.name: np.int64([[0, 1, 2, 3, 4], [5, 0, 1, 2, 3]])}
    with pytest.raises(pd.IndexRangeError,
                       match=r"argsort_grad: slot Indices: position 5 at Indices\[1, 0\]"):
        pd.Executor(place).run(feed=feed, fetch_list=grads)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_masked_select_with_a_mask_made_in_the_program(place):
    """Y's length is known only when the mask is: shape inference declares [-1]."""
    x = pd.data("x", [3, 4])
    y = pd.op.masked_select(X=x, Mask=x > 0)
    assert list(y.shape) == [-1]
    values = np.random.default_rng(6).uniform(-1, 1, (3, 4)).astype(np.float32)
    got, = pd.Executor(place).run(feed={"x": values}, fetch_list=[y])
    np.testing.assert_array_equal(got, values[values > 0])


def test_masked_select_refuses_a_mask_that_does_not_broadcast():
    x = pd.data("x", [3, 4])
    mask = pd.data("mask", [3], "bool")
    with pytest.raises(pd.ShapeError, match=r"masked_select: slot Mask: X and Mask must "
                                            r"broadcast"):
        pd.op.masked_select(X=x, Mask=mask)


def _one_grad_op(op_type, inputs, outputs, attrs=None):
    """A program of one hand-built gradient op (as an edited program could hold it): each
    input fed, each output declared."""
    prog = pd.Program()
    block = prog.global_block()
    feed = {}
    for slot, values in inputs.items():
        names = []
        for i, value in enumerate(values):
            name = f"{slot.lower()}{i}"
            block.create_var(name, list(value.shape), value.dtype.name)
            feed[name] = value
            names.append(name)
        inputs[slot] = names
    made = {slot: [block.create_var(n).name for n in names] for slot, names in outputs.items()}
    block.append_op(op_type, inputs, made, attrs or {}, infer_shape=False)
    return prog, feed, [n for names in made.values() for n in names]


def test_masked_select_grad_refuses_a_gradient_of_another_length(exe):
    prog, feed, fetch = _one_grad_op(
        "masked_select_grad", {"X": [np.ones((2, 3))], "Mask": [np.eye(2, 3, dtype=bool)],
                               "Y@GRAD": [np.ones(3)]}, {"X@GRAD": ["dx"]})
    with pytest.raises(pd.ExecutionError, match=r"masked_select_grad: slot Y@GRAD: .*"
                                                r"expected 2 \(Mask's true entries\), "
                                                r"given 3 values"):
        exe.run(prog, feed=feed, fetch_list=fetch)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_roll_reads_its_shifts_from_shifts_tensor(place):
    """paddle.roll(x, shifts=t) with a tensor t saves shifts=[] and ShiftsTensor: the
    tensor's values are the shifts, read at run time, forward and backward."""
    x = pd.data("x", [2, 5])
    x.stop_gradient = False
    shifts = pd.data("shifts", [1], "int64")
    out = pd.op.roll(X=x, ShiftsTensor=shifts, axis=[1])
    dx, = pd.gradients([out], [x], target_gradients=[pd.data("w", [2, 5])])
    values = np.arange(10, dtype=np.float32).reshape(2, 5)
    w = np.random.default_rng(7).uniform(-1, 1, (2, 5)).astype(np.float32)
    got, grad = pd.Executor(place).run(feed={"x": values, "shifts": np.int64([-7]), "w": w},
                                       fetch_list=[out, dx])
    np.testing.assert_array_equal(got, np.roll(values, -7, axis=1))
    np.testing.assert_array_equal(grad, np.roll(w, 7, axis=1))


def test_roll_refuses_a_shifts_tensor_of_the_wrong_length(exe):
    x = pd.data("x", [2, 5])
    shifts = pd.data("shifts", [2], "int64")
    out = pd.op.roll(X=x, ShiftsTensor=shifts, axis=[1])
    # the tensor's value meets the op's own shape rule before the kernel runs
    with pytest.raises(pd.ExecutionError, match=r"(?s)op 0 roll: at run time, slot X: shifts "
                                                r"needs one entry per axis.*expected: 1 "
                                                r"shifts.*given:    shifts=\[1, 2\]"):
        exe.run(feed={"x": np.ones((2, 5), np.float32), "shifts": np.int64([1, 2])},
                fetch_list=[out])


def test_meshgrid_grad_reads_paddles_slot_and_a_grid_nobody_used_counts_as_zeros(exe):
    """Paddle 2.6.2 saves meshgrid_grad's incoming gradients in ``outputs@GRAD``; the
    backward here writes the same slot, and fills the gradient of an unused grid with
    zeros."""
    a, b = pd.data("a", [3]), pd.data("b", [2])
    a.stop_gradient = b.stop_gradient = False
    grid_a, grid_b = pd.op.meshgrid(X=[a, b], outputs={"Out": 2})
    da, db = pd.gradients([pd.op.reduce_sum(X=grid_a, reduce_all=True)], [a, b])
    op = next(op for op in pd.default_main_program().global_block().ops
              if op.type == "meshgrid_grad")
    assert op.input("outputs@GRAD") == [grad_name(grid_a.name), grad_name(grid_b.name)]
    got_a, got_b = exe.run(feed={"a": np.float32([1, 2, 3]), "b": np.float32([4, 5])},
                           fetch_list=[da, db])
    np.testing.assert_array_equal(got_a, [2, 2, 2])        # each a[i] sits in 2 columns
    np.testing.assert_array_equal(got_b, [0, 0])


def test_tril_triu_grad_runs_as_paddle_saves_it_with_only_the_gradient(exe):
    """Paddle's tril_triu_grad reads only Out@GRAD (the backward here also passes X, an
    optional slot, so the shape rule can check the gradient against it)."""
    dout = np.arange(12, dtype=np.float32).reshape(3, 4)
    prog, feed, fetch = _one_grad_op("tril_triu_grad", {"Out@GRAD": [dout]},
                                     {"X@GRAD": ["dx"]}, {"diagonal": -1, "lower": False})
    got, = exe.run(prog, feed=feed, fetch_list=fetch)
    np.testing.assert_array_equal(got, np.triu(dout, -1))
