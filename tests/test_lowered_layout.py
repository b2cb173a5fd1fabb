"""The lowered forms of the layout ops as users' programs hold them compute what their
kernels compute.

Each test builds a small program as a user writes one (an attention mask tiled over the
heads, a bias expanded as another tensor, a sequence padded, flipped or rolled, a causal
mask from tril, positions from range, a zero state of the batch's size), trains it by SGD
where the op has a gradient, and runs it plainly and through ``pd.CompiledProgram`` from
one start: the same values on every run, no failed compiled run, and the ops in compiled
segments. The copies are bit for bit; a gradient that sums copies (tile_grad,
expand_v2_grad, expand_as_v2_grad) is compared to float rounding, as layer_norm's: both
sides call kernels/cpu/reduce's vectorised row sums, and LLVM picks their order for the
function the loop lands in (the interpreter's kernel or the compiled segment), which on
some CPUs differs.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.kernels.cpu import axis_maps as KA
from paddle_nb.kernels.cpu.layout import broadcast_copy
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, run_programs)

T, D = 6, 4                                     # tokens, features


def _runs_both(build, make_feed, exact: bool = True, batches=(3, 3, 3, 5, 5)):
    """(main, the CompiledProgram) after one run per batch size of ``batches`` (the
    first learned and run compiled, then another, learned again), plain and compiled."""
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [make_feed(b) for b in batches], exact)
    return main, compiled


def _trained_fc(x, size):
    return pd.layer.fc(x, size, num_flatten_dims=len(x.shape) - 1)


# --- copies made bigger: tile, expand_v2, expand_as_v2 ----------------------------------------
def test_an_attention_mask_tiled_over_the_heads_and_a_bias_expanded():
    """Scores [B, H, T, T] plus a padding mask [B, 1, 1, T] tiled over the heads and the
    query rows; a learned bias [D] expanded as the tokens (expand_as_v2, Paddle's
    target_shape with -1 for the batch) and one unsqueezed and expanded (expand_v2, -1
    keeping the batch); the hidden state tiled twice along its features."""
    heads = 2

    def build():
        x = data("x", [None, T, D])
        mask = pd.data("mask", [None, 1, 1, T])
        q = pd.layers.reshape(_trained_fc(x, heads * D), [0, T, heads, D])
        q = pd.layers.transpose(q, [0, 2, 1, 3])
        scores = pd.layers.matmul(q, q, transpose_y=True)
        tiled = pd.op.tile(X=mask, repeat_times=[1, heads, T, 1])
        probs = pd.layers.softmax(scores + tiled)
        bias = pd.layers.create_parameter([D], "float32", name="bias")
        biased = x + pd.op.expand_as_v2(X=bias, Y=x, target_shape=[-1, T, D])
        scale = pd.layers.create_parameter([1, T, 1], "float32", name="scale")
        scaled = pd.op.expand_v2(X=scale, shape=[-1, T, D]) * biased
        wide = pd.op.tile(X=_trained_fc(scaled, D), repeat_times=[1, 1, 2])
        loss = pd.mean(probs * probs) + pd.mean(wide * wide)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, tiled, bias, scale]

    def feed(batch):
        mask = np.where(np.arange(T) < T - 2, 0.0, -1e9).astype(np.float32)
        return {"x": floats(batch, T, D), "mask": np.broadcast_to(mask, (batch, 1, 1, T))}
    main, compiled = _runs_both(build, feed, exact=False)
    assert_compiled(main, compiled, "tile", "tile_grad", "expand_as_v2", "expand_as_v2_grad",
                    "expand_v2", "expand_v2_grad")


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_copies_made_bigger_keep_every_dtype(dtype):
    """Forward only: tile (fewer repeats than dims), expand_v2, expand_as_v2 with Y."""
    def build():
        x = pd.data("x", [None, 1, 3], dtype)
        y = pd.data("y", [None, 4, 3], dtype)
        return [pd.op.tile(X=x, repeat_times=[2, 1]), pd.op.expand_v2(X=x, shape=[2, -1, 4, 3]),
                pd.op.expand_as_v2(X=x, Y=y, target_shape=[-1, 4, 3])]

    def feed(batch):
        return {"x": (floats(batch, 1, 3) * 5).astype(dtype),
                "y": (floats(batch, 4, 3) * 5).astype(dtype)}
    main, compiled = _runs_both(build, feed)
    assert_compiled(main, compiled, "tile", "expand_v2", "expand_as_v2")


def test_an_expanded_output_is_no_view_of_its_input():
    """expand_v2 to X's own shape copies: writing the output leaves X as it was."""
    x = floats(2, 3)
    out = broadcast_copy(x, (-1, -1), 2)
    out[...] = 0
    assert not np.shares_memory(out, x) and np.abs(x).sum() > 0


# --- borders and orders: pad, pad3d, flip, roll --------------------------------------------------
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_a_padded_image_and_sequence_trained(mode):
    """An image [N, C, H, W] padded by pad3d (as F.pad saves a 4-D pad: one D of 1),
    a sequence [B, T, D] padded along time by pad; both through an fc, trained."""
    def build():
        img = data("img", [None, 2, 1, 5, 4])
        seq = data("seq", [None, T, D])
        padded = pd.op.pad3d(X=img, paddings=[1, 2, 2, 1, 0, 0], mode=mode, value=0.5)
        seq_padded = pd.op.pad(X=seq, paddings=[0, 0, 1, 2, 0, 0], pad_value=-1.0)
        loss = pd.mean(_trained_fc(padded, 3)) + pd.mean(_trained_fc(seq_padded, 3))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, padded, seq_padded]

    def feed(batch):
        return {"img": floats(batch, 2, 1, 5, 4), "seq": floats(batch, T, D)}
    main, compiled = _runs_both(build, feed)
    assert_compiled(main, compiled, "pad3d", "pad3d_grad", "pad", "pad_grad")


def test_a_sequence_flipped_and_rolled_trained():
    """A backward direction (flip along time), a shift of the tokens (roll), a roll of
    everything flattened; flip's gradient is a flip, roll_grad rolls back."""
    def build():
        x = data("x", [None, T, D])
        h = _trained_fc(x, D)
        back = pd.op.flip(X=h, axis=[1])
        shifted = pd.op.roll(X=h, shifts=[1, -3], axis=[1, -1])
        flat = pd.op.roll(X=h, shifts=[7], axis=[])
        loss = pd.mean(back * h) + pd.mean(shifted * shifted) + pd.mean(flat * h)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, back, shifted, flat]
    main, compiled = _runs_both(build, lambda b: {"x": floats(b, T, D)})
    assert_compiled(main, compiled, "flip", "roll", "roll_grad")


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_flips_and_rolls_of_other_dtypes(dtype):
    def build():
        x = pd.data("x", [None, 3, 4], dtype)
        return [pd.op.flip(X=x, axis=[0, 2]), pd.op.roll(X=x, shifts=[-5, 2, 2], axis=[0, 1, 1]),
                pd.op.pad(X=x, paddings=[1, 0, 0, 0, 2, 2], pad_value=7.0)]
    main, compiled = _runs_both(build, lambda b: {"x": (floats(b, 3, 4) * 9).astype(dtype)})
    assert_compiled(main, compiled, "flip", "roll", "pad")


def test_the_axis_maps_are_the_interpreters():
    """The rules of kernels/cpu/axis_maps.py, as numpy's pad, flip, roll and tile say."""
    x = np.arange(5)
    for mode, kind in KA.PAD_KINDS.items():
        want = np.pad(x, (2, 3), mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))
        got = KA.axis_map(5, kind, 2, 3)
        if mode == "constant":
            assert list(got) == [-1, -1, 0, 1, 2, 3, 4, -1, -1, -1]
        else:
            assert np.array_equal(x[got], want), mode
    assert np.array_equal(x[KA.axis_map(5, KA.FLIP, 0, 0)], x[::-1])
    assert np.array_equal(x[KA.axis_map(5, KA.ROLL, -7, 0)], np.roll(x, -7))
    assert np.array_equal(x[KA.axis_map(5, KA.TILE, 3, 0)], np.tile(x, 3))
    assert np.array_equal(x[KA.axis_map(5, KA.CROP, 1, 2)], x[1:3])
    with pytest.raises(ValueError, match="smaller than the borders"):
        KA.axis_map(2, KA.CROP, 2, 1)


# --- masks and positions: tril_triu, range, fill_constant_batch_size_like ------------------------
def test_a_causal_mask_positions_from_range_and_a_zero_state():
    """Causal self-attention as users write it: the mask from tril of ones, positions
    from range (embedded), a zero state of the batch's size (fill_constant_batch_size_like)
    added to the first layer; trained, so tril_triu_grad runs on the scores."""
    def build():
        x = data("x", [None, T, D])
        ones = pd.layers.fill_constant([T, T], "float32", 1.0)
        causal = pd.op.tril_triu(X=ones, diagonal=0, lower=True)
        start = pd.layers.fill_constant([1], "int64", 0)
        end = pd.layers.fill_constant([1], "int64", T)
        step = pd.layers.fill_constant([1], "int64", 1)
        positions = pd.op.range(Start=start, End=end, Step=step)
        pos = pd.op.lookup_table_v2(W=pd.layers.create_parameter([T, D], "float32",
                                                                 name="pos"), Ids=positions)
        state = pd.op.fill_constant_batch_size_like(Input=x, shape=[-1, T, D], value=0.0,
                                                    dtype=5, input_dim_idx=0,
                                                    output_dim_idx=0)
        h = _trained_fc(x + pos + state, D)
        scores = pd.layers.matmul(h, h, transpose_y=True)
        kept = pd.op.tril_triu(X=scores, diagonal=-1, lower=False)
        scores = scores * causal + (causal - 1.0) * 1e9
        loss = pd.mean(pd.layers.softmax(scores)) + pd.mean(kept * kept)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, causal, positions, state]
    main, compiled = _runs_both(build, lambda b: {"x": floats(b, T, D)})
    assert_compiled(main, compiled, "tril_triu", "tril_triu_grad", "range",
                    "fill_constant_batch_size_like")


@pytest.mark.parametrize("dtype, bounds", [
    ("int32", (7, -4, -3)), ("int64", (0, 10, 4)), ("float32", (0.5, 2.0, 0.1)),
    ("float64", (-1.0, 1.0, 0.3)), ("int64", (3, 3, 1))])
def test_range_counts_from_the_values_when_the_block_runs(dtype, bounds):
    """Start, End and Step fed: each run's count is worked out by the compiled code."""
    def build():
        start, end, step = (pd.data(n, [1], dtype) for n in ("start", "end", "step"))
        return [pd.op.range(Start=start, End=end, Step=step)]
    main, startup, fetch = build_program(build)
    lo, hi, by = bounds
    feeds = [{"start": np.array([lo], dtype), "end": np.array([hi + k * by], dtype),
              "step": np.array([by], dtype)} for k in (0, 0, 0, 2, 1)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "range")


def test_range_checks_its_step_in_the_compiled_code():
    """A step of 0 (or away from End) fed to a compiled training step raises the
    interpreter's error naming the op, and the parameters stay as they were."""
    def build():
        step = pd.data("step", [1], "int64")
        positions = pd.op.range(Start=pd.layers.fill_constant([1], "int64", 0),
                                End=pd.layers.fill_constant([1], "int64", T), Step=step)
        w = pd.layers.create_parameter([T, D], "float32", name="w")
        loss = pd.mean(pd.op.lookup_table_v2(W=w, Ids=positions))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss]
    main, exe, scope, compiled, fetch = compiled_after_learning(build,
                                                                {"step": np.array([2])})
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == "range")
    assert index in compiled.segments()
    for bad, why in ((0, "Step is 0"), (-1, "moves away from End")):
        assert_refused_and_kept(exe, compiled, main, scope, {"step": np.array([bad])}, fetch,
                                pd.ExecutionError, f"op {index} range.*{why}")
    exe.run(compiled, feed={"step": np.array([3])}, fetch_list=fetch, scope=scope)
    assert compiled.disabled_because is None


# --- one compiled function for every batch size ----------------------------------------------
def test_the_layout_forms_serve_every_batch_size():
    """Sizes are read when the block runs: another batch size runs the same source."""
    def build():
        x = pd.data("x", [None, T, D])
        outs = [pd.op.tile(X=x, repeat_times=[1, 2]), pd.op.expand_v2(X=pd.op.unsqueeze2(
            X=x, axes=[1]), shape=[-1, 3, T, D]), pd.op.pad(X=x, paddings=[0, 0, 1, 1, 0, 2]),
                pd.op.flip(X=x, axis=[0]), pd.op.roll(X=x, shifts=[1], axis=[0]),
                pd.op.tril_triu(X=x, diagonal=1, lower=True),
                pd.op.fill_constant_batch_size_like(Input=x, shape=[-1, 2], value=1.0,
                                                    dtype=5),
                pd.op.pixel_shuffle(X=pd.layers.reshape(x, [0, 4, 3, 2]), upscale_factor=2),
                pd.op.diagonal(Input=x, offset=1, axis1=1, axis2=2),
                pd.op.trace(Input=x, axis1=0, axis2=2), pd.op.crop_tensor(
                    X=x, shape=[-1, 2, 3], offsets=[0, 1, 1]),
                *pd.op.broadcast_tensors(X=[x, pd.data("y", [T, 1])], outputs={"Out": 2})]
        return outs
    main, startup, fetch = build_program(build)
    exe, scope = pd.Executor(), pd.Scope()
    compiled = pd.CompiledProgram(main)
    sources = []
    for batch in (2, 5):
        for _ in range(2):
            exe.run(compiled, feed={"x": floats(batch, T, D), "y": floats(T, 1)},
                    fetch_list=fetch, scope=scope)
        sources.append(compiled.source())
    assert sources[0] == sources[1] and "interpreted (" not in sources[0]


# --- diagonals, shuffles, grids and crops ---------------------------------------------------------
def test_diagonals_traces_and_eyes_trained():
    """A per-sample diagonal of scores [B, T, T] (diagonal over axes 1, 2), their trace
    as a regulariser, a learned vector made a diagonal matrix (diag_v2) and its diagonal
    taken back, an identity (eye) added to a covariance; trained, so every gradient runs.
    trace's row sums are the interpreter's (compared to float rounding: module docstring)."""
    def build():
        x = data("x", [None, T, D])
        h = _trained_fc(x, D)
        scores = pd.layers.matmul(h, h, transpose_y=True)
        diag = pd.op.diagonal(Input=scores, offset=1, axis1=1, axis2=2)
        trace = pd.op.trace(Input=scores, offset=0, axis1=2, axis2=1)
        scale = pd.layers.create_parameter([D], "float32", name="scale")
        matrix = pd.op.diag_v2(X=scale, offset=-1, padding_value=0.0)
        back = pd.op.diag_v2(X=matrix, offset=-1)
        eye = pd.op.eye(num_rows=D + 1, num_columns=D + 1, dtype=5)
        cov = pd.layers.matmul(matrix, matrix, transpose_y=True) + eye
        loss = pd.mean(diag * diag) + pd.mean(trace) + pd.mean(cov * cov) + pd.mean(back)
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, diag, trace, matrix, back, eye]
    main, compiled = _runs_both(build, lambda b: {"x": floats(b, T, D)}, exact=False)
    assert_compiled(main, compiled, "diagonal", "diagonal_grad", "trace", "trace_grad",
                    "diag_v2", "diag_v2_grad", "eye")


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_pixel_and_channel_shuffles_trained(fmt):
    """A sub-pixel upsampling (pixel_shuffle), its inverse and a ShuffleNet channel
    shuffle, each through an fc; the batch size changes between runs."""
    shape = [8, 3, 4] if fmt == "NCHW" else [3, 4, 8]

    def build():
        x = data("x", [None] + shape)
        up = pd.op.pixel_shuffle(X=x, upscale_factor=2, data_format=fmt)
        down = pd.op.pixel_unshuffle(X=up, downscale_factor=2, data_format=fmt)
        mixed = pd.op.channel_shuffle(X=down, groups=4, data_format=fmt)
        loss = pd.mean(_trained_fc(up, 3)) + pd.mean(_trained_fc(mixed, 3))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, up, down, mixed]
    main, compiled = _runs_both(build, lambda b: {"x": floats(b, *shape)})
    assert_compiled(main, compiled, "pixel_shuffle", "pixel_shuffle_grad", "pixel_unshuffle",
                    "pixel_unshuffle_grad", "channel_shuffle", "channel_shuffle_grad")


def test_broadcast_tensors_meshgrid_and_a_crop_trained():
    """Two learned tensors broadcast together, a grid of two learned vectors (meshgrid),
    and the tokens cropped to their middle (crop_tensor); all trained. The gradients that
    sum copies compare to float rounding (module docstring)."""
    def build():
        x = data("x", [None, T, D])
        a = pd.layers.create_parameter([1, D], "float32", name="a")
        b = pd.layers.create_parameter([T, 1], "float32", name="b")
        wide_a, wide_b = pd.op.broadcast_tensors(X=[a, b], outputs={"Out": 2})
        u = pd.layers.create_parameter([T], "float32", name="u")
        v = pd.layers.create_parameter([D], "float32", name="v")
        gu, gv = pd.op.meshgrid(X=[u, v], outputs={"Out": 2})
        h = _trained_fc(x, D) * (wide_a + wide_b) + gu * gv
        middle = pd.op.crop_tensor(X=h, shape=[-1, T - 2, D], offsets=[0, 1, 0])
        loss = pd.mean(middle * middle)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, wide_a, wide_b, gu, gv, middle]
    main, compiled = _runs_both(build, lambda b: {"x": floats(b, T, D)}, exact=False)
    assert_compiled(main, compiled, "broadcast_tensors", "broadcast_tensors_grad", "meshgrid",
                    "meshgrid_grad", "crop_tensor")
    assert "crop_tensor_grad: interpreted (no lowered form" in compiled.source()


def test_a_crop_of_a_given_shape_and_its_gradient():
    def build():
        x = data("x", [4, 5, 6], "float64")
        out = pd.op.crop_tensor(X=x, shape=[2, 3, 6], offsets=[1, 2, 0])
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = _runs_both(build, lambda b: {"x": floats(4, 5, 6, dtype=np.float64)},
                                batches=(4, 4, 4))
    assert_compiled(main, compiled, "crop_tensor", "crop_tensor_grad")
