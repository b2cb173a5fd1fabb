"""The triangular factorizations and solves (ops/triangular_factor.py, linear_solve.py)
where the op table cannot reach.

cholesky reads one triangle of X and differentiates with respect to a symmetric X, as
Paddle does: its X@GRAD G is symmetric, and for a symmetric direction D (D_ij = D_ji) the
change of the loss is sum(G * D). So its gradient is checked against central differences
along D = E_ij + E_ji, in float64, and on CUDA (numba's simulator) against the CPU. The
rest: the errors Paddle raises (a matrix that is not positive definite, a singular
system, pivots out of range) and the triangle each op reads.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd

EPS = 1e-6


def _spd(seed, *batch, n=3):
    a = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _cholesky_program(x, upper):
    """cholesky of X, the loss sum(Out * W) and dLoss/dX."""
    prog = pd.Program()
    blk = prog.global_block()
    xv = blk.create_var("X", list(x.shape), "float64", stop_gradient=False)
    out = blk.create_var("Out")
    blk.append_op("cholesky", inputs={"X": [xv]}, outputs={"Out": [out]},
                  attrs={"upper": upper})
    weights = np.random.default_rng(5).uniform(-1, 1, x.shape)
    w = blk.create_var("W", list(x.shape), "float64")
    forward = prog.clone()
    (grad,) = pd.gradients([out], [xv], target_gradients=[w])
    return prog, forward, grad, weights


def _loss(forward, x, weights):
    (out,) = pd.Executor().run(forward, feed={"X": x}, fetch_list=["Out"], scope=pd.Scope())
    return float((out * weights).sum())


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_symmetric_gradient_matches_central_differences(upper):
    x = _spd(21, 2)
    prog, forward, grad, weights = _cholesky_program(x, upper)
    (g,) = pd.Executor().run(prog, feed={"X": x, "W": weights}, fetch_list=[grad.name],
                             scope=pd.Scope())
    np.testing.assert_allclose(g, np.swapaxes(g, -1, -2), atol=1e-12)      # symmetric
    for b, i, j in np.ndindex(2, 3, 3):
        if j > i:
            continue
        d = np.zeros_like(x)
        d[b, i, j] = d[b, j, i] = EPS
        numeric = (_loss(forward, x + d, weights) - _loss(forward, x - d, weights)) / (2 * EPS)
        analytic = g[b, i, j] + (g[b, j, i] if i != j else 0.0)
        assert abs(numeric - analytic) < 1e-6 + 1e-5 * abs(numeric), (b, i, j)


def test_cholesky_gradient_on_cuda_matches_cpu():
    x = _spd(22)
    prog, _, grad, weights = _cholesky_program(x, False)
    feed, fetch = {"X": x, "W": weights}, [grad.name, "Out"]
    cpu = pd.Executor(pd.CPUPlace()).run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())
    cuda = pd.Executor(pd.CUDAPlace(0)).run(prog, feed=feed, fetch_list=fetch,
                                            scope=pd.Scope())
    for want, got in zip(cpu, cuda):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _run(op_type, inputs, outputs, attrs=None, place=None):
    prog = pd.Program()
    blk = prog.global_block()
    ins = {slot: [blk.create_var(slot, list(a.shape), a.dtype.name)]
           for slot, a in inputs.items()}
    blk.append_op(op_type, inputs=ins, outputs={s: [blk.create_var(s)] for s in outputs},
                  attrs=attrs or {})
    return pd.Executor(place or pd.CPUPlace()).run(prog, feed=inputs, fetch_list=outputs,
                                                   scope=pd.Scope())


@pytest.mark.parametrize("upper, read", [(False, [[4.0, 2.0], [2.0, 5.0]]),
                                         (True, [[4.0, 100.0], [100.0, 5.0]])])
def test_cholesky_reads_only_its_triangle(upper, read):
    x = np.float64([[4.0, 100.0], [2.0, 5.0]])        # not symmetric on purpose
    for place in (pd.CPUPlace(), pd.CUDAPlace(0)):
        if upper:       # the upper triangle [[4, 100], [., 5]] is not positive definite
            with pytest.raises(pd.PaddleNBError, match="not positive definite"):
                _run("cholesky", {"X": x}, ["Out"], {"upper": True}, place)
            continue
        (out,) = _run("cholesky", {"X": x}, ["Out"], {"upper": upper}, place)
        np.testing.assert_allclose(out @ out.T, read, rtol=1e-12)


@pytest.mark.parametrize("place", [pd.CPUPlace(), pd.CUDAPlace(0)], ids=["cpu", "cuda"])
@pytest.mark.parametrize("op_type, inputs, outputs, attrs, words", [
    ("cholesky", {"X": -np.eye(2)[None].repeat(2, 0)}, ["Out"], {},
     "matrix 0 of X is not positive definite"),
    ("solve", {"X": np.float64([[1, 2], [2, 4]]), "Y": np.ones((2, 1))}, ["Out"], {},
     "singular"),
    ("lu_unpack", {"X": np.eye(2), "Pivots": np.int32([3, 2])}, ["Pmat", "L", "U"], {},
     "must lie in 1..2"),
])
def test_paddles_errors_name_the_matrix(place, op_type, inputs, outputs, attrs, words):
    with pytest.raises(pd.PaddleNBError, match=words):
        _run(op_type, inputs, outputs, attrs, place)


@pytest.mark.parametrize("place", [pd.CPUPlace(), pd.CUDAPlace(0)], ids=["cpu", "cuda"])
def test_lu_reports_singular_matrices_in_infos_as_lapack(place):
    x = np.float64([[[1, 2, 3], [2, 4, 6], [1, 1, 1]], [[0, 0, 0]] * 3])
    packed, piv, info = _run("lu", {"X": x}, ["Out", "Pivots", "Infos"], place=place)
    np.testing.assert_array_equal(piv, [[2, 3, 3], [1, 2, 3]])    # Paddle 2.6.2's values
    np.testing.assert_array_equal(info, [3, 1])
    np.testing.assert_allclose(packed[0], [[2, 4, 6], [0.5, -1, -2], [0.5, 0, 0]])


@pytest.mark.parametrize("place", [pd.CPUPlace(), pd.CUDAPlace(0)], ids=["cpu", "cuda"])
def test_triangular_solve_with_a_zero_pivot_gives_infinities_as_paddle(place):
    x = np.float64([[1, 2], [0, 0]])
    (out,) = _run("triangular_solve", {"X": x, "Y": np.float64([[1], [1]])}, ["Out"],
                  place=place)
    assert np.isinf(out[1, 0])


def test_lu_unpack_rebuilds_x():
    x = np.random.default_rng(4).uniform(-1, 1, (2, 3, 4))
    packed, piv = _run("lu", {"X": x}, ["Out", "Pivots"])
    pmat, low, up = _run("lu_unpack", {"X": packed, "Pivots": piv}, ["Pmat", "L", "U"])
    np.testing.assert_allclose(pmat @ low @ up, x, atol=1e-12)
