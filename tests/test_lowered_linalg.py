"""The lowered forms of the linear-algebra ops compute what their kernels compute.

Programs as users write them: a ridge regression solved in the program through its Gram
matrix (cholesky + cholesky_solve, or solve) under a trained feature layer, a whitening
layer (cholesky + triangular_solve), a log-determinant penalty, the QR / SVD / eigen-
decomposition of a learned weight, matrix powers, a multi_dot chain, an LU factorization
unpacked, and a matrix's rank, eigenvalues and least-squares fit fetched. Each runs plainly
and through ``pd.CompiledProgram`` from one start (tests/test_lowered_forms.py's helpers),
bit for bit: a compiled block calls each op's own host function (numpy's LAPACK and the
places' BLAS) in numba's object mode (kernels/cpu/linalg.py). A matrix that is not
positive definite, a singular system or lu_unpack's pivots out of range, fed to a compiled
block, raise the interpreter's error naming the op, and no parameter moves.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, run_both, run_programs)

RNG = np.random.default_rng(41)


def _floats(*shape):
    return RNG.standard_normal(shape)


def _gram(h, ridge):
    """H^T H + ridge (a fed multiple of the identity): symmetric positive definite."""
    return pd.op.matmul_v2(X=h, Y=h, trans_x=True) + ridge


def _ridge_fit(solver):
    """Features from a trained layer, the ridge weights solved in the program from their
    Gram matrix, the fit's error trained down by SGD."""
    def build():
        x, y = pd.data("x", [None, 5], "float64"), pd.data("y", [None, 1], "float64")
        ridge = pd.data("ridge", [4, 4], "float64")
        h = pd.layer.fc(x, 4, act="tanh")
        gram, moment = _gram(h, ridge), pd.op.matmul_v2(X=h, Y=y, trans_x=True)
        if solver == "cholesky":
            weights = pd.op.cholesky_solve(X=moment, Y=pd.op.cholesky(X=gram))
        elif solver == "cholesky_upper":
            factor = pd.op.cholesky(X=gram, upper=True)
            weights = pd.op.cholesky_solve(X=moment, Y=factor, upper=True)
        else:
            weights = pd.op.solve(X=gram, Y=moment)
        error = pd.op.matmul_v2(X=h, Y=weights) - y
        loss = pd.mean(pd.layers.square(error))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, weights]
    return build


def _regression_feed(n):
    x = _floats(n, 5)
    return {"x": x, "y": np.sin(x[:, :1]) + 0.1 * _floats(n, 1), "ridge": 0.5 * np.eye(4)}


@pytest.mark.parametrize("solver, ops", [
    ("cholesky", ("cholesky", "cholesky_grad", "cholesky_solve", "cholesky_solve_grad")),
    ("cholesky_upper", ("cholesky", "cholesky_grad", "cholesky_solve",
                        "cholesky_solve_grad")),
    ("solve", ("solve", "solve_grad"))])
def test_a_ridge_regression_solved_in_the_program(solver, ops):
    """Batches of other sizes reuse the machine code (the Gram matrix is 4 x 4 whatever
    the batch)."""
    main, startup, fetch = build_program(_ridge_fit(solver))
    compiled = run_programs(main, startup, fetch,
                            [_regression_feed(n) for n in (16, 16, 9, 23)])
    assert_compiled(main, compiled, *ops)


def test_solve_of_one_right_hand_side_vector_broadcast_over_a_batch():
    """solve's vector right-hand side, and a batch of systems, trained through."""
    def build():
        a = pd.data("a", [None, 3, 3], "float64")
        b = pd.layers.create_parameter([3], "float64", name="b")
        out = pd.op.solve(X=a, Y=b)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, b]
    main, startup, fetch = build_program(build)
    feeds = [{"a": _floats(n, 3, 3) + 3 * np.eye(3)} for n in (4, 4, 2)]
    assert_compiled(main, run_programs(main, startup, fetch, feeds), "solve", "solve_grad")


def _whitening(upper, transpose, unit):
    """A whitening layer: centred features solved against their covariance's Cholesky
    factor (triangular_solve), then a trained layer on the whitened features."""
    def build():
        x = pd.data("x", [8, 3], "float64")
        ridge = pd.data("ridge", [3, 3], "float64")
        h = pd.layer.fc(x, 3)
        centred = h - pd.layers.reduce_mean(h, dim=0, keep_dim=True)
        cov = _gram(centred, ridge)
        factor = pd.op.cholesky(X=cov, upper=upper)
        white = pd.op.triangular_solve(X=factor, Y=pd.op.transpose2(X=centred, axis=[1, 0]),
                                       upper=upper, transpose=transpose,
                                       unitriangular=unit)
        loss = pd.mean(pd.layers.square(pd.layer.fc(white, 2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, white]
    return build


@pytest.mark.parametrize("upper, transpose, unit", [
    (False, False, False), (True, True, False), (False, True, True)])
def test_a_whitening_layer(upper, transpose, unit):
    main, compiled = run_both(_whitening(upper, transpose, unit),
                              {"x": _floats(8, 3), "ridge": 0.1 * np.eye(3)})
    assert_compiled(main, compiled, "cholesky", "cholesky_grad", "triangular_solve",
                    "triangular_solve_grad")


def test_a_determinant_penalty_on_a_batch_of_matrices():
    """det of each sample's matrix times a learned one; batches of other sizes."""
    def build():
        x = pd.data("x", [None, 3, 3], "float64")
        w = pd.layers.create_parameter([3, 3], "float64", name="w")
        det = pd.op.determinant(Input=pd.op.matmul_v2(X=x, Y=w))
        loss = pd.mean(pd.layers.square(det - 1.0))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, det, w]
    main, startup, fetch = build_program(build)
    feeds = [{"x": _floats(n, 3, 3)} for n in (5, 5, 2, 7)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "determinant", "determinant_grad")


def test_the_qr_and_svd_of_a_learned_weight():
    """A loss through Q and R, a nuclear norm and a loss through U and VH (svd_grad
    with all three gradients), and a full svd of W^T read through S and U (no VH@GRAD)."""
    def build():
        x = pd.data("x", [None, 5], "float64")
        w = pd.layers.create_parameter([5, 3], "float64", name="w")
        q, r = pd.op.qr(X=w)
        u, s, vh = pd.op.svd(X=w)
        u2, s2, _ = pd.op.svd(X=pd.op.transpose2(X=w, axis=[1, 0]), full_matrices=True)
        out = pd.op.matmul_v2(X=pd.op.matmul_v2(X=x, Y=q), Y=r)
        loss = (pd.mean(pd.layers.square(out)) + pd.layers.reduce_sum(s)
                + pd.mean(pd.op.matmul_v2(X=x, Y=u)) + pd.mean(vh)
                + pd.mean(s2) + pd.mean(u2))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, q, r, u, s, vh, w]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": _floats(n, 5)} for n in (6, 6, 3)])
    assert_compiled(main, compiled, "qr", "qr_grad", "svd", "svd_grad")


def test_qr_in_r_mode_and_complete_mode_fetched():
    def build():
        a = pd.data("a", [2, 4, 3], "float32")
        _, r_only = pd.op.qr(X=a, mode="r")
        q, r = pd.op.qr(X=a, mode="complete")
        return [r_only, q, r]
    main, compiled = run_both(build, {"a": _floats(2, 4, 3).astype(np.float32)})
    assert_compiled(main, compiled, "qr")


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_the_spectrum_of_a_learned_symmetric_matrix(uplo):
    """eigvalsh's eigenvalues in a loss; eigh's eigenvalues alone in one, its vectors in
    another (eigh_grad with one gradient missing, then both)."""
    def build():
        x = pd.data("x", [None, 4], "float64")
        w = pd.layers.create_parameter([4, 4], "float64", name="w")
        sym = pd.op.matmul_v2(X=w, Y=w, trans_x=True)
        values, _ = pd.op.eigvalsh(X=sym, UPLO=uplo)
        values2, _ = pd.op.eigh(X=sym + 1.0, UPLO=uplo)
        values3, vectors3 = pd.op.eigh(X=sym * 2.0, UPLO=uplo)
        loss = (pd.layers.reduce_sum(values) + pd.mean(values2 * values2)
                + pd.mean(pd.layers.square(pd.op.matmul_v2(X=x, Y=vectors3)))
                + pd.mean(values3))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, values, vectors3, w]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": _floats(n, 4)} for n in (3, 3, 5)])
    assert_compiled(main, compiled, "eigvalsh", "eigvalsh_grad", "eigh", "eigh_grad")


@pytest.mark.parametrize("n", [3, 1, 0, -2])
def test_a_matrix_power_of_a_learned_matrix(n):
    def build():
        x = pd.data("x", [None, 3], "float64")
        w = pd.layers.create_parameter([3, 3], "float64", name="w",
                                       initializer=pd.Constant(0.3))
        a = w + pd.data("eye", [3, 3], "float64")
        loss = pd.mean(pd.layers.square(pd.op.matmul_v2(X=x, Y=pd.op.matrix_power(X=a, n=n))))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, w]
    main, startup, fetch = build_program(build)
    feeds = [{"x": _floats(k, 3), "eye": np.eye(3)} for k in (4, 4, 6)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "matrix_power", "matrix_power_grad")


@pytest.mark.parametrize("vector_end", [False, True])
def test_a_multi_dot_chain_of_learned_matrices(vector_end):
    def build():
        x = pd.data("x", [None, 4], "float32")
        w1 = pd.layers.create_parameter([4, 5], "float32", name="w1")
        w2 = pd.layers.create_parameter([5, 3], "float32", name="w2")
        last = pd.layers.create_parameter([3] if vector_end else [3, 2], "float32", name="w3")
        out = pd.op.multi_dot(X=[x, w1, w2, last])
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.05).minimize(loss)
        return [loss, out, w1, last]
    main, startup, fetch = build_program(build)
    feeds = [{"x": _floats(k, 4).astype(np.float32)} for k in (6, 6, 2)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "multi_dot", "multi_dot_grad")


def test_an_lu_factorization_unpacked_and_trained_through():
    def build():
        x = pd.data("x", [None, 4, 3], "float64")
        w = pd.layers.create_parameter([3, 3], "float64", name="w")
        packed, pivots, infos = pd.op.lu(X=pd.op.matmul_v2(X=x, Y=w))
        pmat, lower, upper = pd.op.lu_unpack(X=packed, Pivots=pivots)
        loss = (pd.mean(pd.layers.square(packed)) + pd.mean(lower)
                + pd.mean(pd.layers.square(upper)))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, packed, pivots, infos, pmat, w]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch,
                            [{"x": _floats(n, 4, 3)} for n in (2, 2, 5)])
    assert_compiled(main, compiled, "lu", "lu_grad", "lu_unpack", "lu_unpack_grad")


def test_rank_eigenvalues_and_a_least_squares_fit_fetched():
    def build():
        a = pd.data("a", [3, 4, 4], "float64")
        m, y = pd.data("m", [6, 3], "float32"), pd.data("y", [6, 2], "float32")
        rank = pd.op.matrix_rank(X=a)
        rank_tol = pd.op.matrix_rank(X=a, tol=0.5, use_default_tol=False, hermitian=True)
        values, vectors = pd.op.eig(X=a)
        fit = pd.op.lstsq(X=m, Y=y, driver="gelsd")
        return [rank, rank_tol, values, vectors, pd.op.eigvals(X=a), *fit]
    a = _floats(3, 4, 4)
    a[1, 3] = a[1, 0] + a[1, 2]                       # rank 3
    a[2] = a[2] + a[2].T                              # symmetric
    feed = {"a": a, "m": _floats(6, 3).astype(np.float32),
            "y": _floats(6, 2).astype(np.float32)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "matrix_rank", "eig", "eigvals", "lstsq")


def test_a_batched_least_squares_fit_stays_in_the_interpreter():
    """A batch's Residuals and SingularValues are of its rank unless empty, which its
    shapes decide (m > n, the driver), not its types: lstsq lowers one matrix pair."""
    def build():
        m, y = pd.data("m", [2, 6, 3], "float64"), pd.data("y", [2, 6, 2], "float64")
        return list(pd.op.lstsq(X=m, Y=y))
    main, compiled = run_both(build, {"m": _floats(2, 6, 3), "y": _floats(2, 6, 2)})
    assert not compiled.segments()


def _refused_and_kept(build, good, bad, op_type, match):
    """Compiled runs with ``good``; ``bad`` raises the interpreter's error naming ``op_type``
    (no parameter moves), and ``good`` still runs compiled after it."""
    main, exe, scope, compiled, fetch = compiled_after_learning(build, good)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == op_type)
    assert index in compiled.segments()
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, pd.ExecutionError,
                            f"op {index} {op_type}: .*{match}")
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.disabled_because is None


def test_a_gram_matrix_that_is_not_positive_definite_raises_the_interpreters_error():
    good = _regression_feed(8)
    bad = dict(good, ridge=-50.0 * np.eye(4))
    _refused_and_kept(_ridge_fit("cholesky"), good, bad, "cholesky", "not positive definite")


def test_a_singular_system_raises_the_interpreters_error():
    def build():
        a = data("a", [3, 3], "float64")
        b = pd.layers.create_parameter([3, 2], "float64", name="b")
        out = pd.op.solve(X=a, Y=b)
        pd.optimizer.SGD(0.1).minimize(pd.mean(out))
        return [out]
    good = {"a": _floats(3, 3) + 3 * np.eye(3)}
    _refused_and_kept(build, good, {"a": np.ones((3, 3))}, "solve", "singular")


def test_lu_unpack_checks_its_pivots():
    """Pivots index X's rows: one out of 1..m raises the interpreter's error."""
    def build():
        x = pd.data("x", [2, 3, 3], "float64")
        w = pd.layers.create_parameter([3, 3], "float64", name="w")
        pivots = pd.data("pivots", [2, 3], "int32")
        _, lower, upper = pd.op.lu_unpack(X=x + w, Pivots=pivots)
        loss = pd.mean(lower) + pd.mean(pd.layers.square(upper))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    good = {"x": _floats(2, 3, 3), "pivots": np.array([[2, 2, 3], [3, 3, 3]], np.int32)}
    bad = dict(good, pivots=np.array([[2, 2, 3], [3, 4, 3]], np.int32))
    _refused_and_kept(build, good, bad, "lu_unpack", "must lie in 1..3")
