"""The lowered forms of the matrix products as users' programs hold them compute what their
kernels compute.

Each test builds a small program as a user writes one (a single-head and a multi-head
attention block, a bmm of two stacks, a matrix times a vector, a dot of rows, an addmm
with a bias), trains it by SGD where it has parameters, and runs it plainly and through
``pd.CompiledProgram`` from one start: the same values on every run, no failed compiled
run, and the products in compiled segments. The products are bit for bit: the compiled
forms make the interpreter's copies and call the same BLAS the same way
(kernels/cpu/matmul.py). The attention blocks and dot are compared to float rounding:
their softmax and row sums are kernels/cpu/reduce's vectorised loops, whose order LLVM picks
for the function a loop lands in (the interpreter's kernel or the compiled segment), which
on some CPUs differs (tests/test_compiler.py's REORDERED_SUMS says the same).
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.backends.cpu import CPU
from paddle_nb.kernels.cpu import matmul as KM
from test_lowered_forms import build_program, assert_compiled, data, floats, run_both, run_programs

T, E = 5, 8                                      # tokens, features


def _fc(x, size):
    return pd.layer.fc(x, size, num_flatten_dims=len(x.shape) - 1)


def _trained(build, make_feed, batches=(3, 3, 3, 4, 4), exact=True):
    """(main, the CompiledProgram) after one run per batch size of ``batches``: a new
    batch size is learned again and reuses the compiled code's types."""
    main, startup, fetch = build_program(build)
    return main, run_programs(main, startup, fetch, [make_feed(b) for b in batches], exact)


def test_a_single_head_attention_block_trains_the_same():
    """Scores q k^T of [B, T, E] stacks (a product per batch item), softmax, times v; the
    projections are stacks times one matrix (their rows folded into one product)."""
    def build():
        x = data("x", [None, T, E])
        q, k, v = _fc(x, E), _fc(x, E), _fc(x, E)
        scores = pd.layers.matmul(q, k, transpose_y=True)
        out = pd.layers.matmul(pd.layers.softmax(scores), v)
        w = pd.layers.create_parameter([E, E], "float32", name="w_out")
        y = pd.layers.matmul(out, w)
        loss = pd.mean(y * y)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, scores, w]
    main, compiled = _trained(build, lambda b: {"x": floats(b, T, E)}, exact=False)
    assert_compiled(main, compiled, "matmul_v2", "matmul_v2_grad", "mul", "mul_grad")


def test_a_multi_head_attention_block_trains_the_same():
    """[B, H, T, D] heads: scores with transpose_y, the weighted values, and their
    gradients, each a product per (batch, head) matrix."""
    heads, d = 2, 4

    def split(t):
        return pd.layers.transpose(pd.layers.reshape(t, [0, T, heads, d]), [0, 2, 1, 3])

    def build():
        x = data("x", [None, T, heads * d])
        q, k, v = (split(_fc(x, heads * d)) for _ in range(3))
        scores = pd.layers.matmul(q, k, transpose_y=True) * (d ** -0.5)
        ctx = pd.layers.matmul(pd.layers.softmax(scores), v)
        merged = pd.layers.reshape(pd.layers.transpose(ctx, [0, 2, 1, 3]), [0, T, heads * d])
        y = _fc(merged, heads * d)
        loss = pd.mean(y * y)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, scores]
    main, compiled = _trained(build, lambda b: {"x": floats(b, T, heads * d)}, exact=False)
    assert_compiled(main, compiled, "matmul_v2", "matmul_v2_grad")


def test_bmm_and_its_gradients():
    def build():
        x, y = data("x", [3, 4, 5]), data("y", [3, 5, 2])
        out = pd.op.bmm(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(3, 4, 5), "y": floats(3, 5, 2)})
    assert_compiled(main, compiled, "bmm", "bmm_grad")


def test_a_batch_grown_large_is_learned_again_and_left_to_the_interpreter():
    """Learned small, bmm compiles; a batch the interpreter splits across the cores (its
    prange loop: a compiled block is serial) is learned again, and bmm declines."""
    def build():
        x, y = data("x", [None, 8, 8]), data("y", [None, 8, 8])
        out = pd.op.bmm(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out), [x, y])]
    main, startup, fetch = build_program(build)
    small = [{"x": floats(2, 8, 8), "y": floats(2, 8, 8)}] * 2
    compiled = run_programs(main, startup, fetch, small)
    assert_compiled(main, compiled, "bmm", "bmm_grad")
    large = [{"x": floats(600, 8, 8), "y": floats(600, 8, 8)}] * 2
    compiled = run_programs(main, startup, fetch, small + large)
    assert " bmm: interpreted (large: the interpreter splits it" in compiled.source()


@pytest.mark.parametrize("shape", [(2, 1, 300, 300), (600, 8, 8)])
def test_the_compiled_batched_product_calls_the_interpreters_for_large_stacks(shape):
    """Within one learned signature a size can still change where data decides it (a
    loop's steps); a stack grown large there goes through batched_matmul itself (numpy's
    threaded BLAS or the prange loop): the interpreter's bits."""
    a, b = floats(*shape), floats(*shape)
    assert np.array_equal(KM.batched_product(a, b, False, True, 0.5),
                          CPU.matmul(a, b, False, True, 0.5))


def test_mv_trains_the_same():
    def build():
        x = data("x", [6, 4])
        w = pd.layers.create_parameter([4], "float32", name="w")
        out = pd.op.mv(X=x, Vec=w)
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, w, *pd.gradients(loss, [x])]
    main, compiled = run_both(build, {"x": floats(6, 4)})
    assert_compiled(main, compiled, "mv", "mv_grad")


def test_dot_of_rows_and_its_gradients():
    """Row sums: compared to float rounding (the module docstring)."""
    def build():
        x, y = data("x", [4, 7], "float64"), data("y", [4, 7], "float64")
        out = pd.op.dot(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(4, 7, dtype=np.float64),
                                      "y": floats(4, 7, dtype=np.float64)}, exact=False)
    assert_compiled(main, compiled, "dot", "dot_grad")


def test_addmm_with_a_bias_row_trains_the_same():
    """Input [N] is one row for every product row: its gradient sums dOut's rows."""
    def build():
        x = data("x", [None, 6])
        w = pd.layers.create_parameter([6, 3], "float32", name="w")
        b = pd.layers.create_parameter([3], "float32", name="b")
        out = pd.op.addmm(Input=b, X=x, Y=w, Alpha=0.5, Beta=2.0)
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, w, b]
    main, compiled = _trained(build, lambda n: {"x": floats(n, 6)})
    assert_compiled(main, compiled, "addmm", "addmm_grad")


def test_an_addmm_input_broadcast_along_the_columns_is_summed_by_the_interpreter():
    def build():
        x, y, inp = data("x", [4, 6]), data("y", [6, 3]), data("inp", [4, 1])
        out = pd.op.addmm(Input=inp, X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out * out), [inp, x, y])]
    main, compiled = run_both(build, {"x": floats(4, 6), "y": floats(6, 3),
                                      "inp": floats(4, 1)})
    assert_compiled(main, compiled, "addmm")
    assert " addmm_grad: interpreted (its operands broadcast" in compiled.source()
