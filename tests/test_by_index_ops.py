"""The ops that read and reshape by index (ops/take_along.py, repeat_interleave.py,
crop_tensor.py, multiplex.py, shard_index.py, gather_tree.py, empty.py, unbind.py):
every position read from data is range-checked before anything is read, on CPU and on
CUDA (numba's simulator here), with an error naming the op, the slot, the value and the
range; and the behaviours the op table's rows do not show (Paddle's documented examples,
a negative position Paddle 2.6.2 reads unchecked, unbind's gradient as a stack)."""
import numpy as np
import pytest

import paddle_nb as pd

PLACES = [pd.CPUPlace(), pd.CUDAPlace(0)]
IDS = ["cpu", "cuda"]


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("bad", [4, -1])
def test_index_sample_checks_its_positions_forward_and_backward(place, bad):
    x = pd.data("x", [2, 4])
    x.stop_gradient = False
    index = pd.data("index", [2, 2], "int64")
    out = pd.op.index_sample(X=x, Index=index)
    grads = pd.gradients([pd.mean(out)], [x])
    feed = {"x": np.ones((2, 4), np.float32), "index": np.int64([[0, 1], [bad, 2]])}
    with pytest.raises(pd.IndexRangeError, match=rf"index_sample.*Index.*{bad}.*\[1, 0\]"):
        pd.Executor(place).run(feed=feed, fetch_list=[out])
    feed[out.name] = np.ones((2, 2), np.float32)      # the forward op skipped: fed its Out
    with pytest.raises(pd.IndexRangeError, match=r"index_sample_grad.*Index"):
        pd.Executor(place).run(feed=feed, fetch_list=grads)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_take_along_axis_refuses_a_negative_position(place):
    """Paddle 2.6.2 reads a negative take_along_axis position from outside the row (its
    result is whatever is there); here it is an error, as index_sample's is in Paddle."""
    x = pd.data("x", [3, 4])
    index = pd.data("index", [3, 1], "int64")
    out = pd.op.take_along_axis(Input=x, Index=index, Axis=1)
    feed = {"x": np.arange(12, dtype=np.float32).reshape(3, 4),
            "index": np.int64([[-1], [2], [0]])}
    with pytest.raises(pd.IndexRangeError, match=r"take_along_axis.*Index.*-1.*0 <= Index < 4"):
        pd.Executor(place).run(feed=feed, fetch_list=[out])
    feed["index"] = np.int64([[3], [2], [0]])
    got, = pd.Executor(place).run(feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, [[3], [6], [8]])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_multiplex_checks_the_candidate_numbers(place):
    a, b = pd.data("a", [2, 3]), pd.data("b", [2, 3])
    ids = pd.data("ids", [2, 1], "int32")
    out = pd.op.multiplex(Ids=ids, X=[a, b])
    feed = {"a": np.ones((2, 3), np.float32), "b": np.zeros((2, 3), np.float32)}
    got, = pd.Executor(place).run(feed=dict(feed, ids=np.int32([[1], [0]])), fetch_list=[out])
    np.testing.assert_array_equal(got, [[0, 0, 0], [1, 1, 1]])      # Paddle's example
    with pytest.raises(pd.IndexRangeError, match=r"multiplex.*Ids.*2.*2 candidates"):
        pd.Executor(place).run(feed=dict(feed, ids=np.int32([[2], [0]])), fetch_list=[out])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_gather_tree_walks_back_and_checks_parents(place):
    """The example of Paddle's F.gather_tree docs; a parent outside the beam is refused."""
    ids = pd.data("ids", [3, 2, 2], "int64")
    parents = pd.data("parents", [3, 2, 2], "int64")
    out = pd.op.gather_tree(Ids=ids, Parents=parents)
    feed = {"ids": np.int64([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]]),
            "parents": np.int64([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]])}
    got, = pd.Executor(place).run(feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, [[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]])
    feed["parents"] = feed["parents"].copy()
    feed["parents"][1, 0, 1] = 2
    with pytest.raises(pd.IndexRangeError, match=r"gather_tree.*Parents.*2.*beam size 2"):
        pd.Executor(place).run(feed=feed, fetch_list=[out])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_shard_index_checks_ids_against_index_num(place):
    label = pd.data("label", [3, 1], "int64")
    out = pd.op.shard_index(X=label, index_num=20, nshards=2, shard_id=1, ignore_value=-1)
    got, = pd.Executor(place).run(feed={"label": np.int64([[16], [1], [19]])}, fetch_list=[out])
    np.testing.assert_array_equal(got, [[6], [-1], [9]])
    with pytest.raises(pd.IndexRangeError, match=r"shard_index.*X.*25.*index_num=20"):
        pd.Executor(place).run(feed={"label": np.int64([[16], [25], [19]])}, fetch_list=[out])


def test_shard_index_refuses_a_shard_outside_nshards():
    label = pd.data("label", [3, 1], "int64")
    with pytest.raises(pd.PaddleNBError, match=r"shard_id must be in \[0, nshards\)"):
        pd.op.shard_index(X=label, index_num=20, nshards=2, shard_id=2)


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_repeat_interleave_counts_are_checked(place):
    x = pd.data("x", [3, 2])
    counts = pd.data("counts", [-1], "int64")
    out = pd.op.repeat_interleave(X=x, RepeatsTensor=counts, dim=0)
    assert list(out.shape) == [-1, 2]                # known when the counts are read
    feed = {"x": np.arange(6, dtype=np.float32).reshape(3, 2)}
    got, = pd.Executor(place).run(feed=dict(feed, counts=np.int64([1, 0, 2])), fetch_list=[out])
    np.testing.assert_array_equal(got, [[0, 1], [4, 5], [4, 5]])
    for bad in (np.int64([1, -1, 2]), np.int64([2])):
        with pytest.raises(pd.PaddleNBError, match=r"repeat_interleave.*RepeatsTensor"):
            pd.Executor(place).run(feed=dict(feed, counts=bad), fetch_list=[out])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_crop_tensor_minus_one_takes_the_rest_and_a_block_outside_is_refused(place):
    x = pd.data("x", [3, 4])
    out = pd.op.crop_tensor(X=x, shape=[-1, 2], offsets=[1, 1])
    assert list(out.shape) == [2, 2]
    feed = {"x": np.arange(12, dtype=np.float32).reshape(3, 4)}
    got, = pd.Executor(place).run(feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, [[5, 6], [9, 10]])           # as Paddle 2.6.2 gives
    with pytest.raises(pd.PaddleNBError, match=r"crop_tensor.*leaves X along axis 0"):
        pd.op.crop_tensor(X=x, shape=[3, 4], offsets=[1, 0])


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_empty_gives_zeros_of_a_shape_read_at_run_time(place):
    """Paddle leaves empty's values unspecified; paddle_nb gives zeros."""
    shape = pd.data("shape", [2], "int64")
    out = pd.op.empty(ShapeTensor=shape, dtype=pd.core.framework_pb2.VarType.INT32)
    assert list(out.shape) == [-1, -1]
    got, = pd.Executor(place).run(feed={"shape": np.int64([2, 3])}, fetch_list=[out])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.zeros((2, 3), np.int32))


def test_unbind_gradient_is_a_stack_with_zeros_for_unused_slices():
    x = pd.data("x", [3, 2])
    x.stop_gradient = False
    first, second, third = pd.op.unbind(X=x, axis=0, outputs={"Out": 3})
    grads = pd.gradients([pd.mean(second)], [x])
    ops = [op.type for op in pd.default_main_program().global_block().ops]
    assert "stack" in ops and "unbind_grad" not in ops
    got, = pd.Executor(pd.CPUPlace()).run(feed={"x": np.ones((3, 2), np.float32)},
                                          fetch_list=grads)
    np.testing.assert_array_equal(got, [[0, 0], [0.5, 0.5], [0, 0]])
