"""The spectral linear-algebra ops (ops/svd.py, qr.py, eigh.py, eig.py, matrix_rank.py,
lstsq.py) where the op table cannot reach.

eigh and eigvalsh read one triangle of X and differentiate with respect to a symmetric X,
as Paddle does: their X@GRAD G is symmetric, and for a symmetric direction D (D_ij = D_ji)
the change of the loss is sum(G * D). So the gradients are checked against central
differences along D = E_ij + E_ji (one entry and its mirror moved together), in float64,
and on CUDA (numba's simulator) against the CPU.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd

EPS = 1e-6


def _program(op_type, x, attrs):
    """One eigh/eigvalsh op on X, the loss sum(Eigenvalues * W1) (+ sum(Eigenvectors * W2)
    for eigh) and its gradient dLoss/dX."""
    prog = pd.Program()
    blk = prog.global_block()
    xv = blk.create_var("X", list(x.shape), "float64", stop_gradient=False)
    w, v = blk.create_var("W"), blk.create_var("V")
    blk.append_op(op_type, inputs={"X": [xv]}, outputs={"Eigenvalues": [w],
                                                       "Eigenvectors": [v]}, attrs=attrs)
    weighted = [w, v] if op_type == "eigh" else [w]
    rng = np.random.default_rng(3)
    weights = [rng.uniform(-1, 1, x.shape[:-1]), rng.uniform(-1, 1, x.shape)][:len(weighted)]
    weight_vars = [blk.create_var(f"W_{i}", list(a.shape), "float64")
                   for i, a in enumerate(weights)]
    forward = prog.clone()
    (grad,) = pd.gradients(weighted, [xv], target_gradients=weight_vars)
    feed = {f"W_{i}": a for i, a in enumerate(weights)}
    return prog, forward, grad, weighted, weights, feed


def _loss(forward, x, weighted, weights):
    outs = pd.Executor().run(forward, feed={"X": x}, fetch_list=[v.name for v in weighted],
                             scope=pd.Scope())
    return sum(float((o * w).sum()) for o, w in zip(outs, weights))


@pytest.mark.parametrize("op_type", ["eigh", "eigvalsh"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_symmetric_gradient_matches_central_differences(op_type, uplo):
    a = np.random.default_rng(11).uniform(-1, 1, (2, 3, 3))
    x = a + np.swapaxes(a, -1, -2)                   # symmetric, distinct eigenvalues
    prog, forward, grad, weighted, weights, feed = _program(op_type, x, {"UPLO": uplo})
    (g,) = pd.Executor().run(prog, feed={**feed, "X": x}, fetch_list=[grad.name],
                             scope=pd.Scope())
    np.testing.assert_allclose(g, np.swapaxes(g, -1, -2), atol=1e-12)   # symmetric
    for b, i, j in np.ndindex(2, 3, 3):
        if j > i:
            continue
        d = np.zeros_like(x)
        d[b, i, j] = d[b, j, i] = EPS
        numeric = (_loss(forward, x + d, weighted, weights)
                   - _loss(forward, x - d, weighted, weights)) / (2 * EPS)
        analytic = g[b, i, j] + (g[b, j, i] if i != j else 0.0)
        assert abs(numeric - analytic) < 1e-6 + 1e-5 * abs(numeric), (b, i, j)


@pytest.mark.parametrize("op_type", ["eigh", "eigvalsh"])
def test_symmetric_gradient_on_cuda_matches_cpu(op_type):
    x = np.random.default_rng(12).uniform(-1, 1, (3, 3))
    x = x + x.T
    prog, _, grad, weighted, _, feed = _program(op_type, x, {})
    fetch = [grad.name] + [v.name for v in weighted]
    cpu = pd.Executor(pd.CPUPlace()).run(prog, feed={**feed, "X": x}, fetch_list=fetch,
                                         scope=pd.Scope())
    cuda = pd.Executor(pd.CUDAPlace(0)).run(prog, feed={**feed, "X": x}, fetch_list=fetch,
                                            scope=pd.Scope())
    for want, got in zip(cpu, cuda):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_eigh_reads_only_the_triangle_uplo_names():
    x = np.float64([[2.0, 100.0], [1.0, 3.0]])       # not symmetric on purpose
    for uplo, mirrored in (("L", np.float64([[2, 1], [1, 3]])),
                           ("U", np.float64([[2, 100], [100, 3]]))):
        w = pd.Executor().run(_program("eigh", x, {"UPLO": uplo})[1], feed={"X": x},
                              fetch_list=["W"], scope=pd.Scope())[0]
        np.testing.assert_allclose(w, np.linalg.eigvalsh(mirrored), rtol=1e-12)


@pytest.mark.parametrize("op_type, attrs, x, words", [
    ("eigh", {}, np.ones((2, 3)), "square"),
    ("eigh", {"UPLO": "X"}, np.eye(2), "UPLO"),
    ("svd", {}, np.ones(3), "rank >= 2"),
    ("qr", {"mode": "thin"}, np.eye(2), "mode"),
    ("lstsq", {"driver": "gesv"}, np.eye(2), "driver"),
])
def test_bad_inputs_are_refused_in_the_ops_words(op_type, attrs, x, words):
    prog = pd.Program()
    blk = prog.global_block()
    xv = blk.create_var("X", list(x.shape), "float64")
    inputs = {"X": [xv]}
    outputs = {"eigh": ["Eigenvalues", "Eigenvectors"], "svd": ["U", "S", "VH"],
               "qr": ["Q", "R"], "lstsq": ["Solution", "Rank", "SingularValues"]}[op_type]
    if op_type == "lstsq":
        inputs["Y"] = [blk.create_var("Y", [2, 1], "float64")]
    with pytest.raises(pd.PaddleNBError, match=words):
        blk.append_op(op_type, inputs=inputs,
                      outputs={s: [blk.create_var(s)] for s in outputs}, attrs=attrs)
        pd.Executor().run(prog, feed={"X": x, "Y": np.ones((2, 1))}, scope=pd.Scope())


def test_non_finite_values_are_refused_at_run_time():
    prog = pd.Program()
    blk = prog.global_block()
    xv = blk.create_var("X", [2, 2], "float64")
    blk.append_op("svd", inputs={"X": [xv]},
                  outputs={s: [blk.create_var(s)] for s in ("U", "S", "VH")})
    with pytest.raises(pd.PaddleNBError, match="finite"):
        pd.Executor().run(prog, feed={"X": np.float64([[1, np.nan], [0, 1]])},
                          fetch_list=["S"], scope=pd.Scope())
