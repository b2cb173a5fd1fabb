"""The op table: one or more rows per registered op, each checked against numpy.

Every row builds a one-op program by hand (``create_var`` + ``append_op``), runs it on the
CPU and on CUDA (numba's simulator here: tiny shapes) and compares each output with the
op's one numpy reference in tests/numpy_interpreter.py (the property tests and the fuzzer
use the same one; a row gives its own only where the interpreter cannot: feed and
fetch); on CUDA it also checks that the op's outputs are device arrays
(tensors stay on the device; only fetch copies back). It also checks what shape
inference declared when the op was appended: the declared shape must fit the real one
(same rank, equal where the declared dim is not -1) and the declared dtype must be the
real one. ``test_every_registered_op_has_a_row`` makes a newly registered op without a
row fail the suite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import registry
from paddle_nb.core.framework_pb2 import VarType
from paddle_nb.kernels.cuda import device
from paddle_nb.ops.fill import assign_value_attrs

import op_kinds
from numpy_interpreter import interpret

PLACES = {"cpu": pd.CPUPlace(), "cuda": pd.CUDAPlace(0)}

# VarType codes used by the dtype attributes of cast, fill_constant and the random ops.
BOOL, INT32, INT64, FP32, FP64 = 0, 2, 3, 5, 6


# --- inputs: small, deterministic arrays -----------------------------------------------
def floats(seed, *shape, low=-1.0, high=1.0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def spd(seed, batch, n, dtype=np.float32):
    """A batch of symmetric positive definite n x n matrices (cholesky's rows)."""
    a = floats(seed, batch, n, n, dtype=np.float64)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def ints(seed, *shape, low=-5, high=6, dtype=np.int32):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def off_kinks(seed, *shape, low=-2.0, high=2.0, kinks=()):
    """Floats in [low, high] at least 0.1 from each of ``kinks`` (for gradient rows)."""
    x = floats(seed, *shape, low=low, high=high)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.1, k + np.where(x < k, -0.1, 0.1), x)
    return x.astype(np.float32)


def distinct(seed, *shape):
    """Floats in [-0.5, 0.5) with no two equal (max pooling without ties)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) / n - 0.5) \
        .astype(np.float32)


def small_int_floats(seed, *shape):
    """Floats like -1.0, 0.0, 2.0: comparisons between two of them are often equal."""
    return ints(seed, *shape, low=-2, high=3).astype(np.float32)


def bools(seed, *shape):
    return np.random.default_rng(seed).integers(0, 2, shape).astype(np.bool_)


def nonzero_ints(seed, *shape):
    x = ints(seed, *shape, low=1, high=5)
    return x * np.where(bools(seed + 1000, *shape), 1, -1).astype(np.int32)


# --- one row of the table --------------------------------------------------------------
@dataclass
class Case:
    id: str
    op: str
    inputs: dict            # slot -> array, or a list of arrays for a duplicable slot
    attrs: dict
    # (inputs, attrs) -> {slot: array or list of arrays}: the expected outputs, for the
    # ops tests/numpy_interpreter.py has no reference for (feed and fetch, which move
    # values between the scope and the caller);
    # every other row is checked against the interpreter's (expected_outputs)
    reference: Callable | None = None
    # {slot: how many variables} the op writes, where that is not one per slot the op
    # declares non-dispensable (split's pieces, a fused op's IntermediateOut)
    outputs: dict | None = None
    # False for random ops: the reference then gives only the shape and dtype (the
    # interpreter's NotComputed).
    compare_values: bool = True
    # An extra check of the outputs ({slot: [arrays]}), e.g. statistics of random values.
    check: Callable | None = None
    # Declare X's first dim as -1 (the batch dim, as pd.data does) instead of its size.
    unknown_batch: bool = False
    # Output slots that must be passed but are not compared (XShape: dims, no data).
    unfetched: tuple = ()
    # Also check the gradient at this row (in float64, against central differences:
    # tests/test_op_gradients.py), so a new op needs one row for both.
    grad: bool = False


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


# NaN, infinities, signed zeros and small values, for the activations' NaN rows
SPECIALS = np.array([[np.nan, -1.0, 0.0, -0.0, 2.5], [np.inf, -np.inf, -np.nan, 1e-30, -3.0]])


def rnn_row(seed, mode, steps, batch, size, hidden, layers=1, bidirec=False, lengths=None,
            dtype=np.float32):
    """(inputs, attrs, outputs) of an ``rnn`` op row: Paddle's WeightList order (every
    W_ih, W_hh, then every b_ih, b_hh), weights small enough that tanh stays off its tails."""
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    dirs = 2 if bidirec else 1
    mats, biases = [], []
    for k in range(layers * dirs):
        width = size if k < dirs else dirs * hidden
        mats += [floats(seed + 4 * k, gates * hidden, width, low=-0.6, high=0.6, dtype=dtype),
                 floats(seed + 4 * k + 1, gates * hidden, hidden, low=-0.6, high=0.6,
                        dtype=dtype)]
        biases += [floats(seed + 4 * k + 2, gates * hidden, dtype=dtype),
                   floats(seed + 4 * k + 3, gates * hidden, dtype=dtype)]
    n_states = 2 if mode == "LSTM" else 1
    inputs = {"Input": floats(seed + 99, steps, batch, size, dtype=dtype),
              "PreState": [floats(seed + 100 + i, layers * dirs, batch, hidden, dtype=dtype)
                           for i in range(n_states)],
              "WeightList": mats + biases}
    if lengths is not None:
        inputs["SequenceLength"] = np.array(lengths, np.int64)
    attrs = {"mode": mode, "input_size": size, "hidden_size": hidden, "num_layers": layers,
             "is_bidirec": bidirec}
    return inputs, attrs, {"Out": 1, "State": n_states}


def distributions(seed, *shape):
    """Rows that sum to 1 (probabilities or soft labels)."""
    e = np.exp(floats(seed, *shape, low=-2.0, high=2.0).astype(np.float64))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def sums_to_one(axis):
    def check(out):
        np.testing.assert_allclose(out["Out"][0].sum(axis=axis), 1.0, rtol=1e-5)
    return check


def _nce_drawn_ok(out, true_classes, classes):
    """nce with drawn negatives: the true classes first, the negatives in range, and each
    logit sigmoid-valued (the cost is then the rows' NCE terms, checked exactly by the
    custom_negatives row)."""
    labels, logits = out["SampleLabels"][0], out["SampleLogits"][0]
    assert list(labels[:, 0]) == true_classes
    assert labels.min() >= 0 and labels.max() < classes
    assert (logits > 0).all() and (logits < 1).all() and (out["Cost"][0] > 0).all()


def uniform_statistics(out):
    v = out["Out"][0].astype(np.float64)
    low, high = -2.0, 3.0                      # the attrs of the uniform_random rows
    assert v.min() >= low and v.max() < high
    assert abs(v.mean() - (low + high) / 2) < 0.05
    assert abs(v.std() - (high - low) / np.sqrt(12)) < 0.05
    assert len(np.unique(v)) > v.size // 2     # not a constant fill


def gaussian_statistics(out):
    v = out["Out"][0].astype(np.float64)
    assert abs(v.mean() - 1.0) < 0.1            # the attrs of the gaussian_random row
    assert abs(v.std() - 2.0) < 0.1
    assert 0.60 < np.mean(np.abs(v - 1.0) < 2.0) < 0.76   # about 68% within one std


def bn_inputs(seed, *shape, c=None):
    """batch_norm's inputs: X, and per channel (dim 1, or ``c``) Scale, Bias, Mean and a
    positive Variance."""
    c = shape[1] if c is None else c
    return {"X": floats(seed, *shape, low=-1.0, high=2.0), "Scale": floats(seed + 1, c),
            "Bias": floats(seed + 2, c), "Mean": floats(seed + 3, c),
            "Variance": floats(seed + 4, c, low=0.5, high=2.0)}


def dropout_statistics(p):
    """A random mask: about p of it dropped, Out = X / (1 - p) where kept, 0 elsewhere."""
    def check(out):
        mask = out["Mask"][0]
        assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 1}
        assert abs((mask == 0).mean() - p) < 0.15
        x = floats(184, 8, 16, low=0.5, high=1.5)           # the row's X
        np.testing.assert_allclose(out["Out"][0], np.where(mask == 1, x / (1 - p), 0),
                                   rtol=1e-6)
    return check


# randint, randperm (ops/sampling.py)
def randint_statistics(out):
    """randint's seeded row: every value of [-3, 5) drawn, about equally often."""
    v = out["Out"][0]
    assert v.min() >= -3 and v.max() <= 4 and set(np.unique(v)) == set(range(-3, 5))
    assert abs(v.mean() - 0.5) < 0.25


def is_permutation(out):
    """randperm's rows: each of 0..n-1 once, not in order."""
    v = out["Out"][0]
    np.testing.assert_array_equal(np.sort(v), np.arange(v.size))
    assert (v != np.arange(v.size)).any()


# --- the table ---------------------------------------------------------------------------
CASES = [
    # elementwise arithmetic: equal shapes, Fluid's axis broadcasting, integer inputs
    Case("same_shape", "elementwise_add", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 3, 4)},
         {}),
    Case("axis1_y3", "elementwise_add", {"X": floats(1, 2, 3, 4), "Y": floats(3, 3)},
         {"axis": 1}),
    Case("axis-1_y4", "elementwise_add", {"X": floats(1, 2, 3, 4), "Y": floats(4, 4)},
         {"axis": -1}),
    Case("scalar_y1", "elementwise_add", {"X": floats(1, 2, 3, 4), "Y": floats(5, 1)},
         {"axis": -1}),
    Case("axis1_batch-1", "elementwise_add", {"X": floats(1, 2, 3, 4), "Y": floats(3, 3)},
         {"axis": 1}, unknown_batch=True),
    Case("x_smaller_than_y", "elementwise_add", {"X": floats(6, 4), "Y": floats(7, 2, 3, 4)},
         {"axis": -1}),
    Case("int32", "elementwise_add", {"X": ints(1, 2, 3), "Y": ints(2, 2, 3)},
         {}),
    Case("int64_axis1", "elementwise_add",
         {"X": ints(1, 2, 3, 4, dtype=np.int64), "Y": ints(2, 3, dtype=np.int64)},
         {"axis": 1}),
    Case("same_shape", "elementwise_sub", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 3, 4)},
         {}),
    Case("axis1_y3", "elementwise_sub", {"X": floats(1, 2, 3, 4), "Y": floats(3, 3)},
         {"axis": 1}),
    Case("axis-1_y4", "elementwise_sub", {"X": floats(1, 2, 3, 4), "Y": floats(4, 4)},
         {"axis": -1}),
    Case("scalar_y1", "elementwise_sub", {"X": floats(1, 2, 3, 4), "Y": floats(5, 1)},
         {}),
    Case("int32", "elementwise_sub", {"X": ints(1, 2, 3), "Y": ints(2, 2, 3)},
         {}),
    Case("same_shape", "elementwise_mul", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 3, 4)},
         {}),
    Case("axis1_y3", "elementwise_mul", {"X": floats(1, 2, 3, 4), "Y": floats(3, 3)},
         {"axis": 1}),
    Case("axis-1_y4", "elementwise_mul", {"X": floats(1, 2, 3, 4), "Y": floats(4, 4)},
         {"axis": -1}),
    Case("scalar_y1", "elementwise_mul", {"X": floats(1, 2, 3, 4), "Y": floats(5, 1)},
         {}),
    Case("axis0_y2x3", "elementwise_mul", {"X": floats(1, 2, 3, 4), "Y": floats(8, 2, 3)},
         {"axis": 0}),
    Case("int32", "elementwise_mul", {"X": ints(1, 2, 3), "Y": ints(2, 2, 3)},
         {}),
    Case("int64_axis-1", "elementwise_mul",
         {"X": ints(1, 2, 3, 4, dtype=np.int64), "Y": ints(2, 4, dtype=np.int64)},
         {"axis": -1}),
    Case("same_shape", "elementwise_div",
         {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 3, 4, low=0.5, high=2.0)},
         {}),
    Case("axis1_y3", "elementwise_div",
         {"X": floats(1, 2, 3, 4), "Y": floats(3, 3, low=0.5, high=2.0)},
         {"axis": 1}),
    Case("axis-1_y4", "elementwise_div",
         {"X": floats(1, 2, 3, 4), "Y": floats(4, 4, low=-2.0, high=-0.5)},
         {"axis": -1}),
    Case("scalar_y1", "elementwise_div",
         {"X": floats(1, 2, 3, 4), "Y": floats(5, 1, low=0.5, high=2.0)},
         {}),
    Case("int32_truncates", "elementwise_div",
         {"X": ints(1, 3, 4, low=-9, high=10), "Y": nonzero_ints(2, 3, 4)},
         {}),
    # max / min / pow (ties and kinks avoided for the gradient rows); floordiv and mod
    # round down and take Y's sign, as Paddle (and Python)
    Case("axis1", "elementwise_max", {"X": floats(31, 2, 3, 4), "Y": floats(32, 3)},
         {"axis": 1}, grad=True),
    Case("int32", "elementwise_max", {"X": ints(33, 3, 4), "Y": ints(34, 3, 4)}, {}),
    Case("same_shape", "elementwise_min", {"X": floats(35, 3, 4), "Y": floats(36, 3, 4)},
         {}, grad=True),
    Case("same_shape", "elementwise_pow",
         {"X": floats(37, 3, 4, low=0.5, high=2), "Y": floats(38, 3, 4, low=-2, high=2)},
         {}, grad=True),
    Case("int32", "elementwise_floordiv",
         {"X": ints(39, 3, 4, low=-9, high=10), "Y": nonzero_ints(40, 3, 4)}, {}),
    Case("float32", "elementwise_floordiv",
         {"X": floats(41, 3, 4, low=-5, high=5), "Y": floats(42, 4, low=0.5, high=2)}, {}),
    Case("int64", "elementwise_mod",
         {"X": ints(43, 3, 4, low=-9, high=10, dtype=np.int64),
          "Y": nonzero_ints(44, 3, 4).astype(np.int64)}, {}),
    Case("float32", "elementwise_mod",
         {"X": floats(45, 3, 4, low=-5, high=5), "Y": floats(46, 3, 4, low=-3, high=-0.5)},
         {}),

    # comparisons give bool
    Case("same_shape", "greater_than",
         {"X": small_int_floats(1, 3, 4), "Y": small_int_floats(2, 3, 4)},
         {}),
    Case("axis1", "greater_than",
         {"X": small_int_floats(1, 2, 3, 4), "Y": small_int_floats(2, 3)},
         {"axis": 1}),
    Case("int64", "greater_than",
         {"X": ints(1, 3, 4, dtype=np.int64), "Y": ints(2, 3, 4, dtype=np.int64)},
         {}),
    Case("same_shape", "less_than",
         {"X": small_int_floats(1, 3, 4), "Y": small_int_floats(2, 3, 4)},
         {}),
    Case("scalar_y1", "less_than",
         {"X": small_int_floats(1, 3, 4), "Y": np.zeros([1], np.float32)},
         {}),
    Case("same_shape", "equal",
         {"X": small_int_floats(1, 3, 4), "Y": small_int_floats(2, 3, 4)},
         {}),
    Case("int32_axis-1", "equal", {"X": ints(1, 3, 4, low=0, high=3), "Y": ints(2, 4, low=0,
                                                                                high=3)},
         {"axis": -1}),
    Case("int64_beyond_2**53", "equal",
         {"X": np.array([2**53, 2**53 + 1], np.int64), "Y": np.array([2**53 + 1] * 2, np.int64)},
         {}),
    Case("same_shape", "not_equal",
         {"X": small_int_floats(1, 3, 4), "Y": small_int_floats(2, 3, 4)},
         {}),
    Case("bool", "not_equal", {"X": bools(1, 3, 4), "Y": bools(2, 3, 4)},
         {}),

    # logical ops on bool
    Case("same_shape", "logical_and", {"X": bools(1, 3, 4), "Y": bools(2, 3, 4)},
         {}),
    Case("column_and_row", "logical_and", {"X": bools(1, 3, 1), "Y": bools(2, 4)},
         {}),
    Case("same_shape", "logical_or", {"X": bools(1, 3, 4), "Y": bools(2, 3, 4)},
         {}),
    Case("y_of_higher_rank", "logical_or", {"X": bools(1, 2, 3), "Y": bools(2, 2, 1, 3)},
         {}),
    Case("bool", "logical_not", {"X": bools(1, 3, 4)}, {}),

    # unary activations
    Case("float32", "relu", {"X": floats(1, 3, 4)}, {}),
    Case("float64", "relu", {"X": floats(2, 3, 4, dtype=np.float64)}, {}),
    Case("float32", "sigmoid", {"X": floats(1, 3, 4, low=-5, high=5)}, {}),
    Case("large_values", "sigmoid",
         {"X": np.array([[-50.0, -20.0, 0.0, 20.0, 50.0]], np.float32)}, {}),
    Case("float32", "tanh", {"X": floats(1, 3, 4, low=-3, high=3)}, {}),
    Case("float32", "exp", {"X": floats(1, 3, 4, low=-3, high=3)}, {}),
    Case("positive", "log", {"X": floats(1, 3, 4, low=0.1, high=5)}, {}),
    Case("float32", "square", {"X": floats(1, 3, 4)}, {}),
    *[Case(f"approximate_{a}", "gelu", {"X": floats(1, 3, 4, low=-4, high=4)},
           {"approximate": a}, grad=True) for a in (False, True)],
    # ReLU and its variants (ops/relu_variants.py); inputs 0.1 or more from each kink
    Case("float32", "relu6", {"X": off_kinks(151, 3, 4, low=-3, high=9, kinks=(0, 6))}, {},
         grad=True),
    Case("threshold", "relu6", {"X": off_kinks(152, 3, 4, low=-2, high=3, kinks=(0, 1.5))},
         {"threshold": 1.5}, grad=True),
    Case("alpha", "leaky_relu", {"X": off_kinks(153, 3, 4, kinks=(0,))}, {"alpha": 0.1},
         grad=True),
    Case("paddle_defaults", "hard_swish",
         {"X": off_kinks(154, 3, 4, low=-5, high=5, kinks=(-3, 3))},
         {"threshold": 6.0, "scale": 6.0, "offset": 3.0}, grad=True),
    Case("slope", "hard_sigmoid", {"X": off_kinks(155, 3, 4, low=-5, high=5,
                                                  kinks=(-3, 3))},
         {"slope": 1 / 6, "offset": 0.5}, grad=True),
    Case("beta", "swish", {"X": floats(156, 3, 4, low=-5, high=5)}, {"beta": 1.5}, grad=True),
    Case("float32", "silu", {"X": floats(157, 3, 4, low=-5, high=5)}, {}, grad=True),
    Case("alpha", "elu", {"X": off_kinks(158, 3, 4, low=-4, high=3, kinks=(0,))},
         {"alpha": 0.5}, grad=True),
    Case("threshold", "softplus", {"X": off_kinks(159, 3, 4, low=-8, high=8, kinks=(5,))},
         {"beta": 2.0, "threshold": 10.0}, grad=True),
    *[Case(f"{mode}_{layout}", "prelu",
           {"X": off_kinks(160, 2, 3, 2, 2, kinks=(0,)), "Alpha": alpha},
           {"mode": mode, "data_format": layout}, grad=True)
      for mode, layout, alpha in (("all", "NCHW", floats(161, 1, low=0.1, high=0.5)),
                                  ("channel", "NCHW", floats(162, 3)),
                                  ("channel", "NHWC", floats(163, 2)),
                                  ("element", "NCHW", floats(164, 1, 3, 2, 2)))],
    # mish, logsigmoid, celu, selu, softsign, tanh_shrink (ops/smooth_activations.py);
    # hard_shrink, softshrink, thresholded_relu, brelu (ops/shrink_activations.py), inputs
    # 0.1 or more from each kink; logsumexp (ops/logsumexp.py). "large" rows: |X| to 100,
    # where a textbook formula overflows or takes log(0)
    Case("float32", "mish", {"X": floats(181, 3, 4, low=-5, high=5)}, {}, grad=True),
    Case("threshold", "mish", {"X": off_kinks(182, 3, 4, low=-3, high=3, kinks=(1,))},
         {"threshold": 1.0}, grad=True),
    Case("large", "mish", {"X": np.float32([[-100, -30, -1e-3, 0, 30, 100]])}, {}, grad=True),
    Case("float32", "logsigmoid", {"X": floats(183, 3, 4, low=-6, high=6)}, {}, grad=True),
    Case("large", "logsigmoid", {"X": np.float32([[-100, -30, -1e-3, 0, 30, 100]])}, {},
         grad=True),
    Case("alpha", "celu", {"X": off_kinks(184, 3, 4, low=-4, high=3, kinks=(0,))},
         {"alpha": 0.5}, grad=True),
    Case("negative_alpha", "celu", {"X": off_kinks(185, 3, 4, kinks=(0,))}, {"alpha": -2.0},
         grad=True),
    Case("paddle_defaults", "selu", {"X": off_kinks(186, 3, 4, low=-4, high=3, kinks=(0,))},
         {}, grad=True),
    Case("scale_alpha", "selu", {"X": off_kinks(187, 3, 4, kinks=(0,))},
         {"scale": 2.0, "alpha": 0.5}, grad=True),
    Case("float32", "softsign", {"X": floats(188, 3, 4, low=-5, high=5)}, {}, grad=True),
    Case("float32", "tanh_shrink", {"X": floats(189, 3, 4, low=-3, high=3)}, {}, grad=True),
    Case("small", "tanh_shrink", {"X": np.float32([[-0.06, -0.04, -1e-3, 1e-5, 0.02, 0.05]])},
         {}, grad=True),
    Case("threshold", "hard_shrink", {"X": off_kinks(190, 3, 4, kinks=(-0.3, 0.3))},
         {"threshold": 0.3}, grad=True),
    Case("lambda", "softshrink", {"X": off_kinks(191, 3, 4, kinks=(-0.35, 0.35))},
         {"lambda": 0.35}, grad=True),
    Case("threshold", "thresholded_relu", {"X": off_kinks(192, 3, 4, kinks=(0.7,))},
         {"threshold": 0.7}, grad=True),
    Case("hardtanh", "brelu", {"X": off_kinks(193, 3, 4, kinks=(-0.5, 0.7))},
         {"t_min": -0.5, "t_max": 0.7}, grad=True),
    *[Case(f"specials_{op}", op, {"X": SPECIALS.astype(np.float32)}, {})
      for op in ("mish", "logsigmoid", "softsign", "tanh_shrink", "hard_shrink", "softshrink",
                 "thresholded_relu", "brelu")],
    Case("axis_none", "logsumexp", {"X": floats(194, 2, 3, 4, low=-3, high=3)},
         {"axis": [], "reduce_all": True}, grad=True),
    Case("axis1", "logsumexp", {"X": floats(195, 2, 3, 4, low=-3, high=3)}, {"axis": [1]},
         grad=True),
    Case("axes0_2_keepdim", "logsumexp", {"X": floats(196, 2, 3, 4, low=-3, high=3)},
         {"axis": [0, -1], "keepdim": True}, grad=True),
    Case("large", "logsumexp",
         {"X": np.float32([[1000, -1000, 0], [-100, -100, -100], [88, 89, 90]])},
         {"axis": [1]}, grad=True),
    Case("infinities", "logsumexp",
         {"X": np.float32([[-np.inf, -np.inf], [np.inf, 1], [-np.inf, 3]])}, {"axis": [1]}),
    Case("empty_axis", "logsumexp", {"X": np.zeros((2, 0), np.float32)}, {"axis": [1]}),
    # maxout (ops/maxout.py): no ties, so each group's max (and its gradient) is unique
    Case("groups2_nchw", "maxout", {"X": distinct(197, 2, 4, 2, 3)}, {"groups": 2, "axis": 1},
         grad=True),
    Case("groups3_nhwc", "maxout", {"X": distinct(198, 1, 2, 3, 6)}, {"groups": 3, "axis": -1},
         grad=True),
    # pooling (ops/pool.py): inputs without ties, so each max (and its gradient) is unique
    Case("max_2x2", "pool2d", {"X": distinct(171, 2, 2, 4, 4)},
         {"ksize": [2, 2], "strides": [2, 2], "pooling_type": "max"}, grad=True),
    Case("avg_ceil_padded_inclusive", "pool2d", {"X": floats(172, 1, 2, 5, 5)},
         {"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1], "pooling_type": "avg",
          "ceil_mode": True, "exclusive": False}, grad=True),
    Case("avg_ceil_past_the_padding", "pool2d", {"X": floats(170, 1, 2, 6, 6)},  # 4x4 out
         {"pooling_type": "avg", "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1],
          "ceil_mode": True, "exclusive": False}, grad=True),
    Case("avg_asymmetric_exclusive", "pool2d", {"X": floats(173, 1, 2, 4, 5)},
         {"ksize": [2, 3], "strides": [1, 2], "paddings": [1, 0, 0, 2],
          "pooling_type": "avg"}, grad=True),
    Case("max_same_ceil", "pool2d", {"X": distinct(174, 1, 2, 5, 5)},
         {"ksize": [3, 3], "strides": [2, 2], "padding_algorithm": "SAME",
          "pooling_type": "max"}, grad=True),
    Case("avg_valid", "pool2d", {"X": floats(175, 1, 1, 5, 4)},
         {"ksize": [2, 2], "strides": [2, 1], "paddings": [1, 1],
          "padding_algorithm": "VALID", "pooling_type": "avg"}, grad=True),
    Case("global_avg", "pool2d", {"X": floats(176, 2, 3, 3, 2)},
         {"ksize": [1, 1], "global_pooling": True, "pooling_type": "avg"}, grad=True),
    Case("adaptive_max", "pool2d", {"X": distinct(177, 1, 2, 5, 7)},
         {"ksize": [2, 3], "adaptive": True, "pooling_type": "max"}, grad=True),
    Case("adaptive_avg", "pool2d", {"X": floats(178, 1, 2, 5, 7)},
         {"ksize": [3, 4], "adaptive": True, "pooling_type": "avg"}, grad=True),
    Case("max_nhwc", "pool2d", {"X": distinct(179, 1, 4, 5, 3)},
         {"ksize": [2, 2], "strides": [2, 2], "paddings": [0, 1], "pooling_type": "max",
          "data_format": "NHWC"}, grad=True),
    Case("with_padding", "max_pool2d_with_index", {"X": distinct(180, 1, 2, 5, 5)},
         {"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]}, grad=True),
    Case("2x2", "max_pool2d_with_index", {"X": distinct(181, 2, 1, 4, 4)},
         {"ksize": [2, 2], "strides": [2, 2], "paddings": [0, 0]}, grad=True),
    Case("adaptive", "max_pool2d_with_index", {"X": distinct(182, 1, 2, 5, 7)},
         {"ksize": [2, 3], "adaptive": True}, grad=True),
    Case("global", "max_pool2d_with_index", {"X": distinct(183, 1, 2, 3, 4)},
         {"ksize": [1, 1], "global_pooling": True}, grad=True),
    # interpolation (ops/interp.py): sizes from attributes, scale, and run-time tensors
    Case("scale2", "nearest_interp_v2", {"X": floats(191, 1, 2, 3, 2)},
         {"scale": [2.0, 2.0], "interp_method": "nearest", "align_corners": False,
          "align_mode": 0}, grad=True),
    Case("corners_nhwc", "nearest_interp_v2", {"X": floats(192, 1, 3, 4, 2)},
         {"out_h": 5, "out_w": 3, "interp_method": "nearest", "align_corners": True,
          "data_layout": "NHWC"}, grad=True),
    Case("out_size", "nearest_interp_v2",
         {"X": floats(193, 1, 1, 4, 5), "OutSize": np.int32([3, 7])},
         {"interp_method": "nearest", "align_corners": False}, grad=True),
    Case("half_pixel", "bilinear_interp_v2", {"X": floats(194, 1, 2, 3, 4)},
         {"out_h": 5, "out_w": 7, "interp_method": "bilinear", "align_corners": False,
          "align_mode": 0}, grad=True),
    Case("corners", "bilinear_interp_v2", {"X": floats(195, 2, 1, 3, 3)},
         {"out_h": 4, "out_w": 5, "interp_method": "bilinear", "align_corners": True},
         grad=True),
    Case("scale_tensor", "bilinear_interp_v2",
         {"X": floats(196, 1, 1, 4, 4), "Scale": np.float32([1.5, 0.75])},
         {"interp_method": "bilinear", "align_corners": False, "align_mode": 0}, grad=True),
    Case("size_tensor_nhwc", "bilinear_interp_v2",
         {"X": floats(197, 1, 3, 3, 2), "SizeTensor": [np.int32([2]), np.int32([5])]},
         {"interp_method": "bilinear", "align_corners": False, "align_mode": 1,
          "data_layout": "NHWC"}, grad=True),
    # elementwise math of one tensor (ops/unary_math.py); inputs away from kinks and poles
    Case("float32", "abs", {"X": floats(21, 3, 4, low=0.2, high=2)
                            * np.where(bools(26, 3, 4), 1, -1).astype(np.float32)}, {},
         grad=True),
    Case("int32", "abs", {"X": ints(22, 3, 4)}, {}),
    Case("with_zeros", "sign", {"X": small_int_floats(23, 3, 4)}, {}),
    Case("away_from_0", "sign", {"X": floats(24, 3, 4, low=0.2, high=2)
                                 * np.where(bools(25, 3, 4), 1, -1).astype(np.float32)}, {},
         grad=True),
    Case("positive", "sqrt", {"X": floats(24, 3, 4, low=0.2, high=4)}, {}, grad=True),
    Case("positive", "rsqrt", {"X": floats(25, 3, 4, low=0.2, high=4)}, {}, grad=True),
    Case("factor", "pow", {"X": floats(26, 3, 4, low=0.2, high=3)}, {"factor": 2.5},
         grad=True),
    Case("factor_tensor", "pow", {"X": floats(27, 3, 4, low=0.2, high=3),
                                  "FactorTensor": np.float32([3.0])}, {"factor": 2.5}),
    Case("bounds", "clip", {"X": floats(28, 3, 4, low=-2, high=2)},
         {"min": -0.5, "max": 0.7}, grad=True),
    Case("bound_tensors", "clip", {"X": floats(29, 3, 4, low=-2, high=2),
                                   "Min": np.float32([-0.25]), "Max": np.float32([0.5])}, {}),
    # NaN and inf come out as numpy gives them: relu(NaN) is NaN (numpy's maximum, Paddle)
    *[Case(f"nan_inf_{np.dtype(t).name}", op, {"X": SPECIALS.astype(t)}, {})
      for op in ("relu", "sigmoid", "tanh", "exp", "log", "square")
      for t in (np.float32, np.float64)],
    Case("int32", "square", {"X": ints(1, 3, 4)}, {}),

    # scale and cast
    Case("bias_after_scale", "scale", {"X": floats(1, 3, 4)},
         {"scale": 2.5, "bias": 0.5, "bias_after_scale": True}),
    Case("bias_before_scale", "scale", {"X": floats(1, 3, 4)},
         {"scale": 2.5, "bias": 0.5, "bias_after_scale": False}),
    Case("int32", "scale", {"X": ints(1, 3, 4)},
         {"scale": 3.0, "bias": -1.0, "bias_after_scale": True}),
    Case("scale_tensor_overrides_attr", "scale",
         {"X": floats(1, 3, 4), "ScaleTensor": np.array([-3.0], np.float32)},
         {"scale": 2.0, "bias": 1.0, "bias_after_scale": True}),
    Case("fp32_to_int32", "cast", {"X": floats(1, 3, 4, low=-4, high=4)},
         {"in_dtype": FP32, "out_dtype": INT32}),
    Case("fp32_to_fp64", "cast", {"X": floats(1, 3, 4)},
         {"in_dtype": FP32, "out_dtype": FP64}),
    Case("int64_to_fp32", "cast", {"X": ints(1, 3, 4, dtype=np.int64)},
         {"in_dtype": INT64, "out_dtype": FP32}),
    Case("fp32_to_bool", "cast", {"X": small_int_floats(1, 3, 4)},
         {"in_dtype": FP32, "out_dtype": BOOL}),

    # matrix products
    Case("x_num_col_dims2", "mul", {"X": floats(1, 2, 3, 4), "Y": floats(2, 4, 5)},
         {"x_num_col_dims": 2}),
    Case("x_num_col_dims1_flattens", "mul", {"X": floats(1, 2, 3, 4), "Y": floats(2, 12, 5)},
         {"x_num_col_dims": 1}),
    Case("batch-1", "mul", {"X": floats(1, 2, 3), "Y": floats(2, 3, 5)},
         {"x_num_col_dims": 1}, unknown_batch=True),
    Case("tanh_add_bias", "fused_elemwise_activation", {"X": floats(1, 4, 5), "Y": floats(2, 5)},
         {"functor_list": ["tanh", "elementwise_add"], "save_intermediate_out": True},
         outputs={"Out": 1, "IntermediateOut": 1}),
    Case("mul_sigmoid_axis1", "fused_elemwise_activation",
         {"X": floats(1, 2, 3, 4, dtype=np.float64), "Y": floats(2, 3, dtype=np.float64)},
         {"functor_list": ["elementwise_mul", "sigmoid"], "axis": 1,
          "save_intermediate_out": True}, outputs={"Out": 1, "IntermediateOut": 1}),
    Case("scale_mul", "fused_elemwise_activation", {"X": floats(1, 3, 4), "Y": floats(2, 3, 4)},
         {"functor_list": ["scale", "elementwise_mul"], "scale": 0.5,
          "save_intermediate_out": True}, outputs={"Out": 1, "IntermediateOut": 1}),
    Case("add_relu", "fused_elemwise_add_activation",
         {"X": floats(1, 2, 3, 4), "Y": floats(2, 3, 4)},
         {"functor_list": ["elementwise_add", "relu"], "save_intermediate_out": True},
         outputs={"Out": 1, "IntermediateOut": 1}),
    Case("relu_add", "fused_elemwise_add_activation", {"X": floats(1, 3, 4), "Y": floats(2, 4)},
         {"functor_list": ["relu", "elementwise_add"], "save_intermediate_out": True},
         outputs={"Out": 1, "IntermediateOut": 1}),
    Case("relu_bias", "fc", {"Input": floats(1, 4, 6), "W": floats(2, 6, 3),
                             "Bias": floats(3, 3)},
         {"activation_type": "relu"}),
    Case("no_bias_cols2", "fc", {"Input": floats(1, 2, 3, 4, dtype=np.float64),
                                 "W": floats(2, 4, 5, dtype=np.float64)},
         {"in_num_col_dims": 2}),
    Case("padded_weights_bias_1xn", "fc", {"Input": floats(1, 3, 4), "W": floats(2, 8, 9),
                                           "Bias": floats(3, 1, 5)},
         {"padding_weights": True}),
    Case("2d", "matmul_v2", {"X": floats(1, 3, 4), "Y": floats(2, 4, 5)}, {}),
    Case("batched_3d", "matmul_v2", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 4, 5)}, {}),
    Case("broadcast_batch", "matmul_v2", {"X": floats(1, 2, 1, 3, 4), "Y": floats(2, 3, 4, 5)},
         {}),
    Case("3d_times_2d", "matmul_v2", {"X": floats(1, 2, 3, 4), "Y": floats(2, 4, 5)}, {},
         unknown_batch=True),
    Case("trans_x", "matmul_v2", {"X": floats(1, 4, 3), "Y": floats(2, 4, 5)},
         {"trans_x": True}),
    Case("trans_y", "matmul_v2", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 5, 4)},
         {"trans_y": True}),
    Case("trans_both", "matmul_v2", {"X": floats(1, 4, 3), "Y": floats(2, 5, 4)},
         {"trans_x": True, "trans_y": True}),
    Case("vector_times_matrix", "matmul_v2", {"X": floats(1, 4), "Y": floats(2, 4, 5)}, {}),
    Case("matrix_times_vector", "matmul_v2", {"X": floats(1, 3, 4), "Y": floats(2, 4)}, {}),
    Case("batch_times_vector", "matmul_v2", {"X": floats(1, 2, 3, 4), "Y": floats(2, 4)}, {}),
    Case("vector_dot_vector", "matmul_v2", {"X": floats(1, 4), "Y": floats(2, 4)}, {}),
    Case("stack", "bmm", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 4, 5)}, {}, grad=True),
    Case("one_matrix", "bmm", {"X": floats(3, 1, 1, 4), "Y": floats(4, 1, 4, 2)}, {}, grad=True),
    Case("2d", "matmul", {"X": floats(1, 3, 4), "Y": floats(2, 4, 5)}, {}),
    Case("transpose_X", "matmul", {"X": floats(1, 4, 3), "Y": floats(2, 4, 5)},
         {"transpose_X": True}),
    Case("transpose_Y_alpha", "matmul", {"X": floats(1, 2, 3, 4), "Y": floats(2, 2, 5, 4)},
         {"transpose_Y": True, "alpha": 0.5}),
    Case("both_alpha", "matmul", {"X": floats(1, 4, 3), "Y": floats(2, 5, 4)},
         {"transpose_X": True, "transpose_Y": True, "alpha": -2.0}),

    # reductions and softmax
    Case("three_inputs", "sum", {"X": [floats(1, 2, 3), floats(2, 2, 3), floats(3, 2, 3)]},
         {}),
    Case("int32", "sum", {"X": [ints(1, 2, 3), ints(2, 2, 3)]}, {}),
    Case("all_elements", "mean", {"X": floats(1, 2, 3, 4)}, {}),
    Case("dim1", "reduce_max", {"X": floats(61, 2, 3, 4)}, {"dim": [1]}, grad=True),
    Case("all_keep_dim", "reduce_max", {"X": ints(62, 3, 4)},
         {"dim": [0], "reduce_all": True, "keep_dim": True}),
    Case("dim-1", "reduce_min", {"X": floats(63, 3, 4)}, {"dim": [-1]}, grad=True),
    Case("dim0_2", "reduce_prod", {"X": floats(64, 2, 3, 4, low=0.5, high=1.5)},
         {"dim": [0, 2]}, grad=True),
    Case("int32", "reduce_prod", {"X": ints(65, 3, 2)}, {"dim": [1]}),
    Case("float32", "squared_l2_norm", {"X": floats(66, 3, 4)}, {}, grad=True),
    Case("p2_axis1", "p_norm", {"X": floats(140, 3, 4)}, {"porder": 2.0, "axis": 1},
         grad=True),
    Case("p1_axis0_keepdim", "p_norm", {"X": floats(141, 3, 4)},
         {"porder": 1.0, "axis": 0, "keepdim": True}, grad=True),
    Case("p3_asvector", "p_norm", {"X": floats(142, 2, 3)}, {"porder": 3.0, "asvector": True},
         grad=True),
    Case("inf", "p_norm", {"X": floats(143, 3, 4)}, {"porder": float("inf")}, grad=True),
    Case("-inf_keepdim", "p_norm", {"X": floats(144, 3, 4)},
         {"porder": float("-inf"), "axis": 0, "keepdim": True}, grad=True),
    Case("zero_counts_nonzeros", "p_norm", {"X": np.float32([[0, 1.5, 0], [2, -1, 3]])},
         {"porder": 0.0, "axis": 1}, grad=True),
    Case("half_asvector_keepdim", "p_norm", {"X": floats(145, 2, 2, low=0.2, high=1)},
         {"porder": 0.5, "asvector": True, "keepdim": True}, grad=True),
    Case("axis-1", "log_softmax", {"X": floats(67, 3, 5, low=-3, high=3)}, {"axis": -1},
         grad=True),
    Case("axis0_large", "log_softmax",
         {"X": np.array([[1000.0, -1000.0], [0.0, 1000.0]], np.float32)}, {"axis": 0}),
    Case("dim1", "reduce_sum", {"X": floats(1, 2, 3, 4)}, {"dim": [1]}),
    Case("dim0_2", "reduce_sum", {"X": floats(1, 2, 3, 4)}, {"dim": [0, 2]}),
    Case("dim-1_keep_dim", "reduce_sum", {"X": floats(1, 2, 3, 4)},
         {"dim": [-1], "keep_dim": True}),
    Case("reduce_all", "reduce_sum", {"X": floats(1, 2, 3, 4)}, {"dim": [0], "reduce_all": True}),
    Case("int64_dim1", "reduce_sum", {"X": ints(1, 2, 3, 4, dtype=np.int64)}, {"dim": [1]}),
    Case("dim1_batch-1", "reduce_sum", {"X": floats(1, 2, 3, 4)}, {"dim": [1]}, unknown_batch=True),
    Case("dim1", "reduce_mean", {"X": floats(1, 2, 3, 4)}, {"dim": [1]}),
    Case("dim0_2_keep_dim", "reduce_mean", {"X": floats(1, 2, 3, 4)},
         {"dim": [0, 2], "keep_dim": True}),
    Case("reduce_all", "reduce_mean", {"X": floats(1, 2, 3, 4)},
         {"dim": [0], "reduce_all": True}),
    Case("reduce_all_keep_dim", "reduce_mean", {"X": floats(1, 2, 3, 4)},
         {"dim": [0], "reduce_all": True, "keep_dim": True}),
    Case("axis-1", "softmax", {"X": floats(1, 3, 5, low=-3, high=3)}, {"axis": -1},
         check=sums_to_one(-1)),
    Case("axis0", "softmax", {"X": floats(1, 3, 5, low=-3, high=3)}, {"axis": 0},
         check=sums_to_one(0)),
    Case("large_values", "softmax",
         {"X": np.array([[1000.0, 1001.0, 999.0], [-1000.0, 0.0, 1000.0]], np.float32)},
         {"axis": -1}, check=sums_to_one(-1)),
    Case("axis1_3d_batch-1", "softmax", {"X": floats(1, 2, 3, 4)}, {"axis": 1},
         check=sums_to_one(1), unknown_batch=True),

    # layout
    Case("zero_and_minus_one", "reshape2", {"X": floats(1, 2, 3, 4)}, {"shape": [0, -1]},
         unfetched=("XShape",)),
    Case("minus_one_then_zero", "reshape2", {"X": floats(1, 2, 3, 4)}, {"shape": [-1, 0]},
         unfetched=("XShape",)),
    Case("batch-1", "reshape2", {"X": floats(1, 2, 3, 4)}, {"shape": [0, 12]},
         unfetched=("XShape",), unknown_batch=True),
    Case("perm_2_0_1", "transpose2", {"X": floats(1, 2, 3, 4)}, {"axis": [2, 0, 1]},
         unfetched=("XShape",)),
    Case("axes", "squeeze2", {"X": floats(51, 2, 1, 3, 1)}, {"axes": [1, -1]},
         unfetched=("XShape",), grad=True),
    Case("all", "squeeze2", {"X": floats(52, 1, 3, 1)}, {}, unfetched=("XShape",)),
    Case("not_1_kept", "squeeze2", {"X": floats(53, 2, 1, 3)}, {"axes": [0]},
         unfetched=("XShape",)),
    Case("axes", "unsqueeze2", {"X": floats(54, 2, 3)}, {"axes": [0, -1]},
         unfetched=("XShape",), grad=True),
    Case("batch-1", "unsqueeze2", {"X": floats(55, 2, 3)}, {"axes": [1]},
         unfetched=("XShape",), unknown_batch=True),
    Case("middle", "flatten_contiguous_range", {"X": floats(56, 2, 3, 4, 5)},
         {"start_axis": 1, "stop_axis": 2}, unfetched=("XShape",), grad=True),
    Case("all_negative", "flatten_contiguous_range", {"X": ints(57, 2, 3, 4)},
         {"start_axis": 0, "stop_axis": -1}, unfetched=("XShape",)),
    Case("axis1", "stack", {"X": [floats(71, 2, 3), floats(72, 2, 3), floats(73, 2, 3)]},
         {"axis": 1}, outputs={"Y": 1}, grad=True),
    Case("axis-1_int64", "stack", {"X": [ints(74, 2, dtype=np.int64)] * 2}, {"axis": -1}),
    Case("axis1", "unstack", {"X": floats(75, 2, 3, 4)}, {"axis": 1, "num": 3},
         outputs={"Y": 3}, grad=True),
    Case("grow_1s", "expand_v2", {"X": floats(76, 3, 1)}, {"shape": [2, 3, 4]}, grad=True),
    Case("keep_-1", "expand_v2", {"X": ints(77, 2, 3)}, {"shape": [4, -1, 3]}),
    Case("reps", "tile", {"X": floats(78, 2, 3)}, {"repeat_times": [2, 1, 3]}, grad=True),
    Case("fewer_reps", "tile", {"X": ints(79, 2, 3)}, {"repeat_times": [2]}),
    Case("target", "expand_as_v2", {"X": floats(127, 3, 1), "Y": floats(128, 2, 3, 4)},
         {"target_shape": [2, 3, 4]}, grad=True),
    Case("y_batch", "expand_as_v2", {"X": ints(129, 4), "Y": floats(130, 3, 4)},
         {"target_shape": [-1, 4]}),
    # parts and borders (ops/slice.py, ops/pad.py): copies through per-axis index maps
    Case("clamped", "slice", {"Input": floats(111, 3, 4, 5)},
         {"axes": [0, 2], "starts": [-2, 1], "ends": [100, 4], "infer_flags": [1, 1]},
         grad=True),
    Case("decrease", "slice", {"Input": floats(112, 3, 4)},
         {"axes": [0, 1], "starts": [1, 0], "ends": [2, 3], "decrease_axis": [0]}, grad=True),
    Case("int64_empty", "slice", {"Input": ints(113, 4, 3, dtype=np.int64)},
         {"axes": [0], "starts": [5], "ends": [9]}),
    Case("tensor_list_bounds", "slice",          # x[:, t] inside a loop, as nn.RNN saves it
         {"Input": floats(119, 2, 5, 3), "StartsTensorList": [np.int64([2])],
          "EndsTensorList": [np.int64([3])]},
         {"axes": [1], "starts": [-1], "ends": [-1], "infer_flags": [-1],
          "decrease_axis": [1]}, grad=True),
    Case("tensor_bounds", "strided_slice",
         {"Input": floats(120, 6, 4), "StartsTensor": np.int32([4, 0]),
          "EndsTensor": np.int32([0, 4])},
         {"axes": [0, 1], "starts": [0, 0], "ends": [0, 0], "strides": [-2, 3],
          "infer_flags": [-1, -1]}, grad=True),
    Case("every_2nd_reversed", "strided_slice", {"Input": floats(114, 5, 6)},  # x[::2, ::-1]
         {"axes": [0, 1], "starts": [0, 2**31 - 1], "ends": [2**31 - 1, -1],
          "strides": [2, -1], "infer_flags": [1, 1]}, grad=True),
    Case("negative_stride_decrease", "strided_slice", {"Input": floats(115, 4, 5, 3)},
         {"axes": [1, 2], "starts": [-1, 1], "ends": [0, 2], "strides": [-2, 1],
          "decrease_axis": [2]}, grad=True),
    Case("axes", "flip", {"X": floats(116, 3, 4, 2)}, {"axis": [0, -1]}, grad=True),
    Case("int32", "flip", {"X": ints(117, 5)}, {"axis": [0]}),
    Case("value", "pad", {"X": floats(118, 2, 3)}, {"paddings": [1, 0, 2, 1], "pad_value": 1.5},
         grad=True),
    Case("int32", "pad", {"X": ints(119, 3)}, {"paddings": [0, 2], "pad_value": -2.0}),
    Case("reflect", "pad3d", {"X": floats(120, 1, 2, 3, 3, 4)},
         {"paddings": [2, 1, 1, 0, 0, 2], "mode": "reflect"}, grad=True),
    Case("replicate_ndhwc", "pad3d", {"X": floats(121, 1, 2, 2, 3, 2)},
         {"paddings": [1, 2, 0, 1, 1, 0], "mode": "replicate", "data_format": "NDHWC"},
         grad=True),
    Case("circular", "pad3d", {"X": floats(122, 1, 1, 2, 2, 3)},
         {"paddings": [4, 1, 1, 1, 0, 0], "mode": "circular"}, grad=True),
    Case("constant", "pad3d", {"X": floats(123, 2, 1, 1, 2, 2)},
         {"paddings": [1, 1, 0, 1, 1, 0], "value": -1.0}, grad=True),
    Case("axis1", "cumsum", {"X": floats(124, 3, 4)}, {"axis": 1}, grad=True),
    Case("reverse_exclusive", "cumsum", {"X": floats(125, 2, 3, 2)},
         {"axis": 0, "reverse": True, "exclusive": True}, grad=True),
    Case("flatten_int32", "cumsum", {"X": ints(126, 2, 3)}, {"flatten": True}),
    Case("int64", "range", {"Start": np.int64([2]), "End": np.int64([11]),
                            "Step": np.int64([3])}, {}),
    Case("float32_down", "range", {"Start": np.float32([1.0]), "End": np.float32([-1.0]),
                                   "Step": np.float32([-0.25])}, {}),
    Case("float32", "where", {"Condition": bools(80, 3, 4), "X": floats(81, 3, 4),
                              "Y": floats(82, 3, 4)}, {}, grad=True),
    Case("int64", "where", {"Condition": bools(83, 2, 2), "X": ints(84, 2, 2, dtype=np.int64),
                            "Y": ints(85, 2, 2, dtype=np.int64)}, {}),
    Case("rows", "gather", {"X": floats(91, 5, 3), "Index": np.int64([4, 0, 4, 2])}, {},
         grad=True),
    Case("axis1_int32_index", "gather",
         {"X": floats(92, 2, 4, 3), "Index": np.int32([3, 1])}, {"axis": 1}, grad=True),
    Case("scalar_index", "gather", {"X": ints(93, 4, 2), "Index": np.int64(2)}, {}),
    Case("depth4", "one_hot_v2", {"X": np.int64([[0, 3, 1], [2, 2, 0]])}, {"depth": 4}),
    Case("int32_to_int64", "one_hot_v2", {"X": np.int32([1, 0])},
         {"depth": 3, "dtype": INT64}),
    # lookup_table_v2 and lookup_table (ops/embedding.py): repeated ids add up in W@GRAD,
    # padding_idx's rows are zeros and get no gradient
    Case("padding_repeated_2d", "lookup_table_v2",
         {"Ids": np.int64([[1, 4, 2], [4, 0, 2]]), "W": floats(98, 5, 3)}, {"padding_idx": 2},
         grad=True),
    Case("no_padding_1d_int32", "lookup_table_v2",
         {"Ids": np.int32([3, 0, 3, 5]), "W": floats(99, 6, 2)}, {}, grad=True),
    Case("float64_last_row_padding", "lookup_table_v2",
         {"Ids": np.int64([[3], [1]]), "W": floats(100, 4, 3, dtype=np.float64)},
         {"padding_idx": 3}, grad=True),
    Case("trailing_1_int64", "lookup_table",
         {"W": floats(101, 5, 4), "Ids": np.int64([[[0], [3]], [[3], [1]]])}, {}, grad=True),
    Case("padding_float64_int32", "lookup_table",
         {"W": floats(102, 3, 2, dtype=np.float64), "Ids": np.int32([[2], [0], [2], [1]])},
         {"padding_idx": 0}, grad=True),       # (is_sparse: tests/test_selected_rows.py)
    Case("axis1", "arg_max", {"X": floats(94, 3, 4)}, {"axis": 1}),
    Case("keepdims_int32", "arg_max", {"X": ints(95, 3, 4)},
         {"axis": 0, "keepdims": True, "dtype": INT32}),
    Case("flatten", "arg_max", {"X": floats(96, 2, 3)}, {"flatten": True}),
    Case("axis-1", "arg_min", {"X": floats(97, 2, 3, 4)}, {"axis": -1}),
    # conv2d, depthwise_conv2d (ops/conv.py) and conv2d_transpose (ops/conv_transpose.py).
    # The fuzzer starts from an op's first row: this one's sums are short (4 terms), as a
    # float32 sum where 1e30 * 1e30 overflows beside an infinity is inf or NaN depending on
    # the BLAS's order and FMAs (Paddle's too), which no reference can pin down
    Case("one_channel", "conv2d", {"Input": floats(139, 2, 1, 4, 4),
                                   "Filter": floats(138, 2, 1, 2, 2)},
         {"paddings": [1, 0]}, grad=True),
    Case("pad1", "conv2d", {"Input": floats(140, 2, 3, 6, 6), "Filter": floats(141, 4, 3, 3, 3)},
         {"paddings": [1, 1]}, grad=True),
    Case("asymmetric_stride_dilation", "conv2d",
         {"Input": floats(142, 1, 2, 7, 6), "Filter": floats(143, 2, 2, 3, 2)},
         {"strides": [2, 1], "paddings": [1, 0, 2, 1], "dilations": [2, 1]}, grad=True),
    Case("groups2_nhwc_same", "conv2d",
         {"Input": floats(144, 1, 5, 5, 4), "Filter": floats(145, 4, 2, 3, 3)},
         {"groups": 2, "strides": [2, 2], "padding_algorithm": "SAME", "dilations": [2, 2],
          "data_format": "NHWC"}, grad=True),
    Case("window_overhangs_by_less_than_a_stride", "conv2d",
         {"Input": floats(137, 1, 2, 2, 4), "Filter": floats(136, 2, 2, 3, 3)},
         {"strides": [2, 3]}, grad=True),
    Case("valid_float64", "conv2d", {"Input": floats(146, 1, 2, 5, 5, dtype=np.float64),
                                     "Filter": floats(147, 3, 2, 2, 2, dtype=np.float64)},
         {"paddings": [3, 3], "padding_algorithm": "VALID"}, grad=True),
    Case("multiplier2", "depthwise_conv2d",
         {"Input": floats(148, 2, 3, 5, 5), "Filter": floats(149, 6, 1, 3, 3)},
         {"groups": 3, "paddings": [1, 1]}, grad=True),
    Case("stride2_output_padding", "conv2d_transpose",
         {"Input": floats(150, 2, 3, 3, 3), "Filter": floats(151, 3, 2, 3, 3)},
         {"strides": [2, 2], "paddings": [1, 1], "output_padding": [1, 1]}, grad=True),
    Case("groups_c_in", "depthwise_conv2d_transpose",
         {"Input": floats(154, 2, 3, 3, 3), "Filter": floats(155, 3, 1, 3, 3)},
         {"groups": 3, "strides": [2, 2], "paddings": [1, 1]}, grad=True),
    Case("groups_nhwc_output_size", "conv2d_transpose",
         {"Input": floats(152, 1, 3, 4, 4), "Filter": floats(153, 4, 1, 3, 2)},
         {"groups": 2, "strides": [2, 1], "paddings": [0, 1, 1, 0], "dilations": [1, 2],
          "output_size": [7, 5], "data_format": "NHWC"}, grad=True),
    # conv3d, conv3d_transpose (ops/conv3d.py). The first rows' sums are short (4 terms,
    # 1 term), for the fuzzer, as conv2d's first row
    Case("one_channel", "conv3d", {"Input": floats(801, 2, 1, 3, 3, 3),
                                   "Filter": floats(802, 2, 1, 1, 2, 2)},
         {"paddings": [1, 0, 0]}, grad=True),
    Case("stride_pad_dilation", "conv3d",
         {"Input": floats(803, 1, 2, 4, 5, 4, dtype=np.float64),
          "Filter": floats(804, 2, 2, 2, 3, 2, dtype=np.float64)},
         {"strides": [2, 1, 2], "paddings": [1, 0, 1, 1, 0, 1], "dilations": [1, 2, 1]},
         grad=True),
    Case("groups2_ndhwc_same", "conv3d",
         {"Input": floats(805, 1, 3, 4, 3, 4, dtype=np.float64),
          "Filter": floats(806, 4, 2, 2, 2, 2, dtype=np.float64)},
         {"groups": 2, "strides": [2, 2, 1], "padding_algorithm": "SAME",
          "data_format": "NDHWC"}, grad=True),
    Case("stride_equals_window", "conv3d_transpose",
         {"Input": floats(807, 1, 1, 2, 2, 2), "Filter": floats(808, 1, 2, 2, 2, 2)},
         {"strides": [2, 2, 2]}, grad=True),
    Case("stride2_output_padding", "conv3d_transpose",
         {"Input": floats(809, 1, 2, 2, 3, 2, dtype=np.float64),
          "Filter": floats(810, 2, 3, 2, 2, 3, dtype=np.float64)},
         {"strides": [2, 1, 2], "paddings": [1, 0, 1], "output_padding": [1, 0, 1]},
         grad=True),
    Case("groups_ndhwc_output_size", "conv3d_transpose",
         {"Input": floats(811, 1, 2, 3, 2, 4, dtype=np.float64),
          "Filter": floats(812, 4, 1, 2, 3, 2, dtype=np.float64)},
         {"groups": 2, "strides": [1, 2, 2], "paddings": [0, 1, 1], "dilations": [2, 1, 1],
          "output_size": [4, 6, 3], "data_format": "NHWC"}, grad=True),
    # gather_nd, scatter, index_select (ops/scatter.py) and top_k_v2 (ops/top_k.py)
    Case("rows", "gather_nd", {"X": floats(121, 3, 4), "Index": np.int64([[2], [0], [2]])},
         {}, grad=True),
    Case("points_int32", "gather_nd",
         {"X": floats(122, 2, 3, 4), "Index": np.int32([[[1, 2], [0, 0]], [[1, 0], [1, 2]]])},
         {}, grad=True),
    Case("all_of_x", "gather_nd", {"X": ints(123, 2, 3), "Index": np.zeros((2, 0), np.int64)},
         {}),
    Case("overwrite", "scatter", {"X": floats(124, 4, 3), "Ids": np.int64([3, 0]),
                                  "Updates": floats(125, 2, 3)}, {"overwrite": True},
         grad=True),
    Case("add_repeated", "scatter", {"X": floats(126, 4, 2), "Ids": np.int32([1, 3, 1]),
                                     "Updates": floats(127, 3, 2)}, {"overwrite": False},
         grad=True),
    Case("overwrite_repeated_last_wins", "scatter",
         {"X": ints(128, 3, 2, dtype=np.int64), "Ids": np.int64([2, 2, 0]),
          "Updates": ints(129, 3, 2, dtype=np.int64)}, {}),
    Case("dim1", "index_select", {"X": floats(130, 2, 4, 3), "Index": np.int64([3, 1, 3])},
         {"dim": 1}, grad=True),
    Case("dim-1_int32", "index_select", {"X": ints(131, 3, 2), "Index": np.int32([1, 0])},
         {"dim": -1}),
    # top_k_v2: no ties (distinct values), except where the order of ties is the point
    Case("largest_axis1", "top_k_v2",
         {"X": (np.random.default_rng(132).permutation(24).reshape(2, 3, 4) / 8 - 1)
          .astype(np.float32)}, {"k": 2, "axis": 1}, grad=True),
    Case("smallest_k_tensor", "top_k_v2",
         {"X": (np.random.default_rng(133).permutation(15).reshape(3, 5) / 8 - 1)
          .astype(np.float32), "K": np.int32([3])}, {"largest": False}, grad=True),
    Case("nan_is_largest", "top_k_v2",
         {"X": np.float32([[1, np.nan, 3, 2], [np.nan, 0, np.nan, 5]])}, {"k": 3}),
    Case("int64_ties_by_position", "top_k_v2",
         {"X": np.int64([[4, 1, 4, 7, 1], [2, 2, 2, 0, 9]])}, {"k": 4, "largest": False}),
    # argsort, masked_select, roll, meshgrid, tril_triu (ops/sort.py, masked_select.py,
    # roll.py, meshgrid.py, triangular.py): gradient rows without ties (argsort); ties and
    # NaN in their own rows, in Paddle's order (ties by position)
    Case("axis0", "argsort", {"X": distinct(170, 4, 3)}, {"axis": 0}, grad=True),
    Case("descending_last_axis", "argsort", {"X": distinct(171, 2, 3, 5)},
         {"descending": True}, grad=True),
    Case("ties_and_nan_by_position", "argsort",
         {"X": np.float32([[3, 1, 2, 1, 3, np.nan, 2, 1, np.nan, 0]])}, {"axis": 1}),
    Case("descending_ties_nan_first", "argsort",
         {"X": np.float64([[3, 1, 2, 1, 3, np.nan, 2, 1, np.nan, 0]])}, {"descending": True}),
    Case("descending_int64_ties", "argsort", {"X": np.int64([[4, 1, 4, 7, 1], [2, 2, 2, 0, 9]])},
         {"axis": -1, "descending": True}),
    Case("same_shape", "masked_select", {"X": floats(172, 3, 4), "Mask": bools(173, 3, 4)}, {},
         grad=True),
    Case("row_mask_broadcast", "masked_select", {"X": floats(174, 3, 4), "Mask": bools(175, 4)},
         {}, grad=True),
    Case("x_broadcast", "masked_select", {"X": floats(176, 1, 4), "Mask": bools(177, 3, 4)},
         {}, grad=True),
    Case("int32_none_selected", "masked_select",
         {"X": ints(178, 2, 3), "Mask": np.zeros((2, 3), np.bool_)}, {}),
    Case("two_axes", "roll", {"X": floats(179, 3, 4)}, {"shifts": [1, -2], "axis": [0, 1]},
         grad=True),
    Case("flattened", "roll", {"X": floats(180, 2, 3)}, {"shifts": [4]}, grad=True),
    Case("axis_twice_negative", "roll", {"X": floats(181, 4, 2)},
         {"shifts": [3, -5], "axis": [-2, 0]}, grad=True),
    Case("shifts_tensor", "roll", {"X": floats(182, 2, 5), "ShiftsTensor": np.int64([-7])},
         {"axis": [1]}, grad=True),
    Case("int64_flattened_negative", "roll", {"X": ints(183, 3, 2, dtype=np.int64)},
         {"shifts": [-2]}),
    Case("two", "meshgrid", {"X": [floats(184, 3), floats(185, 2)]}, {}, outputs={"Out": 2},
         grad=True),
    Case("three_float64", "meshgrid",
         {"X": [floats(186, 2, dtype=np.float64), floats(187, 1, dtype=np.float64),
                floats(188, 3, dtype=np.float64)]}, {}, outputs={"Out": 3}, grad=True),
    Case("int64_with_0d", "meshgrid",
         {"X": [ints(189, 2, dtype=np.int64), np.int64(4), ints(190, 3, dtype=np.int64)]}, {},
         outputs={"Out": 3}),
    Case("lower", "tril_triu", {"X": floats(191, 3, 4)}, {"diagonal": 0, "lower": True},
         grad=True),
    Case("upper_batch_below_diagonal", "tril_triu", {"X": floats(192, 2, 4, 3)},
         {"diagonal": -1, "lower": False}, grad=True),
    Case("lower_above_diagonal_nan_outside", "tril_triu", {"X": SPECIALS.astype(np.float32)},
         {"diagonal": 1, "lower": True}),
    Case("upper_bool_far_diagonal", "tril_triu", {"X": bools(193, 2, 3, 3)},
         {"diagonal": 5, "lower": False}),
    # trunc, floor, ceil, round, log1p, log2, log10, logit, lgamma, digamma, conj, cumprod
    # (ops/rounding_and_special.py, ops/cumprod.py): gradient rows away from the jumps of
    # the rounding ops (whole numbers, and halves for round) and from the poles
    *[Case("away_from_jumps", op, {"X": (ints(194, 3, 4, low=-3, high=3)
                                         + floats(195, 3, 4, low=0.1, high=0.4))}, {},
           grad=True)
      for op in ("trunc", "floor", "ceil", "round")],
    Case("halves", "round", {"X": np.float64([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
                                              [-0.49, 0.49, 0.51, -0.51, 1e20, -7.0]])}, {}),
    Case("negative_fractions", "trunc", {"X": np.float32([[-2.7, -0.2, 0.2, 2.7]])}, {}),
    *[Case(f"nan_inf_{np.dtype(t).name}", op, {"X": SPECIALS.astype(t)}, {})
      for op in ("trunc", "floor", "ceil", "round", "log1p", "log2", "log10", "lgamma",
                 "digamma")
      for t in (np.float32, np.float64)],
    Case("above_-1", "log1p", {"X": floats(196, 3, 4, low=-0.8, high=4)}, {}, grad=True),
    Case("positive", "log2", {"X": floats(197, 3, 4, low=0.1, high=5)}, {}, grad=True),
    Case("positive", "log10", {"X": floats(198, 3, 4, low=0.1, high=5)}, {}, grad=True),
    Case("no_clip", "logit", {"X": floats(199, 3, 4, low=0.05, high=0.95)}, {"eps": 0.0},
         grad=True),
    Case("clipped", "logit", {"X": np.float32([[0.05, 0.15, 0.5, 0.85], [0.95, 0.3, 0.7, 0.2]])},
         {"eps": 0.1}, grad=True),
    Case("outside_0_1", "logit", {"X": np.float64([[-0.5, 0.0, 1.0, 1.5]])}, {"eps": 0.0}),
    Case("positive_and_negative", "lgamma",
         {"X": np.float64([[0.3, 1.7, 4.2, 12.5], [-0.5, -1.3, -2.7, 30.0]])}, {}, grad=True),
    Case("float32", "lgamma", {"X": floats(200, 3, 4, low=0.1, high=6)}, {}),
    Case("positive_and_negative", "digamma",
         {"X": np.float64([[0.3, 1.7, 4.2, 12.5], [-0.5, -1.3, -2.7, 30.0]])}, {}, grad=True),
    Case("poles", "digamma", {"X": np.float64([[0.0, -1.0, -2.0, 1.0]])}, {}),
    Case("float32", "conj", {"X": floats(201, 3, 4)}, {}, grad=True),
    Case("int64", "conj", {"X": ints(202, 2, 3, dtype=np.int64)}, {}),
    Case("dim1", "cumprod", {"X": floats(203, 3, 4, low=0.5, high=1.5)}, {"dim": 1},
         grad=True),
    Case("dim0_with_zeros", "cumprod",
         {"X": np.float32([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0], [2.0, 3.0, 0.5]])}, {"dim": 0},
         grad=True),
    Case("negative_dim_3d", "cumprod", {"X": floats(204, 2, 3, 2, low=-1.5, high=1.5)},
         {"dim": -2}, grad=True),
    Case("int64", "cumprod", {"X": ints(205, 2, 4, low=-3, high=4, dtype=np.int64)},
         {"dim": -1}),
    # sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, expm1
    # (ops/trigonometric.py): gradient rows inside each domain (tan away from pi/2, asin,
    # acos and atanh inside (-1, 1), acosh above 1); NaN, infinities and the domain's edges
    *[Case("in_domain", op, {"X": floats(9901 + k, 3, 4, low=low, high=high)}, {}, grad=True)
      for k, (op, low, high) in enumerate((
          ("sin", -3, 3), ("cos", -3, 3), ("tan", -1.2, 1.2), ("asin", -0.9, 0.9),
          ("acos", -0.9, 0.9), ("atan", -3, 3), ("sinh", -3, 3), ("cosh", -3, 3),
          ("asinh", -3, 3), ("acosh", 1.1, 4), ("atanh", -0.9, 0.9), ("erf", -2, 2),
          ("expm1", -2, 2)))],
    *[Case(f"nan_inf_{np.dtype(t).name}", op, {"X": SPECIALS.astype(t)}, {})
      for op in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                 "acosh", "atanh", "erf", "expm1")
      for t in (np.float32, np.float64)],
    *[Case("domain_edges", op, {"X": np.float64([[-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]])},
           {}) for op in ("asin", "acos", "atanh", "acosh")],
    *[Case(f"past_overflow_{np.dtype(t).name}", op,
           {"X": np.array([[-1000.0, -710.2, -100.0, 80.0, 88.5, 89.5, 709.5, 710.2, 711.0,
                            1e30]], t)}, {})
      for op in ("sinh", "cosh", "expm1") for t in (np.float32, np.float64)],
    Case("near_zero", "expm1", {"X": np.float64([[1e-300, -1e-17, 1e-10, -3e-8]])}, {}),
    Case("float64", "sin", {"X": floats(9914, 2, 5, low=-100, high=100, dtype=np.float64)},
         {}),
    # a gradient row's values of one magnitude: the loss sums them all (I0(30) ~ 8e11)
    Case("both_sides_of_30", "i0", {"x": np.float64([[29.9, 30.1, -30.5, 31.0]])}, {},
         grad=True),
    Case("small_and_large", "i0",
         {"x": np.float64([[0.0, 0.5, -1.3, 5.0], [29.9, 30.1, -45.0, 100.0]])}, {}),
    Case("float32", "i0", {"x": floats(206, 3, 4, low=-4, high=4)}, {}, grad=True),
    *[Case(f"nan_inf_{np.dtype(t).name}", op, {"x": SPECIALS.astype(t)}, attrs)
      for op, attrs in (("i0", {}), ("polygamma", {"n": 1}))
      for t in (np.float32, np.float64)],
    # gradient rows of one element (the fuzzer raises n up to 99, and the loss sums every
    # value: x^-100 of one would drown the others'); more values in the forward rows
    *[Case(f"n{n}_at_{x}", "polygamma", {"x": np.float64([x])}, {"n": n}, grad=True)
      for n, x in ((0, 1.7), (1, -1.3), (3, 2.4))],
    *[Case(f"n{n}_negative_small_large", "polygamma",
           {"x": np.float64([[0.3, 1.7, 4.2, 12.5], [-0.5, -1.3, -2.7, 30.0]])}, {"n": n})
      for n in (0, 1, 3)],
    Case("float32_n2", "polygamma", {"x": floats(207, 3, 4, low=0.2, high=6)}, {"n": 2}),
    # lerp, atan2, elementwise_fmax/_fmin/_heaviside, nextafter (ops/binary_math.py);
    # erfinv, stanh, angle; i0e, i1, i1e; renorm; reduce_amax/_amin (ties share the
    # gradient); isclose, allclose, equal_all, is_empty; log_loss; assert; as_complex,
    # as_real. Gradient rows away from ties and kinks
    Case("broadcast_weight", "lerp", {"X": floats(3101, 2, 3), "Y": floats(3102, 2, 3),
                                      "Weight": floats(3103, 3, low=0, high=1)}, {}, grad=True),
    Case("float64", "atan2", {"X1": floats(3104, 2, 3, dtype=np.float64),
                              "X2": floats(3105, 2, 3, dtype=np.float64)}, {}, grad=True),
    Case("int32_to_float64", "atan2", {"X1": ints(3106, 2, 3), "X2": ints(3107, 2, 3)}, {}),
    Case("broadcast", "elementwise_fmax", {"X": floats(3108, 2, 3), "Y": floats(3109, 3)},
         {}, grad=True),
    Case("nan_loses", "elementwise_fmax", {"X": np.float32([np.nan, 1, np.nan, -2]),
                                           "Y": np.float32([3, np.nan, np.nan, -2])}, {}),
    Case("broadcast", "elementwise_fmin", {"X": floats(3110, 2, 3), "Y": floats(3111, 3)},
         {}, grad=True),
    Case("int64_nan", "elementwise_fmin", {"X": ints(3112, 2, 3, dtype=np.int64),
                                           "Y": ints(3113, 2, 3, dtype=np.int64)}, {}),
    Case("zeros", "elementwise_heaviside",
         {"X": np.float64([[-1.5, 0.0, 2.0], [0.0, 3.0, -0.5]]),
          "Y": floats(3114, 2, 3, dtype=np.float64)}, {}),
    Case("off_zero", "elementwise_heaviside",        # (a jump at 0: no central difference)
         {"X": off_kinks(3139, 2, 3, kinks=(0,)), "Y": floats(3140, 3)}, {}, grad=True),
    Case("specials", "elementwise_heaviside", {"X": np.float32([np.nan, -0.0, np.inf, -1]),
                                               "Y": np.float32([0.5, 0.25, 2, 3])}, {}),
    Case("both_ways", "nextafter",
         {"x": np.float32([0, 0, 1, 1, -1, 2, 1e-45, np.inf, 3.4028235e38, np.nan]),
          "y": np.float32([1, -1, 2, 0, -2, 1, 0, 0, np.inf, 1])}, {}),
    Case("float64_subnormal", "nextafter",
         {"x": np.float64([5e-324, -5e-324, 2.2250738585072014e-308, 0.5, 1e300]),
          "y": np.float64([0, 1, 0, 0, -np.inf])}, {}),
    Case("inside", "erfinv", {"X": floats(3115, 2, 3, low=-0.9, high=0.9)}, {}, grad=True),
    Case("ends", "erfinv", {"X": np.float64([-1, 1, 1.5, np.nan, 0.999999, -1e-20])}, {}),
    Case("default_scales", "stanh", {"X": floats(3116, 2, 3, low=-2, high=2)}, {}, grad=True),
    Case("scales", "stanh", {"X": floats(3117, 2, 3, low=-2, high=2)},
         {"scale_a": 2.0, "scale_b": -0.5}, grad=True),
    Case("signs", "angle", {"X": np.float32([[-2, 0, 3], [np.nan, -np.inf, np.inf]])}, {}),
    Case("off_zero", "angle", {"X": off_kinks(3118, 2, 3, kinks=(0,))}, {}, grad=True),
    *[Case(f"small_and_large_{op}", op, {"x": np.float64([[-35.0, -3.0, 0.0, 0.5, 29.9, 31.0],
                                                           [np.inf, -np.inf, np.nan, -0.0,
                                                            700.0, -1e-3]])}, {})
      for op in ("i0e", "i1", "i1e")],
    *[Case(f"float32_{op}", op, {"x": floats(3119, 2, 3, low=-4, high=4)}, {}, grad=True)
      for op in ("i0e", "i1", "i1e")],
    Case("axis0_some_scaled", "renorm", {"X": floats(3120, 3, 4, low=-1, high=1)},
         {"p": 2.0, "axis": 0, "max_norm": 0.9}, grad=True),
    Case("p1_last_axis", "renorm", {"X": floats(3121, 2, 3, 2, low=-1, high=1)},
         {"p": 1.0, "axis": -1, "max_norm": 1.5}, grad=True),
    Case("dim1", "reduce_amax", {"X": distinct(3122, 3, 4)}, {"dim": [1]}, grad=True),
    Case("ties_share", "reduce_amax", {"X": np.float64([[1, 3, 3], [2, 2, 2]])},
         {"dim": [], "reduce_all": True, "keep_dim": True}),
    Case("axis_tensor_int64", "reduce_amax", {"X": ints(3123, 2, 3, 2, dtype=np.int64),
                                              "AxisTensor": np.int64([0, 2])}, {"dim": []}),
    Case("axis_tensor_list_keep", "reduce_amin",
         {"X": distinct(3124, 2, 3), "AxisTensorList": [np.int64([1])]},
         {"dim": [], "keep_dim": True}, grad=True),
    Case("all", "reduce_amin", {"X": small_int_floats(3125, 3, 2)},
         {"dim": [], "reduce_all": True}),
    Case("axis_tensor_list_two", "reduce_amax",
         {"X": distinct(3144, 2, 2, 3), "AxisTensorList": [np.int64([0]), np.int64([-1])]},
         {"dim": []}),
    Case("axis_tensor", "reduce_amin", {"X": distinct(3145, 3, 2), "AxisTensor": np.int64([0])},
         {"dim": [1]}),
    Case("tolerances", "isclose",
         {"Input": np.float32([1.0, 1.0, np.nan, np.inf, 0.0, 2.0]),
          "Other": np.float32([1.0 + 1e-6, 1.1, np.nan, np.inf, 1e-9, -2.0])}, {}),
    Case("equal_nan_tensors", "isclose",
         {"Input": np.float64([[np.nan, 1.0], [1.0, 5.0]]),
          "Other": np.float64([[np.nan, 1.05], [1.2, 5.0]]),
          "Rtol": np.float64(0.1), "Atol": np.float64(0.0)}, {"equal_nan": True}),
    Case("close", "allclose", {"Input": floats(3126, 2, 3), "Other": floats(3126, 2, 3)},
         {"rtol": "1e-3", "atol": "0.0"}),
    Case("not_close_tensors", "allclose",
         {"Input": np.float32([1.0, 2.0]), "Other": np.float32([1.0, 2.5]),
          "Rtol": np.float32(0.1), "Atol": np.float32(0.0)}, {}),
    Case("equal", "equal_all", {"X": ints(3127, 2, 3), "Y": ints(3127, 2, 3)}, {}),
    Case("differ", "equal_all", {"X": floats(3128, 2, 3), "Y": floats(3129, 2, 3)}, {}),
    Case("other_shape", "equal_all", {"X": floats(3130, 2, 3), "Y": floats(3130, 3)}, {}),
    Case("full", "is_empty", {"X": floats(3131, 2, 3)}, {}),
    Case("empty", "is_empty", {"X": np.zeros((2, 0), np.float32)}, {}),
    Case("probabilities", "log_loss", {"Predicted": floats(3132, 4, 1, low=0.1, high=0.9),
                                       "Labels": floats(3133, 4, 1, low=0, high=1)},
         {"epsilon": 1e-4}, grad=True),
    Case("true_with_data", "assert", {"Cond": np.bool_([True]), "Data": [floats(3134, 2)]},
         {"summarize": 2}),
    Case("pairs", "as_complex", {"X": floats(3135, 2, 3, 2)}, {}),
    Case("float64_pairs", "as_complex", {"X": floats(3136, 3, 2, dtype=np.float64)}, {}),
    Case("complex64", "as_real", {"X": (floats(3137, 2, 3) + 1j * floats(3138, 2, 3))
                                  .astype(np.complex64)}, {}),
    # Paddle's sum of bools is an int64 count; its product of bools their logical and
    Case("bool_count", "reduce_sum", {"X": bools(3141, 3, 4)}, {"dim": [1]}),
    # out_dtype (paddle.sum(x, dtype=...), quantile's count of non-NaN values): summed in it
    Case("bool_count_float64", "reduce_sum", {"X": bools(3142, 3, 4)},
         {"dim": [1], "out_dtype": FP64}),
    Case("int32_in_int64", "reduce_sum", {"X": ints(3143, 2, 5)}, {"dim": [0], "out_dtype": INT64}),
    Case("bool_and", "elementwise_mul", {"X": bools(3142, 2, 3), "Y": bools(3143, 3)}, {}),
    Case("3d", "shape", {"Input": floats(58, 2, 3, 4)}, {}),
    Case("int64_0d", "shape", {"Input": np.int64(3)}, {}),
    Case("2d", "transpose2", {"X": ints(1, 3, 4, dtype=np.int64)}, {"axis": [1, 0]},
         unfetched=("XShape",)),
    Case("axis0", "concat", {"X": [floats(1, 1, 3), floats(2, 2, 3), floats(3, 3, 3)]},
         {"axis": 0}),
    Case("axis1", "concat", {"X": [floats(1, 2, 1), floats(2, 2, 4)]},
         {"axis": 1}),
    Case("num3", "split", {"X": floats(1, 6, 4)}, {"axis": 0, "num": 3}, outputs={"Out": 3}),
    Case("sections_3_1", "split_byref", {"X": floats(1, 4, 3)}, {"sections": [3, 1]},
         outputs={"Out": 2}),
    Case("num2", "split_byref", {"X": floats(2, 6, 2, 2)}, {"num": 2}, outputs={"Out": 2}),
    Case("sections_1_-1", "split", {"X": floats(1, 2, 5)}, {"axis": 1, "sections": [1, -1]},
         outputs={"Out": 2}),

    # ops that make values
    Case("fp32", "fill_constant", {}, {"shape": [2, 3], "dtype": FP32, "value": 1.5}),
    Case("int64", "fill_constant", {}, {"shape": [4], "dtype": INT64, "value": 7.0}),
    Case("bool", "fill_constant", {}, {"shape": [2, 2], "dtype": BOOL, "value": 1.0}),
    Case("float32", "assign", {"X": floats(1, 3, 4)}, {}),
    Case("int64", "assign", {"X": ints(1, 3, 4, dtype=np.int64)}, {}),
    Case("fp32", "assign_value", {}, assign_value_attrs(floats(1, 2, 3))),
    Case("fp64", "assign_value", {}, assign_value_attrs(floats(2, 3, dtype=np.float64))),
    Case("int32", "assign_value", {}, assign_value_attrs(ints(1, 4))),
    Case("int64", "assign_value", {}, assign_value_attrs(ints(1, 2, 2, dtype=np.int64))),
    Case("bool", "assign_value", {}, assign_value_attrs(bools(1, 3))),
    Case("fp32_seeded", "uniform_random", {},
         {"shape": [100, 100], "min": -2.0, "max": 3.0, "seed": 7, "dtype": FP32},
         compare_values=False, check=uniform_statistics),
    Case("fp64_seeded", "uniform_random", {},
         {"shape": [100, 100], "min": -2.0, "max": 3.0, "seed": 8, "dtype": FP64},
         compare_values=False, check=uniform_statistics),
    Case("fp32_seeded", "gaussian_random", {},
         {"shape": [100, 100], "mean": 1.0, "std": 2.0, "seed": 11, "dtype": FP32},
         compare_values=False, check=gaussian_statistics),

    # losses: class indices are int64 with a last dim of 1; soft labels are distributions
    Case("hard_label", "softmax_with_cross_entropy",
         {"Logits": floats(1, 4, 3), "Label": ints(2, 4, 1, low=0, high=3, dtype=np.int64)},
         {}),
    Case("ignore_index", "softmax_with_cross_entropy",
         {"Logits": floats(3, 3, 5), "Label": np.int64([[1], [-100], [4]])},
         {"ignore_index": -100}),
    Case("soft_label", "softmax_with_cross_entropy",
         {"Logits": floats(4, 2, 4), "Label": distributions(5, 2, 4)},
         {"soft_label": True}),
    Case("class_axis_0", "softmax_with_cross_entropy",
         {"Logits": floats(6, 3, 2), "Label": ints(7, 1, 2, low=0, high=3, dtype=np.int64)},
         {"axis": 0}),
    # use_softmax=False (F.cross_entropy on probabilities): Logits are the probabilities,
    # and the gradient is cross_entropy's, not the fused one's
    Case("probabilities_hard", "softmax_with_cross_entropy",
         {"Logits": distributions(12, 4, 3),
          "Label": ints(13, 4, 1, low=0, high=3, dtype=np.int64)},
         {"use_softmax": False}, grad=True),
    Case("probabilities_soft", "softmax_with_cross_entropy",
         {"Logits": distributions(14, 3, 4), "Label": distributions(15, 3, 4)},
         {"use_softmax": False, "soft_label": True}, grad=True),
    # element-by-element losses (ops/pointwise_losses.py)
    Case("soft_targets", "sigmoid_cross_entropy_with_logits",
         {"X": floats(101, 3, 4, low=-4, high=4), "Label": floats(102, 3, 4, low=0, high=1)},
         {}, grad=True),
    Case("ignored", "sigmoid_cross_entropy_with_logits",
         {"X": floats(103, 2, 3), "Label": np.float32([[0, 1, -1], [1, -1, 0]])},
         {"ignore_index": -1}),
    Case("probabilities", "bce_loss",
         {"X": floats(104, 3, 4, low=0.05, high=0.95),
          "Label": bools(105, 3, 4).astype(np.float32)}, {}, grad=True),
    Case("saturated", "bce_loss", {"X": np.float32([[0.0, 1.0]]),
                                   "Label": np.float32([[1.0, 0.0]])}, {}),
    Case("delta", "huber_loss", {"X": floats(106, 3, 4, low=-2, high=2),
                                 "Y": floats(107, 3, 4, low=-2, high=2)}, {"delta": 0.7},
         outputs={"Out": 1, "Residual": 1}, grad=True),
    Case("uniform", "label_smooth", {"X": np.eye(4, dtype=np.float32)[[1, 3, 0]]},
         {"epsilon": 0.2}, grad=True),
    Case("prior", "label_smooth", {"X": np.eye(3, dtype=np.float32)[[2, 0]],
                                   "PriorDist": np.float32([[0.5, 0.25, 0.25]])},
         {"epsilon": 0.1}),
    Case("hard_label", "cross_entropy",
         {"X": distributions(8, 4, 3), "Label": ints(9, 4, 1, low=0, high=3, dtype=np.int64)},
         {}),
    Case("soft_label", "cross_entropy",
         {"X": distributions(10, 3, 4), "Label": distributions(11, 3, 4)},
         {"soft_label": True}),
    Case("hard_label", "cross_entropy2",
         {"X": distributions(160, 4, 3),
          "Label": ints(161, 4, 1, low=0, high=3, dtype=np.int64)}, {},
         unfetched=("XShape",), grad=True),
    # a probability of 0 costs 1e20 (Paddle's TolerableValue); an ignored row 0
    Case("zero_probability_ignored_row", "cross_entropy2",
         {"X": np.float32([[[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]]]),
          "Label": np.int64([[[1], [2]]])}, {"ignore_index": 2}, unfetched=("XShape",)),
    Case("sigma", "smooth_l1_loss", {"X": floats(150, 3, 4, low=-2, high=2),
                                     "Y": floats(151, 3, 4, low=-2, high=2)}, {"sigma": 1.5},
         outputs={"Diff": 1, "Out": 1}, grad=True),
    Case("weights", "smooth_l1_loss",
         {"X": floats(152, 2, 3, 2, low=-2, high=2), "Y": floats(153, 2, 3, 2, low=-2, high=2),
          "InsideWeight": floats(154, 2, 3, 2, low=0.5, high=2),
          "OutsideWeight": floats(155, 2, 3, 2, low=0.5, high=2)}, {},
         outputs={"Diff": 1, "Out": 1}, grad=True),

    # fills used by backward and initialisers
    Case("fp32", "fill_zeros_like", {"X": floats(1, 2, 3)}, {}),
    Case("value_and_x_dtype", "fill_any_like", {"X": floats(1, 2, 3)}, {"value": 1.0}),
    Case("to_int64", "fill_any_like", {"X": floats(1, 2, 3)}, {"value": 7.0, "dtype": INT64}),

    # optimizers: one update step, checked against the formulas
    Case("step", "sgd", {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2),
                         "LearningRate": np.float32([0.1])}, {}),
    Case("step", "momentum", {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2),
                              "Velocity": floats(3, 3, 2), "LearningRate": np.float32([0.1])},
         {"mu": 0.9}),
    Case("nesterov", "momentum", {"Param": floats(1, 4), "Grad": floats(2, 4),
                                  "Velocity": floats(3, 4), "LearningRate": np.float32([0.5])},
         {"mu": 0.8, "use_nesterov": True}),
    Case("step", "adam", {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2),
                          "LearningRate": np.float32([0.01]), "Moment1": floats(3, 3, 2),
                          "Moment2": floats(4, 3, 2, low=0.0), "Beta1Pow": np.float32([0.81]),
                          "Beta2Pow": np.float32([0.998])},
         {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
    Case("decay_lr_ratio", "adamw",
         {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2), "LearningRate": np.float32([0.01]),
          "Moment1": floats(3, 3, 2), "Moment2": floats(4, 3, 2, low=0.0),
          "Beta1Pow": np.float32([0.81]), "Beta2Pow": np.float32([0.998])},
         {"coeff": 0.1, "with_decay": True, "lr_ratio": 0.5}),
    Case("no_decay", "adamw",
         {"Param": floats(1, 4), "Grad": floats(2, 4), "LearningRate": np.float32([0.1]),
          "Moment1": floats(3, 4), "Moment2": floats(4, 4, low=0.0),
          "Beta1Pow": np.float32([0.9]), "Beta2Pow": np.float32([0.999])}, {}),
    Case("scaled", "clip_by_norm", {"X": floats(1, 3, 4)}, {"max_norm": 0.5}),
    Case("unchanged", "clip_by_norm", {"X": floats(2, 5)}, {"max_norm": 10.0}),
    Case("f64", "clip_by_norm", {"X": floats(3, 2, 3, dtype=np.float64)}, {"max_norm": 1.0}),
    Case("step", "adagrad", {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2),
                             "Moment": floats(3, 3, 2, low=0.0),
                             "LearningRate": np.float32([0.1])}, {"epsilon": 1e-6}),
    Case("plain_momentum", "rmsprop",
         {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2), "MeanSquare": floats(3, 3, 2,
                                                                                  low=0.0),
          "Moment": floats(4, 3, 2), "LearningRate": np.float32([0.01])},
         {"momentum": 0.9, "decay": 0.95}, unfetched=("MeanGradOut",)),
    Case("centered", "rmsprop",
         {"Param": floats(1, 4), "Grad": floats(2, 4), "MeanSquare": floats(3, 4, low=1.0),
          "Moment": floats(4, 4), "MeanGrad": floats(5, 4, low=0.0, high=0.5),
          "LearningRate": np.float32([0.01])}, {"centered": True, "epsilon": 1e-6}),
    Case("decay", "lamb", {"Param": floats(1, 3, 2), "Grad": floats(2, 3, 2),
                           "LearningRate": np.float32([0.01]), "Moment1": floats(3, 3, 2),
                           "Moment2": floats(4, 3, 2, low=0.0), "Beta1Pow": np.float32([0.81]),
                           "Beta2Pow": np.float32([0.998])},
         {"weight_decay": 0.01}),
    Case("no_decay_no_adapt", "lamb",
         {"Param": floats(1, 4), "Grad": floats(2, 4), "LearningRate": np.float32([0.1]),
          "Moment1": floats(3, 4), "Moment2": floats(4, 4, low=0.0),
          "Beta1Pow": np.float32([0.9]), "Beta2Pow": np.float32([0.999])},
         {"weight_decay": 0.0}),

    # the ops control flow is built from (the block-owning ops are below, in
    # TESTED_IN_PROGRAMS)
    Case("mask1", "select_input", {"X": [floats(1, 2, 3), floats(2, 2, 3)],
                                   "Mask": np.int32([1])}, {}),
    Case("mask0", "select_output", {"X": floats(1, 2, 3), "Mask": np.int32([0])}, {}),
    Case("rows", "split_lod_tensor", {"X": floats(1, 4, 2),
                                      "Mask": np.array([[True], [False], [True], [False]])},
         {}),
    Case("rows", "merge_lod_tensor",
         {"X": np.array([[True], [False], [True]]), "Mask": np.array([[True], [False], [True]]),
          "InTrue": floats(1, 2, 2), "InFalse": floats(2, 1, 2)}, {}),
    Case("int64_counter", "increment", {"X": np.int64([4])}, {"step": 1.0}),
    Case("float_step", "increment", {"X": floats(1, 1)}, {"step": -0.5}),
    Case("copy", "rnn_memory_helper", {"X": floats(1, 2, 3)}, {}),
    Case("batch_from_dim1", "fill_constant_batch_size_like", {"Input": floats(1, 4, 3, 2)},
         {"shape": [-1, 5], "value": 0.5, "input_dim_idx": 1, "output_dim_idx": 0,
          "dtype": FP32}),

    # batch_norm, instance_norm, group_norm (ops/batch_norm.py, ops/group_norm.py): the
    # gradient rows keep MeanOut independent of X (momentum 1, or the given statistics),
    # as Paddle's gradient ignores MeanOut's dependence on the batch
    Case("train_nchw", "batch_norm", bn_inputs(150, 2, 3, 2, 2), {"momentum": 0.9}),
    Case("global_stats", "batch_norm", bn_inputs(151, 2, 3, 2, 2),
         {"is_test": True, "use_global_stats": True, "momentum": 1.0, "epsilon": 1e-4},
         grad=True),
    Case("train_momentum1", "batch_norm", bn_inputs(152, 2, 3, 2, 2), {"momentum": 1.0},
         grad=True),
    Case("train_nhwc", "batch_norm", bn_inputs(153, 2, 2, 2, 3, c=3),
         {"momentum": 1.0, "data_layout": "NHWC"}, grad=True),
    Case("train_2d", "batch_norm", bn_inputs(154, 5, 3), {"momentum": 0.8, "epsilon": 1e-3}),
    Case("test_mode", "batch_norm", bn_inputs(155, 2, 3, 2), {"is_test": True}),
    Case("momentum_tensor_no_scale", "batch_norm",
         {k: v for k, v in bn_inputs(156, 3, 2, 2).items() if k not in ("Scale", "Bias")}
         | {"MomentumTensor": np.float32([0.7])}, {}),
    Case("nchw", "instance_norm", {"X": floats(160, 2, 3, 2, 2), "Scale": floats(161, 3),
                                   "Bias": floats(162, 3)}, {"epsilon": 1e-4}, grad=True),
    Case("3d_no_scale", "instance_norm", {"X": floats(163, 2, 2, 3)}, {}, grad=True),
    Case("groups2", "group_norm", {"X": floats(170, 2, 4, 2, 2), "Scale": floats(171, 4),
                                   "Bias": floats(172, 4)}, {"groups": 2, "epsilon": 1e-4},
         grad=True),
    Case("nhwc_groups3", "group_norm", {"X": floats(173, 2, 2, 2, 3), "Scale": floats(174, 3),
                                        "Bias": floats(175, 3)},
         {"groups": 3, "data_layout": "NHWC"}, grad=True),
    Case("2d_no_scale", "group_norm", {"X": floats(176, 3, 4)}, {"groups": 2}, grad=True),
    # layer_norm (ops/layer_norm.py): rows are X's dims before begin_norm_axis
    Case("tokens_axis2", "layer_norm", {"X": floats(177, 2, 3, 4), "Scale": floats(178, 4),
                                        "Bias": floats(179, 4)},
         {"begin_norm_axis": 2, "epsilon": 1e-4}, grad=True),
    Case("no_scale_axis1", "layer_norm", {"X": floats(190, 3, 2, 3)}, {}, grad=True),
    Case("scale_only_4d_axis1", "layer_norm", {"X": floats(191, 2, 2, 1, 3),
                                               "Scale": floats(192, 6)},
         {"begin_norm_axis": 1}, grad=True),
    Case("bias_only_f64_axis2", "layer_norm",
         {"X": floats(193, 2, 3, 2, 2, dtype=np.float64),
          "Bias": floats(194, 4, dtype=np.float64)},
         {"begin_norm_axis": 2, "epsilon": 1e-3}, grad=True),
    Case("2d_f64", "layer_norm", {"X": floats(195, 3, 5, dtype=np.float64),
                                  "Scale": floats(196, 5, dtype=np.float64),
                                  "Bias": floats(197, 5, dtype=np.float64)}, {}, grad=True),
    Case("no_rows", "layer_norm", {"X": floats(198, 0, 3), "Scale": floats(199, 3)}, {}),
    # rnn (ops/rnn.py): Paddle's fused LSTM / GRU / simple RNN; Reserve is what the
    # gradient reads (not compared)
    Case("lstm_lengths", "rnn", *rnn_row(300, "LSTM", 4, 3, 2, 3, lengths=[4, 1, 3])[:2],
         outputs=rnn_row(300, "LSTM", 4, 3, 2, 3)[2], unfetched=("Reserve",), grad=True),
    Case("gru_2layers_bidirec", "rnn", *rnn_row(320, "GRU", 3, 2, 2, 2, 2, True)[:2],
         outputs=rnn_row(320, "GRU", 3, 2, 2, 2, 2, True)[2], unfetched=("Reserve",),
         grad=True),
    Case("tanh_bidirec_empty_sequence", "rnn",
         *rnn_row(360, "RNN_TANH", 3, 2, 3, 2, 1, True, lengths=[3, 0])[:2],
         outputs={"Out": 1, "State": 1}, unfetched=("Reserve",), grad=True),
    Case("relu_2layers_f64", "rnn",
         *rnn_row(380, "RNN_RELU", 3, 2, 2, 3, 2, lengths=[2, 3], dtype=np.float64)[:2],
         outputs={"Out": 1, "State": 1}, unfetched=("Reserve",), grad=True),
    Case("lstm_2layers_bidirec_f64", "rnn",
         *rnn_row(400, "LSTM", 3, 2, 2, 2, 2, True, lengths=[1, 3], dtype=np.float64)[:2],
         outputs={"Out": 1, "State": 2}, unfetched=("Reserve",), grad=True),
    # dropout (ops/dropout.py): what is deterministic; training's random masks are
    # checked by tests/test_dropout.py
    Case("p0_test_downgrade", "dropout", {"X": floats(180, 3, 4)},
         {"dropout_prob": 0.0, "is_test": True}, grad=True),
    Case("test_downgrade", "dropout", {"X": floats(181, 3, 4)},
         {"dropout_prob": 0.3, "is_test": True}, grad=True),
    Case("test_upscale", "dropout", {"X": floats(182, 2, 3)},
         {"dropout_prob": 0.3, "is_test": True, "dropout_implementation": "upscale_in_train"},
         grad=True),
    Case("train_p0", "dropout", {"X": floats(183, 2, 3)},
         {"dropout_prob": 0.0, "dropout_implementation": "upscale_in_train"}, grad=True),
    Case("train_p1", "dropout", {"X": SPECIALS.astype(np.float32)},
         {"dropout_prob": 1.0, "dropout_implementation": "upscale_in_train"}),
    Case("train_fix_seed", "dropout", {"X": floats(184, 8, 16, low=0.5, high=1.5)},
         {"dropout_prob": 0.25, "fix_seed": True, "seed": 7,
          "dropout_implementation": "upscale_in_train"},
         compare_values=False, check=dropout_statistics(0.25)),

    # accuracy, auc (ops/metrics.py; auc's runs one after another: tests/test_metrics.py),
    # nll_loss, kldiv_loss (ops/log_prob_losses.py)
    Case("top2_label_out_of_range", "accuracy",
         {"Out": floats(200, 4, 2), "Indices": np.int64([[0, 3], [2, 1], [4, 0], [1, 2]]),
          "Label": np.int64([[3], [0], [9], [2]])}, {}),
    Case("top1_flat_int32_labels", "accuracy",
         {"Out": floats(201, 3, 1), "Indices": np.int64([[1], [0], [2]]),
          "Label": np.int32([1, 1, 2])}, {}),
    Case("global_counts", "auc",
         {"Predict": np.float32([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7], [0, 1.0]]),
          "Label": np.int64([[0], [1], [0], [1], [-1]]),
          "StatPos": np.int64([[1, 0, 2, 0, 1]]), "StatNeg": np.int64([[0, 3, 0, 1, 0]])},
         {"num_thresholds": 4, "slide_steps": 0}),
    Case("sliding_ring_1", "auc",
         {"Predict": np.float64([[0.05], [0.95], [0.5], [0.71]]),
          "Label": np.int64([1, 0, 1, 1]),
          # two rings of 5 buckets, their sum, and 5 batches counted (ring 1 is next)
          "StatPos": np.int64([2, 0, 1, 0, 1, 0, 3, 1, 1, 0, 2, 3, 2, 1, 1, 5]),
          "StatNeg": np.int64([0, 1, 0, 2, 1, 1, 0, 0, 1, 1, 1, 1, 0, 3, 2, 5])},
         {"num_thresholds": 4, "slide_steps": 2}),
    Case("fake_batch", "auc",
         {"Predict": np.float32([[0.1, 0.9], [0.7, 0.3]]), "Label": np.int64([[1], [0]]),
          "StatPos": np.int64([[0, 1, 0]]), "StatNeg": np.int64([[1, 0, 0]]),
          "InsTagWeight": np.float32([[0.0]])}, {"num_thresholds": 2, "slide_steps": 0}),
    Case("mean_weight_ignore", "nll_loss",
         {"X": floats(202, 5, 4, low=-3, high=0),
          "Label": np.int64([3, 0, -100, 2, 3]), "Weight": floats(203, 4, low=0.2, high=2)},
         {}, grad=True),
    Case("sum", "nll_loss", {"X": floats(204, 3, 4, low=-3, high=0),
                             "Label": np.int64([1, 3, 0])}, {"reduction": "sum"}, grad=True),
    Case("none_ignore_1", "nll_loss", {"X": floats(205, 4, 3, low=-3, high=0),
                                       "Label": np.int64([1, 1, 2, 0])},
         {"reduction": "none", "ignore_index": 1}, grad=True),
    Case("nchw_mean_weight", "nll_loss",
         {"X": floats(206, 2, 3, 2, 2, low=-3, high=0),
          "Label": ints(207, 2, 2, 2, low=0, high=3, dtype=np.int64),
          "Weight": floats(208, 3, low=0.5, high=1.5)}, {}, grad=True),
    Case("nchw_none", "nll_loss",
         {"X": floats(209, 2, 3, 1, 2, low=-3, high=0),
          "Label": np.int64([[[2, -100]], [[0, 1]]])}, {"reduction": "none"}, grad=True),
    Case("all_ignored_mean", "nll_loss", {"X": floats(210, 2, 3, low=-3, high=0),
                                          "Label": np.int64([-100, -100])}, {}, grad=True),
    Case("none", "kldiv_loss",
         {"X": floats(211, 3, 4, low=-3, high=0),
          "Target": np.float32([[0.2, 0.0, 0.5, 0.3], [-0.1, 0.4, 0.4, 0.2],
                                [0.25, 0.25, 0.25, 0.25]])}, {"reduction": "none"}, grad=True),
    *[Case(reduction, "kldiv_loss", {"X": floats(212, 2, 3, low=-3, high=0),
                                     "Target": floats(213, 2, 3, low=-0.2, high=1)},
           {"reduction": reduction}, grad=True) for reduction in ("mean", "sum", "batchmean")],
    Case("log_target", "kldiv_loss", {"X": floats(214, 2, 3, low=-3, high=0),
                                      "Target": floats(215, 2, 3, low=-3, high=0)},
         {"reduction": "sum", "log_target": True}, grad=True),
    # greater_equal, less_equal; logical ops on numbers (nonzero is true, NaN too);
    # reduce_all/_any (ops/bool_reduce.py), isnan_v2/isinf_v2/isfinite_v2
    # (ops/finite_checks.py), size (ops/size.py), bitwise_* (ops/bitwise.py),
    # sequence_mask (ops/sequence_mask.py)
    Case("same_shape", "greater_equal",
         {"X": small_int_floats(220, 3, 4), "Y": small_int_floats(221, 3, 4)}, {}),
    Case("axis1_int64", "greater_equal",
         {"X": ints(222, 2, 3, 4, dtype=np.int64), "Y": ints(223, 3, dtype=np.int64)},
         {"axis": 1}),
    Case("nan_never", "greater_equal",
         {"X": SPECIALS.astype(np.float32), "Y": SPECIALS.astype(np.float32)}, {}),
    Case("same_shape", "less_equal",
         {"X": small_int_floats(224, 3, 4), "Y": small_int_floats(225, 3, 4)}, {}),
    Case("scalar_y1_int32", "less_equal", {"X": ints(226, 3, 4), "Y": np.int32([0])}, {}),
    Case("bool", "less_equal", {"X": bools(227, 3, 4), "Y": bools(228, 3, 4)}, {}),
    Case("float32_zeros_nan", "logical_and",
         {"X": SPECIALS.astype(np.float32), "Y": np.float32([[0, 1, 2, np.nan, 0]] * 2)}, {}),
    Case("int32_broadcast", "logical_and",
         {"X": ints(229, 3, 1, low=-1, high=2), "Y": ints(230, 4, low=-1, high=2)}, {}),
    Case("float64_zeros_nan", "logical_or",
         {"X": SPECIALS, "Y": np.float64([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])}, {}),
    Case("int64", "logical_or", {"X": ints(231, 3, 4, low=-1, high=2, dtype=np.int64),
                                 "Y": ints(232, 3, 4, low=-1, high=2, dtype=np.int64)}, {}),
    Case("float32_zeros_nan", "logical_not", {"X": SPECIALS.astype(np.float32)}, {}),
    Case("int32", "logical_not", {"X": ints(233, 3, 4, low=-1, high=2)}, {}),
    Case("bool_broadcast", "logical_xor", {"X": bools(263, 3, 1), "Y": bools(264, 4)}, {}),
    Case("float32_zeros_nan", "logical_xor",
         {"X": SPECIALS.astype(np.float32), "Y": np.float32([[0, 1, 2, np.nan, 0]] * 2)}, {}),
    Case("bool_dim1", "reduce_all", {"X": bools(234, 3, 4) | bools(235, 3, 4)}, {"dim": [1]}),
    Case("bool_keep_dim_two_axes", "reduce_all", {"X": bools(236, 2, 3, 2) | bools(237, 2, 3, 2)},
         {"dim": [0, -1], "keep_dim": True}),
    Case("float_all_axes_nan_true", "reduce_all", {"X": np.float32([[np.nan, 1], [-2, 3]])},
         {"dim": [], "reduce_all": True}),
    Case("int32_zeros", "reduce_all", {"X": ints(238, 4, 3, low=0, high=3)}, {"dim": [0]}),
    Case("empty_axis_true", "reduce_all", {"X": np.zeros((2, 0), np.bool_)}, {"dim": [1]}),
    Case("bool_dim0", "reduce_any", {"X": bools(239, 3, 4) & bools(240, 3, 4)}, {"dim": [0]}),
    Case("float64_nan_is_true_keep_dim", "reduce_any",
         {"X": np.float64([[0, 0, np.nan], [0, 0, 0]])}, {"dim": [0, 1], "keep_dim": True}),
    Case("int64_all_zeros", "reduce_any", {"X": np.zeros((2, 3), np.int64)},
         {"dim": [], "reduce_all": True}),
    Case("empty_axis_false", "reduce_any", {"X": np.zeros((0, 3), np.float32)}, {"dim": [0]}),
    Case("axis_tensor", "reduce_all", {"X": bools(257, 2, 3) | bools(258, 2, 3),
                                       "AxisTensor": np.int64([-1])}, {"dim": [0]}),
    Case("axis_tensor_list_keep_dim", "reduce_any",
         {"X": bools(259, 2, 3, 2) & bools(260, 2, 3, 2),
          "AxisTensorList": [np.int32([0]), np.int64([2])]}, {"keep_dim": True}),
    Case("axis_tensor_list", "reduce_all",
         {"X": ints(261, 2, 3, low=0, high=4), "AxisTensorList": [np.int64([1])]}, {}),
    Case("axis_tensor_two_axes", "reduce_any",
         {"X": ints(262, 2, 3, 2, low=0, high=2, dtype=np.int64),
          "AxisTensor": np.int32([0, -1])}, {}),
    Case("float32", "isnan_v2", {"X": SPECIALS.astype(np.float32)}, {}),
    Case("float64", "isnan_v2", {"X": SPECIALS}, {}),
    Case("int32", "isnan_v2", {"X": ints(241, 3, 4)}, {}),
    Case("float32", "isinf_v2", {"X": SPECIALS.astype(np.float32)}, {}),
    Case("int64", "isinf_v2", {"X": ints(242, 3, 4, dtype=np.int64)}, {}),
    Case("float64", "isfinite_v2", {"X": SPECIALS}, {}),
    Case("int32_0d", "isfinite_v2", {"X": np.int32(7)}, {}),
    Case("float32", "size", {"Input": floats(243, 2, 3, 4)}, {}),
    Case("bool_0d", "size", {"Input": np.bool_(True)}, {}),
    Case("empty", "size", {"Input": np.zeros((3, 0), np.int64)}, {}),
    Case("int64", "bitwise_and", {"X": ints(244, 3, 4, low=-9, high=9, dtype=np.int64),
                                  "Y": ints(245, 3, 4, low=-9, high=9, dtype=np.int64)}, {}),
    Case("bool_broadcast", "bitwise_and", {"X": bools(246, 3, 1), "Y": bools(247, 4)}, {}),
    Case("int32_broadcast", "bitwise_or", {"X": ints(248, 2, 3, low=-9, high=9),
                                           "Y": ints(249, 3, low=-9, high=9)}, {}),
    Case("uint8", "bitwise_xor", {"X": ints(250, 3, 4, low=0, high=256).astype(np.uint8),
                                  "Y": ints(251, 3, 4, low=0, high=256).astype(np.uint8)}, {}),
    Case("bool", "bitwise_xor", {"X": bools(252, 3, 4), "Y": bools(253, 3, 4)}, {}),
    Case("int64", "bitwise_not", {"X": ints(254, 3, 4, low=-9, high=9, dtype=np.int64)}, {}),
    Case("bool", "bitwise_not", {"X": bools(255, 3, 4)}, {}),
    Case("int8", "bitwise_not", {"X": ints(256, 5, low=-128, high=128).astype(np.int8)}, {}),
    Case("maxlen5_int64", "sequence_mask", {"X": np.int64([3, 0, 5, 1])}, {"maxlen": 5}),
    Case("longest_2d_float32", "sequence_mask", {"X": np.int32([[2, 4], [0, 1]])},
         {"maxlen": -1, "out_dtype": FP32}),
    Case("maxlen_tensor_bool", "sequence_mask",
         {"X": np.int64([1, 3, 6]), "MaxLenTensor": np.int32([4])},
         {"maxlen": -1, "out_dtype": BOOL}),
    Case("maxlen_shorter_int32", "sequence_mask", {"X": np.int64([[7], [2]])},
         {"maxlen": 3, "out_dtype": INT32}),
    # pool3d, max_pool3d_with_index (ops/pool.py), unpool, unpool3d (ops/unpool.py): no
    # ties in a max; unpool's Indices distinct in each plane, but for the repeated row
    Case("max_2x2x2", "pool3d", {"X": distinct(301, 1, 2, 4, 4, 4)},
         {"ksize": [2, 2, 2], "strides": [2, 2, 2], "pooling_type": "max"}, grad=True),
    Case("avg_ceil_padded_inclusive_ndhwc", "pool3d", {"X": floats(302, 1, 3, 3, 4, 2)},
         {"ksize": [2, 2, 3], "strides": [2, 1, 2], "paddings": [1, 0, 0, 1, 1, 1],
          "pooling_type": "avg", "ceil_mode": True, "exclusive": False,
          "data_format": "NDHWC"}, grad=True),
    Case("adaptive_avg", "pool3d", {"X": floats(303, 1, 2, 3, 5, 4)},
         {"ksize": [2, 3, 2], "adaptive": True, "pooling_type": "avg"}, grad=True),
    Case("max_same", "pool3d", {"X": distinct(304, 1, 1, 3, 4, 5)},
         {"ksize": [2, 3, 2], "strides": [2, 2, 2], "padding_algorithm": "SAME",
          "pooling_type": "max"}, grad=True),
    Case("with_padding", "max_pool3d_with_index", {"X": distinct(305, 1, 2, 3, 4, 4)},
         {"ksize": [2, 3, 3], "strides": [1, 2, 2], "paddings": [0, 1, 1]}, grad=True),
    Case("adaptive", "max_pool3d_with_index", {"X": distinct(306, 1, 1, 3, 4, 5)},
         {"ksize": [2, 2, 3], "adaptive": True}, grad=True),
    Case("4x4", "unpool", {"X": floats(307, 1, 2, 2, 2), "Indices": np.random.default_rng(
        307).permuted(np.tile(np.arange(16), (2, 1)), axis=1)[:, :4].reshape(1, 2, 2, 2)
        .astype(np.int32)}, {"ksize": [2, 2], "strides": [2, 2], "output_size": [4, 4]},
         grad=True),
    Case("repeated_index_int64", "unpool",
         {"X": np.int64([[[[5, 7, 9]]]]), "Indices": np.int64([[[[0, 2, 0]]]])},
         {"ksize": [1, 2], "strides": [1, 2], "output_size": [1, 3]}),
    Case("repeated_index_only_the_last_has_a_gradient", "unpool",   # (Paddle: both)
         {"X": floats(308, 1, 1, 1, 3), "Indices": np.int32([[[[1, 3, 1]]]])},
         {"ksize": [1, 2], "strides": [1, 2], "output_size": [1, 4]}, grad=True),
    Case("2x2x3", "unpool3d", {"X": floats(309, 1, 2, 1, 2, 2), "Indices": np.random
         .default_rng(309).permuted(np.tile(np.arange(12), (2, 1)), axis=1)[:, :4]
         .reshape(1, 2, 1, 2, 2).astype(np.int32)},
         {"ksize": [2, 1, 2], "strides": [2, 1, 2], "output_size": [2, 2, 3]}, grad=True),
    # svd, qr, eigh, eigvalsh, eig, eigvals, matrix_rank, lstsq (ops/svd.py, qr.py, eigh.py,
    # eig.py, matrix_rank.py, lstsq.py); eigh's and eigvalsh's gradients (with respect to a
    # symmetric X) are checked along symmetric directions in tests/test_spectral_ops.py
    Case("batch_tall", "svd", {"X": floats(901, 2, 3, 2)}, {}, grad=True),
    Case("wide_full_matrices", "svd", {"X": floats(902, 2, 3)}, {"full_matrices": True}),
    Case("tall_reduced", "qr", {"X": floats(903, 3, 2)}, {"mode": "reduced"}, grad=True),
    Case("wide_batch", "qr", {"X": floats(904, 2, 2, 3)}, {}, grad=True),
    Case("complete_and_r", "qr", {"X": floats(905, 3, 2)}, {"mode": "complete"}),
    Case("r_only", "qr", {"X": floats(906, 2, 3, 2)}, {"mode": "r"}),
    Case("lower", "eigh", {"X": floats(907, 2, 3, 3)}, {}),
    Case("upper", "eigh", {"X": floats(908, 3, 3)}, {"UPLO": "U"}),
    Case("lower", "eigvalsh", {"X": floats(909, 2, 3, 3)}, {}),
    Case("float32", "eig", {"X": floats(910, 2, 3, 3)}, {}),
    Case("float64", "eigvals", {"X": floats(911, 3, 3, dtype=np.float64)}, {}),
    Case("default_tol", "matrix_rank", {"X": np.float32([[1, 2], [2, 4], [0, 1]])}, {}),
    Case("tol_tensor_batch", "matrix_rank",
         {"X": floats(912, 2, 3, 3), "TolTensor": np.float32([0.05, 0.5])},
         {"use_default_tol": False}),
    Case("hermitian_tol", "matrix_rank", {"X": floats(913, 3, 3, dtype=np.float64)},
         {"hermitian": True, "tol": 0.3, "use_default_tol": False}),
    Case("tall_gelsd", "lstsq", {"X": floats(914, 2, 4, 2), "Y": floats(915, 2, 4, 3)},
         {"driver": "gelsd"},
         outputs={"Solution": 1, "Residuals": 1, "Rank": 1, "SingularValues": 1}),
    Case("wide_gelsy", "lstsq", {"X": floats(916, 2, 3), "Y": floats(917, 2, 1)},
         {"driver": "gelsy", "rcond": 1e-6}),
    # cholesky, lu, lu_unpack, determinant, solve, triangular_solve, cholesky_solve
    # (ops/triangular_factor.py, linear_solve.py): well-conditioned matrices (2 I added);
    # cholesky's gradient (with respect to a symmetric X) is checked along symmetric
    # directions in tests/test_triangular_factor.py
    Case("batch_lower", "cholesky", {"X": spd(920, 2, 3)}, {}),
    Case("upper", "cholesky", {"X": spd(921, 1, 3)[0].astype(np.float64)}, {"upper": True}),
    Case("square", "lu", {"X": floats(922, 3, 3)}, {}, grad=True),
    Case("wide_batch", "lu", {"X": floats(923, 2, 2, 3)}, {}, grad=True),
    Case("tall", "lu", {"X": floats(924, 3, 2)}, {}, grad=True),
    Case("singular_infos", "lu", {"X": np.float32([[[1, 2], [2, 4]], [[0, 0], [0, 0]]])}, {}),
    Case("no_pivots", "lu", {"X": floats(925, 3, 3) + 2 * np.eye(3, dtype=np.float32)},
         {"pivots": False}),
    Case("wide", "lu_unpack", {"X": floats(926, 2, 3), "Pivots": np.int32([2, 2])}, {},
         grad=True),
    Case("tall_batch", "lu_unpack",
         {"X": floats(927, 2, 3, 2), "Pivots": np.int32([[3, 2], [1, 3]])}, {}, grad=True),
    Case("pivots_only", "lu_unpack", {"X": floats(928, 3, 3), "Pivots": np.int32([3, 3, 3])},
         {"unpack_ludata": False}),
    Case("batch", "determinant", {"Input": floats(929, 2, 3, 3)}, {}, grad=True),
    Case("singular_cofactors", "determinant", {"Input": np.float32([[1, 2], [2, 4]])}, {},
         grad=True),
    Case("broadcast_batch", "solve", {"X": floats(930, 2, 3, 3) + 2 * np.eye(3, dtype=np.float32),
                                      "Y": floats(931, 3, 2)}, {}, grad=True),
    Case("vector", "solve", {"X": floats(932, 3, 3) + 2 * np.eye(3, dtype=np.float32),
                             "Y": floats(933, 3)}, {}, grad=True),
    Case("upper_batch", "triangular_solve",
         {"X": floats(934, 2, 3, 3) + 2 * np.eye(3, dtype=np.float32),
          "Y": floats(935, 2, 3, 2)}, {}, grad=True),
    Case("lower_transpose_unit_broadcast", "triangular_solve",
         {"X": floats(936, 3, 3), "Y": floats(937, 2, 3, 1)},
         {"upper": False, "transpose": True, "unitriangular": True}, grad=True),
    Case("lower_broadcast", "cholesky_solve",
         {"X": floats(938, 2, 3, 2), "Y": np.linalg.cholesky(spd(939, 1, 3)[0])}, {},
         grad=True),
    Case("upper", "cholesky_solve",
         {"X": floats(940, 3, 1), "Y": np.linalg.cholesky(spd(941, 1, 3)[0]).T.copy()},
         {"upper": True}, grad=True),
    # unique, unique_consecutive, where_index, searchsorted (ops/unique.py,
    # ops/searchsorted.py), kthvalue, mode, nanmedian (ops/order_statistics.py), cummax,
    # cummin, logcumsumexp (ops/cum_extrema.py, ops/logcumsumexp.py): gradient rows without
    # ties (float64, distinct values); ties, NaN and -inf in the forward rows
    Case("sorted_all_outputs", "unique",
         {"X": np.float32([[2, 1, 2], [0, 1, np.nan], [2, np.nan, 0.5]])},
         {"is_sorted": True, "dtype": INT64},
         outputs={"Out": 1, "Indices": 1, "Index": 1, "Counts": 1}),
    Case("rows_int32_index", "unique", {"X": np.int64([[2, 1, 2], [0, 1, 2], [2, 1, 2]])},
         {"is_sorted": True, "axis": [0], "dtype": INT32},
         outputs={"Out": 1, "Indices": 1, "Index": 1, "Counts": 1}),
    Case("fluid1_first_appearance", "unique", {"X": np.int32([5, 3, 5, 1, 3])},
         {"is_sorted": False, "dtype": INT64}, outputs={"Out": 1, "Index": 1}),
    Case("flat_nan_never_equal", "unique_consecutive",
         {"X": np.float32([[1, 1, 2], [2, np.nan, np.nan]])}, {"dtype": INT64},
         outputs={"Out": 1, "Index": 1, "Counts": 1}),
    Case("columns_int32", "unique_consecutive",
         {"X": np.int64([[1, 1, 2, 2], [0, 0, 0, 3]])}, {"axis": [1], "dtype": INT32},
         outputs={"Out": 1, "Index": 1, "Counts": 1}),
    Case("float32_3d", "where_index",
         {"Condition": np.float32([[[0, 1], [2, 0]], [[0, 0], [np.nan, -1]]])}, {}),
    Case("bool_none_true", "where_index", {"Condition": np.zeros((2, 3), bool)}, {}),
    Case("one_sequence_nan", "searchsorted",
         {"SortedSequence": np.float32([1, 3, 3, 5]),
          "Values": np.float32([[0, 3, 4], [6, np.nan, 5]])}, {}),
    Case("per_row_right_int32", "searchsorted",
         {"SortedSequence": np.int64([[1, 2, 2, 3], [0, 5, 6, 9]]),
          "Values": np.int64([[2, 0], [6, 10]])}, {"right": True, "out_int32": True}),
    Case("k2_last_axis", "kthvalue", {"X": distinct(210, 2, 4).astype(np.float64)},
         {"k": 2}, grad=True),
    Case("ties_nan_axis0_keepdim", "kthvalue",
         {"X": np.float32([[3, np.nan], [1, 2], [3, 2]])},
         {"k": 2, "axis": 0, "keepdim": True}),
    Case("distinct_is_min", "mode", {"X": distinct(211, 3, 4).astype(np.float64)}, {},
         grad=True),
    Case("ties_nan_int64", "mode",
         {"X": np.float32([[3, 1, 3, 1, 2], [np.nan, np.nan, 0, 5, 5]])}, {"keepdim": True}),
    Case("int64_axis0", "mode", {"X": np.int64([[4, 1], [4, 2], [1, 2]])}, {"axis": 0}),
    Case("odd_rows", "nanmedian", {"X": distinct(212, 2, 5).astype(np.float64)},
         {"axis": [1], "keepdim": False}, grad=True),
    Case("even_everything", "nanmedian", {"X": distinct(213, 2, 2, 3).astype(np.float64)},
         {"axis": [], "keepdim": True}, grad=True),
    Case("nan_rows_two_axes", "nanmedian",
         {"X": np.float32([[[1, np.nan], [4, 2]], [[np.nan, np.nan], [np.nan, np.nan]],
                           [[5, 1], [np.nan, 2]]])},
         {"axis": [0, -1], "keepdim": False}),
    Case("axis0", "cummax", {"x": distinct(214, 3, 4).astype(np.float64)}, {"axis": 0},
         grad=True),
    Case("ties_nan_int32_indices", "cummax",
         {"x": np.float32([[3, 1, 3, np.nan, 4, np.nan]])}, {"axis": -1, "dtype": INT32}),
    Case("last_axis", "cummin", {"x": distinct(215, 2, 5).astype(np.float64)}, {},
         grad=True),
    Case("int64_ties", "cummin", {"x": np.int64([[3, 1, 1, 3, 0], [2, 2, 5, -1, -1]])},
         {"axis": 1}),
    Case("axis1", "logcumsumexp", {"X": floats(216, 2, 3, low=-3, high=3, dtype=np.float64)},
         {"axis": 1}, grad=True),
    Case("flatten_reverse", "logcumsumexp",
         {"X": floats(217, 2, 3, low=-3, high=3, dtype=np.float64)},
         {"flatten": True, "reverse": True}, grad=True),
    # exclusive: each scan starts at log(0) = -inf, which central differences cannot take
    Case("exclusive_axis0", "logcumsumexp", {"X": floats(218, 3, 2, low=-3, high=3)},
         {"axis": 0, "exclusive": True}),
    Case("neg_inf_and_large", "logcumsumexp",
         {"X": np.float32([[-np.inf, -np.inf, 0, 100], [80, 90, -np.inf, 95]])}, {"axis": -1}),
    # mv, dot, multi_dot, matrix_power, addmm, kron, cross, dist, frobenius_norm, diagonal,
    # trace, diag_v2, eye, histogram, bincount (ops/matrix_products.py, kron_and_cross.py,
    # distances.py, diagonals.py, histogram.py): gradient rows in float64, tiny shapes;
    # matrix_power's inverse on a well-conditioned matrix, dist's inf without ties, the
    # histogram's values off the bins' edges
    Case("matrix_vector", "mv", {"X": floats(230, 2, 3, dtype=np.float64),
                                 "Vec": floats(231, 3, dtype=np.float64)}, {}, grad=True),
    Case("rows", "dot", {"X": floats(232, 2, 3, dtype=np.float64),
                         "Y": floats(233, 2, 3, dtype=np.float64)}, {}, grad=True),
    Case("int32_vectors", "dot", {"X": ints(234, 4), "Y": ints(235, 4)}, {}),
    Case("vector_first", "multi_dot", {"X": [floats(236, 3, dtype=np.float64),
                                             floats(237, 3, 2, dtype=np.float64),
                                             floats(238, 2, 4, dtype=np.float64)]}, {},
         grad=True),
    Case("four_matrices_vector_last", "multi_dot",
         {"X": [floats(239, 2, 3), floats(240, 3, 4), floats(241, 4, 2), floats(242, 2)]}, {}),
    Case("cube_batch", "matrix_power", {"X": floats(243, 2, 3, 3, dtype=np.float64)},
         {"n": 3}, grad=True),
    Case("inverse_squared", "matrix_power",
         {"X": (np.eye(3) * 2 + floats(244, 3, 3, dtype=np.float64) * 0.5)}, {"n": -2},
         grad=True),
    Case("identity", "matrix_power", {"X": floats(245, 2, 2, 2)}, {"n": 0}),
    Case("broadcast_input", "addmm", {"Input": floats(246, 2, dtype=np.float64),
                                      "X": floats(247, 3, 4, dtype=np.float64),
                                      "Y": floats(248, 4, 2, dtype=np.float64)},
         {"Alpha": 0.5, "Beta": 2.0}, grad=True),
    Case("ranks_2_and_1", "kron", {"X": floats(249, 2, 3, dtype=np.float64),
                                   "Y": floats(250, 2, dtype=np.float64)}, {}, grad=True),
    Case("int32", "kron", {"X": ints(251, 2, 2), "Y": ints(252, 1, 3)}, {}),
    Case("first_axis_of_3", "cross", {"X": floats(253, 2, 3, dtype=np.float64),
                                      "Y": floats(254, 2, 3, dtype=np.float64)}, {},
         grad=True),
    Case("int64_dim0", "cross", {"X": ints(255, 3, 3, dtype=np.int64),
                                 "Y": ints(256, 3, 3, dtype=np.int64)}, {"dim": 0}),
    Case("p2_broadcast", "dist", {"X": floats(257, 2, 3, dtype=np.float64),
                                  "Y": floats(258, 3, dtype=np.float64)}, {"p": 2.0},
         grad=True),
    Case("p_inf", "dist", {"X": distinct(259, 2, 3).astype(np.float64),
                           "Y": np.zeros((1, 3))}, {"p": float("inf")}, grad=True),
    Case("p1_5", "dist", {"X": floats(260, 3, dtype=np.float64),
                          "Y": floats(261, 3, dtype=np.float64)}, {"p": 1.5}, grad=True),
    Case("p0_float32", "dist", {"X": np.float32([[1, 2, 3]]), "Y": np.float32([[1, 0, 3]])},
         {"p": 0.0}),
    Case("dim1_keep", "frobenius_norm", {"X": floats(262, 2, 3, dtype=np.float64)},
         {"dim": [1], "keep_dim": True}, grad=True),
    Case("reduce_all_3d", "frobenius_norm", {"X": floats(263, 2, 3, 2)},
         {"dim": [0], "reduce_all": True}),
    Case("offset1_axes_2_0", "diagonal", {"Input": floats(264, 2, 3, 4, dtype=np.float64)},
         {"offset": 1, "axis1": 2, "axis2": 0}, grad=True),
    Case("bool", "diagonal", {"Input": bools(265, 3, 3)}, {}),
    Case("offset_minus1", "trace", {"Input": floats(266, 3, 4, dtype=np.float64)},
         {"offset": -1}, grad=True),
    Case("int64_batch", "trace", {"Input": ints(267, 2, 3, 3, dtype=np.int64)},
         {"axis1": 1, "axis2": 2}),
    Case("vector_offset1_padding", "diag_v2", {"X": floats(268, 3, dtype=np.float64)},
         {"offset": 1, "padding_value": 2.0}, grad=True),
    Case("matrix_offset_minus1", "diag_v2", {"X": floats(269, 3, 4, dtype=np.float64)},
         {"offset": -1}, grad=True),
    Case("int32_vector", "diag_v2", {"X": ints(270, 2)}, {"offset": -2}),
    Case("float32_2x3", "eye", {}, {"num_rows": 2, "num_columns": 3, "dtype": FP32}),
    Case("int64_square", "eye", {}, {"num_rows": 3, "dtype": INT64}),
    Case("float32_range", "histogram",
         {"X": np.float32([[0.1, 0.6, 1.7], [2.5, -0.4, 3.0]])}, {"bins": 4, "min": 0, "max": 3}),
    Case("int64_data_range", "histogram", {"X": np.int64([1, 4, 4, 2, 9])}, {"bins": 3}),
    Case("int64_minlength", "bincount", {"X": np.int64([0, 3, 3, 1])}, {"minlength": 6}),
    Case("float32_weights", "bincount",
         {"X": np.int32([2, 0, 2, 1]), "Weights": np.float32([0.5, 1.0, 0.25, 2.0])}, {}),
    # index_sample, take_along_axis, repeat_interleave, crop_tensor, broadcast_tensors, unbind,
    # shard_index, multiplex, empty, gather_tree (ops/take_along.py ... gather_tree.py):
    # positions picked twice (their gradients add up), shorter Index, attribute tensors
    Case("repeated_positions", "index_sample",
         {"X": floats(9401, 3, 4, dtype=np.float64),
          "Index": np.int64([[3, 0, 3], [1, 1, 2], [0, 2, 3]])}, {}, grad=True),
    Case("int64_x_int32_index", "index_sample",
         {"X": ints(9402, 2, 5, dtype=np.int64), "Index": np.int32([[4], [0]])}, {}),
    Case("axis1", "take_along_axis",
         {"Input": floats(9403, 2, 3, 2, dtype=np.float64),
          "Index": ints(9404, 2, 4, 2, low=0, high=3, dtype=np.int64)}, {"Axis": 1}, grad=True),
    Case("shorter_index_last_axis", "take_along_axis",
         {"Input": floats(9405, 3, 4, dtype=np.float64), "Index": np.int32([[0, 3, 3], [2, 1, 0]])},
         {"Axis": -1}, grad=True),
    Case("int32_1d", "take_along_axis", {"Input": ints(9406, 5), "Index": np.int64([4, 0, 0])},
         {"Axis": 0}),
    Case("attr_dim1", "repeat_interleave", {"X": floats(9407, 2, 3, dtype=np.float64)},
         {"Repeats": 2, "dim": 1}, grad=True),
    Case("tensor_counts", "repeat_interleave",
         {"X": floats(9408, 3, 2, dtype=np.float64), "RepeatsTensor": np.int64([1, 0, 3])},
         {"dim": -2}, grad=True),
    Case("int64_attr", "repeat_interleave", {"X": ints(9409, 4, dtype=np.int64)},
         {"Repeats": 3, "dim": 0}),
    Case("attrs_rest_of_axis", "crop_tensor", {"X": floats(9410, 3, 4, dtype=np.float64)},
         {"shape": [-1, 2], "offsets": [1, 1]}, grad=True),
    Case("shape_list_offsets_tensor", "crop_tensor",
         {"X": floats(9411, 2, 3, 4, dtype=np.float64),
          "ShapeTensor": [np.int32([1]), np.int32([2]), np.int32([3])],
          "Offsets": np.int32([1, 0, 1])}, {"shape": [-1, -1, -1], "offsets": [0, 0, 0]},
         grad=True),
    Case("shape_tensor_offsets_list_int64", "crop_tensor",
         {"X": ints(9412, 4, 5, dtype=np.int64), "Shape": np.int64([2, 2]),
          "OffsetsTensor": [np.int64([2]), np.int64([3])]}, {"shape": [-1, -1]}),
    Case("three", "broadcast_tensors",
         {"X": [floats(9413, 2, 1, 3, dtype=np.float64), floats(9414, 4, 1, dtype=np.float64),
                floats(9415, 3, dtype=np.float64)]}, {}, outputs={"Out": 3}, grad=True),
    Case("bool", "broadcast_tensors", {"X": [bools(9416, 2, 3), bools(9417, 3)]}, {},
         outputs={"Out": 2}),
    Case("axis1", "unbind", {"X": floats(9418, 2, 3, dtype=np.float64)}, {"axis": 1},
         outputs={"Out": 3}, grad=True),
    Case("negative_axis_int64", "unbind", {"X": ints(9419, 2, 2, dtype=np.int64)},
         {"axis": -1}, outputs={"Out": 2}),
    Case("shard1", "shard_index", {"X": np.int64([[16], [1], [19], [10]])},
         {"index_num": 20, "nshards": 2, "shard_id": 1, "ignore_value": -1}),
    Case("uneven_int32", "shard_index", {"X": np.int32([[[0], [6]], [[3], [9]]])},
         {"index_num": 10, "nshards": 3, "shard_id": 1, "ignore_value": -7}),
    Case("three", "multiplex",
         {"Ids": np.int32([[2], [0], [2], [1]]),
          "X": [floats(9420, 4, 3, dtype=np.float64), floats(9421, 4, 3, dtype=np.float64),
                floats(9422, 4, 3, dtype=np.float64)]}, {}, grad=True),
    Case("int64", "multiplex",
         {"Ids": np.int64([[1], [0]]), "X": [ints(9423, 2, 2, dtype=np.int64),
                                             ints(9424, 2, 2, dtype=np.int64)]}, {}),
    Case("attrs", "empty", {}, {"shape": [2, 3], "dtype": VarType.FP32}),
    Case("shape_tensor_int64", "empty", {"ShapeTensor": np.int64([2, 0, 3])},
         {"dtype": VarType.INT64}),
    Case("shape_tensor_list", "empty", {"ShapeTensorList": [np.int32([2]), np.int64([2])]},
         {"shape": [-1, -1], "dtype": VarType.FP64}),
    Case("three_steps", "gather_tree",
         {"Ids": ints(9425, 3, 2, 3, low=0, high=9, dtype=np.int64),
          "Parents": ints(9426, 3, 2, 3, low=0, high=3, dtype=np.int64)}, {}),
    Case("int32_one_step", "gather_tree",
         {"Ids": np.int32([[[4, 1]]]), "Parents": np.int32([[[1, 1]]])}, {}),
    # writing into tensors by index: set_value, index_put, index_add, scatter_nd_add,
    # put_along_axis, fill_diagonal_tensor (ops/set_value.py, index_put.py,
    # scatter_into.py, fill_diagonal_tensor.py)
    Case("strided_broadcast", "set_value",
         {"Input": floats(9501, 4, 5), "ValueTensor": floats(9502, 2, 1)},
         {"axes": [0, 1], "starts": [1, 0], "ends": [3, 5], "steps": [1, 2]}, grad=True),
    Case("values_decrease_none", "set_value", {"Input": ints(9503, 3, 4, dtype=np.int64)},
         {"axes": [0, 1], "starts": [-2, 0], "ends": [-1, 4], "steps": [1, 2],
          "decrease_axes": [0], "none_axes": [0], "values": [7, -2], "shape": [2],
          "dtype": INT64}),
    Case("two_none_axes", "set_value",     # x[None, 0:2, None] = v: v fits [1, 2, 3, 1]
         {"Input": floats(9532, 2, 3), "ValueTensor": floats(9533, 2, 3, 1)},
         {"axes": [0], "starts": [0], "ends": [2], "steps": [1], "none_axes": [0, 2]}),
    Case("tensor_bounds_backwards", "set_value",     # x[-1:-6:-2] = v, bounds as tensors
         {"Input": floats(9504, 5, 3), "ValueTensor": floats(9505, 3),
          "StartsTensorList": [np.int64([-1])], "EndsTensorList": [np.int32([-6])],
          "StepsTensorList": [np.int64([-2])]},
         {"axes": [0], "starts": [0], "ends": [0], "steps": [1]}, grad=True),
    Case("ints_negative", "index_put",
         {"x": floats(9506, 3, 4), "indices": [np.int64([0, -1]), np.int32([1, 3])],
          "value": floats(9507, 2)}, {"accumulate": False}, grad=True),
    Case("repeated_accumulate", "index_put",
         {"x": floats(9508, 2, 3), "indices": [np.int64([1, 1, 0]), np.int64([2, 2, 0])],
          "value": floats(9509, 3)}, {"accumulate": True}, grad=True),
    Case("mask_rows_int64", "index_put",
         {"x": ints(9510, 3, 2, dtype=np.int64), "indices": [np.array([True, False, True])],
          "value": np.int64([5, -6])}, {"accumulate": False}),
    Case("axis1_repeats", "index_add",
         {"X": floats(9511, 2, 4), "Index": np.int64([3, 0, 3]),
          "AddValue": floats(9512, 2, 3)}, {"axis": 1}, grad=True),
    Case("int32_negative_axis", "index_add",
         {"X": ints(9513, 3, 2), "Index": np.int32([2]), "AddValue": ints(9514, 1, 2)},
         {"axis": -2}),
    Case("points_repeated", "scatter_nd_add",
         {"X": floats(9515, 3, 4), "Index": np.int64([[0, 1], [2, 3], [0, 1]]),
          "Updates": floats(9516, 3)}, {}, grad=True),
    Case("rows_int64", "scatter_nd_add",
         {"X": ints(9517, 3, 2, dtype=np.int64), "Index": np.int32([[2], [0]]),
          "Updates": ints(9518, 2, 2, dtype=np.int64)}, {}),
    Case("all_of_x", "scatter_nd_add",
         {"X": floats(9519, 2, 2), "Index": np.zeros((3, 0), np.int64),
          "Updates": floats(9520, 3, 2, 2)}, {}),
    Case("assign", "put_along_axis",
         {"Input": floats(9521, 3, 4), "Index": np.int64([[1], [3], [0]]),
          "Value": floats(9522, 3, 1)}, {"Axis": 1, "Reduce": "assign"}, grad=True),
    Case("add_repeats", "put_along_axis",
         {"Input": floats(9523, 2, 3), "Index": np.int64([[1, 0, 1], [1, 1, 0]]),
          "Value": floats(9524, 2, 3)}, {"Axis": 0, "Reduce": "add"}, grad=True),
    Case("add_onto_zeros_int32", "put_along_axis",
         {"Input": ints(9525, 3, 3), "Index": np.int32([[0, 0], [2, 1], [1, 1]]),
          "Value": np.int32([4])}, {"Axis": 1, "Reduce": "add", "Include_self": False}),
    Case("offset_above", "fill_diagonal_tensor", {"X": floats(9526, 3, 4), "Y": floats(9527, 3)},
         {"offset": 1}, grad=True),
    Case("batched_below_int64", "fill_diagonal_tensor",
         {"X": ints(9528, 3, 2, 4, dtype=np.int64), "Y": ints(9529, 2, 3, dtype=np.int64)},
         {"offset": -1, "dim1": 2, "dim2": 0}),
    Case("row_y", "fill_diagonal_tensor", {"X": floats(9530, 3, 3), "Y": floats(9531, 1, 3)},
         {}),
    # pixel_shuffle, pixel_unshuffle, channel_shuffle, unfold, fold, bilinear_tensor_product,
    # rrelu, gumbel_softmax, spectral_norm, data_norm, row_conv, bernoulli, poisson,
    # multinomial, randint, randperm: deterministic rows (the seedless random ops where no
    # draw can change the result); their distributions: tests/test_layer_ops.py
    Case("nchw_f64", "pixel_shuffle", {"X": floats(901, 1, 8, 2, 3, dtype=np.float64)},
         {"upscale_factor": 2}, grad=True),
    Case("nhwc", "pixel_shuffle", {"X": floats(902, 2, 2, 3, 8)},
         {"upscale_factor": 2, "data_format": "NHWC"}),
    Case("nchw_f64", "pixel_unshuffle", {"X": floats(903, 1, 2, 4, 2, dtype=np.float64)},
         {"downscale_factor": 2}, grad=True),
    Case("nhwc", "pixel_unshuffle", {"X": floats(904, 2, 4, 6, 3)},
         {"downscale_factor": 2, "data_format": "NHWC"}),
    Case("nchw_f64", "channel_shuffle", {"X": floats(905, 1, 6, 2, 2, dtype=np.float64)},
         {"groups": 3}, grad=True),
    Case("nhwc", "channel_shuffle", {"X": floats(906, 2, 2, 3, 4)},
         {"groups": 2, "data_format": "NHWC"}),
    Case("overlapping_f64", "unfold", {"X": floats(907, 1, 2, 4, 4, dtype=np.float64)},
         {"kernel_sizes": [2, 2], "strides": [1, 1], "paddings": [0, 0, 0, 0],
          "dilations": [1, 1]}, grad=True),
    Case("strided_padded_dilated", "unfold", {"X": floats(908, 2, 1, 5, 5)},
         {"kernel_sizes": [2, 3], "strides": [2, 1], "paddings": [1, 0, 0, 1],
          "dilations": [1, 2]}),
    Case("overlapping_f64", "fold", {"X": floats(909, 1, 8, 4, dtype=np.float64)},
         {"output_sizes": [3, 3], "kernel_sizes": [2, 2], "strides": [1, 1],
          "paddings": [0, 0, 0, 0], "dilations": [1, 1]}, grad=True),
    Case("strided_padded", "fold", {"X": floats(910, 1, 4, 10)},
         {"output_sizes": [4, 5], "kernel_sizes": [2, 2], "strides": [2, 1],
          "paddings": [1, 1, 0, 0], "dilations": [1, 1]}),
    Case("bias_f64", "bilinear_tensor_product",
         {"X": floats(911, 2, 3, dtype=np.float64), "Y": floats(912, 2, 4, dtype=np.float64),
          "Weight": floats(913, 5, 3, 4, dtype=np.float64),
          "Bias": floats(914, 1, 5, dtype=np.float64)}, {}, grad=True),
    Case("no_bias", "bilinear_tensor_product",
         {"X": floats(915, 3, 2), "Y": floats(916, 3, 3), "Weight": floats(917, 4, 2, 3)}, {}),
    Case("is_test_f64", "rrelu", {"X": off_kinks(918, 3, 4, kinks=(0.0,)).astype(np.float64)},
         {"lower": 0.1, "upper": 0.3, "is_test": True}),
    Case("training_nonnegative", "rrelu", {"X": floats(919, 3, 4, low=0.0, high=2.0)}, {}),
    Case("one_category", "gumbel_softmax", {"X": floats(920, 3, 1, 2)},
         {"axis": 1, "temperature": 0.5}),
    Case("one_category_hard_f64", "gumbel_softmax", {"X": floats(921, 4, 1, dtype=np.float64)},
         {"hard": True}),
    Case("two_iterations_f64", "spectral_norm",
         {"Weight": floats(922, 3, 4, dtype=np.float64), "U": floats(923, 3, dtype=np.float64),
          "V": floats(924, 4, dtype=np.float64)},
         {"dim": 0, "power_iters": 2, "eps": 1e-12}, grad=True),
    Case("dim1_rank3", "spectral_norm",
         {"Weight": floats(925, 2, 3, 2), "U": floats(926, 3), "V": floats(927, 4)},
         {"dim": 1, "power_iters": 1, "eps": 1e-12}),
    Case("float32", "data_norm",
         {"X": floats(928, 4, 3), "BatchSize": floats(929, 3, low=5.0, high=10.0),
          "BatchSum": floats(930, 3), "BatchSquareSum": floats(931, 3, low=5.0, high=10.0)},
         {"epsilon": 1e-4}),
    Case("batch_f64", "row_conv", {"X": floats(932, 2, 4, 3, dtype=np.float64),
                                   "Filter": floats(933, 2, 3, dtype=np.float64)}, {},
         grad=True),
    Case("one_sequence_long_filter", "row_conv", {"X": floats(934, 3, 2),
                                                  "Filter": floats(935, 5, 2)}, {}),
    Case("zeros_and_ones", "bernoulli", {"X": bools(936, 3, 4).astype(np.float32)}, {}),
    Case("zero_means_f64", "poisson", {"X": np.zeros((2, 3))}, {}),
    Case("one_positive_weight", "multinomial", {"X": np.float32([[0, 2, 0], [5, 0, 0]])},
         {"num_samples": 4, "replacement": True}),
    Case("shape_tensor_one_value", "randint", {"ShapeTensor": np.int64([3, 4])},
         {"low": 3, "high": 4, "dtype": INT32}),
    Case("shape_tensor_list_one_value", "randint",
         {"ShapeTensorList": [np.int32([2]), np.int64([5])]},
         {"low": -2, "high": -1, "dtype": INT64}),
    Case("seeded_statistics", "randint", {},
         {"shape": [50, 40], "low": -3, "high": 5, "seed": 7, "dtype": INT64},
         compare_values=False, check=randint_statistics),
    Case("seeded_int64", "randperm", {}, {"n": 30, "seed": 3, "dtype": INT64},
         compare_values=False, check=is_permutation),
    Case("seeded_float32", "randperm", {}, {"n": 7, "seed": 5, "dtype": FP32},
         compare_values=False, check=is_permutation),
    # warpctc, warprnnt (ops/ctc_loss.py, rnnt_loss.py): a repeated symbol, padding past
    # each sequence's lengths, an impossible alignment (Paddle's 0), blank last, FastEmit
    Case("repeats_and_padding", "warpctc",
         {"Logits": floats(9701, 5, 2, 4, dtype=np.float64), "Label": np.int32([[1, 1, 2],
                                                                               [3, 0, 0]]),
          "LogitsLength": np.int64([5, 3]), "LabelLength": np.int64([3, 1])},
         {"blank": 0, "norm_by_times": False}, grad=True),
    Case("blank_last_impossible_norm", "warpctc",
         {"Logits": floats(9702, 3, 2, 4), "Label": np.int32([[1, 1], [2, 3]]),
          "LogitsLength": np.int64([2, 3]), "LabelLength": np.int64([2, 1])},
         {"blank": 3, "norm_by_times": True}),
    Case("two_sequences", "warprnnt",
         {"input": floats(9703, 2, 3, 3, 4, dtype=np.float64),
          "label": np.int32([[1, 2], [3, 0]]), "input_lengths": np.int32([3, 2]),
          "label_lengths": np.int32([2, 1])},
         {"blank": 0, "fastemit_lambda": 0.0}, grad=True),
    Case("fastemit_blank_last", "warprnnt",
         {"input": floats(9704, 1, 2, 2, 4), "label": np.int32([[2]]),
          "input_lengths": np.int32([2]), "label_lengths": np.int32([1])},
         {"blank": 3, "fastemit_lambda": 0.5}),
    # hierarchical_sigmoid (ops/hierarchical_sigmoid.py): the default tree over 6 classes
    # (paths of 2 and 3 nodes) with a bias; a custom tree padded with -1, no bias
    Case("default_tree_bias", "hierarchical_sigmoid",
         {"X": floats(9801, 4, 3, dtype=np.float64), "W": floats(9802, 5, 3, dtype=np.float64),
          "Label": np.int64([[0], [5], [3], [1]]),
          "Bias": floats(9803, 5, 1, dtype=np.float64)}, {"num_classes": 6}, grad=True),
    Case("custom_tree", "hierarchical_sigmoid",
         {"X": floats(9804, 3, 2, dtype=np.float64), "W": floats(9805, 4, 2, dtype=np.float64),
          "Label": np.int64([[0], [1], [2]]),
          "PathTable": np.int64([[0, 1, -1], [0, 2, 3], [3, -1, -1]]),
          "PathCode": np.int64([[1, 0, -1], [0, 1, 1], [1, -1, -1]])},
         {"num_classes": 4}, grad=True),
    # nce (ops/nce.py): fixed negatives (exact, log-uniform probabilities, weighted
    # samples); drawn ones (random: shapes, the true classes kept, negatives in range)
    Case("custom_negatives", "nce",
         {"Input": floats(9806, 3, 4), "Label": np.int64([[0, 3], [2, 5], [1, 1]]),
          "Weight": floats(9807, 6, 4), "Bias": floats(9808, 6, 1),
          "SampleWeight": floats(9809, 3, 1, low=0.5, high=1.5)},
         {"num_total_classes": 6, "num_neg_samples": 3, "sampler": 1,
          "custom_neg_classes": [1, 4, 5]}),
    # nce_grad: fixed negatives, so central differences see one cost (float64)
    Case("custom_negatives_grad", "nce",
         {"Input": floats(9812, 3, 4, dtype=np.float64), "Label": np.int64([[0], [2], [5]]),
          "Weight": floats(9813, 6, 4, dtype=np.float64),
          "Bias": floats(9814, 6, 1, dtype=np.float64),
          "SampleWeight": floats(9815, 3, 1, low=0.5, high=1.5, dtype=np.float64)},
         {"num_total_classes": 6, "num_neg_samples": 2, "sampler": 1,
          "custom_neg_classes": [1, 3]}, grad=True),
    Case("drawn_custom_dist", "nce",
         {"Input": floats(9810, 4, 3), "Label": np.int64([[1], [0], [4], [2]]),
          "Weight": floats(9811, 5, 3),
          "CustomDistProbs": np.float32([0.1, 0.2, 0.3, 0.2, 0.2]),
          "CustomDistAlias": np.int64([2, 2, -1, 2, 2]),
          "CustomDistAliasProbs": np.float32([0.5, 1.0, 1.0, 1.0, 1.0])},
         {"num_total_classes": 5, "num_neg_samples": 4, "sampler": 2, "seed": 5},
         compare_values=False, check=lambda outs: _nce_drawn_ok(outs, [1, 0, 4, 2], 5)),
    # feed and fetch (run by run_feed_case / run_fetch_case below)
    Case("col0", "feed", {"X": [floats(1, 2, 3)]}, {"col": 0},
         lambda ins, attrs: {"Out": ins["X"][attrs["col"]]}),
    Case("col1_int64", "feed", {"X": [floats(1, 2, 3), ints(2, 4, dtype=np.int64)]},
         {"col": 1}, lambda ins, attrs: {"Out": ins["X"][attrs["col"]]}),
    Case("col0", "fetch", {"X": floats(1, 2, 3)}, {"col": 0},
         lambda ins, attrs: {"Out": ins["X"]}),
    Case("col2_int32", "fetch", {"X": ints(1, 3)}, {"col": 2},
         lambda ins, attrs: {"Out": ins["X"]}),
]


# --- building and running one row ----------------------------------------------------------
def declared_shape(slot, array, unknown_batch):
    shape = list(array.shape)
    if unknown_batch and slot == "X" and shape:
        shape[0] = -1
    return shape


def run_case(case, expected, place=PLACES["cpu"], run=None):
    """Build and run ``case``'s program on ``place``. Returns ``(actual, declared)``:
    ``{slot: [arrays]}`` and ``{slot: [(shape, dtype name)]}`` (None for non-tensors).
    ``run(exe, prog, feed, fetch_names)`` replaces the one-step-at-a-time run (the
    fast path's test runs it both ways)."""
    if case.op == "feed":
        return run_feed_case(case, expected, place)
    if case.op == "fetch":
        return run_fetch_case(case, place)
    prog = pd.Program()
    blk = prog.global_block()
    inputs, feed = {}, {}
    for slot, value in case.inputs.items():
        arrays = as_list(value)
        inputs[slot] = []
        for i, array in enumerate(arrays):
            name = slot.lower() if len(arrays) == 1 else f"{slot.lower()}{i}"
            inputs[slot].append(blk.create_var(name, shape=declared_shape(
                slot, array, case.unknown_batch), dtype=array.dtype.name))
            feed[name] = array
    outputs = {}
    for slot in list(expected) + list(case.unfetched):
        count = len(as_list(expected.get(slot, [None])))
        outputs[slot] = [blk.create_var(f"{slot.lower()}_out{i}") for i in range(count)]
    blk.append_op(case.op, inputs=inputs, outputs=outputs, attrs=case.attrs)

    fetch_names = [v.name for slot in expected for v in outputs[slot]]
    out_names = [v.name for vs in outputs.values() for v in vs]
    values = run_checking_residency(pd.Executor(place), prog, feed, fetch_names, out_names) \
        if run is None else run(pd.Executor(place), prog, feed, fetch_names)
    actual, declared = {}, {}
    for slot in expected:
        actual[slot] = [values[fetch_names.index(v.name)] for v in outputs[slot]]
        declared[slot] = [(list(v.shape), v.dtype) for v in outputs[slot]]
    return actual, declared


def run_checking_residency(exe, prog, feed, fetch_names, out_names, scope=None):
    """``exe.run`` one step at a time; on CUDA, after each op, its outputs in the scope
    must be device arrays (a tensor array: device items). Returns the fetched values."""
    steps = exe.steps(prog, feed=feed, fetch_list=fetch_names, scope=scope or pd.Scope())
    while True:
        try:
            step = next(steps)
        except StopIteration as done:
            fetched = done.value
            break
        if exe.place.kind != "cuda":
            continue
        for name in out_names:
            var = step.scope.find_var(name)
            value = var.get() if var is not None and var.is_initialized() else None
            items = value if isinstance(value, list) else [value]
            for item in items:
                assert item is None or device.is_device_array(item), \
                    f"{step.op.type} left {name} on the host ({type(item).__name__})"
    assert all(isinstance(v, np.ndarray) for v in fetched), "fetched values are numpy"
    return fetched


def run_feed_case(case, expected, place=PLACES["cpu"]):
    """``feed`` copies column ``col`` of a FEED_MINIBATCH variable, which the scope holds
    before the run. Nothing is passed as ``feed=``, so the executor runs the feed op."""
    prog = pd.Program()
    blk = prog.global_block()
    feed_list = blk.create_var("feed", type=VarType.FEED_MINIBATCH, persistable=True)
    want = expected["Out"]
    out = blk.create_var("out", shape=list(want.shape), dtype=want.dtype.name)
    blk.append_op("feed", inputs={"X": [feed_list]}, outputs={"Out": [out]},
                  attrs=case.attrs)
    scope = pd.Scope()
    scope.var("feed").set(list(case.inputs["X"]))
    got, = run_checking_residency(pd.Executor(place), prog, None, ["out"], ["out"], scope)
    return {"Out": [got]}, {"Out": [(list(out.shape), out.dtype)]}


def run_fetch_case(case, place=PLACES["cpu"]):
    """``fetch`` writes column ``col`` of a FETCH_LIST variable; a persistable one lives in
    the scope we pass, so it can be read after the run. It is not a tensor: no shape."""
    prog = pd.Program()
    blk = prog.global_block()
    x = case.inputs["X"]
    x_var = blk.create_var("x", shape=list(x.shape), dtype=x.dtype.name)
    fetch_list = blk.create_var("fetch", type=VarType.FETCH_LIST, persistable=True)
    blk.append_op("fetch", inputs={"X": [x_var]}, outputs={"Out": [fetch_list]},
                  attrs=case.attrs)
    scope = pd.Scope()
    pd.Executor(place).run(prog, feed={"x": x}, scope=scope)
    fetched = scope.find_var("fetch").get()
    col = case.attrs.get("col") or 0                  # None: unset, the default column 0
    assert len(fetched) == col + 1
    assert isinstance(fetched[col], np.ndarray)       # fetch copies to the host
    return {"Out": [fetched[col]]}, {"Out": [None]}


# --- checks ------------------------------------------------------------------------------
def assert_declared_fits(declared, actual, where):
    shape, dtype = declared
    assert len(shape) == actual.ndim, \
        f"{where}: shape inference declared {shape}, the kernel gave {list(actual.shape)}"
    assert all(d < 0 or d == a for d, a in zip(shape, actual.shape)), \
        f"{where}: shape inference declared {shape}, the kernel gave {list(actual.shape)}"
    assert dtype == actual.dtype.name, \
        f"{where}: shape inference declared {dtype}, the kernel gave {actual.dtype.name}"


def assert_same_values(actual, expected, where):
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


def expected_outputs(case) -> dict:
    """``{slot: array or [arrays]}``: what the row's op must compute. One reference per
    op: tests/numpy_interpreter.py's (the property tests and the fuzzer read it too),
    or the row's own where the interpreter has none."""
    if case.reference is not None:
        return case.reference(case.inputs, case.attrs)
    counts = case.outputs or {s.name: 1 for s in registry.lookup(case.op).outputs
                              if not s.dispensable and s.name not in case.unfetched}
    with np.errstate(all="ignore"):       # NaN rows: numpy's warnings say nothing here
        values = interpret(case.op, case.inputs, case.attrs, counts)
    return {slot: v[0] if counts[slot] == 1 else v for slot, v in values.items()}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.id}" for c in CASES])
def test_op_forward(case, place):
    expected = expected_outputs(case)
    actual, declared = run_case(case, expected, PLACES[place])
    for slot, want in expected.items():
        wants = as_list(want)
        assert len(actual[slot]) == len(wants)
        for i, (got, w) in enumerate(zip(actual[slot], wants)):
            where = f"{case.op} output {slot}[{i}]"
            if declared[slot][i] is not None:
                assert_declared_fits(declared[slot][i], got, where)
            if case.compare_values:
                assert_same_values(got, w, where)
            else:
                assert (got.shape, got.dtype) == (w.shape, w.dtype), where
    if case.check is not None:
        case.check(actual)
    if not case.compare_values:       # random ops: the same seed gives the same values
        again, _ = run_case(case, expected, PLACES[place])
        for slot in expected:
            for first, second in zip(actual[slot], again[slot]):
                np.testing.assert_array_equal(first, second)


# Ops that own a sub-block or read tensor arrays (which a feed cannot hold) are tested by
# building real control flow, with numpy references and gradient checks: conditional_block
# in test_cond.py and test_ifelse.py, while in test_while.py and
# test_nested_control_flow.py, recurrent in test_rnn.py and test_scope_lifecycle.py, the
# tensor array ops in test_while.py. The ops of a transpiled program that talk to parameter
# servers (through an executor's transport) or serve them (listen_and_serv owns optimize
# blocks) run in whole trainer and pserver programs: test_distributed_transpiler.py.
# (tests/op_kinds.py asks the registry which ops own blocks or are remote.)
TESTED_IN_PROGRAMS = op_kinds.BLOCK_OWNERS | op_kinds.REMOTE | op_kinds.TENSOR_ARRAY_OPS


def test_every_registered_op_has_a_row():
    """Every forward op; the <type>_grad ops are checked by tests/test_op_gradients.py."""
    covered = {c.op for c in CASES} | TESTED_IN_PROGRAMS
    missing = [op for op in pd.registered_ops(include_grad=False) if op not in covered]
    assert not missing, f"registered ops with no row in CASES: {missing}"


def test_every_registered_op_has_a_cuda_kernel():
    """Forward and gradient ops alike: a kernel for each place, looked up by place.kind."""
    from paddle_nb.core import registry   # noqa: PLC0415
    ops = pd.registered_ops()
    missing = {p: [t for t in ops if p not in registry.lookup(t).kernels] for p in PLACES}
    assert missing == {p: [] for p in PLACES}


def test_case_ids_are_unique():
    ids = [f"{c.op}-{c.id}" for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_vartype_codes_match_the_proto():
    assert (BOOL, INT32, INT64, FP32, FP64) == (VarType.BOOL, VarType.INT32, VarType.INT64,
                                                VarType.FP32, VarType.FP64)


@pytest.mark.parametrize("op, attrs", [("reshape2", {"shape": [0, -1]}),
                                       ("transpose2", {"axis": [2, 0, 1]})])
def test_xshape_declares_zero_then_x_dims(op, attrs):
    """XShape holds no data; shape inference records X's dims behind a leading 0."""
    blk = pd.Program().global_block()
    x = blk.create_var("x", shape=[-1, 3, 4], dtype="float64")
    out, xshape = blk.create_var("out"), blk.create_var("xshape")
    blk.append_op(op, inputs={"X": [x]}, outputs={"Out": [out], "XShape": [xshape]},
                  attrs=attrs)
    assert xshape.shape == (0, -1, 3, 4) and xshape.dtype == "float64"


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")    # NaN inputs, inf * 0
@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op, reads, reference", [
    ("relu_grad", "Out", lambda v, d: d * (v > 0)),     # Paddle's dout * (out > 0)
    ("sigmoid_grad", "Out", lambda v, d: d * v * (1 - v)),
    ("tanh_grad", "Out", lambda v, d: d * (1 - v * v)),
    ("exp_grad", "Out", lambda v, d: d * v),
    ("log_grad", "X", lambda v, d: d / v),
    ("square_grad", "X", lambda v, d: d * 2 * v)])
def test_activation_gradients_let_nan_through(op, reads, reference, dtype, place):
    """A NaN (or inf) in the forward value or in dOut gives what numpy's formula gives:
    relu_grad does not turn a NaN dOut into 0 where the unit is off. (Out of sigmoid and
    tanh is finite: no inf there, whose products fastmath kernels may reorder.)"""
    v = np.array([[np.nan, -1.0, 0.0, 0.5, 2.0, 0.25]], dtype)
    d = np.array([[1.0, np.nan, np.inf, -1.0, np.nan, 3.0]], dtype)
    with np.errstate(all="ignore"):
        want = reference(v, d).astype(dtype)
    assert np.isnan(want).sum() > 1
    blk = (prog := pd.Program()).global_block()
    ins = {reads: [blk.create_var("v", list(v.shape), np.dtype(dtype).name)],
           "Out@GRAD": [blk.create_var("d", list(d.shape), np.dtype(dtype).name)]}
    dx = blk.create_var("dx", list(v.shape), np.dtype(dtype).name)
    blk.append_op(op, inputs=ins, outputs={"X@GRAD": [dx]}, infer_shape=False)
    with np.errstate(all="ignore"):
        got, = run_checking_residency(pd.Executor(PLACES[place]), prog, {"v": v, "d": d},
                                      ["dx"], ["dx"])
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{op} on {place}")
