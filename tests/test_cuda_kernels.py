"""The CUDA launchers themselves (kernels/cuda/), on the edges the op table does not reach:
0-d and empty tensors (no zero-size grid is launched), dtypes kept exactly, broadcasting
both ways, transposed and batched matmul, row routing, seeded random fills. Tiny shapes:
numba's simulator runs each CUDA thread as a Python thread."""
import numpy as np
import pytest

from paddle_nb.kernels.cuda import copy as C
from paddle_nb.kernels.cuda import device as D
from paddle_nb.kernels.cuda import elementwise as E
from paddle_nb.ops import elementwise  # noqa: F401 (its @pointwise kernels)
from paddle_nb.kernels.cuda import matmul as M
from paddle_nb.kernels.cuda import random as RK
from paddle_nb.kernels.cuda import reduce as R
from paddle_nb.kernels.pointwise import KERNELS

rng = np.random.default_rng(0)


def dev(a):
    return D.to_device(np.asarray(a))


def host(a):
    assert D.is_device_array(a), type(a)
    return a.copy_to_host()


def test_device_helpers():
    assert D.available() and D.why_unavailable() is None
    x = dev(np.arange(6.0).reshape(2, 3))
    assert D.is_device_array(x) and not D.is_device_array(np.ones(2))
    assert D.to_device(x) is x
    assert D.flat(x).shape == (6,)
    assert D.c_strides((2, 3, 4)) == [12, 4, 1]
    blocks, threads = D.launch_1d(1)
    assert blocks == 1 and threads == 1
    blocks, threads = D.launch_1d(10_000)
    assert blocks * threads <= 10_000


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (3, 0, 2)], ids=str)
def test_empty_and_0d_tensors_launch_nothing_and_keep_their_shape(shape):
    x = dev(np.ones(shape, np.float32))
    for out in (KERNELS["tanh"].cuda(x), KERNELS["add"].cuda(x, x),
                KERNELS["less_than"].cuda(x, x), KERNELS["logical_not"].cuda(x, out_dtype=bool),
                C.copy(x), C.astype(x, np.int64), C.zeros_like(x),
                KERNELS["relu_grad"].cuda(x, x), RK.uniform(shape, 0, 1, 3)):
        assert out.shape == shape
    assert C.astype(x, np.int64).dtype == np.int64
    np.testing.assert_array_equal(host(KERNELS["add"].cuda(x, x)),
                                  np.full(shape, 2, np.float32))


def test_reductions_of_0d_and_empty():
    assert host(R.sum_axes(dev(np.float32(2.5)), [], False)) == np.float32(2.5)
    np.testing.assert_array_equal(host(R.sum_axes(dev(np.ones((0, 3), np.float32)), [0])),
                                  np.zeros(3, np.float32))
    assert R.sum_axes(dev(np.ones((0, 3))), [1]).shape == (0,)
    np.testing.assert_array_equal(host(M.matmul(dev(np.ones((2, 0))), dev(np.ones((0, 3))))),
                                  np.zeros((2, 3)))
    assert M.matmul(dev(np.ones((0, 4))), dev(np.ones((4, 3)))).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_binary_broadcasts_both_ways_and_keeps_the_dtype(dtype):
    x = rng.integers(1, 5, (2, 1, 3)).astype(dtype)
    y = rng.integers(1, 5, (4, 1)).astype(dtype)
    for op, want in (("add", x + y), ("sub", x - y), ("mul", x * y)):
        got = host(KERNELS[op].cuda(dev(x), dev(y)))
        assert got.dtype == dtype and got.shape == (2, 4, 3)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(host(KERNELS["greater_than"].cuda(dev(x), dev(y))),
                                  x > y)


def test_integer_division_truncates_toward_zero():
    x = np.int64([7, -7, 7, -7, 3, 2**62])
    y = np.int64([2, 2, -2, -2, 0, 3])
    np.testing.assert_array_equal(host(KERNELS["trunc_div"].cuda(dev(x), dev(y))),
                                  [3, -3, -3, 3, 0, 2**62 // 3])


def test_unary_edges_match_numpy():
    x = np.array([-800.0, -1.0, 0.0, 2.0, 800.0], np.float32)
    np.testing.assert_allclose(host(KERNELS["sigmoid"].cuda(dev(x))), [0, 0.26894143, 0.5,
                                                                  0.880797, 1], rtol=1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(host(KERNELS["log"].cuda(dev(x))), np.log(x))
    np.testing.assert_array_equal(host(E.unary("scale_then_bias", dev(np.int32([3, -3])),
                                               a=1.5, b=0.0)), [4, -4])   # truncated, int32
    np.testing.assert_array_equal(
        host(KERNELS["logical_not"].cuda(dev(np.array([0.0, 2.0])), out_dtype=bool)),
        [True, False])


def test_copy_kernels_match_numpy():
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    np.testing.assert_array_equal(host(C.transpose(dev(x), [2, 0, 1])), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(host(C.broadcast_to(dev(x[:, :1]), (4, 2, 3, 5))),
                                  np.broadcast_to(x[:, :1], (4, 2, 3, 5)))
    pieces = C.split(dev(x), [1, 0, 4], axis=2)
    for got, want in zip(pieces, np.split(x, [1, 1], axis=2)):
        np.testing.assert_array_equal(host(got), want)
    np.testing.assert_array_equal(host(C.concat(pieces, 2)), x)
    np.testing.assert_array_equal(host(C.stack([dev(x[0]), dev(x[1])], axis=2)),
                                  np.stack([x[0], x[1]], axis=2))
    np.testing.assert_array_equal(host(C.take_rows(dev(x), [1, 1, 0])), x[[1, 1, 0]])
    assert C.take_rows(dev(x), []).shape == (0, 3, 5)
    out = C.put_rows(D.empty((3, 2), np.int64), [2, 0], dev(np.int64([[1, 2], [3, 4]])))
    assert host(out)[[2, 0]].tolist() == [[1, 2], [3, 4]]
    np.testing.assert_array_equal(host(C.fill((2, 2), True, np.bool_)), np.ones((2, 2), bool))


@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_tiled_matmul_spans_several_tiles(trans_a, trans_b):
    m, k, n = M.TILE + 1, 2 * M.TILE + 1, M.TILE + 2       # partial tiles on every side
    a = rng.standard_normal((2, k, m) if trans_a else (2, m, k))
    b = rng.standard_normal((1, n, k) if trans_b else (1, k, n))      # batch 1 broadcasts
    want = 0.5 * np.matmul(a.transpose(0, 2, 1) if trans_a else a,
                           b.transpose(0, 2, 1) if trans_b else b)
    got = host(M.matmul(dev(a), dev(b), trans_a, trans_b, alpha=0.5))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ints = host(M.matmul(dev(np.int32([[1, 2], [3, 4]])), dev(np.int32([[5], [6]]))))
    assert ints.dtype == np.int32 and ints.tolist() == [[17], [39]]


def test_row_softmax_and_its_gradient():
    x = rng.standard_normal((3, 5))
    out = host(R.row_softmax(dev(x), 3, 5))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    d = rng.standard_normal((3, 5))
    np.testing.assert_allclose(host(R.softmax_grad_rows(dev(out), dev(d), 3, 5)),
                               out * (d - (d * out).sum(axis=1, keepdims=True)), rtol=1e-12)


def test_random_fills_are_seeded_and_distinct_per_seed():
    a = host(RK.uniform((7, 3), -1.0, 1.0, seed=5))
    assert a.dtype == np.float32 and a.min() >= -1 and a.max() < 1
    np.testing.assert_array_equal(a, host(RK.uniform((7, 3), -1.0, 1.0, seed=5)))
    assert not np.array_equal(a, host(RK.uniform((7, 3), -1.0, 1.0, seed=6)))
    g = host(RK.gaussian((5,), 0.0, 1.0, seed=2**40 + 1, dtype=np.float64))
    assert g.dtype == np.float64 and np.isfinite(g).all()


# --- a real GPU only (skipped here) ------------------------------------------------------------
@pytest.mark.gpu
def test_matmul_512_on_a_gpu():
    a = rng.standard_normal((512, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    got = host(M.matmul(dev(a), dev(b)))
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.gpu
def test_elementwise_and_reduce_on_a_gpu():
    x = rng.standard_normal((1000, 513)).astype(np.float32)
    np.testing.assert_allclose(host(R.sum_axes(KERNELS["mul"].cuda(dev(x), dev(x)), [1])),
                               (x.astype(np.float64) ** 2).sum(axis=1), rtol=1e-5)
    u = host(RK.uniform((1_000_000,), 0.0, 1.0, seed=1))
    assert abs(u.mean() - 0.5) < 1e-3 and abs(u.std() - 12 ** -0.5) < 1e-3
