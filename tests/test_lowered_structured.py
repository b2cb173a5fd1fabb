"""The lowered forms of 3-D convolution and of the structured ops compute what their kernels
compute.

Programs as users write them: a small 3-D conv net (conv3d, pooling, fc) and a 3-D decoder
(conv3d_transpose) trained by SGD, a maxout layer, a row_conv lookahead over a batch of
sequences, two heads chosen row by row by multiplex, a Kronecker-factored layer, cross
products, repeat_interleave, a bilinear layer, a spectrally normalised weight and a
diagonal written over. Each runs plainly and through ``pd.CompiledProgram`` from one start
(tests/test_lowered_forms.py's helpers), bit for bit: the forms call the interpreter's own
loops (im2col3d / col2im3d and the same products a batch of images at a time; row_conv's
and spectral_norm's kernels) or loops that add in the interpreter's order. A second batch
size reuses the compiled code; a candidate number out of range fed to a compiled
multiplex raises the interpreter's error naming the op, and no parameter moves.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_programs)

RNG = np.random.default_rng(31)


def _trained(build, feeds, *op_types, exact=True):
    """Build, run plainly and compiled on each feed (the same machine code after the
    first), compare; the ops ``op_types`` went into compiled segments."""
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, feeds, exact=exact)
    assert_compiled(main, compiled, *op_types)
    return compiled


def _params():
    return pd.default_main_program().global_block().all_parameters()


# --- 3-D convolution ----------------------------------------------------------------------------
@pytest.mark.parametrize("layout, padding, groups", [
    ("NCDHW", "EXPLICIT", 1), ("NDHWC", "SAME", 2), ("NCDHW", "VALID", 2)])
def test_a_small_3d_conv_net_trains_the_same(layout, padding, groups):
    """conv3d -> relu -> pool3d -> fc, SGD, batches of 4, 4 and 3 volumes: the same
    losses and parameters bit for bit (im2col3d and the interpreter's products)."""
    last = layout == "NDHWC"

    def build():
        shape = [None, 5, 6, 6, 4] if last else [None, 4, 5, 6, 6]
        x = pd.data("x", shape)
        w = pd.create_parameter([6, 4 // groups, 3, 3, 3], "float32", name="w")
        h = pd.op.conv3d(Input=x, Filter=w, strides=[1, 2, 1], paddings=[1, 1, 1],
                         padding_algorithm=padding, groups=groups, data_format=layout)
        h = pd.layers.relu(h)
        h = pd.op.pool3d(X=h, ksize=[2, 2, 2], strides=[2, 2, 2], pooling_type="max",
                         data_format=layout)
        loss = pd.mean(pd.layers.square(pd.layer.fc(h, 3)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, *_params()]
    shape = (5, 6, 6, 4) if last else (4, 5, 6, 6)
    _trained(build, [{"x": floats(n, *shape)} for n in (4, 4, 3)], "conv3d", "conv3d_grad")


def test_a_3d_decoder_by_conv3d_transpose_trains_the_same():
    """conv3d_transpose (stride 2, output_padding) up-samples a code; SGD on the filter
    and the code's input."""
    def build():
        x = data("x", [None, 4, 3, 3, 2])
        w = pd.create_parameter([4, 3, 3, 3, 3], "float32", name="w")
        h = pd.op.conv3d_transpose(Input=x, Filter=w, strides=[2, 2, 2], paddings=[1, 1, 1],
                                   output_padding=[1, 0, 1])
        loss = pd.mean(pd.layers.square(h))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h, *_params()]
    _trained(build, [{"x": floats(n, 4, 3, 3, 2)} for n in (2, 2, 5)],
             "conv3d_transpose", "conv3d_transpose_grad")


def test_a_compiled_conv3d_refuses_volumes_of_other_channels():
    """The channels are checked before the loops index by them; the interpreter's rerun
    names the op, and the filter stays as it was."""
    def build():
        x = pd.data("x", [None, None, 4, 4, 4])
        w = pd.create_parameter([3, 2, 2, 2, 2], "float32", name="w")
        loss = pd.mean(pd.op.conv3d(Input=x, Filter=w))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, exe, scope, compiled, fetch = compiled_after_learning(
        build, {"x": floats(2, 2, 4, 4, 4)})
    assert_compiled(main, compiled, "conv3d", "conv3d_grad")
    assert_refused_and_kept(exe, compiled, main, scope, {"x": floats(2, 3, 4, 4, 4)}, fetch,
                            Exception, "conv3d")


# --- maxout, row_conv ---------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [1, -1])
def test_a_maxout_layer_trains_the_same(axis):
    """fc -> reshape to images -> maxout (groups of 3 channels) -> fc, SGD; ties come from
    relu's zeros, where the gradient goes to the first of the group."""
    def build():
        x = pd.data("x", [None, 10])
        h = pd.layer.fc(x, 36, act="relu")
        h = pd.layers.reshape(h, [-1, 6, 3, 2] if axis == 1 else [-1, 3, 2, 6])
        h = pd.op.maxout(X=h, groups=3, axis=axis)
        loss = pd.mean(pd.layers.square(pd.layer.fc(h, 2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h, *_params()]
    _trained(build, [{"x": floats(n, 10)} for n in (5, 5, 8)], "maxout", "maxout_grad")


def test_a_row_conv_lookahead_over_a_batch_of_sequences():
    """fc over each step, row_conv looking 2 steps ahead, fc: Deep Speech 2's lookahead;
    batches of sequences of 7 and 4 steps."""
    def build():
        x = pd.data("x", [None, None, 5])
        h = pd.layer.fc(x, 4, num_flatten_dims=2, act="tanh")
        w = pd.create_parameter([3, 4], "float32", name="lookahead")
        h = pd.op.row_conv(X=h, Filter=w)
        loss = pd.mean(pd.layers.square(pd.layer.fc(h, 2, num_flatten_dims=2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h, *_params()]
    _trained(build, [{"x": floats(3, 7, 5)}, {"x": floats(3, 7, 5)}, {"x": floats(2, 4, 5)}],
             "row_conv", "row_conv_grad")


# --- multiplex, kron, cross ---------------------------------------------------------------------
def _two_heads():
    x, ids = pd.data("x", [None, 6]), pd.data("ids", [None, 1], "int32")
    heads = [pd.layer.fc(x, 3, act="tanh"), pd.layer.fc(x, 3), pd.layer.fc(x, 3)]
    out = pd.op.multiplex(Ids=ids, X=heads)
    loss = pd.mean(pd.layers.square(out))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, out, *_params()]


def test_multiplex_picks_each_rows_head_and_trains_them():
    feeds = [{"x": floats(n, 6), "ids": RNG.integers(0, 3, (n, 1)).astype(np.int32)}
             for n in (6, 6, 9)]
    _trained(_two_heads, feeds, "multiplex", "multiplex_grad")


def test_a_candidate_number_out_of_range_raises_the_interpreters_error():
    main, exe, scope, compiled, fetch = compiled_after_learning(
        _two_heads, {"x": floats(4, 6), "ids": np.array([[0], [2], [1], [0]], np.int32)})
    assert_compiled(main, compiled, "multiplex", "multiplex_grad")
    assert_refused_and_kept(exe, compiled, main, scope,
                            {"x": floats(4, 6), "ids": np.array([[0], [3], [1], [0]],
                                                                np.int32)},
                            fetch, IndexError, "multiplex")


def test_a_kronecker_factored_layer_trains_the_same():
    """A weight kron(A, B) (4x3 by 2x2 factors) used as an fc weight; SGD on both."""
    def build():
        x = pd.data("x", [None, 8])
        a = pd.create_parameter([4, 3], "float32", name="a")
        b = pd.create_parameter([2, 2], "float32", name="b")
        w = pd.op.kron(X=a, Y=b)
        loss = pd.mean(pd.layers.square(pd.matmul(x, w)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, w, *_params()]
    _trained(build, [{"x": floats(n, 8)} for n in (3, 3, 5)], "kron", "kron_grad")


@pytest.mark.parametrize("dim", [9, 1])
def test_cross_products_of_predicted_vectors(dim):
    """Two fc layers predict 3-vectors, their cross product is trained towards zero; with
    ``dim`` 9 (unset) a batch of 3 moves the first axis of size 3 to the batch axis,
    which the compiled code finds from the run's shape as the interpreter does."""
    def build():
        x = pd.data("x", [None, 4])
        u, v = pd.layer.fc(x, 3), pd.layer.fc(x, 3, act="tanh")
        out = pd.op.cross(X=u, Y=v, dim=dim)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, *_params()]
    _trained(build, [{"x": floats(n, 4)} for n in (5, 5, 3)], "cross", "cross_grad")


# --- repeat_interleave, fill_diagonal_tensor ----------------------------------------------------
def test_repeat_interleave_upsamples_features_and_trains():
    """Each feature of an fc output repeated 3 times along axis 1 (its gradient: each
    feature's copies added up in order)."""
    def build():
        x = pd.data("x", [None, 5])
        h = pd.op.repeat_interleave(X=pd.layer.fc(x, 4), Repeats=3, dim=1)
        loss = pd.mean(pd.layers.square(pd.layer.fc(h, 2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h, *_params()]
    _trained(build, [{"x": floats(n, 5)} for n in (4, 4, 7)],
             "repeat_interleave", "repeat_interleave_grad")


def test_repeat_interleave_by_a_tensor_of_counts_stays_in_the_interpreter():
    """Out's size depends on RepeatsTensor's values: the op runs in the interpreter, the
    rest compiled."""
    def build():
        x = data("x", [None, 3])
        counts = pd.data("counts", [None], "int64")
        h = pd.op.repeat_interleave(X=x, RepeatsTensor=counts, dim=0)
        return [pd.mean(pd.layers.square(h))]
    feed = {"x": floats(3, 3), "counts": np.array([1, 0, 2], np.int64)}
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [feed] * 3)
    assert interpreted_because(compiled, "repeat_interleave").startswith(
        "an attribute given by a tensor")


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 1, 2), (1, 2, 1), (-1, 0, 2)])
def test_a_diagonal_written_over_keeps_the_rest_of_the_gradient(offset, dim1, dim2):
    """fc features seen as [N, 4, 3] matrices, one diagonal of each replaced by constants
    (fill_diagonal_tensor): the gradient is 0 there. dim1 0 puts the batch into the
    matrices, so a second batch size moves the diagonal."""
    def build():
        x = pd.data("x", [None, 6])
        h = pd.layers.reshape(pd.layer.fc(x, 12), [-1, 4, 3])
        y = pd.data("y", [None, None])
        out = pd.op.fill_diagonal_tensor(X=h, Y=y, offset=offset, dim1=dim1, dim2=dim2)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, *_params()]

    def feed(n):
        shape = [n, 4, 3]
        n1, n2 = shape[dim1], shape[dim2]
        others = [d for i, d in enumerate(shape) if i not in (dim1, dim2)]
        length = max(min(n1, n1 + offset, n2, n2 - offset), 0)
        return {"x": floats(n, 6), "y": floats(*others, length)}
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [feed(n) for n in (2, 2, 5)])
    assert_compiled(main, compiled, "fill_diagonal_tensor", "fill_diagonal_tensor_grad")


# --- bilinear_tensor_product, spectral_norm -----------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
def test_a_bilinear_layer_trains_the_same(bias):
    """Out[b, k] = x[b] W[k] y[b]^T (+ bias), both inputs from fc layers; SGD on W, the
    bias and the layers."""
    def build():
        a, b = pd.data("a", [None, 5]), pd.data("b", [None, 4])
        x, y = pd.layer.fc(a, 3, act="tanh"), pd.layer.fc(b, 2)
        w = pd.create_parameter([6, 3, 2], "float32", name="w")
        slots = {"X": x, "Y": y, "Weight": w}
        if bias:
            slots["Bias"] = pd.create_parameter([1, 6], "float32", name="bias")
        out = pd.op.bilinear_tensor_product(**slots)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, *_params()]
    _trained(build, [{"a": floats(n, 5), "b": floats(n, 4)} for n in (4, 4, 7)],
             "bilinear_tensor_product", "bilinear_tensor_product_grad")


@pytest.mark.parametrize("dim, iters", [(0, 1), (1, 2)])
def test_a_spectrally_normalised_weight_trains_the_same(dim, iters):
    """An fc weight [6, 4] divided by its largest singular value (power iteration from
    U and V, which stay as they are); SGD through the whole iteration."""
    def build():
        x = pd.data("x", [None, 6])
        w = pd.create_parameter([6, 4], "float32", name="w")
        u = pd.create_parameter([6 if dim == 0 else 4], "float32", name="u", trainable=False)
        v = pd.create_parameter([4 if dim == 0 else 6], "float32", name="v", trainable=False)
        normalised = pd.op.spectral_norm(Weight=w, U=u, V=v, dim=dim, power_iters=iters)
        loss = pd.mean(pd.layers.square(pd.matmul(x, normalised)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, normalised, *_params()]
    _trained(build, [{"x": floats(n, 6)} for n in (3, 3, 8)],
             "spectral_norm", "spectral_norm_grad")


# --- data_norm, set_value -----------------------------------------------------------------------
def test_data_norm_with_running_statistics_trains_the_same():
    """data_norm over fc features (statistics as the layer keeps them: parameters), fc
    after it, SGD; the gradient op asked for every slot as Paddle's programs do."""
    def build():
        x = pd.data("x", [None, 5])
        h = pd.layer.fc(x, 4)
        stats = [pd.create_parameter([4], "float32", name=n, trainable=False,
                                     initializer=pd.initializer.Constant(v))
                 for n, v in (("size", 1e4), ("sum", 0.0), ("squares", 1e4))]
        y = pd.op.data_norm(X=h, BatchSize=stats[0], BatchSum=stats[1],
                            BatchSquareSum=stats[2])
        y = y[0] if isinstance(y, (list, tuple)) else y
        loss = pd.mean(pd.layers.square(pd.layer.fc(y, 2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, y, *_params()]
    _trained(build, [{"x": floats(n, 5)} for n in (6, 6, 3)], "data_norm", "data_norm_grad")


@pytest.mark.parametrize("attrs, value_shape", [
    ({"axes": [1], "starts": [1], "ends": [4], "steps": [2]}, [2]),          # x[:, 1:4:2] = v
    ({"axes": [1], "starts": [-1], "ends": [-6], "steps": [-2]}, [1, 3]),    # x[:, -1:-6:-2]
    ({"axes": [0, 1], "starts": [0, 2], "ends": [1, 3], "steps": [1, 1],     # x[0, 2] = v
      "decrease_axes": [0, 1]}, []),
    ({"axes": [1], "starts": [0], "ends": [2], "steps": [1], "none_axes": [1]}, [1, 2])])
def test_a_part_of_a_feature_map_set_by_a_learned_value(attrs, value_shape):
    """fc features [N, 5] with a strided part replaced (set_value, as ``x[...] = v`` saves
    it); the part's positions come from the run's shape (a second batch size)."""
    def build():
        x = pd.data("x", [None, 5])
        h = pd.layer.fc(x, 5)
        v = pd.layers.fill_constant(value_shape, "float32", 0.5) if value_shape else \
            pd.layers.fill_constant([], "float32", 0.5)
        out = pd.op.set_value(Input=h, ValueTensor=v, **attrs)
        loss = pd.mean(pd.layers.square(pd.layer.fc(out, 2)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, *_params()]
    _trained(build, [{"x": floats(n, 5)} for n in (3, 3, 6)], "set_value", "set_value_grad")


def test_set_value_of_constants():
    """``x[:, ::2] = [1, 2, 3]`` of int64 elements (values as attributes)."""
    def build():
        x = pd.data("x", [None, 6], "int64")
        return [pd.op.set_value(Input=x, axes=[1], starts=[0], ends=[6], steps=[2],
                                values=[1, 2, 3], shape=[3], dtype=3)]
    feeds = [{"x": RNG.integers(-9, 9, (n, 6))} for n in (2, 2, 4)]
    _trained(build, feeds, "set_value")


# --- index_put ----------------------------------------------------------------------------------
def _put_rows(accumulate):
    def build():
        x, rows = pd.data("x", [None, 4]), pd.data("rows", [None], "int64")
        h = pd.layer.fc(x, 3)
        value = pd.layer.fc(pd.data("v", [None, 2]), 3)
        out = pd.op.index_put(x=h, indices=[rows], value=value, accumulate=accumulate)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, *_params()]
    return build


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_writes_learned_rows_and_trains_both(accumulate):
    """``h[rows] = value`` (or ``+=``) with rows repeated and counted from the end; the
    gradient reaches h (0 where overwritten) and the value's layer."""
    def feed(n, k):
        return {"x": floats(n, 4), "rows": RNG.integers(-n, n, k), "v": floats(k, 2)}
    _trained(_put_rows(accumulate), [feed(5, 4), feed(5, 4), feed(7, 3)],
             "index_put", "index_put_grad")


def test_an_index_out_of_range_raises_the_interpreters_error():
    main, exe, scope, compiled, fetch = compiled_after_learning(
        _put_rows(False), {"x": floats(5, 4), "rows": np.array([0, -1, 2]), "v": floats(3, 2)})
    assert_compiled(main, compiled, "index_put", "index_put_grad")
    assert_refused_and_kept(exe, compiled, main, scope,
                            {"x": floats(5, 4), "rows": np.array([0, 5, 2]), "v": floats(3, 2)},
                            fetch, IndexError, "index_put")
