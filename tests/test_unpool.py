"""unpool / unpool3d (paddle_nb/ops/unpool.py): the range check of Indices, and the
gradient where Indices repeat a position (an overlapping max pool's Mask)."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import IndexRangeError


def _unpool_program(index_shape, output_size):
    prog = pd.Program()
    with pd.program_guard(prog, pd.Program()):
        x = pd.data("x", index_shape, "float32")
        ids = pd.data("ids", index_shape, "int32")
        op_type = "unpool" if len(output_size) == 2 else "unpool3d"
        out = getattr(pd.op, op_type)(X=x, Indices=ids, ksize=[2] * len(output_size),
                                      strides=[2] * len(output_size),
                                      output_size=output_size)
    return prog, out


@pytest.mark.parametrize("output_size", [[4, 4], [2, 2, 4]])
def test_an_index_outside_the_output_plane_names_op_slot_range_and_value(output_size):
    shape = [1, 1] + [2] * len(output_size)
    prog, out = _unpool_program(shape, output_size)
    ids = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    ids.flat[2] = 16                                 # one past a plane of 16
    with pytest.raises(IndexRangeError) as err:
        pd.Executor().run(prog, feed={"x": np.ones(shape, np.float32), "ids": ids},
                          fetch_list=[out])
    message = str(err.value)
    for words in ("unpool", "slot Indices", "0 <= Indices < 16", " 16 at Indices["):
        assert words in message, message


def test_an_overlapping_max_pool_then_unpool_counts_each_input_once():
    """3x3 windows at stride 1 pick some elements twice: Out has each picked element once
    (at its own position), so d sum(Out * W) / dX is W there and 0 elsewhere (Paddle
    2.6.2's unpool_grad gives W once per window that picked it)."""
    x = np.float32([[[[0.1, 0.9, 0.2, 0.3],
                      [0.4, 0.5, 0.6, 0.8],
                      [0.7, 0.0, 0.35, 0.45]]]])
    w = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    prog = pd.Program()
    with pd.program_guard(prog, pd.Program()):
        xv = pd.data("x", [1, 1, 3, 4], "float32")
        pooled, mask = pd.op.max_pool2d_with_index(X=xv, ksize=[3, 3], strides=[1, 1],
                                                   paddings=[1, 1])
        out = pd.op.unpool(X=pooled, Indices=mask, ksize=[3, 3], strides=[1, 1],
                           paddings=[1, 1], output_size=[3, 4])
        loss = pd.layers.reduce_sum(out * pd.var(w))
        gx, = pd.gradients([loss], [xv])
    got_mask, got_out, got_dx = pd.Executor().run(prog, feed={"x": x},
                                                  fetch_list=[mask, out, gx])
    picked = np.isin(np.arange(12), got_mask.ravel()).reshape(x.shape)
    assert np.bincount(got_mask.ravel()).max() > 1           # some element picked twice
    np.testing.assert_array_equal(got_out, np.where(picked, x, 0))
    np.testing.assert_allclose(got_dx, np.where(picked, w, 0))
