"""A plain numpy interpreter of flat (one-block) programs: the reference the property tests
in ``tests/test_random_programs.py`` compare the executor with.

It reads ops only through the ``Operator`` view (``op.type``, ``op.input(slot)``,
``op.output(slot)``, ``op.attrs``) and shares no code with the kernels. ``REFERENCES`` maps
an op type to ``fn(op, env) -> {output name: value}``; ``env`` maps variable names to
numpy arrays (or lists, for tensor arrays). Rounding: ops that IEEE arithmetic defines
exactly (``+ - * /`` on two operands, relu, square, casts, layout ops, comparisons) are
computed in the operands' dtype, so they agree bit for bit with any correctly rounded
kernel; transcendental functions, reductions and matrix products are computed in float64
and cast back.
"""
from __future__ import annotations

import numpy as np
import scipy.special

BOOL, INT32, INT64, FP32, FP64 = 0, 2, 3, 5, 6
# every VarType element code with a numpy type (INT16=1, FP16=4, UINT8=20, INT8=21,
# COMPLEX64=23, COMPLEX128=24), written out here rather than read from paddle_nb
NUMPY_DTYPE = {BOOL: np.dtype(np.bool_), 1: np.dtype(np.int16), INT32: np.dtype(np.int32),
               INT64: np.dtype(np.int64), 4: np.dtype(np.float16), FP32: np.dtype(np.float32),
               FP64: np.dtype(np.float64), 20: np.dtype(np.uint8), 21: np.dtype(np.int8),
               23: np.dtype(np.complex64), 24: np.dtype(np.complex128)}
CODE_OF = {v: k for k, v in NUMPY_DTYPE.items()}


class NotComputed:
    """What a random op produces: only the shape and dtype are known in advance."""

    def __init__(self, shape, dtype, low=None, high=None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.low, self.high = low, high

    def __repr__(self):
        return f"NotComputed({self.shape}, {self.dtype})"


# --- helpers ------------------------------------------------------------------------------
def _x(op, env, slot="X", i=0):
    return env[op.input(slot)[i]]


def _xs(op, env, slot="X"):
    return [env[n] for n in op.input(slot)]


def _out(op, slot, *values):
    names = op.output(slot)
    assert len(names) == len(values), (op.type, slot, names, len(values))
    return dict(zip(names, values))


def _wide(a):
    """float64 (complex128 for complex values, which float64 would cut)."""
    a = np.asarray(a)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def fluid_align(y, x_ndim, axis):
    """``y`` reshaped so numpy broadcasting lines its dims up with X's from ``axis``."""
    if axis is None or axis == -1:
        axis = x_ndim - y.ndim
    if not 0 <= axis <= x_ndim - y.ndim:      # not a tuple of 2**31 ones
        raise ValueError(f"axis {axis} does not fit a rank-{y.ndim} Y in rank {x_ndim}")
    return y.reshape((1,) * axis + y.shape + (1,) * (x_ndim - axis - y.ndim))


def _align(op, env):
    x, y = _x(op, env, "X"), _x(op, env, "Y")
    axis = op.attrs.get("axis", -1)
    if y.ndim < x.ndim:
        y = fluid_align(y, x.ndim, axis)
    elif x.ndim < y.ndim:
        x = fluid_align(x, y.ndim, axis)
    return x, y


# --- unary --------------------------------------------------------------------------------
def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _in_wide(fn):
    def run(op, env):
        x = _x(op, env)
        return _out(op, "Out", np.asarray(fn(_wide(x))).astype(x.dtype))
    return run


def _relu(op, env):
    x = _x(op, env)
    return _out(op, "Out", np.maximum(x, x.dtype.type(0)))


def _gelu(op, env):
    x = _x(op, env)
    w = _wide(x)
    if op.attrs.get("approximate"):
        y = 0.5 * w * (1 + np.tanh(np.sqrt(2 / np.pi) * (w + 0.044715 * w ** 3)))
    else:
        y = 0.5 * w * (1 + scipy.special.erf(w / np.sqrt(2)))
    return _out(op, "Out", y.astype(x.dtype))


def _input_or_attr(op, env, slot, attr, default):
    """pow's factor, clip's bounds: a 1-element tensor input overrides the attribute."""
    if op.input(slot):
        return float(np.ravel(_x(op, env, slot))[0])
    return op.attrs.get(attr, default)


def _pow(op, env):
    x = _x(op, env)
    return _out(op, "Out", (_wide(x) ** _input_or_attr(op, env, "FactorTensor", "factor",
                                                       1.0)).astype(x.dtype))


def _clip(op, env):
    x = _x(op, env)
    big = float(np.finfo(np.float32).max)
    low = x.dtype.type(_input_or_attr(op, env, "Min", "min", -big))
    high = x.dtype.type(_input_or_attr(op, env, "Max", "max", big))
    return _out(op, "Out", np.where(x < low, low, np.where(x > high, high, x)).astype(x.dtype))


def _square(op, env):
    x = _x(op, env)
    return _out(op, "Out", np.multiply(x, x))


def _scale(op, env):
    x, a = _x(op, env), op.attrs
    s = float(np.ravel(_x(op, env, "ScaleTensor"))[0]) if op.input("ScaleTensor") \
        else a["scale"]
    w = _wide(x)
    out = w * s + a["bias"] if a["bias_after_scale"] else (w + a["bias"]) * s
    return _out(op, "Out", out.astype(x.dtype))


def _cast(op, env):
    return _out(op, "Out", _x(op, env).astype(NUMPY_DTYPE[op.attrs["out_dtype"]]))


def _copy(op, env):
    return _out(op, "Out", np.array(_x(op, env), copy=True))


def _logical_not(op, env):
    return _out(op, "Out", np.logical_not(_x(op, env)))


def _increment(op, env):
    x, step = _x(op, env), op.attrs["step"]
    if x.dtype.kind in "iu":        # Paddle: static_cast<T>(step), then an exact add
        return _out(op, "Out", (x + np.array(int(step)).astype(x.dtype)).astype(x.dtype))
    return _out(op, "Out", (_wide(x) + step).astype(x.dtype))


# --- reductions ---------------------------------------------------------------------------
def _softmax(op, env):
    x = _x(op, env)
    w = _wide(x)
    axis = op.attrs["axis"]
    if w.ndim == 0:                        # Paddle 2.5+: the softmax of a 0-d tensor is 1
        return _out(op, "Out", np.ones_like(x))
    if w.size == 0:                        # nothing to normalise (numpy's max refuses)
        return _out(op, "Out", np.array(x, copy=True))
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    return _out(op, "Out", (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype))


def _log_softmax(op, env):
    x = _x(op, env)
    w = _wide(x)
    if w.ndim == 0:
        return _out(op, "Out", np.zeros_like(x))
    if w.size == 0:
        return _out(op, "Out", np.array(x, copy=True))
    shifted = w - w.max(axis=op.attrs["axis"], keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=op.attrs["axis"], keepdims=True))
    return _out(op, "Out", out.astype(x.dtype))


def _mean(op, env):
    x = _x(op, env)
    return _out(op, "Out", np.asarray(_wide(x).mean()).astype(x.dtype))


def _reduce(fn):
    def run(op, env):
        x, a = _x(op, env), op.attrs
        if a.get("reduce_all") or x.ndim == 0 or not a["dim"]:      # dim=[]: every axis
            axes = tuple(range(x.ndim))
        else:
            axes = tuple(sorted({d % x.ndim for d in a["dim"]}))
        # integers: exact int64 arithmetic, wrapping back into X's type as the kernels do
        wide = x.astype(np.int64) if x.dtype.kind in "iub" and fn in (np.sum, np.prod) \
            else _wide(x)
        out = fn(wide, axis=axes, keepdims=a.get("keep_dim", False))
        # Paddle's sum of bools counts the true ones, in int64; out_dtype, where set, wins
        kept = np.int64 if x.dtype == np.bool_ and fn is np.sum else x.dtype
        if fn is np.sum and a.get("out_dtype", -1) >= 0:
            kept = {0: np.bool_, 1: np.int16, 2: np.int32, 3: np.int64, 4: np.float16,
                    5: np.float32, 6: np.float64}[a["out_dtype"]]
            out = fn(x.astype(kept).astype(np.float64 if kept(0).dtype.kind == "f" else
                                           np.int64), axis=axes,
                     keepdims=a.get("keep_dim", False))
        return _out(op, "Out", np.asarray(out).astype(kept))
    return run


def _sum(op, env):
    xs = _xs(op, env)
    if np.issubdtype(xs[0].dtype, np.integer):
        total = xs[0].copy()
        for x in xs[1:]:
            total = total + x
        return _out(op, "Out", total.astype(xs[0].dtype))
    return _out(op, "Out", sum(_wide(x) for x in xs).astype(xs[0].dtype))


# --- layout -------------------------------------------------------------------------------
def _xshape(op, x):
    return _out(op, "XShape", np.empty((0,) + x.shape, x.dtype)) if op.output("XShape") else {}


def _reshape2(op, env):
    x = _x(op, env)
    target = [x.shape[i] if d == 0 else d for i, d in enumerate(op.attrs["shape"])]
    return {**_out(op, "Out", x.reshape(target).copy()), **_xshape(op, x)}


def _transpose2(op, env):
    x = _x(op, env)
    return {**_out(op, "Out", np.transpose(x, op.attrs["axis"]).copy()), **_xshape(op, x)}


def _squeeze2(op, env):
    x = _x(op, env)
    axes = {a % x.ndim for a in op.attrs.get("axes") or []} or set(range(x.ndim))
    drop = tuple(sorted(a for a in axes if x.shape[a] == 1))    # repeats count once
    return {**_out(op, "Out", np.squeeze(x, axis=drop).copy()), **_xshape(op, x)}


def _unsqueeze2(op, env):
    x = _x(op, env)
    out = x
    for a in op.attrs.get("axes") or []:
        out = np.expand_dims(out, a if a >= 0 else a + out.ndim + 1)
    return {**_out(op, "Out", out.copy()), **_xshape(op, x)}


def _flatten(op, env):
    x = _x(op, env)
    if x.ndim == 0:
        return {**_out(op, "Out", x.reshape(1).copy()), **_xshape(op, x)}
    start, stop = (op.attrs.get(k, 1) % x.ndim for k in ("start_axis", "stop_axis"))
    merged = int(np.prod(x.shape[start:stop + 1]))     # not -1: ambiguous for an empty X
    shape = x.shape[:start] + (merged,) + x.shape[stop + 1:]
    return {**_out(op, "Out", x.reshape(shape).copy()), **_xshape(op, x)}


def _stack(op, env):
    xs = _xs(op, env)
    return _out(op, "Y", np.stack(xs, axis=op.attrs.get("axis", 0)))


def _unstack(op, env):
    x = _x(op, env)
    axis = op.attrs.get("axis", 0) % x.ndim
    return _out(op, "Y", *[np.take(x, i, axis=axis) for i in range(x.shape[axis])])


def _expand_v2(op, env):
    x = _x(op, env)
    shape = list(op.attrs["shape"])
    lead = len(shape) - x.ndim
    shape = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(shape)]
    return _out(op, "Out", np.broadcast_to(x, shape).copy())


def _expand_as_v2(op, env):
    x, target = _x(op, env), list(op.attrs.get("target_shape") or [])
    if op.input("Y") and (not target or -1 in target):
        target = list(_x(op, env, "Y").shape)
    if any(d < 1 for d in target) or len(target) < x.ndim:
        raise ValueError(f"cannot expand {x.shape} to {target}")
    return _out(op, "Out", np.broadcast_to(x, target).copy())


def _slice(strided):
    """Paddle's slice / strided_slice as Python slices: bounds made non-negative first
    (a negative end clamps at 0, except end -1 with a negative stride: through index 0)."""
    def run(op, env):
        x, a = _x(op, env, "Input"), dict(op.attrs)
        for name, slot in (("starts", "Starts"), ("ends", "Ends"), ("strides", "Strides")):
            if op.input(f"{slot}Tensor"):                 # bounds given as tensors
                a[name] = [int(v) for v in np.ravel(_x(op, env, f"{slot}Tensor"))]
            elif op.input(f"{slot}TensorList"):
                a[name] = [int(np.ravel(v)[0]) for v in _xs(op, env, f"{slot}TensorList")]
        steps = a["strides"] if strided else [1] * len(a["axes"])
        index = [slice(None)] * x.ndim
        for axis, start, end, step in zip(a["axes"], a["starts"], a["ends"], steps):
            n = x.shape[axis]
            start = max(start + n, 0) if start < 0 else start
            if end == -1 and step < 0:
                end = None
            elif end < 0:
                end = max(end + n, 0)
            index[axis] = slice(start, end, step)
        out = x[tuple(index)]
        decrease = tuple(a.get("decrease_axis") or [])
        return _out(op, "Out", np.squeeze(out, axis=decrease).copy() if decrease
                    else out.copy())
    return run


def _pad(op, env):
    x, p = _x(op, env), op.attrs["paddings"]
    pairs = [(p[2 * i], p[2 * i + 1]) for i in range(x.ndim)]
    return _out(op, "Out", np.pad(x, pairs, constant_values=op.attrs["pad_value"]))


def _pad3d(op, env):
    x, a = _x(op, env), op.attrs
    p = a["paddings"]
    spatial = [(p[4], p[5]), (p[2], p[3]), (p[0], p[1])]          # D, H, W
    pairs = [(0, 0), (0, 0)] + spatial if a["data_format"] == "NCDHW" else \
        [(0, 0)] + spatial + [(0, 0)]
    mode = {"replicate": "edge", "circular": "wrap"}.get(a["mode"], a["mode"])
    if mode == "constant":
        return _out(op, "Out", np.pad(x, pairs, constant_values=a["value"]))
    return _out(op, "Out", np.pad(x, pairs, mode=mode))


def _cumsum(op, env):
    x, a = _x(op, env), op.attrs
    if a["flatten"]:
        x = x.reshape(-1)
    axis = a["axis"] % max(x.ndim, 1)
    if x.ndim == 0:
        return _out(op, "Out", np.zeros_like(x) if a["exclusive"] else x.copy())
    v = np.flip(x, axis) if a["reverse"] else x
    out = np.cumsum(v, axis=axis, dtype=x.dtype)
    if a["exclusive"]:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis=axis)),
                              np.take(out, range(out.shape[axis] - 1), axis=axis)], axis=axis)
    return _out(op, "Out", np.flip(out, axis) if a["reverse"] else out)


def _range(op, env):
    start, end, step = (_x(op, env, s).reshape(-1)[0] for s in ("Start", "End", "Step"))
    if step == 0 or (start < end and step < 0) or (start > end and step > 0):
        raise ValueError("range never reaches End")
    if start.dtype.kind in "iu":
        n = (abs(int(end) - int(start)) + abs(int(step)) - 1) // abs(int(step))
        values = int(start) + np.arange(n, dtype=np.int64) * int(step)
    else:
        n = int(np.ceil(np.abs((end - start) / step)))      # in the inputs' type
        values = float(start) + np.arange(n, dtype=np.float64) * float(step)
    return _out(op, "Out", values.astype(start.dtype))


def _gather(op, env):
    x, index = _x(op, env), _x(op, env, "Index")
    return _out(op, "Out", np.take(x, index, axis=op.attrs.get("axis", 0)))


def _one_hot(op, env):
    x, depth = _x(op, env), op.attrs["depth"]
    return _out(op, "Out", (x[..., None] == np.arange(depth)).astype(
        NUMPY_DTYPE[op.attrs.get("dtype", FP32)]))


def _lookup_table(op, env):
    """W's rows at Ids (lookup_table: Ids end in a dim of 1, dropped), zeros at
    padding_idx (-1: none); an id outside [0, V) that is not padding_idx is an error."""
    w, ids = _x(op, env, "W"), _x(op, env, "Ids")
    padding_idx = op.attrs.get("padding_idx", -1)
    if op.type == "lookup_table":
        if ids.ndim == 0 or ids.shape[-1] != 1:
            raise ValueError("lookup_table's Ids must end in a dim of 1")
        ids = ids[..., 0]
    if w.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError("W must be 2-D and Ids integers")
    if padding_idx != -1 and not 0 <= padding_idx < w.shape[0]:
        raise ValueError(f"padding_idx {padding_idx} is not a row of W")
    pad = ids == padding_idx
    if ((ids < 0) | (ids >= w.shape[0]))[~pad].any():
        raise IndexError("an id is not a row of W")
    out = w[np.where(pad, 0, ids).astype(np.int64)] if w.shape[0] else \
        np.zeros(ids.shape + w.shape[1:], w.dtype)
    out[pad] = 0
    return _out(op, "Out", out)


def _arg(fn):
    def run(op, env):
        x, a = _x(op, env), op.attrs
        if a.get("flatten") or x.ndim == 0:
            out = fn(x.reshape(-1))
            out = np.reshape(out, (1,) * x.ndim) if a.get("keepdims") else np.asarray(out)
        else:
            out = fn(x, axis=a.get("axis", 0) % x.ndim, keepdims=a.get("keepdims", False))
        return _out(op, "Out", np.asarray(out).astype(NUMPY_DTYPE[a.get("dtype", INT64)]))
    return run


def _concat(op, env):
    return _out(op, "Out", np.concatenate(_xs(op, env), axis=op.attrs["axis"]))


def _split(op, env):
    x, a = _x(op, env), op.attrs
    axis = a["axis"] % x.ndim
    size = x.shape[axis]
    sections = list(a.get("sections") or [])
    if not sections:
        n = a.get("num") or len(op.output("Out"))
        sections = [size // n] * n
    if -1 in sections:
        sections[sections.index(-1)] = size - sum(s for s in sections if s != -1)
    return _out(op, "Out", *[p.copy() for p in np.split(x, np.cumsum(sections)[:-1], axis)])


def _split_byref(op, env):
    x = _x(op, env)
    sections = list(op.attrs.get("sections") or [])
    if not sections:
        n = len(op.output("Out"))
        sections = [x.shape[0] // n] * n
    return _out(op, "Out", *[p.copy() for p in np.split(x, np.cumsum(sections)[:-1], 0)])


# --- elementwise binary -------------------------------------------------------------------
def _binary(fn):
    def run(op, env):
        x, y = _align(op, env)
        return _out(op, "Out", np.asarray(fn(x, y)))
    return run


def _div(x, y):
    if np.issubdtype(x.dtype, np.integer):      # C++ integer division: toward zero
        q = np.abs(x) // np.abs(y)
        return (np.sign(x) * np.sign(y) * q).astype(x.dtype)
    return np.divide(x, y)


def _logical(fn):
    return lambda op, env: _out(op, "Out", fn(_x(op, env, "X"), _x(op, env, "Y")))


def fused_elemwise(x, y, attrs):
    """(Out, IntermediateOut) of fused_elemwise_activation: ``[unary, binary]`` is
    unary(binary(X, Y)), ``[binary, unary]`` binary(X, unary(Y)); in float64 (the op table's
    reference too)."""
    unary = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh, "sigmoid": _sigmoid,
             "scale": lambda v: v * attrs.get("scale", 0.0)}
    binary = {"elementwise_add": np.add, "elementwise_mul": np.multiply}
    x, y = _wide(x), _wide(y)
    axis = attrs.get("axis", -1)

    def aligned(a, b):
        if b.ndim < a.ndim:
            return a, fluid_align(b, a.ndim, axis)
        if a.ndim < b.ndim:
            return fluid_align(a, b.ndim, axis), b
        return a, b
    outer, inner = attrs["functor_list"]
    if inner in binary:
        mid = binary[inner](*aligned(x, y))
        return unary[outer](mid), mid
    mid = unary[inner](y)
    return binary[outer](*aligned(x, mid)), mid


def _fused_elemwise(op, env):
    x = _x(op, env)
    out, mid = fused_elemwise(x, _x(op, env, "Y"), op.attrs)
    values = _out(op, "Out", out.astype(x.dtype))
    if op.output("IntermediateOut"):
        values.update(_out(op, "IntermediateOut", mid.astype(x.dtype)))
    return values


# --- matrix products ----------------------------------------------------------------------
def _matmul(tx_attr, ty_attr):
    def run(op, env):
        x, y = _x(op, env, "X"), _x(op, env, "Y")
        # integers: exact int64 products, wrapped into X's type (as an int32 gemm wraps)
        a, b = (x.astype(np.int64), y.astype(np.int64)) if x.dtype.kind in "iu" \
            else (_wide(x), _wide(y))
        if op.attrs.get(tx_attr) and a.ndim >= 2:
            a = np.swapaxes(a, -1, -2)
        if op.attrs.get(ty_attr) and b.ndim >= 2:
            b = np.swapaxes(b, -1, -2)
        out = np.asarray(np.matmul(a, b)).astype(x.dtype)
        alpha = op.attrs.get("alpha", 1.0)
        return _out(op, "Out", out if alpha == 1.0 else (out * alpha).astype(x.dtype))
    return run


def _mul(op, env):
    x, y = _x(op, env, "X"), _x(op, env, "Y")
    xn, yn = op.attrs["x_num_col_dims"], op.attrs["y_num_col_dims"]
    wide = (lambda a: a.astype(np.int64)) if x.dtype.kind in "iu" else _wide   # see _matmul
    x2 = wide(x).reshape(int(np.prod(x.shape[:xn])), int(np.prod(x.shape[xn:])))
    y2 = wide(y).reshape(int(np.prod(y.shape[:yn])), int(np.prod(y.shape[yn:])))
    return _out(op, "Out", (x2 @ y2).reshape(x.shape[:xn] + y.shape[yn:]).astype(x.dtype))


def _fc(op, env):
    """Paddle's fc: Input flattened at in_num_col_dims, @ W (less 4 padding rows and
    columns with padding_weights), + Bias, then relu if asked."""
    x, w = _x(op, env, "Input"), _wide(_x(op, env, "W"))
    if op.attrs.get("padding_weights"):
        w = w[:-4, :-4]
    lead = x.shape[:op.attrs.get("in_num_col_dims", 1)]
    out = _wide(x).reshape(int(np.prod(lead)), -1) @ w
    if op.input("Bias"):
        out = out + _wide(_x(op, env, "Bias")).reshape(1, -1)
    if op.attrs.get("activation_type") == "relu":
        out = np.maximum(out, 0)
    return _out(op, "Out", out.reshape(lead + (w.shape[1],)).astype(x.dtype))


# --- values and fills ---------------------------------------------------------------------
def _fill_constant(op, env):
    a = op.attrs
    value = float(a["str_value"]) if a.get("str_value") else a["value"]
    return _out(op, "Out", np.full(a["shape"], value).astype(NUMPY_DTYPE[a["dtype"]]))


def _fill_any_like(op, env):
    x, a = _x(op, env), op.attrs
    dtype = x.dtype if a.get("dtype", -1) < 0 else NUMPY_DTYPE[a["dtype"]]
    return _out(op, "Out", np.full(x.shape, a.get("value", 0.0)).astype(dtype))


def _assign_value(op, env):
    a = op.attrs
    # Paddle's fields: float16 values in fp32_values, small integer types in int32_values
    field = {FP32: "fp32_values", 4: "fp32_values", FP64: "fp64_values",
             INT32: "int32_values", 1: "int32_values", 20: "int32_values",
             21: "int32_values", INT64: "int64_values", BOOL: "bool_values"}[a["dtype"]]
    values = np.asarray(a[field], dtype=NUMPY_DTYPE[a["dtype"]])
    return _out(op, "Out", values.reshape(a["shape"]))


def _fill_batch_like(op, env):
    x, a = _x(op, env, "Input"), op.attrs
    shape = list(a["shape"])
    shape[a["output_dim_idx"]] = x.shape[a["input_dim_idx"]]
    return _out(op, "Out", np.full(shape, a["value"]).astype(NUMPY_DTYPE[a["dtype"]]))


def _random(low_attr, high_attr):
    def run(op, env):
        a = op.attrs
        low = a.get(low_attr) if low_attr else None
        high = a.get(high_attr) if high_attr else None
        return _out(op, "Out", NotComputed(a["shape"], NUMPY_DTYPE[a["dtype"]], low, high))
    return run


# --- routing (what cond / IfElse are built from) ------------------------------------------
def _select_input(op, env):
    i = int(np.ravel(_x(op, env, "Mask"))[0])
    return _out(op, "Out", np.array(_xs(op, env)[i], copy=True))


def _select_output(op, env):
    x, i = _x(op, env), int(np.ravel(_x(op, env, "Mask"))[0])
    names = op.output("Out")
    return {n: (np.array(x, copy=True) if j == i else env.get(n, np.zeros_like(x)))
            for j, n in enumerate(names)}


def _rows(mask):
    return np.asarray(mask).reshape(-1).astype(bool)


def _split_lod(op, env):
    x, rows = _x(op, env), _rows(_x(op, env, "Mask"))
    return {**_out(op, "OutTrue", x[rows].copy()), **_out(op, "OutFalse", x[~rows].copy())}


def _merge_lod(op, env):
    rows = _rows(_x(op, env, "Mask"))
    t = _x(op, env, "InTrue") if op.input("InTrue") else None
    f = _x(op, env, "InFalse") if op.input("InFalse") else None
    like = t if t is not None else f
    out = np.zeros((len(rows),) + like.shape[1:], like.dtype)
    if rows.any():
        out[rows] = t
    if (~rows).any():
        out[~rows] = f
    return _out(op, "Out", out)


# --- tensor arrays ------------------------------------------------------------------------
def _write_to_array(op, env):
    name = op.output("Out")[0]
    array = list(env.get(name, []))          # a new list: earlier states stay as they were
    i = int(np.ravel(_x(op, env, "I"))[0])
    while len(array) <= i:
        array.append(None)
    array[i] = np.array(_x(op, env), copy=True)
    return {name: array}


def _read_from_array(op, env):
    i = int(np.ravel(_x(op, env, "I"))[0])
    return _out(op, "Out", np.array(_x(op, env)[i], copy=True))


def _array_length(op, env):
    return _out(op, "Out", np.int64([len(_x(op, env))]))


def _array_to_tensor(op, env):
    array = [a for a in _x(op, env) if a is not None]
    axis = op.attrs["axis"]
    if op.attrs["use_stack"]:
        out, sizes = np.stack(array, axis=axis), [1] * len(array)
    else:
        out, sizes = np.concatenate(array, axis=axis), [a.shape[axis] for a in array]
    return {**_out(op, "Out", out), **_out(op, "OutIndex", np.int32(sizes))}


# --- losses and optimizers ----------------------------------------------------------------
def _softmax_xent(op, env):
    logits, label, a = _x(op, env, "Logits"), _x(op, env, "Label"), op.attrs
    w = _wide(logits)
    axis = a.get("axis", -1) % w.ndim
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    prob = e / e.sum(axis=axis, keepdims=True) if a.get("use_softmax", True) else w
    if a.get("soft_label"):
        loss = -(label * np.log(prob)).sum(axis=axis, keepdims=True)
    else:
        picked = np.take_along_axis(prob, np.where(label < 0, 0, label), axis=axis)
        loss = np.where(label == a.get("ignore_index", -100), 0.0, -np.log(picked))
    return {**_out(op, "Softmax", prob.astype(logits.dtype)),
            **_out(op, "Loss", loss.astype(logits.dtype))}


def _sigmoid_xent(op, env):
    x, label = _x(op, env), _x(op, env, "Label")
    w, lab = _wide(x), _wide(label)
    out = np.maximum(w, 0) - w * lab + np.log1p(np.exp(-np.abs(w)))
    out = np.where(label == op.attrs.get("ignore_index", -100), 0.0, out)
    return _out(op, "Out", out.astype(x.dtype))


def _bce(op, env):
    x, label = _x(op, env), _x(op, env, "Label")
    w, lab = _wide(x), _wide(label)
    with np.errstate(divide="ignore"):
        out = -(lab * np.maximum(np.log(w), -100) + (1 - lab) * np.maximum(np.log(1 - w), -100))
    return _out(op, "Out", out.astype(x.dtype))


def _huber(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    r = _wide(y) - _wide(x)
    delta = op.attrs.get("delta", 1.0)
    out = np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))
    return {**_out(op, "Out", out.astype(x.dtype)),
            **_out(op, "Residual", r.astype(x.dtype))}


def _label_smooth(op, env):
    x, eps = _x(op, env), op.attrs.get("epsilon", 0.0)
    prior = _wide(_x(op, env, "PriorDist")) if op.input("PriorDist") else 1 / x.shape[-1]
    return _out(op, "Out", ((1 - eps) * _wide(x) + eps * prior).astype(x.dtype))


def _cross_entropy(op, env):
    x, label = _x(op, env, "X"), _x(op, env, "Label")
    w = _wide(x)
    if op.attrs.get("soft_label"):
        y = -(label * np.log(w)).sum(axis=-1, keepdims=True)
    else:
        picked = np.take_along_axis(w, np.where(label < 0, 0, label), axis=-1)
        y = np.where(label == op.attrs.get("ignore_index", -100), 0.0, -np.log(picked))
    return _out(op, "Y", y.astype(x.dtype))


def _sgd(op, env):
    p = _x(op, env, "Param")
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0])
    return _out(op, "ParamOut", (_wide(p) - lr * _wide(_x(op, env, "Grad"))).astype(p.dtype))


def _momentum(op, env):
    p, g, v = _x(op, env, "Param"), _x(op, env, "Grad"), _x(op, env, "Velocity")
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0])
    mu, a = op.attrs["mu"], op.attrs
    g = _wide(g) * a.get("rescale_grad", 1.0)
    if a.get("regularization_method") == "l2_decay" and a.get("regularization_coeff"):
        g = g + a.get("regularization_coeff", 0.0) * _wide(p)
    v2 = mu * _wide(v) + g
    step = g + mu * v2 if a.get("use_nesterov") else v2
    return {**_out(op, "ParamOut", (_wide(p) - lr * step).astype(p.dtype)),
            **_out(op, "VelocityOut", v2.astype(p.dtype))}


def _adam(op, env, lr_ratio=1.0, coeff=0.0):
    """Adam; AdamW with a learning-rate factor and a decoupled decay."""
    a = op.attrs
    b1, b2, eps = a["beta1"], a["beta2"], a["epsilon"]
    p, g = _x(op, env, "Param"), _wide(_x(op, env, "Grad"))
    b1p = _x(op, env, "Beta1Pow")
    b2p = _x(op, env, "Beta2Pow")
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0]) * lr_ratio
    m1 = b1 * _wide(_x(op, env, "Moment1")) + (1 - b1) * g
    m2 = b2 * _wide(_x(op, env, "Moment2")) + (1 - b2) * g * g
    c1, c2 = float(np.ravel(b1p)[0]), float(np.ravel(b2p)[0])
    lr_t = lr * np.sqrt(1 - c2) / (1 - c1)
    new_p = _wide(p) * (1 - lr * coeff) - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - c2))
    dt = p.dtype
    return {**_out(op, "ParamOut", new_p.astype(dt)), **_out(op, "Moment1Out", m1.astype(dt)),
            **_out(op, "Moment2Out", m2.astype(dt)),
            **_out(op, "Beta1PowOut", (_wide(b1p) * b1).astype(b1p.dtype)),
            **_out(op, "Beta2PowOut", (_wide(b2p) * b2).astype(b2p.dtype))}


def _adamw(op, env):
    a = op.attrs
    return _adam(op, env, a.get("lr_ratio", 1.0),
                 a.get("coeff", 0.01) if a.get("with_decay") else 0.0)


def _clip_by_norm(op, env):
    x = _x(op, env)
    norm, max_norm = np.sqrt(np.sum(_wide(x) ** 2)), op.attrs["max_norm"]
    return _out(op, "Out", (_wide(x) * (max_norm / norm if norm > max_norm else 1.0))
                .astype(x.dtype))


def _adagrad(op, env):
    p, g = _wide(_x(op, env, "Param")), _wide(_x(op, env, "Grad"))
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0])
    m = _wide(_x(op, env, "Moment")) + g * g
    dt = _x(op, env, "Param").dtype
    return {**_out(op, "ParamOut", (p - lr * g / (np.sqrt(m) + op.attrs["epsilon"]))
                   .astype(dt)), **_out(op, "MomentOut", m.astype(dt))}


def _rmsprop(op, env):
    a = op.attrs
    rho, eps, mu = a.get("decay", 0.9), a.get("epsilon", 1e-10), a.get("momentum", 0.0)
    p, g = _wide(_x(op, env, "Param")), _wide(_x(op, env, "Grad"))
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0])
    ms = rho * _wide(_x(op, env, "MeanSquare")) + (1 - rho) * g * g
    outs = {}
    if a.get("centered"):
        mg = rho * _wide(_x(op, env, "MeanGrad")) + (1 - rho) * g
        mom = mu * _wide(_x(op, env, "Moment")) + lr * g / np.sqrt(ms - mg * mg + eps)
        outs = _out(op, "MeanGradOut", mg)
    else:
        mom = mu * _wide(_x(op, env, "Moment")) + lr * g / np.sqrt(ms + eps)
        if op.input("MeanGrad"):
            outs = _out(op, "MeanGradOut", _x(op, env, "MeanGrad"))
    dt = _x(op, env, "Param").dtype
    outs.update({**_out(op, "ParamOut", p - mom), **_out(op, "MomentOut", mom),
                 **_out(op, "MeanSquareOut", ms)})
    return {k: v.astype(dt) for k, v in outs.items()}


def _lamb(op, env):
    a = op.attrs
    b1, b2, eps, wd = a["beta1"], a["beta2"], a["epsilon"], a["weight_decay"]
    p, g = _wide(_x(op, env, "Param")), _wide(_x(op, env, "Grad"))
    b1p, b2p = _x(op, env, "Beta1Pow"), _x(op, env, "Beta2Pow")
    lr = float(np.ravel(_x(op, env, "LearningRate"))[0])
    m1 = b1 * _wide(_x(op, env, "Moment1")) + (1 - b1) * g
    m2 = b2 * _wide(_x(op, env, "Moment2")) + (1 - b2) * g * g
    r = (m1 / (1 - float(np.ravel(b1p)[0]))) / (np.sqrt(m2 / (1 - float(np.ravel(b2p)[0])))
                                                + eps) + wd * p
    pn, rn = np.sqrt(np.sum(p * p)), np.sqrt(np.sum(r * r))
    adapt = (wd != 0 or a.get("always_adapt")) and pn > 0 and rn > 0
    dt = _x(op, env, "Param").dtype
    return {**_out(op, "ParamOut", (p - lr * (pn / rn if adapt else 1.0) * r).astype(dt)),
            **_out(op, "Moment1Out", m1.astype(dt)), **_out(op, "Moment2Out", m2.astype(dt)),
            **_out(op, "Beta1PowOut", (_wide(b1p) * b1).astype(b1p.dtype)),
            **_out(op, "Beta2PowOut", (_wide(b2p) * b2).astype(b2p.dtype))}


def _gather_nd(op, env):
    x, index = _x(op, env), _x(op, env, "Index")
    k = index.shape[-1]
    if k == 0:                                  # every index row names all of X
        return _out(op, "Out", np.broadcast_to(x, index.shape[:-1] + x.shape).copy())
    return _out(op, "Out", x[tuple(np.moveaxis(index, -1, 0))])


def _scatter(op, env):
    x, ids = _x(op, env), _x(op, env, "Ids").reshape(-1)
    updates = _x(op, env, "Updates").reshape((ids.size,) + x.shape[1:])
    out = x.copy()
    if op.attrs.get("overwrite", True):
        for i, row in enumerate(ids):           # in order: the last id wins
            out[row] = updates[i]
    else:
        out[ids] = 0
        for i, row in enumerate(ids):
            out[row] += updates[i]
    return _out(op, "Out", out)


def _top_k(op, env):
    x, a = _x(op, env), op.attrs
    axis = a.get("axis", -1) % x.ndim
    k = int(np.ravel(_x(op, env, "K"))[0]) if op.input("K") else a.get("k", 1)
    rows = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
    largest = a.get("largest", True)

    def key(row):          # Paddle's order: NaN is the largest; ties by position
        def of(j):
            v = row[j].item()                   # a Python number: -v cannot overflow
            nan = v != v
            if largest:
                return (0 if nan else 1, 0 if nan else -v, j)
            return (1 if nan else 0, 0 if nan else v, j)
        return of
    order = np.array([sorted(range(len(r)), key=key(r))[:k] for r in rows], np.int64)
    order = order.reshape(rows.shape[0], k)
    values = np.take_along_axis(rows, order, axis=1)
    shape = np.moveaxis(x, axis, -1).shape[:-1] + (k,)
    return {**_out(op, "Out", np.moveaxis(values.reshape(shape), -1, axis)),
            **_out(op, "Indices", np.moveaxis(order.reshape(shape), -1, axis))}


def _p_norm(op, env):
    """In X's dtype, as Paddle computes it."""
    x, a = _x(op, env), op.attrs
    p, t = a.get("porder", 2.0), x.dtype.type
    dims = tuple(range(x.ndim)) if a.get("asvector") or x.ndim == 0 else \
        (a.get("axis", -1) % x.ndim,)
    keep = a.get("keepdim", False)
    with np.errstate(all="ignore"):
        if p == 0:
            out = (x != 0).sum(axis=dims, keepdims=keep)
        elif np.isinf(p):
            out = (np.max if p > 0 else np.min)(np.abs(x), axis=dims, keepdims=keep)
        else:
            out = (np.abs(x) ** t(p)).sum(axis=dims, keepdims=keep) ** t(1 / p)
    return _out(op, "Out", np.asarray(out).astype(x.dtype))


def _smooth_l1(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    d = _wide(x) - _wide(y)
    weighted = op.input("InsideWeight") and op.input("OutsideWeight")
    if weighted:
        d = d * _wide(_x(op, env, "InsideWeight"))
    s2 = np.float64(op.attrs.get("sigma", 1.0)) ** 2      # sigma 0: 1 / s2 is inf, as Paddle
    with np.errstate(all="ignore"):
        err = np.where(np.abs(d) < 1 / s2, 0.5 * d * d * s2, np.abs(d) - 0.5 / s2)
    if weighted:
        err = err * _wide(_x(op, env, "OutsideWeight"))
    return {**_out(op, "Diff", d.astype(x.dtype)),
            **_out(op, "Out", err.reshape(x.shape[0], -1).sum(axis=1, keepdims=True)
                   .astype(x.dtype))}


def _cross_entropy2(op, env):
    x, label = _x(op, env), _x(op, env, "Label")
    ignored = label == op.attrs.get("ignore_index", -100)
    picked = np.take_along_axis(_wide(x), np.where(ignored, 0, label), axis=-1)
    with np.errstate(divide="ignore"):
        y = np.where(picked == 0, 1e20, -np.log(picked))     # Paddle's TolerableValue
    return {**_out(op, "Y", np.where(ignored, 0, y).astype(x.dtype)),
            **_out(op, "MatchX", np.where(ignored, 0, picked).astype(x.dtype)),
            **(_out(op, "XShape", np.zeros(x.shape + (0,), x.dtype)) if op.output("XShape")
               else {})}



# --- the activations CNNs use (Paddle 2.6.2's formulas; attributes rounded to X's dtype,
# as Paddle's functors take them in T; computed in float64) ------------------------------
def _act(fn, *names):
    """A reference of an activation with attribute parameters ``names``."""
    def run(op, env):
        x = _x(op, env)
        params = [float(x.dtype.type(op.attrs[n])) for n in names]
        with np.errstate(all="ignore"):
            return _out(op, "Out", np.asarray(fn(_wide(x), *params)).astype(x.dtype))
    return run


def _softplus(x, beta, threshold):
    z = beta * x
    return np.where(z > threshold, x, np.logaddexp(0, z) / beta)


def _prelu(op, env):
    x, alpha = _x(op, env), _x(op, env, "Alpha")
    mode, layout = op.attrs.get("mode", "all"), op.attrs.get("data_format", "NCHW")
    if mode == "all":
        if alpha.size != 1:
            raise ValueError("mode all takes one slope")
        a = alpha.reshape(())
    elif mode == "channel":
        axis = 1 if layout == "NCHW" else x.ndim - 1
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        a = alpha.reshape(shape)            # raises unless Alpha has C entries
    else:
        a = alpha.reshape((1,) + x.shape[1:])
    return _out(op, "Out", np.where(x > 0, x, a * x).astype(x.dtype))


# --- convolution: windows of the padded input, summed with einsum, group by group ---------
def _conv_pads(a, in_hw, k_hw):
    """[top, bottom, left, right] and dilations after padding_algorithm (Paddle's rule)."""
    p, d = list(a.get("paddings", [0, 0])), list(a.get("dilations", [1, 1]))
    if len(p) == 2:
        p = [p[0], p[0], p[1], p[1]]
    algorithm = a.get("padding_algorithm", "EXPLICIT")
    if algorithm == "VALID":
        p = [0, 0, 0, 0]
    elif algorithm == "SAME":
        for axis in range(2):
            s, n = a.get("strides", [1, 1])[axis], in_hw[axis]
            total = max((int(np.ceil(n / s)) - 1) * s + k_hw[axis] - n, 0)
            p[2 * axis], p[2 * axis + 1], d[axis] = total // 2, total - total // 2, 1
    return p, d


def _conv2d(op, env):
    x, w, a = _x(op, env, "Input"), _x(op, env, "Filter"), op.attrs
    last = a.get("data_format", "NCHW") == "NHWC"
    if last:
        x = x.transpose(0, 3, 1, 2)
    g, s = a.get("groups", 1), a.get("strides", [1, 1])
    assert x.ndim == w.ndim == 4 and x.shape[1] == w.shape[1] * g and w.shape[0] % g == 0
    kh, kw = w.shape[2:]
    p, d = _conv_pads(a, x.shape[2:], (kh, kw))
    # Paddle's sizes: C++ division (toward zero), so a window overhanging the padded input
    # by less than a stride still counts, over zeros (padded on here)
    spans = [x.shape[2] + p[0] + p[1] - d[0] * (kh - 1) - 1,
             x.shape[3] + p[2] + p[3] - d[1] * (kw - 1) - 1]
    oh, ow = (int(span / step) + 1 for span, step in zip(spans, s))
    assert oh > 0 and ow > 0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[1] + max(0, -spans[0])),
                    (p[2], p[3] + max(0, -spans[1]))))
    # windows[n, c, i, j, ki, kj] = xp[n, c, i*s0 + ki*d0, j*s1 + kj*d1]
    windows = np.empty(x.shape[:2] + (oh, ow, kh, kw), x.dtype)
    for ki in range(kh):
        for kj in range(kw):
            windows[..., ki, kj] = xp[:, :, ki * d[0]:ki * d[0] + (oh - 1) * s[0] + 1:s[0],
                                      kj * d[1]:kj * d[1] + (ow - 1) * s[1] + 1:s[1]]
    cg, og = x.shape[1] // g, w.shape[0] // g
    out = np.concatenate([np.einsum("ncijab,ocab->noij", _wide(windows[:, k * cg:(k + 1) * cg]),
                                    _wide(w[k * og:(k + 1) * og])) for k in range(g)], axis=1)
    out = out.astype(x.dtype)
    return _out(op, "Output", out.transpose(0, 2, 3, 1) if last else out)


def _conv2d_transpose(op, env):
    """Each input element scatters Input * Filter[c] into the window it would come from."""
    x, w, a = _x(op, env, "Input"), _x(op, env, "Filter"), op.attrs
    last = a.get("data_format", "NCHW") == "NHWC"
    if last:
        x = x.transpose(0, 3, 1, 2)
    g, s = a.get("groups", 1), a.get("strides", [1, 1])
    assert x.ndim == w.ndim == 4 and x.shape[1] == w.shape[0] and x.shape[1] % g == 0
    n, c, h, wd = x.shape
    kh, kw = w.shape[2:]
    p, d = _conv_pads(a, (h, wd), (kh, kw))
    size = [(h - 1) * s[0] - p[0] - p[1] + d[0] * (kh - 1) + 1,
            (wd - 1) * s[1] - p[2] - p[3] + d[1] * (kw - 1) + 1]
    if a.get("output_size"):
        size = list(a["output_size"])
    elif a.get("output_padding"):
        size = [size[0] + a["output_padding"][0], size[1] + a["output_padding"][1]]
    assert min(size) > 0
    cg, og = c // g, w.shape[1]
    full = np.zeros((n, og * g, p[0] + size[0] + d[0] * kh + s[0] * h,
                     p[2] + size[1] + d[1] * kw + s[1] * wd))
    for k in range(g):
        xg, wg = _wide(x[:, k * cg:(k + 1) * cg]), _wide(w[k * cg:(k + 1) * cg])
        for ki in range(kh):
            for kj in range(kw):
                full[:, k * og:(k + 1) * og, ki * d[0]:ki * d[0] + h * s[0]:s[0],
                     kj * d[1]:kj * d[1] + wd * s[1]:s[1]] += \
                    np.einsum("nchw,co->nohw", xg, wg[:, :, ki, kj])
    out = full[:, :, p[0]:p[0] + size[0], p[2]:p[2] + size[1]].astype(x.dtype)
    return _out(op, "Output", out.transpose(0, 2, 3, 1) if last else out)



# --- pooling: each window by slicing, Paddle 2.6.2's window rules ---------------------------
def _pool_windows(n, k, s, before, after, ceil, adaptive, out_n):
    """[(start, end)] of each output position along an axis of n (clipped to the input)."""
    if adaptive:
        return [(i * n // out_n, -(-(i + 1) * n // out_n)) for i in range(out_n)]
    count = (n + before + after - k + (s - 1 if ceil else 0)) // s + 1
    spans = [(max(i * s - before, 0), min(i * s - before + k, n)) for i in range(count)]
    if count <= 0 or any(e <= b for b, e in spans):
        raise ValueError("a window holds no element of X")
    return spans


def _pool(op, env, with_index):
    x, a = _x(op, env), op.attrs
    nhwc = not with_index and a.get("data_format", "NCHW") == "NHWC"
    if x.ndim != 4 or x.dtype not in (np.float32, np.float64):
        raise ValueError("pooling takes 4-D float32/float64")
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    hw = x.shape[2:]
    k, s, p = list(a.get("ksize")), list(a.get("strides")), list(a.get("paddings"))
    adaptive, ceil = a.get("adaptive"), not with_index and a.get("ceil_mode")
    algorithm = "EXPLICIT" if with_index else a.get("padding_algorithm", "EXPLICIT")
    if a.get("global_pooling"):
        k, s, p, adaptive, ceil = list(hw), [1, 1], [0, 0], False, False
        algorithm = "EXPLICIT"
    if algorithm == "VALID":
        p = [0, 0]
    elif algorithm == "SAME":
        p = []
        for n, kk, ss in zip(hw, k, s):
            total = max((-(-n // ss) - 1) * ss + kk - n, 0)
            p += [total // 2, total - total // 2]
    if len(p) == 2:
        p = [p[0], p[0], p[1], p[1]]
    rows = _pool_windows(hw[0], k[0], s[0], p[0], p[1], ceil, adaptive, k[0])
    cols = _pool_windows(hw[1], k[1], s[1], p[2], p[3], ceil, adaptive, k[1])
    is_max = with_index or a.get("pooling_type", "max") == "max"
    exclusive = adaptive or a.get("exclusive", True)
    out = np.empty(x.shape[:2] + (len(rows), len(cols)), x.dtype)
    mask = np.empty(out.shape, np.int32)
    for i, (h0, h1) in enumerate(rows):
        for j, (w0, w1) in enumerate(cols):
            window = _wide(x[:, :, h0:h1, w0:w1])
            if is_max:
                out[:, :, i, j] = window.max(axis=(2, 3))       # NaN wins, as numpy's max
                at = window.reshape(window.shape[:2] + ((h1 - h0) * (w1 - w0),)).argmax(2)
                mask[:, :, i, j] = (h0 + at // (w1 - w0)) * hw[1] + w0 + at % (w1 - w0)
            else:   # not exclusive: the window as it lies in the padded input (Paddle)
                padded = [min(o * ss - pb + kk, n + pe) - (o * ss - pb) for o, ss, pb, pe, kk, n
                          in ((i, s[0], p[0], p[1], k[0], hw[0]),
                              (j, s[1], p[2], p[3], k[1], hw[1]))]
                size = (h1 - h0) * (w1 - w0) if exclusive else padded[0] * padded[1]
                out[:, :, i, j] = window.sum(axis=(2, 3)) / size
    if nhwc:
        out = out.transpose(0, 2, 3, 1)
    if with_index:
        return {**_out(op, "Out", out), **_out(op, "Mask", mask)}
    return _out(op, "Out", out)


# --- normalization and dropout ---------------------------------------------------------
def _channel_axis(op, x):
    return x.ndim - 1 if op.attrs.get("data_layout") == "NHWC" and x.ndim > 2 else 1


def _scale_bias(op, env, channels):
    scale = _wide(_x(op, env, "Scale")) if op.input("Scale") else np.ones(channels)
    bias = _wide(_x(op, env, "Bias")) if op.input("Bias") else np.zeros(channels)
    return scale, bias


def _batch_norm(op, env):
    """Training: the batch's mean and biased variance over every axis but the channel's;
    the running statistics move towards them by (1 - momentum). Test mode (is_test without
    trainable_statistics) or use_global_stats: Mean and Variance, unchanged."""
    x, a = _x(op, env), op.attrs
    axis = _channel_axis(op, x)
    c = x.shape[axis]
    axes = tuple(i for i in range(x.ndim) if i != axis)
    along = [c if i == axis else 1 for i in range(x.ndim)]
    mean_in, var_in = _x(op, env, "Mean"), _x(op, env, "Variance")
    scale, bias = _scale_bias(op, env, c)
    eps = a["epsilon"]
    if (a["is_test"] and not a["trainable_statistics"]) or a["use_global_stats"]:
        mean, var = _wide(mean_in), _wide(var_in)
        mean_out, var_out, saved_mean, saved_var = mean, var, np.zeros(c), np.zeros(c)
    else:
        m = float(_x(op, env, "MomentumTensor").reshape(-1)[0]) if op.input("MomentumTensor") \
            else a["momentum"]
        w = _wide(x)
        mean = w.mean(axis=axes)
        var = ((w - mean.reshape(along)) ** 2).mean(axis=axes)
        mean_out = m * _wide(mean_in).reshape(c) + (1 - m) * mean
        var_out = m * _wide(var_in).reshape(c) + (1 - m) * var
        saved_mean, saved_var = mean, 1 / np.sqrt(var + eps)
    y = (_wide(x) - mean.reshape(along)) / np.sqrt(var.reshape(along) + eps) \
        * scale.reshape(along) + bias.reshape(along)
    return {**_out(op, "Y", y.astype(x.dtype)),
            **_out(op, "MeanOut", mean_out.reshape(c).astype(mean_in.dtype)),
            **_out(op, "VarianceOut", var_out.reshape(c).astype(var_in.dtype)),
            **_out(op, "SavedMean", saved_mean.reshape(c).astype(mean_in.dtype)),
            **_out(op, "SavedVariance", saved_var.reshape(c).astype(var_in.dtype))}


def _instance_norm(op, env):
    """Each sample's channel over its own H*W values; SavedVariance is 1/sqrt(var + eps)."""
    x = _x(op, env)
    n, c = x.shape[:2]
    w = _wide(x).reshape(n, c, -1)
    mean = w.mean(axis=2, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=2, keepdims=True)
    inv = 1 / np.sqrt(var + op.attrs["epsilon"])
    scale, bias = _scale_bias(op, env, c)
    y = (w - mean) * inv * scale.reshape(1, c, 1) + bias.reshape(1, c, 1)
    return {**_out(op, "Y", y.reshape(x.shape).astype(x.dtype)),
            **_out(op, "SavedMean", mean.reshape(-1).astype(x.dtype)),
            **_out(op, "SavedVariance", inv.reshape(-1).astype(x.dtype))}


def _group_norm(op, env):
    """Each sample's group of C / groups channels together; Mean and Variance [N, groups]
    (the biased variance itself)."""
    x, groups = _x(op, env), op.attrs["groups"]
    nchw = np.moveaxis(x, -1, 1) if op.attrs.get("data_layout") == "NHWC" else x
    n, c = nchw.shape[:2]
    if groups < 1 or c % groups:
        raise ValueError(f"groups={groups} does not divide C={c}")
    w = _wide(nchw).reshape(n, groups, -1)
    mean = w.mean(axis=2, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=2, keepdims=True)
    scale, bias = _scale_bias(op, env, c)
    along = (1, c) + (1,) * (nchw.ndim - 2)
    y = ((w - mean) / np.sqrt(var + op.attrs["epsilon"])).reshape(nchw.shape) \
        * scale.reshape(along) + bias.reshape(along)
    if nchw is not x:
        y = np.moveaxis(y, 1, -1)
    return {**_out(op, "Y", y.astype(x.dtype)),
            **_out(op, "Mean", mean.reshape(n, groups).astype(x.dtype)),
            **_out(op, "Variance", var.reshape(n, groups).astype(x.dtype))}


def _layer_norm(op, env):
    """Each row of X (the dims before begin_norm_axis index the rows) over its own values;
    Scale and Bias per position in a row; Mean and Variance (the biased variance itself)
    in X's dims before the axis."""
    x, axis = _x(op, env), op.attrs["begin_norm_axis"]
    if not 0 < axis < x.ndim or 0 in x.shape[axis:]:
        raise ValueError(f"begin_norm_axis={axis} for X {x.shape}")
    right = int(np.prod(x.shape[axis:]))
    w = _wide(x).reshape(int(np.prod(x.shape[:axis])), right)
    vectors = []
    for slot, absent in (("Scale", 1.0), ("Bias", 0.0)):
        v = _wide(_x(op, env, slot)) if op.input(slot) else np.full(right, absent)
        if v.shape != (right,):
            raise ValueError(f"{slot} {v.shape} for rows of {right}")
        vectors.append(v)
    mean = w.mean(axis=1, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=1, keepdims=True)
    y = (w - mean) / np.sqrt(var + op.attrs["epsilon"]) * vectors[0] + vectors[1]
    stats = x.shape[:axis]
    return {**_out(op, "Y", y.reshape(x.shape).astype(x.dtype)),
            **_out(op, "Mean", mean.reshape(stats).astype(x.dtype)),
            **_out(op, "Variance", var.reshape(stats).astype(x.dtype))}

# --- the fused rnn op ----------------------------------------------------------------
def _cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of one direction of one layer, Paddle's cells (LSTMCell's gates i, f, c~,
    o; GRUCell's r, z, c~ with h = (h_prev - c~) * z + c~), in float64."""
    xg, hg = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if mode == "LSTM":
        i, f, g, o = np.split(xg + hg, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        return _sigmoid(o) * np.tanh(c), c
    if mode == "GRU":
        xr, xz, xc = np.split(xg, 3, axis=1)
        hr, hz, hc = np.split(hg, 3, axis=1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        cand = np.tanh(xc + r * hc)
        return (h - cand) * z + cand, c
    pre = xg + hg
    return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)), c


def _rnn(op, env):
    """Paddle's fused rnn op, time-major Input [T, B, I]: layer by layer, each direction
    over the sequence (the backward one from the last step), a padded step (t >= length)
    giving 0 and keeping the state; PreState/State [layers * directions, B, H] (LSTM: h
    then c); WeightList all [W_ih, W_hh] pairs, then all [b_ih, b_hh] pairs."""
    a = op.attrs
    mode, layers, H = a["mode"], a["num_layers"], a["hidden_size"]
    dirs = 2 if a["is_bidirec"] else 1
    x = _wide(_x(op, env, "Input"))
    T, B = x.shape[:2]
    weights = [_wide(env[n]) for n in op.input("WeightList")]
    n = layers * dirs
    pre = [_wide(env[v]) for v in op.input("PreState")]
    h0 = pre[0]
    c0 = pre[1] if mode == "LSTM" else np.zeros_like(h0)
    lengths = env[op.input("SequenceLength")[0]] if op.input("SequenceLength") else \
        np.full(B, T)
    hs, cs = np.zeros((n, B, H)), np.zeros((n, B, H))
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh = weights[2 * k], weights[2 * k + 1]
            b_ih, b_hh = weights[2 * n + 2 * k], weights[2 * n + 2 * k + 1]
            h, c, out = h0[k], c0[k], np.zeros((T, B, H))
            for t in (range(T - 1, -1, -1) if d else range(T)):
                nh, nc = _cell(mode, x[t], h, c, w_ih, w_hh, b_ih, b_hh)
                live = (t < lengths)[:, None]
                h, c = np.where(live, nh, h), np.where(live, nc, c)
                out[t] = np.where(live, nh, 0.0)
            hs[k], cs[k] = h, c
            outs.append(out)
        x = np.concatenate(outs, axis=2)
    dtype = _x(op, env, "Input").dtype
    states = [hs.astype(dtype)] + ([cs.astype(dtype)] if mode == "LSTM" else [])
    made = {**_out(op, "Out", x.astype(dtype)), **_out(op, "State", *states)}
    if op.output("Reserve"):     # the gradient's store: its size is all that is promised
        saved = {"LSTM": 7, "GRU": 5}.get(mode, 2)     # gates and starting states per unit
        size = n * T * B * H * saved + (layers - 1) * T * B * dirs * H
        made.update(_out(op, "Reserve", NotComputed((size,), dtype)))
    if op.output("DropoutState"):
        made.update(_out(op, "DropoutState", NotComputed((0,), np.uint8)))
    return made


def _dropout(op, env):
    """Deterministic where dropout is: test mode (X * (1 - p), or X for upscale_in_train),
    and training with p = 0 (everything kept) or p = 1 (everything dropped). Other
    training runs draw a random mask: only the shapes are known."""
    x, a = _x(op, env), op.attrs
    p, upscale = a["dropout_prob"], a["dropout_implementation"] == "upscale_in_train"
    if not 0 <= p <= 1 or a["dropout_implementation"] not in ("upscale_in_train",
                                                              "downgrade_in_infer"):
        raise ValueError(f"dropout_prob={p}, {a['dropout_implementation']!r}")
    ones = np.ones(x.shape, np.uint8)
    if a["is_test"]:
        out = x.copy() if upscale else x * x.dtype.type(1 - p)
    elif p == 0:
        out = x.copy()
    elif p == 1:
        out, ones = np.zeros_like(x), np.zeros(x.shape, np.uint8)
    else:
        return {**_out(op, "Out", NotComputed(x.shape, x.dtype)),
                **_out(op, "Mask", NotComputed(x.shape, np.uint8))}
    return {**_out(op, "Out", out), **_out(op, "Mask", ones)}



# --- interpolation: Paddle 2.6.2's source positions, with its float32 ratio ----------------
def _interp_size(op, env, hw):
    """(out_h, out_w, scale or None) in Paddle's order of precedence."""
    a = op.attrs
    size, scale = [a.get("out_h", -1), a.get("out_w", -1)], None
    if op.input("SizeTensor"):
        return [int(np.ravel(v)[0]) for v in _xs(op, env, "SizeTensor")], None
    given = list(np.ravel(_x(op, env, "Scale"))) if op.input("Scale") else a.get("scale")
    if given:
        if len(given) > 2 or not all(0 < s < np.inf for s in given):
            raise ValueError("bad scale")
        scale = [float(given[0]), float(given[-1])]
        size = [int(n * s) for n, s in zip(hw, scale)]
    if op.input("OutSize"):
        size = [int(v) for v in np.ravel(_x(op, env, "OutSize"))]
    if len(size) != 2 or min(size) < 1:
        raise ValueError("bad output size")
    return size, scale


def _interp_axis(n, out, scale, corners, nearest, half):
    """(first source index, second, weight of the second) for each output position."""
    if out == 1:
        r = np.float32(0)
    elif corners:
        r = np.float32((n - 1) / (out - 1))
    else:
        r = np.float32(1 / scale) if scale else np.float32(n) / np.float32(out)
    k = np.arange(out)
    if nearest:
        pos = r * k.astype(np.float32)
        i = np.minimum((pos + 0.5 if corners else pos).astype(np.int64), n - 1)
        return i, i, np.zeros(out)
    if half:
        src = float(r) * (k + 0.5) - 0.5
        i = np.clip(np.trunc(src), 0, None).astype(np.int64)
        w = np.clip(src.astype(np.float32), 0, None) - i
    else:
        pos = r * k.astype(np.float32)
        i = pos.astype(np.int64)
        w = pos - i
    i = np.minimum(i, n - 1)
    return i, np.minimum(i + 1, n - 1), w.astype(np.float32).astype(np.float64)


def _interp(nearest):
    def run(op, env):
        x, a = _x(op, env), op.attrs
        method = "nearest" if nearest else "bilinear"
        nhwc = a.get("data_layout", "NCHW") == "NHWC"
        if x.ndim != 4 or x.dtype not in (np.float32, np.float64) or \
                a.get("interp_method") != method or a.get("align_mode") not in (0, 1) or \
                a.get("data_layout") not in ("NCHW", "NHWC"):
            raise ValueError("not an interpolation this op does")
        if nhwc:
            x = x.transpose(0, 3, 1, 2)
        (oh, ow), scale = _interp_size(op, env, x.shape[2:])
        corners = a.get("align_corners")
        half = a.get("align_mode") == 0 and not corners
        y0, y1, wy = _interp_axis(x.shape[2], oh, scale and scale[0], corners, nearest, half)
        x0, x1, wx = _interp_axis(x.shape[3], ow, scale and scale[1], corners, nearest, half)
        w = _wide(x)
        if nearest:
            out = w[:, :, y0][:, :, :, x0]
        else:
            wy, wx = wy[:, None], wx[None, :]
            out = (w[:, :, y0][:, :, :, x0] * (1 - wy) * (1 - wx)
                   + w[:, :, y1][:, :, :, x0] * wy * (1 - wx)
                   + w[:, :, y0][:, :, :, x1] * (1 - wy) * wx
                   + w[:, :, y1][:, :, :, x1] * wy * wx)
        out = out.astype(x.dtype)
        return _out(op, "Out", out.transpose(0, 2, 3, 1) if nhwc else out)
    return run

REFERENCES = {
    "relu": _relu, "square": _square,
    "sigmoid": _in_wide(_sigmoid), "tanh": _in_wide(np.tanh), "exp": _in_wide(np.exp),
    "log": _in_wide(np.log), "gelu": _gelu,
    "relu6": _act(lambda x, t: np.minimum(np.maximum(x, 0), t), "threshold"),
    "leaky_relu": _act(lambda x, a: np.where(x > 0, x, a * x), "alpha"),
    "hard_swish": _act(lambda x, t, s, o: x * np.minimum(np.maximum(x + o, 0), t) / s,
                       "threshold", "scale", "offset"),
    "hard_sigmoid": _act(lambda x, s, o: np.clip(s * x + o, 0, 1), "slope", "offset"),
    "swish": _act(lambda x, b: x * scipy.special.expit(b * x), "beta"),
    "silu": _act(lambda x: x * scipy.special.expit(x)),
    "elu": _act(lambda x, a: np.where(x > 0, x, a * np.expm1(np.minimum(x, 0))), "alpha"),
    "softplus": _act(_softplus, "beta", "threshold"), "prelu": _prelu,
    "pool2d": lambda op, env: _pool(op, env, False),
    "max_pool2d_with_index": lambda op, env: _pool(op, env, True),
    "nearest_interp_v2": _interp(True), "bilinear_interp_v2": _interp(False),
    "abs": lambda op, env: _out(op, "Out", np.abs(_x(op, env))),
    "sign": lambda op, env: _out(op, "Out", np.sign(_x(op, env))),
    "sqrt": _in_wide(np.sqrt), "rsqrt": _in_wide(lambda w: 1 / np.sqrt(w)),
    "pow": _pow, "clip": _clip,
    "scale": _scale, "cast": _cast, "assign": _copy, "rnn_memory_helper": _copy,
    "logical_not": _logical_not, "increment": _increment,
    "softmax": _softmax, "mean": _mean, "reduce_sum": _reduce(np.sum),
    "reduce_mean": _reduce(np.mean), "sum": _sum,
    "reduce_max": _reduce(np.max), "reduce_min": _reduce(np.min),
    "reduce_prod": _reduce(np.prod), "log_softmax": _log_softmax,
    "squared_l2_norm": lambda op, env: _out(op, "Out", np.asarray(
        [(_wide(_x(op, env)) ** 2).sum()]).astype(_x(op, env).dtype)),
    "reshape2": _reshape2, "transpose2": _transpose2, "concat": _concat, "split": _split,
    "split_byref": _split_byref,
    "squeeze2": _squeeze2, "unsqueeze2": _unsqueeze2, "flatten_contiguous_range": _flatten,
    "shape": lambda op, env: _out(op, "Out", np.int32(_x(op, env, "Input").shape)),
    "stack": _stack, "unstack": _unstack, "expand_v2": _expand_v2,
    "expand_as_v2": _expand_as_v2, "slice": _slice(False), "strided_slice": _slice(True),
    "flip": lambda op, env: _out(op, "Out", np.flip(_x(op, env), op.attrs["axis"]).copy()),
    "pad": _pad, "pad3d": _pad3d, "cumsum": _cumsum, "range": _range,
    "gather": _gather, "one_hot_v2": _one_hot,
    "lookup_table_v2": _lookup_table, "lookup_table": _lookup_table,
    "arg_max": _arg(np.argmax), "arg_min": _arg(np.argmin),
    "tile": lambda op, env: _out(op, "Out", np.tile(_x(op, env), op.attrs["repeat_times"])),
    "where": lambda op, env: _out(op, "Out", np.where(_x(op, env, "Condition"),
                                                      _x(op, env, "X"), _x(op, env, "Y"))),
    "fc": _fc,
    "fused_elemwise_activation": _fused_elemwise,
    "fused_elemwise_add_activation": _fused_elemwise,
    "elementwise_add": _binary(np.add), "elementwise_sub": _binary(np.subtract),
    "elementwise_mul": _binary(np.multiply), "elementwise_div": _binary(_div),
    # Paddle's max/min: X where X wins the compare, else Y (a NaN in X gives Y)
    "elementwise_max": _binary(lambda x, y: np.where(x > y, x, y)),
    "elementwise_min": _binary(lambda x, y: np.where(x < y, x, y)),
    "elementwise_pow": _binary(lambda x, y: (_wide(x) ** _wide(y)).astype(x.dtype)),
    "elementwise_floordiv": _binary(np.floor_divide), "elementwise_mod": _binary(np.mod),
    "greater_than": _binary(np.greater), "less_than": _binary(np.less),
    "equal": _binary(np.equal), "not_equal": _binary(np.not_equal),
    "logical_and": _logical(np.logical_and), "logical_or": _logical(np.logical_or),
    "matmul_v2": _matmul("trans_x", "trans_y"), "matmul": _matmul("transpose_X", "transpose_Y"),
    "bmm": _matmul("trans_x", "trans_y"),       # no transposes: its attrs are absent
    "mul": _mul,
    "fill_constant": _fill_constant, "fill_any_like": _fill_any_like,
    "fill_zeros_like": lambda op, env: _out(op, "Out", np.zeros_like(_x(op, env))),
    "assign_value": _assign_value, "fill_constant_batch_size_like": _fill_batch_like,
    "uniform_random": _random("min", "max"), "gaussian_random": _random(None, None),
    "select_input": _select_input, "select_output": _select_output,
    "split_lod_tensor": _split_lod, "merge_lod_tensor": _merge_lod,
    "write_to_array": _write_to_array, "read_from_array": _read_from_array,
    "lod_array_length": _array_length, "tensor_array_to_tensor": _array_to_tensor,
    "softmax_with_cross_entropy": _softmax_xent, "cross_entropy": _cross_entropy,
    "sigmoid_cross_entropy_with_logits": _sigmoid_xent, "bce_loss": _bce,
    "huber_loss": _huber, "label_smooth": _label_smooth,
    "gather_nd": _gather_nd, "scatter": _scatter, "top_k_v2": _top_k, "p_norm": _p_norm,
    "index_select": lambda op, env: _out(op, "Out", np.take(
        _x(op, env), _x(op, env, "Index").reshape(-1), axis=op.attrs.get("dim", 0))),
    "smooth_l1_loss": _smooth_l1, "cross_entropy2": _cross_entropy2,
    "sgd": _sgd, "momentum": _momentum, "adam": _adam, "adamw": _adamw, "adagrad": _adagrad,
    "rmsprop": _rmsprop, "lamb": _lamb, "clip_by_norm": _clip_by_norm,
    "conv2d": _conv2d, "depthwise_conv2d": _conv2d, "conv2d_transpose": _conv2d_transpose,
    "depthwise_conv2d_transpose": _conv2d_transpose,
    "batch_norm": _batch_norm, "instance_norm": _instance_norm, "group_norm": _group_norm,
    "layer_norm": _layer_norm, "rnn": _rnn,
    "dropout": _dropout,
}


# --- mish, logsigmoid, celu, selu, softsign, tanh_shrink (ops/smooth_activations.py),
# hard_shrink, softshrink, thresholded_relu, brelu (ops/shrink_activations.py) and
# logsumexp (ops/logsumexp.py): Paddle 2.6.2's formulas, in float64 -----------------------
def _mish(x, threshold):
    return x * np.tanh(np.where(x > threshold, x, np.logaddexp(0, x)))


def _logsumexp(op, env):
    x, a = _x(op, env), op.attrs
    rank, axis = x.ndim, a.get("axis", [0])
    if rank and not all(-rank <= d < rank for d in axis):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    axes = {d % rank for d in axis} if rank else set()
    every = a.get("reduce_all") or not axis or len(axes) == rank
    if x.size == 0:                      # sums of no terms: log(0) = -inf
        out = np.full(np.sum(x, axis=None if every else tuple(sorted(axes)),
                             keepdims=a.get("keepdim", False)).shape, -np.inf)
    else:
        with np.errstate(all="ignore"):  # scipy: max + log(sum(exp(x - max)))
            out = scipy.special.logsumexp(_wide(x), keepdims=a.get("keepdim", False),
                                          axis=None if every else tuple(sorted(axes)))
    if every and a.get("keepdim", False):
        out = np.reshape(out, (1,) * rank)
    return _out(op, "Out", np.asarray(out).astype(x.dtype))


def _maxout(op, env):
    x, groups, axis = _x(op, env), op.attrs["groups"], op.attrs.get("axis", 1)
    if x.ndim != 4 or axis not in (1, -1, 3) or groups < 1 or x.shape[axis] % groups:
        raise ValueError("maxout takes a 4-D X whose channels groups divides")
    c = 1 if axis == 1 else 3
    grouped = x.reshape(x.shape[:c] + (x.shape[c] // groups, groups) + x.shape[c + 1:])
    return _out(op, "Out", grouped.max(axis=c + 1))


REFERENCES.update({
    "maxout": _maxout,
    "mish": _act(_mish, "threshold"),
    "logsigmoid": _act(lambda x: -np.logaddexp(0, -x)),
    "celu": _act(lambda x, a: np.where(x > 0, x, a * np.expm1(x / a)), "alpha"),
    "selu": _act(lambda x, s, a: np.where(x > 0, s * x, s * a * np.expm1(x)), "scale", "alpha"),
    "softsign": _act(lambda x: np.where(np.isinf(x), np.sign(x), x / (1 + np.abs(x)))),
    "tanh_shrink": _act(lambda x: x - np.tanh(x)),
    "hard_shrink": _act(lambda x, t: np.where((x >= -t) & (x <= t), 0, x), "threshold"),
    "softshrink": _act(lambda x, lam: np.where((x >= -lam) & (x <= lam), 0,
                                               np.where(x > 0, x - lam, x + lam)), "lambda"),
    "thresholded_relu": _act(lambda x, t: np.where(x <= t, 0, x), "threshold"),
    "brelu": _act(lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), "t_min", "t_max"),
    "logsumexp": _logsumexp,
})


# --- accuracy, auc (ops/metrics.py), nll_loss, kldiv_loss (ops/log_prob_losses.py) ---------
def _accuracy(op, env):
    indices, label = _x(op, env, "Indices"), _x(op, env, "Label").reshape(-1)
    if (label < 0).any():
        raise ValueError("accuracy: a negative label")
    correct = int((indices == label[:, None]).any(axis=1).sum())
    n = label.size
    return {**_out(op, "Accuracy", np.float32(correct / n if n else 0.0)),
            **_out(op, "Correct", np.int32(correct)), **_out(op, "Total", np.int32(n))}


def _roc_area(pos, neg):
    """Trapezoids under (false positives, true positives) walked from the top bucket."""
    tp = np.concatenate([[0.0], np.cumsum(pos[::-1], dtype=np.float64)])
    fp = np.concatenate([[0.0], np.cumsum(neg[::-1], dtype=np.float64)])
    area = float(np.sum(np.diff(fp) * (tp[1:] + tp[:-1]) / 2))
    return area / tp[-1] / fp[-1] if tp[-1] > 0 and fp[-1] > 0 else area


def _auc(op, env):
    a = op.attrs
    predict, label = _x(op, env, "Predict"), _x(op, env, "Label").reshape(-1)
    nt, slides = a.get("num_thresholds", 8191), a.get("slide_steps", 1)
    p = predict[:, -1]
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("auc: a probability outside [0, 1]")
    buckets = (p * p.dtype.type(nt)).astype(np.int64)   # in p's type, as Paddle's kernel
    batch_pos = np.bincount(buckets[label > 0], minlength=nt + 1)
    batch_neg = np.bincount(buckets[label == 0], minlength=nt + 1)
    weight = op.input("InsTagWeight")
    fake = bool(weight) and float(np.ravel(env[weight[0]])[0]) == 0.0
    pos = _x(op, env, "StatPos").astype(np.int64).reshape(-1).copy()
    neg = _x(op, env, "StatNeg").astype(np.int64).reshape(-1).copy()
    if slides == 0:
        if not fake:
            pos += batch_pos
            neg += batch_neg
        area = _roc_area(pos, neg)
    else:
        rings_p = pos[:-1].reshape(slides + 1, nt + 1)        # rings, then their sum
        rings_n = neg[:-1].reshape(slides + 1, nt + 1)
        ring = int(pos[-1]) % slides
        rings_p[ring], rings_n[ring] = batch_pos, batch_neg
        kept = [r for r in range(slides) if r != ring or not fake]
        rings_p[slides] = rings_p[kept].sum(axis=0)
        rings_n[slides] = rings_n[kept].sum(axis=0)
        area = _roc_area(rings_p[slides], rings_n[slides])
        pos[-1] += 1
        neg[-1] += 1
    shape = [(1 + slides) * (nt + 1) + 1] if slides else [1, nt + 1]
    return {**_out(op, "AUC", np.float64(area)),
            **_out(op, "StatPosOut", pos.reshape(shape)),
            **_out(op, "StatNegOut", neg.reshape(shape))}


def _nll_loss(op, env):
    a = op.attrs
    x, label = _x(op, env), _x(op, env, "Label").astype(np.int64)
    classes, ignore = x.shape[1], a.get("ignore_index", -100)
    weight = _wide(_x(op, env, "Weight")) if op.input("Weight") else np.ones(classes)
    keep = label != ignore
    if ((label[keep] < 0) | (label[keep] >= classes)).any():
        raise IndexError("nll_loss: a label outside the classes")
    safe = np.where(keep, label, 0)
    picked = np.take_along_axis(_wide(x), safe[:, None], axis=1)[:, 0]   # [N, ...]
    w = np.where(keep, weight[safe], 0.0)
    losses = -picked * w
    reduction = a.get("reduction", "mean")
    if reduction == "none":
        return {**_out(op, "Out", losses.astype(x.dtype)),
                **_out(op, "Total_weight", np.zeros((), x.dtype))}
    total = w.sum()
    out = losses.sum() / total if reduction == "mean" and total != 0 else losses.sum()
    return {**_out(op, "Out", np.asarray(out, x.dtype)),
            **_out(op, "Total_weight", np.asarray(total, x.dtype))}


def _kldiv_loss(op, env):
    a = op.attrs
    x, t = _wide(_x(op, env)), _wide(_x(op, env, "Target"))
    with np.errstate(all="ignore"):
        if a.get("log_target", False):
            loss = np.exp(t) * (t - x)
        else:
            loss = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - x), 0.0)
            loss = np.where(np.isnan(t), np.nan, loss)
    reduction = a.get("reduction", "mean")
    if reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss = loss.mean() if loss.size else np.nan
    elif reduction == "batchmean":
        loss = loss.sum() / x.shape[0] if x.shape[0] else loss.sum()
    return _out(op, "Loss", np.asarray(loss).astype(_x(op, env).dtype))


REFERENCES.update({"accuracy": _accuracy, "auc": _auc, "nll_loss": _nll_loss,
                   "kldiv_loss": _kldiv_loss})


# --- argsort, masked_select, roll, meshgrid, tril_triu (ops/sort.py, masked_select.py,
# roll.py, meshgrid.py, triangular.py): Paddle 2.6.2's rules, by plain indexing ----------
def _argsort(op, env):
    """Paddle's order: ascending puts NaN last, descending puts it first; equal values
    in the order of their positions."""
    x, a = _x(op, env), op.attrs
    axis, descending = a.get("axis", -1), a.get("descending", False)
    if x.ndim == 0:
        if axis not in (-1, 0):
            raise ValueError(f"axis {axis} for a 0-d X")
        return {**_out(op, "Out", x.copy()), **_out(op, "Indices", np.int64(0))}
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for rank {x.ndim}")
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(int(np.prod(moved.shape[:-1])), x.shape[axis])   # (-1: not at 0)

    def key(row):
        def of(j):
            v = row[j].item()                 # a Python number: -v cannot overflow
            nan = v != v
            if descending:
                return (0 if nan else 1, 0 if nan else -v, j)
            return (1 if nan else 0, 0 if nan else v, j)
        return of
    order = np.array([sorted(range(rows.shape[1]), key=key(r)) for r in rows],
                     np.int64).reshape(rows.shape)
    values = np.take_along_axis(rows, order, axis=1)
    return {**_out(op, "Out", np.moveaxis(values.reshape(moved.shape), -1, axis)),
            **_out(op, "Indices", np.moveaxis(order.reshape(moved.shape), -1, axis))}


def _masked_select(op, env):
    """X and Mask broadcast (numpy's rule); the elements where Mask holds, row-major."""
    x, mask = _x(op, env), _x(op, env, "Mask")
    if mask.dtype != np.bool_:
        raise TypeError(f"Mask is {mask.dtype}, not bool")
    xb, mb = np.broadcast_arrays(x, mask)
    return _out(op, "Y", xb[mb])


def _roll(op, env):
    """Out[..., o, ...] = X[..., (o - shift) mod n, ...] along each axis (an axis named
    twice: the shifts add up); no axis: X rolled flattened."""
    x, a = _x(op, env), op.attrs
    shifts = [int(s) for s in np.ravel(_x(op, env, "ShiftsTensor"))] \
        if op.input("ShiftsTensor") else list(a.get("shifts") or [])
    axes = list(a.get("axis") or [])
    if not axes:
        if len(shifts) != 1:
            raise ValueError("a flattened roll takes one shift")
        flat = x.reshape(-1)
        n = flat.size
        return _out(op, "Out", flat[(np.arange(n) - shifts[0] % max(n, 1)) % max(n, 1)]
                    .reshape(x.shape) if n else x.copy())
    if len(shifts) != len(axes) or not all(-x.ndim <= d < x.ndim for d in axes):
        raise ValueError(f"shifts {shifts} / axis {axes} for rank {x.ndim}")
    out = x
    for s, d in zip(shifts, axes):
        n = x.shape[d]
        if n:
            out = np.take(out, (np.arange(n) - s % n) % n, axis=d)
    return _out(op, "Out", np.array(out, copy=True))


def _meshgrid(op, env):
    """numpy's meshgrid with indexing='ij' (a 0-d input counts as a vector of one)."""
    xs = _xs(op, env)
    if any(x.ndim > 1 for x in xs):
        raise ValueError("meshgrid takes vectors")
    return _out(op, "Out", *np.meshgrid(*[x.reshape(-1) for x in xs], indexing="ij"))


def _tril_triu(op, env):
    """Each matrix of X's last two dims: X[i, j] where j - i <= diagonal (lower) or
    j - i >= diagonal (upper), 0 elsewhere."""
    x, a = _x(op, env), op.attrs
    if x.ndim < 2:
        raise ValueError("tril_triu takes matrices")
    diagonal = a.get("diagonal", 0)
    above = np.arange(x.shape[-1])[None, :] - np.arange(x.shape[-2])[:, None]   # j - i
    keep = above <= diagonal if a.get("lower", True) else above >= diagonal
    return _out(op, "Out", np.where(keep, x, np.zeros((), x.dtype)))


REFERENCES.update({"argsort": _argsort, "masked_select": _masked_select, "roll": _roll,
                   "meshgrid": _meshgrid, "tril_triu": _tril_triu})


# --- trunc, floor, ceil, round, log1p, log2, log10, logit, lgamma, digamma, conj, cumprod
def _round_half_away(w):
    """C's round (Paddle's): halves go away from zero (numpy's np.round goes to even)."""
    return np.sign(w) * np.floor(np.abs(w) + 0.5)


def _logit(op, env):
    """ln(x / (1 - x)), x clipped to [eps, 1 - eps] first when eps > 0."""
    x, eps = _x(op, env), op.attrs.get("eps", 1e-6)
    w = _wide(x)
    if eps > 0:
        w = np.clip(w, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _out(op, "Out", np.log(w / (1 - w)).astype(x.dtype))


def _poles_nan(fn):
    """``fn`` with NaN at 0, -1, -2, ... (the poles of the gamma function's log-derivative)."""
    def at(w):
        return np.where((w <= 0) & (w == np.floor(w)), np.nan, fn(w))
    return at


def _i0(op, env):
    """scipy's i0, but +inf at +-inf (the limit; scipy gives NaN there)."""
    x = _x(op, env, "x")
    w = _wide(x)
    return _out(op, "out", np.where(np.isinf(w), np.inf, scipy.special.i0(w)).astype(x.dtype))


def _polygamma(op, env):
    """scipy's polygamma, with the limits at the ends: 0 at +inf (digamma: +inf), NaN at
    -inf, and at a pole +inf for odd n, NaN for even n (and digamma)."""
    x, n = _x(op, env, "x"), op.attrs["n"]
    w = _wide(x)
    with np.errstate(all="ignore"):
        out = scipy.special.polygamma(n, np.where(np.isfinite(w), w, 1.0))
    pole = (w <= 0) & (w == np.floor(w))
    out = np.where(pole, np.inf if n % 2 == 1 else np.nan, out)
    out = np.where(w == np.inf, np.inf if n == 0 else 0.0,
                   np.where((w == -np.inf) | np.isnan(w), np.nan, out))
    return _out(op, "out", out.astype(x.dtype))


def _cumprod(op, env):
    x = _x(op, env)
    if x.ndim == 0:
        return _out(op, "Out", x.copy())
    return _out(op, "Out", np.cumprod(x, axis=op.attrs["dim"] % x.ndim, dtype=x.dtype))


REFERENCES.update({
    "trunc": _in_wide(np.trunc), "floor": _in_wide(np.floor), "ceil": _in_wide(np.ceil),
    "round": _in_wide(_round_half_away),
    "log1p": _in_wide(np.log1p), "log2": _in_wide(np.log2), "log10": _in_wide(np.log10),
    # C's lgamma (Paddle's) gives +inf at -inf, where scipy's gammaln gives -inf
    "logit": _logit, "lgamma": _in_wide(lambda w: np.where(
        np.isneginf(w), np.inf, scipy.special.gammaln(w))),
    "digamma": _in_wide(_poles_nan(scipy.special.digamma)),
    "conj": lambda op, env: _out(op, "Out", np.conj(_x(op, env)).copy()),
    "cumprod": _cumprod,
    # i0 and polygamma: Paddle's lower-case slots x -> out
    "i0": _i0, "polygamma": _polygamma})


# --- sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, expm1
# (ops/trigonometric.py): numpy's functions in float64; NaN outside a domain, inf at a pole
REFERENCES.update({
    "sin": _in_wide(np.sin), "cos": _in_wide(np.cos), "tan": _in_wide(np.tan),
    "asin": _in_wide(np.arcsin), "acos": _in_wide(np.arccos), "atan": _in_wide(np.arctan),
    "sinh": _in_wide(np.sinh), "cosh": _in_wide(np.cosh), "asinh": _in_wide(np.arcsinh),
    "acosh": _in_wide(np.arccosh), "atanh": _in_wide(np.arctanh),
    "erf": _in_wide(scipy.special.erf), "expm1": _in_wide(np.expm1)})


# --- lerp, atan2, elementwise_fmax/_fmin/_heaviside, nextafter (ops/binary_math.py);
# erfinv, stanh, angle (ops/unary_math.py); i0e, i1, i1e (ops/bessel_and_polygamma.py);
# renorm; reduce_amax/_amin; isclose, allclose, equal_all, is_empty (ops/closeness.py);
# log_loss; assert; as_complex, as_real (ops/complex_view.py) ---------------------------
def _scaled_bessel(fn):
    """scipy's exponentially scaled Bessel function, with its limit 0 at +-inf."""
    def run(op, env):
        x = _x(op, env, "x")
        w = _wide(x)
        with np.errstate(all="ignore"):
            out = np.where(np.isinf(w), 0.0 * np.sign(w), fn(np.where(np.isinf(w), 1.0, w)))
        return _out(op, "out", out.astype(x.dtype))
    return run


def _i1(op, env):
    """scipy's i1, with +-inf at +-inf (the limits)."""
    x = _x(op, env, "x")
    w = _wide(x)
    return _out(op, "out", np.where(np.isinf(w), w, scipy.special.i1(w)).astype(x.dtype))


def _erfinv(op, env):
    """scipy's erfinv: +-inf at +-1, NaN beyond (Paddle 2.6.2 gives inf beyond 1)."""
    x = _x(op, env)
    return _out(op, "Out", scipy.special.erfinv(_wide(x)).astype(x.dtype))


def _heaviside(op, env):
    """Paddle's x == 0 ? y : x > 0 (a NaN x gives 0, where numpy's heaviside gives NaN)."""
    x, y = _x(op, env), _x(op, env, "Y")
    return _out(op, "Out", np.where(x == 0, y, (x > 0).astype(x.dtype)).astype(x.dtype))


def _renorm(op, env):
    """The norms in X's dtype, as Paddle's kernel (a float32 slice holding 1e30 has an
    infinite 2-norm); a NaN norm leaves its slice as it is."""
    x, a = _x(op, env), op.attrs
    axis = a["axis"] % x.ndim
    others = tuple(d for d in range(x.ndim) if d != axis)
    with np.errstate(all="ignore"):
        power_sum = (np.abs(x) ** x.dtype.type(a["p"])).sum(axis=others, keepdims=True)
        norm = _wide(power_sum) ** (1.0 / a["p"])
        scale = np.where(norm > a["max_norm"], a["max_norm"] / (norm + 1e-7), 1.0)
    return _out(op, "Out", (_wide(x) * scale).astype(x.dtype))


def _amax_amin(fn):
    def run(op, env):
        x, a = _x(op, env), op.attrs
        if op.input("AxisTensor"):
            dims = [int(d) for d in np.ravel(_x(op, env, "AxisTensor"))]
        elif op.input("AxisTensorList"):
            dims = [int(np.ravel(t)[0]) for t in _xs(op, env, "AxisTensorList")]
        else:
            dims = list(a["dim"])
        axes = tuple(range(x.ndim)) if a["reduce_all"] or not dims or x.ndim == 0 else \
            tuple(sorted({d % x.ndim for d in dims}))
        return _out(op, "Out", np.asarray(fn(x, axis=axes, keepdims=a["keep_dim"]))
                    .astype(x.dtype))
    return run


def _close(whole):
    def run(op, env):
        x, y, a = _wide(_x(op, env, "Input")), _wide(_x(op, env, "Other")), op.attrs
        rtol = float(np.ravel(_x(op, env, "Rtol"))[0]) if op.input("Rtol") else float(a["rtol"])
        atol = float(np.ravel(_x(op, env, "Atol"))[0]) if op.input("Atol") else float(a["atol"])
        with np.errstate(invalid="ignore"):
            close = (x == y) | (np.abs(x - y) <= atol + rtol * np.abs(y))
        if a["equal_nan"]:
            close |= np.isnan(x) & np.isnan(y)
        return _out(op, "Out", np.asarray(close.all()) if whole else close)
    return run


def _equal_all(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    return _out(op, "Out", np.asarray(x.shape == y.shape and bool((x == y).all())))


def _log_loss(op, env):
    p, label = _x(op, env, "Predicted"), _x(op, env, "Labels")
    w, lw, eps = _wide(p), _wide(label), op.attrs["epsilon"]
    with np.errstate(all="ignore"):
        loss = -lw * np.log(w + eps) - (1 - lw) * np.log(1 - w + eps)
    return _out(op, "Loss", loss.astype(p.dtype))


def _assert(op, env):
    if not bool(np.ravel(_x(op, env, "Cond"))[0]):
        raise ValueError("assert: the condition is false")
    return {}


def _as_complex(op, env):
    x = np.ascontiguousarray(_x(op, env))
    return _out(op, "Out", x.view(np.complex64 if x.dtype == np.float32 else np.complex128)
                .reshape(x.shape[:-1]))


def _as_real(op, env):
    x = np.asarray(_x(op, env))
    return _out(op, "Out", np.stack([x.real, x.imag], axis=-1))


REFERENCES.update({
    "lerp": lambda op, env: _out(op, "Out", (_wide(_x(op, env)) + _wide(_x(op, env, "Weight"))
                                             * (_wide(_x(op, env, "Y")) - _wide(_x(op, env))))
                                 .astype(_x(op, env).dtype)),
    "atan2": lambda op, env: _out(op, "Out", np.arctan2(
        _wide(_x(op, env, "X1")), _wide(_x(op, env, "X2"))).astype(
        _x(op, env, "X1").dtype if _x(op, env, "X1").dtype.kind == "f" else np.float64)),
    "elementwise_fmax": lambda op, env: _out(op, "Out", np.fmax(_x(op, env), _x(op, env, "Y"))),
    "elementwise_fmin": lambda op, env: _out(op, "Out", np.fmin(_x(op, env), _x(op, env, "Y"))),
    "elementwise_heaviside": _heaviside,
    "nextafter": lambda op, env: _out(op, "out", np.nextafter(_x(op, env, "x"),
                                                              _x(op, env, "y"))),
    "erfinv": _erfinv,
    "stanh": lambda op, env: _out(op, "Out", (op.attrs["scale_b"] * np.tanh(
        op.attrs["scale_a"] * _wide(_x(op, env)))).astype(_x(op, env).dtype)),
    "angle": lambda op, env: _out(op, "Out", np.where(_x(op, env) < 0, np.pi, 0.0)
                                  .astype(_x(op, env).dtype)),
    "i0e": _scaled_bessel(scipy.special.i0e), "i1": _i1,
    "i1e": _scaled_bessel(scipy.special.i1e),
    "renorm": _renorm, "reduce_amax": _amax_amin(np.max), "reduce_amin": _amax_amin(np.min),
    "isclose": _close(False), "allclose": _close(True), "equal_all": _equal_all,
    "is_empty": lambda op, env: _out(op, "Out", np.asarray(_x(op, env).size == 0)),
    "log_loss": _log_loss, "assert": _assert, "as_complex": _as_complex, "as_real": _as_real,
})

# --- greater_equal, less_equal (ops/elementwise.py), reduce_all/_any (ops/bool_reduce.py),
# isnan_v2/isinf_v2/isfinite_v2 (ops/finite_checks.py), size (ops/size.py), bitwise_*
# (ops/bitwise.py), sequence_mask (ops/sequence_mask.py) ---------------------------------
def _bool_reduce(fn):
    """np.all / np.any over dim (AxisTensor's values, or AxisTensorList's, if given); all
    of X when reduce_all or dim is empty."""
    def run(op, env):
        x, a = _x(op, env), op.attrs
        if op.input("AxisTensor"):
            dims = [int(d) for d in np.ravel(_x(op, env, "AxisTensor"))]
        elif op.input("AxisTensorList"):
            dims = [int(np.ravel(t)[0]) for t in _xs(op, env, "AxisTensorList")]
        else:
            dims = [int(d) for d in a.get("dim", [0])]
        if a.get("reduce_all") or not dims or x.ndim == 0:
            axes = None
        else:
            axes = tuple(sorted({d % x.ndim for d in dims}))
        return _out(op, "Out", np.asarray(fn(x != 0, axis=axes,
                                             keepdims=bool(a.get("keep_dim")))))
    return run


def _bitwise(fn):
    def run(op, env):
        x, y = _x(op, env, "X"), _x(op, env, "Y")
        if x.dtype != y.dtype or x.dtype.kind not in "biu":
            raise TypeError(f"X {x.dtype} and Y {y.dtype}: one bool or integer dtype")
        return _out(op, "Out", np.asarray(fn(x, y)))
    return run


def _bitwise_not(op, env):
    x = _x(op, env)
    if x.dtype.kind not in "biu":
        raise TypeError(f"X {x.dtype}: bool or integer")
    return _out(op, "Out", np.asarray(np.invert(x)))      # numpy's invert of bool is not


def _sequence_mask(op, env):
    """Y[..., j] = j < X[...] for j < maxlen (MaxLenTensor's value if given; negative:
    max(X)), cast to out_dtype."""
    x = _x(op, env)
    if x.dtype.kind not in "iu":
        raise TypeError(f"X {x.dtype}: integer lengths")
    maxlen = int(np.ravel(_x(op, env, "MaxLenTensor"))[0]) if op.input("MaxLenTensor") \
        else op.attrs.get("maxlen", -1)
    if maxlen < 0:
        maxlen = int(x.max()) if x.size else 0
    mask = np.arange(maxlen)[(None,) * x.ndim] < x[..., None]
    return _out(op, "Y", mask.astype(NUMPY_DTYPE[op.attrs.get("out_dtype", INT64)]))


def _finite_check(fn):
    def run(op, env):
        x = _x(op, env)
        if x.dtype.kind not in "iuf":
            raise TypeError(f"X {x.dtype}: a number type")
        return _out(op, "Out", np.asarray(fn(x)))
    return run


REFERENCES.update({
    "greater_equal": _binary(np.greater_equal), "less_equal": _binary(np.less_equal),
    "reduce_all": _bool_reduce(np.all), "reduce_any": _bool_reduce(np.any),
    "isnan_v2": _finite_check(np.isnan), "isinf_v2": _finite_check(np.isinf),
    "isfinite_v2": _finite_check(np.isfinite),
    "size": lambda op, env: _out(op, "Out", np.int64(_x(op, env, "Input").size)),
    "bitwise_and": _bitwise(np.bitwise_and), "bitwise_or": _bitwise(np.bitwise_or),
    "bitwise_xor": _bitwise(np.bitwise_xor), "bitwise_not": _bitwise_not,
    "sequence_mask": _sequence_mask, "logical_xor": _logical(np.logical_xor)})


# --- pool3d, max_pool3d_with_index (ops/pool.py), unpool, unpool3d (ops/unpool.py) ---------
def _pool3d(op, env, with_index):
    """3-D pooling, window by window (the 2-D ``_pool``'s rules, over D, H, W)."""
    x, a = _x(op, env), op.attrs
    last = not with_index and a.get("data_format", "NCDHW") == "NDHWC"
    if x.ndim != 5 or x.dtype not in (np.float32, np.float64):
        raise ValueError("pool3d takes 5-D float32/float64")
    if last:
        x = x.transpose(0, 4, 1, 2, 3)
    dhw = x.shape[2:]
    k, s, p = list(a.get("ksize")), list(a.get("strides")), list(a.get("paddings"))
    adaptive, ceil = a.get("adaptive"), not with_index and a.get("ceil_mode")
    algorithm = "EXPLICIT" if with_index else a.get("padding_algorithm", "EXPLICIT")
    if a.get("global_pooling"):
        k, s, p, adaptive, ceil, algorithm = list(dhw), [1] * 3, [0] * 3, False, False, \
            "EXPLICIT"
    if algorithm == "VALID":
        p = [0] * 3
    elif algorithm == "SAME":
        p = []
        for n, kk, ss in zip(dhw, k, s):
            total = max((-(-n // ss) - 1) * ss + kk - n, 0)
            p += [total // 2, total - total // 2]
    if len(p) == 3:
        p = [v for v in p for _ in (0, 1)]
    spans = [_pool_windows(dhw[i], k[i], s[i], p[2 * i], p[2 * i + 1], ceil, adaptive, k[i])
             for i in range(3)]
    is_max = with_index or a.get("pooling_type", "max") == "max"
    exclusive = adaptive or a.get("exclusive", True)
    out = np.empty(x.shape[:2] + tuple(len(sp) for sp in spans), x.dtype)
    mask = np.empty(out.shape, np.int32)
    for pos in np.ndindex(*out.shape[2:]):
        (d0, d1), (h0, h1), (w0, w1) = (spans[i][pos[i]] for i in range(3))
        window = _wide(x[:, :, d0:d1, h0:h1, w0:w1])
        flat = window.reshape(window.shape[:2] + (-1,))
        if is_max:
            out[(slice(None), slice(None)) + pos] = flat.max(axis=2)
            dd, hh, ww = np.unravel_index(flat.argmax(2), window.shape[2:])
            mask[(slice(None), slice(None)) + pos] = ((d0 + dd) * dhw[1] + h0 + hh) * dhw[2] \
                + w0 + ww
        else:   # not exclusive: the window as it lies in the padded input (Paddle)
            size = 1
            for i in range(3):
                start = pos[i] * s[i] - p[2 * i]
                size *= (spans[i][pos[i]][1] - spans[i][pos[i]][0]) if exclusive else \
                    min(start + k[i], dhw[i] + p[2 * i + 1]) - start
            out[(slice(None), slice(None)) + pos] = flat.sum(axis=2) / size
    if last:
        out = out.transpose(0, 2, 3, 4, 1)
    if with_index:
        return {**_out(op, "Out", out), **_out(op, "Mask", mask)}
    return _out(op, "Out", out)


def _unpool_ref(op, env):
    """Zeros of output_size, each X value at its Indices position in its plane (volume)."""
    x, ids = _x(op, env), _x(op, env, "Indices")
    size = list(op.attrs.get("output_size"))
    if x.shape != ids.shape or x.ndim != 2 + len(size):
        raise ValueError("Indices must have X's shape")
    n, c = x.shape[:2]
    out = np.zeros((n * c, int(np.prod(size))), x.dtype)
    flat_x, flat_ids = x.reshape(n * c, -1), ids.reshape(n * c, -1)
    if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= out.shape[1]):
        raise IndexError("an index outside Out's plane")
    for row in range(n * c):
        out[row, flat_ids[row]] = flat_x[row]       # a repeated index: the last one stays
    return _out(op, "Out", out.reshape((n, c, *size)))


REFERENCES.update({
    "pool3d": lambda op, env: _pool3d(op, env, False),
    "max_pool3d_with_index": lambda op, env: _pool3d(op, env, True),
    "unpool": _unpool_ref, "unpool3d": _unpool_ref})


# --- unique, unique_consecutive, where_index, searchsorted, kthvalue, mode, nanmedian,
# cummax, cummin, logcumsumexp (ops/unique.py, searchsorted.py, order_statistics.py,
# cum_extrema.py, logcumsumexp.py): plain loops over Python numbers --------------------------
def _index_type(op):
    return {2: np.int32, 3: np.int64}[op.attrs.get("dtype", 3)]


def _present(op, **values):
    """The outputs among ``values`` that the op writes (its optional slots may be absent)."""
    out = {}
    for slot, value in values.items():
        if op.output(slot):
            out.update(_out(op, slot, value))
    return out


def _unique_ref(op, env):
    """Distinct values (slices along one axis) by sorting Python tuples; NaN: one entry,
    last (is_sorted=False: in the order of first appearance)."""
    x, axes = _x(op, env), list(op.attrs.get("axis") or [])
    it = _index_type(op)
    axis = axes[0] % x.ndim if axes else None
    sorted_ = op.attrs.get("is_sorted", False)
    items = list(x.reshape(-1)) if axis is None or not sorted_ else \
        [np.take(x, i, axis=axis) for i in range(x.shape[axis])]

    def key(v):
        vals = np.asarray(v, np.float64).reshape(-1)
        return tuple((1, 0.0) if np.isnan(e) else (0, float(e)) for e in vals)
    keys = [key(v) for v in items]
    distinct = sorted(set(keys)) if sorted_ else list(dict.fromkeys(keys))
    where = {k: i for i, k in enumerate(distinct)}
    first = [keys.index(k) for k in distinct]
    inverse = [where[k] for k in keys]
    counts = [keys.count(k) for k in distinct]
    if axis is None or not sorted_:
        out = np.array([items[i] for i in first], x.dtype)
    else:
        out = np.take(x, np.array(first, np.int64), axis=axis)
    return _present(op, Out=out, Indices=np.array(first, it), Index=np.array(inverse, it),
                    Counts=np.array(counts, it))


def _unique_consecutive_ref(op, env):
    x, axes = _x(op, env), list(op.attrs.get("axis") or [])
    it = _index_type(op)
    if axes:
        axis = axes[0] % x.ndim
        items = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    else:
        axis, items = 0, list(x.reshape(-1))
    starts, inverse = [], []
    for i, v in enumerate(items):
        if i == 0 or np.any(np.asarray(v) != np.asarray(items[i - 1])):   # NaN != NaN
            starts.append(i)
        inverse.append(len(starts) - 1)
    counts = np.diff(starts + [len(items)])
    source = x if axes else x.reshape(-1)
    return _present(op, Out=np.take(source, np.array(starts, np.int64), axis=axis),
                    Index=np.array(inverse, it), Counts=counts.astype(it))


def _where_index_ref(op, env):
    c = _x(op, env, "Condition")
    if c.ndim == 0:
        raise ValueError("a 0-d Condition")
    rows = [list(ix) for ix in np.ndindex(*c.shape) if c[ix] != 0]
    return _out(op, "Out", np.array(rows, np.int64).reshape(len(rows), c.ndim))


def _searchsorted_ref(op, env):
    seq, values = _x(op, env, "SortedSequence"), _x(op, env, "Values")
    right = op.attrs.get("right", False)
    if seq.dtype != values.dtype:
        raise TypeError("one element type")
    if seq.ndim > 1 and seq.shape[:-1] != values.shape[:-1]:
        raise ValueError("leading dims differ")
    for ix in np.ndindex(*seq.shape[:-1]):
        keys = [(1, 0.0) if e != e else (0, float(e)) for e in seq[ix]]
        if keys != sorted(keys):
            raise ValueError("an unsorted sequence")

    def position(row, v):        # count the elements that go before v (NaN: the largest)
        def key(e):
            return (1, 0.0) if e != e else (0, float(e))
        return sum(1 for e in row if (key(e) <= key(v) if right else key(e) < key(v)))
    out = np.zeros(values.shape, np.int32 if op.attrs.get("out_int32") else np.int64)
    for ix in np.ndindex(*values.shape):
        row = seq if seq.ndim == 1 else seq[ix[:-1]]
        out[ix] = position(list(row), values[ix])
    return _out(op, "Out", out)


def _sorted_positions(row):
    """Positions of ``row`` ascending, NaN last, ties by position."""
    return sorted(range(len(row)), key=lambda j: ((1, 0.0) if row[j] != row[j]
                                                   else (0, float(row[j])), j))


def _one_axis_ref(pick):
    def ref(op, env):
        x, a = _x(op, env), op.attrs
        axis = a.get("axis", -1) % max(x.ndim, 1)
        moved = np.moveaxis(x.reshape(1) if x.ndim == 0 else x, axis, -1)
        outs, idx = np.zeros(moved.shape[:-1], x.dtype), np.zeros(moved.shape[:-1], np.int64)
        for ix in np.ndindex(*moved.shape[:-1]):
            row = list(moved[ix])
            if not row:
                raise ValueError("an empty axis")
            j = pick(row, _sorted_positions(row), a)
            outs[ix], idx[ix] = row[j], j
        if a.get("keepdim", False) and x.ndim:
            outs, idx = np.expand_dims(outs, axis), np.expand_dims(idx, axis)
        return {**_out(op, "Out", outs), **_out(op, "Indices", idx)}
    return ref


def _kth_pick(row, order, a):
    if not 1 <= a.get("k", 1) <= len(row):
        raise ValueError("k out of range")
    return order[a.get("k", 1) - 1]


def _mode_pick(row, order, a):
    """The most frequent value (the smallest of equally frequent; NaN never repeats), at
    its last position."""
    counts = {}
    for j in order:
        k = ("nan", j) if row[j] != row[j] else row[j]
        counts[k] = counts.get(k, 0) + 1
    best = max(counts.values())
    value = next(row[j] for j in order
                 if row[j] == row[j] and counts[row[j]] == best or row[j] != row[j] and best == 1)
    if value != value:
        return next(j for j in order if row[j] != row[j])
    return max(j for j in range(len(row)) if row[j] == value)


def _nanmedian_ref(op, env):
    x, a = _x(op, env), op.attrs
    axes = sorted({d % max(x.ndim, 1) for d in (a.get("axis") or range(x.ndim))})
    axes = [d for d in axes if d < x.ndim]
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + axes).reshape(int(np.prod([x.shape[d] for d in kept])),
                                                 int(np.prod([x.shape[d] for d in axes])))
    outs, index = np.zeros(rows.shape[0], x.dtype), []
    for r, row in enumerate(rows):
        row = list(row)
        order = [j for j in _sorted_positions(row) if row[j] == row[j]]
        if not order:
            outs[r] = np.nan
            index += [-1, -1]
            continue
        lo, hi = order[(len(order) - 1) // 2], order[len(order) // 2]
        outs[r] = row[lo] if lo == hi else (np.float64(row[lo]) + np.float64(row[hi])) / 2
        index += [lo, hi]
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)] if a.get("keepdim", True) \
        else [x.shape[d] for d in kept]
    return {**_out(op, "Out", outs.reshape(shape)),
            **_out(op, "MedianIndex", np.array(index, np.int64))}


def _cum_extreme_ref(largest):
    def ref(op, env):
        x = _x(op, env, "x")
        axis = op.attrs.get("axis", -1) % max(x.ndim, 1)
        moved = np.moveaxis(x.reshape(1) if x.ndim == 0 else x, axis, -1)
        out, idx = np.empty_like(moved), np.zeros(moved.shape, _index_type(op))
        for ix in np.ndindex(*moved.shape[:-1]):
            best, where = None, 0
            for j, v in enumerate(moved[ix]):
                if best is None or v != v or (best == best and (v >= best if largest
                                                                else v <= best)):
                    best, where = v, j
                out[ix + (j,)], idx[ix + (j,)] = best, where
        def back(m):
            return np.moveaxis(m, -1, axis).reshape(x.shape)
        return {**_out(op, "out", back(out)), **_out(op, "indices", back(idx))}
    return ref


def _logcumsumexp_ref(op, env):
    """log(cumsum(exp(x))) in float64 with the running maximum taken out."""
    x, a = _x(op, env), op.attrs
    w = x.reshape(-1) if a.get("flatten", False) else (x.reshape(1) if x.ndim == 0 else x)
    axis = a.get("axis", -1) % w.ndim
    moved = np.moveaxis(w.astype(np.float64), axis, -1)
    out = np.empty_like(moved)
    for ix in np.ndindex(*moved.shape[:-1]):
        row = moved[ix][::-1] if a.get("reverse", False) else moved[ix]
        sums = []
        for j in range(len(row)):
            part = row[:j] if a.get("exclusive", False) else row[:j + 1]
            m = np.max(part) if len(part) else -np.inf
            with np.errstate(invalid="ignore", divide="ignore"):
                # (an infinite maximum is the sum's: exp(inf - inf) would make it NaN)
                sums.append(m if np.isinf(m) else m + np.log(np.sum(np.exp(part - m))))
        out[ix] = sums[::-1] if a.get("reverse", False) else sums
    out = np.moveaxis(out, -1, axis).astype(x.dtype)
    return _out(op, "Out", out.reshape(-1) if a.get("flatten", False) else
                out.reshape(x.shape))


REFERENCES.update({
    "unique": _unique_ref, "unique_consecutive": _unique_consecutive_ref,
    "where_index": _where_index_ref, "searchsorted": _searchsorted_ref,
    "kthvalue": _one_axis_ref(_kth_pick), "mode": _one_axis_ref(_mode_pick),
    "nanmedian": _nanmedian_ref, "cummax": _cum_extreme_ref(True),
    "cummin": _cum_extreme_ref(False), "logcumsumexp": _logcumsumexp_ref})


# --- svd, qr, eigh, eigvalsh, eig, eigvals, matrix_rank, lstsq (spectral linear algebra) ---
# scipy.linalg's LAPACK wrappers (the routines Paddle calls, so the same signs), one matrix
# at a time; scipy refuses NaN and infinity (check_finite), as the ops do.
def _per_matrix(x, fn):
    """fn applied to each matrix of x (float64): a list of results per output, stacked."""
    if x.ndim < 2:
        raise ValueError("a batch of matrices has rank >= 2")
    batch = x.shape[:-2]
    results = [fn(np.asarray(x[i], np.float64)) for i in np.ndindex(*batch)]
    return [np.stack([r[j] for r in results]).reshape(batch + np.shape(results[0][j]))
            for j in range(len(results[0]))]


def _svd_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x = _x(op, env)
    u, s, vh = _per_matrix(x, lambda a: scipy.linalg.svd(
        a, full_matrices=op.attrs.get("full_matrices", False), lapack_driver="gesdd"))
    return {**_out(op, "U", u.astype(x.dtype)), **_out(op, "S", s.astype(x.dtype)),
            **_out(op, "VH", vh.astype(x.dtype))}


def _qr_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x, mode = _x(op, env), op.attrs.get("mode", "reduced")
    q, r = _per_matrix(x, lambda a: scipy.linalg.qr(
        a, mode="full" if mode == "complete" else "economic"))
    q = np.zeros((0,)) if mode == "r" else q
    return {**_out(op, "Q", q.astype(x.dtype)), **_out(op, "R", r.astype(x.dtype))}


def _eigh_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x = _x(op, env)
    lower = op.attrs.get("UPLO", "L") == "L"
    w, v = _per_matrix(x, lambda a: scipy.linalg.eigh(a, lower=lower, driver="evd"))
    return {**_out(op, "Eigenvalues", w.astype(x.dtype)),
            **_out(op, "Eigenvectors", v.astype(x.dtype))}


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _eig_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x = _x(op, env)
    w, v = _per_matrix(x, scipy.linalg.eig)
    return {**_out(op, "Eigenvalues", w.astype(_COMPLEX_OF[x.dtype])),
            **_out(op, "Eigenvectors", v.astype(_COMPLEX_OF[x.dtype]))}


def _eigvals_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x = _x(op, env)
    (w,) = _per_matrix(x, lambda a: (scipy.linalg.eigvals(a),))
    return _out(op, "Out", w.astype(_COMPLEX_OF[x.dtype]))


def _matrix_rank_ref(op, env):
    """Singular values (|eigenvalues| with hermitian) above the tolerance, counted."""
    import scipy.linalg  # noqa: PLC0415
    x, a = _x(op, env), op.attrs
    if a.get("hermitian"):
        (s,) = _per_matrix(x, lambda m: (np.abs(scipy.linalg.eigvalsh(m, lower=True)),))
    else:
        (s,) = _per_matrix(x, lambda m: (scipy.linalg.svdvals(m),))
    if op.input("TolTensor"):
        tol = np.asarray(_x(op, env, "TolTensor"), np.float64)
    elif a.get("use_default_tol", True):
        tol = np.finfo(x.dtype).eps * max(x.shape[-2:]) * s.max(axis=-1, initial=0.0)
    else:
        tol = np.float64(a.get("tol", 0.0))
    return _out(op, "Out", (s > np.asarray(tol)[..., None]).sum(axis=-1).astype(np.int32))


def _lstsq_ref(op, env):
    """The least-norm least-squares solution through the pseudo-inverse (not lstsq)."""
    x, y, a = _x(op, env), _x(op, env, "Y"), op.attrs
    m, n = x.shape[-2:]
    rcond = a.get("rcond", -1.0)
    rcond = np.finfo(x.dtype).eps * max(m, n) if rcond < 0 else rcond
    wide = x.astype(np.float64)
    solution = np.linalg.pinv(wide, rcond=rcond) @ y
    s = np.linalg.svd(wide, compute_uv=False)
    rank = (s > rcond * s.max(axis=-1, keepdims=True)).sum(axis=-1).astype(np.int32)
    residuals = ((wide @ solution - y) ** 2).sum(axis=-2) if m > n else np.zeros((0,))
    values = s if a.get("driver", "gels") in ("gelsd", "gelss") else np.zeros((0,))
    out = {**_out(op, "Solution", solution.astype(x.dtype)), **_out(op, "Rank", rank),
           **_out(op, "SingularValues", values.astype(x.dtype))}
    if op.output("Residuals"):                   # a dispensable output
        out.update(_out(op, "Residuals", np.asarray(residuals).astype(x.dtype)))
    return out


REFERENCES.update({"svd": _svd_ref, "qr": _qr_ref, "eigh": _eigh_ref, "eigvalsh": _eigh_ref,
                   "eig": _eig_ref, "eigvals": _eigvals_ref, "matrix_rank": _matrix_rank_ref,
                   "lstsq": _lstsq_ref})

# --- cholesky, lu, lu_unpack, determinant, solve, triangular_solve, cholesky_solve
# (ops/triangular_factor.py, ops/linear_solve.py): numpy.linalg and scipy.linalg, one
# matrix at a time after broadcasting the batch dims -----------------------------------------
def _broadcast_pair(a, b):
    """a [.., n, n] and b [.., n, k] with their batch dims broadcast, as float64."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (np.broadcast_to(a, batch + a.shape[-2:]).astype(np.float64),
            np.broadcast_to(b, batch + b.shape[-2:]).astype(np.float64), batch)


def _cholesky_ref(op, env):
    x = _x(op, env)
    if op.attrs.get("upper", False):
        out = np.swapaxes(np.linalg.cholesky(np.swapaxes(x.astype(np.float64), -1, -2)), -1, -2)
    else:
        out = np.linalg.cholesky(x.astype(np.float64))
    return _out(op, "Out", out.astype(x.dtype))


def _lu_ref(op, env):
    import scipy.linalg  # noqa: PLC0415
    x = _x(op, env)
    if not op.attrs.get("pivots", True):         # Doolittle without row swaps
        packed = x.astype(np.float64).copy()
        for a in packed.reshape((-1,) + x.shape[-2:]):
            for c in range(min(a.shape)):
                a[c + 1:, c] /= a[c, c]
                a[c + 1:, c + 1:] -= np.outer(a[c + 1:, c], a[c, c + 1:])
        k = min(x.shape[-2:])
        piv = np.broadcast_to(np.arange(1, k + 1, dtype=np.int32), x.shape[:-2] + (k,))
        info = np.zeros(x.shape[:-2] or (1,), np.int32)
    else:
        packed, piv, info = _per_matrix(x, lambda a: scipy.linalg.lapack.dgetrf(a))
        piv, info = (piv + 1).astype(np.int32), np.int32(info).reshape(x.shape[:-2] or (1,))
    return {**_out(op, "Out", packed.astype(x.dtype)), **_out(op, "Pivots", piv),
            **_out(op, "Infos", info)}


def _lu_unpack_ref(op, env):
    x, piv = _x(op, env), _x(op, env, "Pivots")
    m, n = x.shape[-2:]
    k = min(m, n)
    lower = np.tril(x[..., :k], -1) + np.eye(m, k, dtype=x.dtype)
    upper = np.triu(x[..., :k, :])
    pmat = np.zeros(x.shape[:-2] + (m, m), x.dtype)
    for i in np.ndindex(*x.shape[:-2]):
        rows = list(range(m))                   # P^T A = L U: row r of L U is row rows[r]
        for c in range(k):
            p = int(piv[i + (c,)]) - 1
            rows[c], rows[p] = rows[p], rows[c]
        pmat[i][rows, range(m)] = 1
    empty = np.zeros((0,), x.dtype)
    data, pivots = op.attrs.get("unpack_ludata", True), op.attrs.get("unpack_pivots", True)
    return {**_out(op, "Pmat", pmat if pivots else empty),
            **_out(op, "L", lower if data else empty), **_out(op, "U", upper if data else empty)}


def _determinant_ref(op, env):
    x = _x(op, env, "Input")
    return _out(op, "Out", np.asarray(np.linalg.det(x.astype(np.float64))).astype(x.dtype))


def _solve_ref(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    vector = y.ndim == 1
    a, b, _ = _broadcast_pair(x, y[:, None] if vector else y)
    out = np.linalg.solve(a, b)
    return _out(op, "Out", (out[..., 0] if vector else out).astype(x.dtype))


def _substitute(t, b, lower: bool, unit: bool):
    """x with T x = b for each column of b, row by row (T's other triangle ignored); a
    zero on T's diagonal gives inf or NaN, as Paddle's triangular_solve."""
    n = t.shape[0]
    x = np.zeros(b.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in (range(n) if lower else range(n - 1, -1, -1)):
            others = range(i) if lower else range(i + 1, n)
            s = b[i].copy()
            for j in others:
                s = s - t[i, j] * x[j]
            x[i] = s if unit else s / t[i, i]
    return x


def _triangular_solve_ref(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    a, b, batch = _broadcast_pair(x, y)
    upper, trans = op.attrs.get("upper", True), op.attrs.get("transpose", False)
    out = np.empty(b.shape)
    for i in np.ndindex(*batch):
        t = a[i].T if trans else a[i]
        out[i] = _substitute(t, b[i], lower=upper == trans,
                             unit=op.attrs.get("unitriangular", False))
    return _out(op, "Out", out.astype(x.dtype))


def _cholesky_solve_ref(op, env):
    x, y = _x(op, env), _x(op, env, "Y")           # X: right-hand sides, Y: the factor
    factor, b, batch = _broadcast_pair(y, x)
    upper = op.attrs.get("upper", False)
    out = np.empty(b.shape)
    for i in np.ndindex(*batch):
        low = factor[i].T if upper else factor[i]   # A = low low^T
        out[i] = _substitute(low.T, _substitute(low, b[i], True, False), False, False)
    return _out(op, "Out", out.astype(x.dtype))


REFERENCES.update({"cholesky": _cholesky_ref, "lu": _lu_ref, "lu_unpack": _lu_unpack_ref,
                   "determinant": _determinant_ref, "solve": _solve_ref,
                   "triangular_solve": _triangular_solve_ref,
                   "cholesky_solve": _cholesky_solve_ref})

# --- matrix_power, multi_dot, mv, dot, addmm, kron, cross, dist, frobenius_norm, diagonal,
# trace, diag_v2, eye, histogram, bincount (ops/matrix_products.py, kron_and_cross.py,
# distances.py, diagonals.py, histogram.py): numpy's own linear algebra ------------------
def _mv_ref(op, env):
    x, vec = _x(op, env), _x(op, env, "Vec")
    if x.ndim != 2 or vec.ndim != 1 or x.shape[1] != vec.shape[0]:
        raise ValueError(f"mv of {x.shape} and {vec.shape}")
    return _out(op, "Out", (x @ vec).astype(x.dtype))


def _dot_ref(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    if x.shape != y.shape or x.ndim not in (1, 2):
        raise ValueError(f"dot of {x.shape} and {y.shape}")
    return _out(op, "Out", np.asarray((x * y).sum(axis=-1)).astype(x.dtype))


def _multi_dot_ref(op, env):
    xs = _xs(op, env)
    out = np.linalg.multi_dot([x.astype(np.float64) for x in xs])
    return _out(op, "Out", np.asarray(out).astype(xs[0].dtype))


def _matrix_power_ref(op, env):
    x = _x(op, env)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power of {x.shape}")
    return _out(op, "Out", np.linalg.matrix_power(x.astype(np.float64), op.attrs["n"])
                .astype(x.dtype))


def _addmm_ref(op, env):
    inp, x, y, a = _x(op, env, "Input"), _x(op, env), _x(op, env, "Y"), op.attrs
    if x.ndim != 2 or y.ndim != 2 or inp.ndim > 2:
        raise ValueError("addmm takes matrices")
    product = x.astype(np.float64) @ y
    out = a["Beta"] * np.broadcast_to(inp, product.shape) + a["Alpha"] * product
    return _out(op, "Out", out.astype(x.dtype))


def _kron_ref(op, env):
    x, y = _x(op, env), _x(op, env, "Y")
    return _out(op, "Out", np.kron(x, y).astype(x.dtype))


def _cross_ref(op, env):
    x, y, dim = _x(op, env), _x(op, env, "Y"), op.attrs["dim"]
    if x.shape != y.shape:
        raise ValueError(f"cross of {x.shape} and {y.shape}")
    axis = x.shape.index(3) if dim == 9 else dim     # 9: the first axis of size 3
    if x.shape[axis] != 3:
        raise ValueError(f"cross along an axis of size {x.shape[axis]}")
    return _out(op, "Out", np.cross(x, y, axis=axis).astype(x.dtype))


def _dist_ref(op, env):
    """In X's dtype, as Paddle computes it (a float32 sum of squares can overflow)."""
    x, y, p = _x(op, env), _x(op, env, "Y"), op.attrs["p"]
    t = x.dtype.type
    with np.errstate(all="ignore"):
        d = np.abs((x - y).ravel())
        if d.size == 0:
            out = 0.0
        elif p == 0:
            out = np.count_nonzero(d)
        elif np.isinf(p):
            out = d.max() if p > 0 else d.min()
        else:
            out = (d ** t(p)).sum() ** t(1.0 / p)
    return _out(op, "Out", np.asarray(out).astype(x.dtype))


def _frobenius_norm_ref(op, env):
    x, a = _x(op, env), op.attrs
    dims = list(a["dim"] or [])
    axes = tuple(range(x.ndim)) if a["reduce_all"] or not dims or len(dims) == x.ndim \
        else tuple(d % x.ndim for d in dims)
    with np.errstate(all="ignore"):       # in X's dtype, as Paddle computes it
        out = np.sqrt((x * x).sum(axis=axes, keepdims=a["keep_dim"]))
    return _out(op, "Out", np.asarray(out).astype(x.dtype))


def _diagonal_of(x, offset, axis1, axis2):
    """x's diagonals at ``offset`` on (axis1, axis2), last, by plain indexing (numpy's own
    trace and diagonal crash on an offset near 2**31)."""
    if x.ndim < 2 or axis1 % x.ndim == axis2 % x.ndim:
        raise ValueError("a diagonal needs two different axes")
    moved = np.moveaxis(x, (axis1, axis2), (-2, -1))
    rows, cols = moved.shape[-2:]
    start_r, start_c = max(0, -offset), max(0, offset)
    n = max(0, min(rows - start_r, cols - start_c))
    i = np.arange(n)
    return moved[..., start_r + i, start_c + i]


def _diagonal_ref(op, env):
    x, a = _x(op, env, "Input"), op.attrs
    return _out(op, "Out", _diagonal_of(x, a["offset"], a["axis1"], a["axis2"]).copy())


def _trace_ref(op, env):
    x, a = _x(op, env, "Input"), op.attrs
    return _out(op, "Out", np.asarray(_diagonal_of(x, a["offset"], a["axis1"], a["axis2"])
                                      .sum(axis=-1)).astype(x.dtype))


def _diag_v2_ref(op, env):
    x, a = _x(op, env), op.attrs
    if x.ndim == 2:
        return _out(op, "Out", _diagonal_of(x, a["offset"], 0, 1).copy())
    v = x.reshape(-1)
    n = v.size + abs(a["offset"])
    out = np.full((n, n), a["padding_value"]).astype(x.dtype)
    mask = np.eye(n, k=a["offset"], dtype=bool)
    out[mask] = v
    return _out(op, "Out", out)


def _eye_ref(op, env):
    a = op.attrs
    cols = a["num_rows"] if a["num_columns"] == -1 else a["num_columns"]
    from paddle_nb.core import dtypes   # noqa: PLC0415
    return _out(op, "Out", np.eye(a["num_rows"], cols,
                                  dtype=dtypes.to_numpy(dtypes.to_code(a["dtype"]))))


def _histogram_ref(op, env):
    """Paddle's rule over [min, max] (X's range where they are equal, widened by 1 if that
    is one value): bin = (x - min) * bins / (max - min) in X's type (integer division for
    ints, in int64), max itself in the last bin, values outside dropped."""
    x, a = _x(op, env).ravel(), op.attrs
    bins, lo, hi = a["bins"], a["min"], a["max"]
    if bins < 1 or hi < lo:
        raise ValueError(f"bins {bins}, range [{lo}, {hi}]")
    if lo == hi and x.size:
        lo, hi = x.min().item(), x.max().item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError("an infinite range")
    integer = x.dtype.kind in "iu"
    t = np.int64 if integer else x.dtype.type
    v = x.astype(t)
    kept = v[(v >= t(lo)) & (v <= t(hi))]
    with np.errstate(all="ignore"):
        b = ((kept - t(lo)) * t(bins)) // (t(hi) - t(lo)) if integer else \
            ((kept - t(lo)) * t(bins) / (t(hi) - t(lo))).astype(np.int64)
    counts = np.bincount(np.minimum(b, bins - 1), minlength=bins)
    return _out(op, "Out", counts.astype(np.int64))


def _bincount_ref(op, env):
    x = _x(op, env)
    weights = _x(op, env, "Weights") if op.input("Weights") else None
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise ValueError("bincount counts non-negative ints of a vector")
    out = np.bincount(x, weights=None if weights is None else weights.astype(np.float64),
                      minlength=op.attrs["minlength"])
    dtype = np.int64 if weights is None else \
        (np.float32 if weights.dtype == np.float32 else np.float64)
    return _out(op, "Out", out.astype(dtype))


REFERENCES.update({"mv": _mv_ref, "dot": _dot_ref, "multi_dot": _multi_dot_ref,
                   "matrix_power": _matrix_power_ref, "addmm": _addmm_ref, "kron": _kron_ref,
                   "cross": _cross_ref, "dist": _dist_ref,
                   "frobenius_norm": _frobenius_norm_ref, "diagonal": _diagonal_ref,
                   "trace": _trace_ref, "diag_v2": _diag_v2_ref, "eye": _eye_ref,
                   "histogram": _histogram_ref, "bincount": _bincount_ref})


# --- index_sample, take_along_axis, repeat_interleave, crop_tensor, broadcast_tensors, unbind,
# shard_index, multiplex, empty, gather_tree (ops/take_along.py, repeat_interleave.py,
# crop_tensor.py, broadcast_tensors.py, unbind.py, shard_index.py, multiplex.py, empty.py,
# gather_tree.py): Paddle 2.6.2's rules, by plain indexing and loops ----------------------
def _in_range(values, n, what):
    values = np.asarray(values)
    if values.size and (values.min() < 0 or values.max() >= n):
        raise IndexError(f"{what} out of [0, {n})")


def _index_sample_ref(op, env):
    x, index = _x(op, env), _x(op, env, "Index")
    if x.ndim != 2 or index.ndim != 2 or index.shape[0] != x.shape[0]:
        raise ValueError("index_sample takes matrices with as many rows")
    _in_range(index, x.shape[1], "index")
    return _out(op, "Out", np.array([[row[j] for j in idx] for row, idx in zip(x, index)],
                                    x.dtype).reshape(index.shape))


def _take_along_axis_ref(op, env):
    """Result[p] = Input[p with the axis entry replaced by Index[p]] (Index may be shorter
    than Input along the other axes)."""
    x, index = _x(op, env, "Input"), _x(op, env, "Index")
    axis = op.attrs.get("Axis", 0)
    if x.ndim != index.ndim or not -x.ndim <= axis < x.ndim:
        raise ValueError("rank or axis")
    axis %= x.ndim
    if any(i > n for d, (n, i) in enumerate(zip(x.shape, index.shape)) if d != axis):
        raise ValueError("Index longer than Input")
    _in_range(index, x.shape[axis], "index")
    out = np.empty(index.shape, x.dtype)
    for p in np.ndindex(*index.shape):
        src = list(p)
        src[axis] = index[p]
        out[p] = x[tuple(src)]
    return _out(op, "Result", out)


def _repeat_interleave_ref(op, env):
    x, a = _x(op, env), op.attrs
    reps = np.ravel(_x(op, env, "RepeatsTensor")).astype(np.int64) \
        if op.input("RepeatsTensor") else int(a.get("Repeats", 0))
    dim = a.get("dim", 0)
    if not -x.ndim <= dim < x.ndim or np.any(np.asarray(reps) < 0):
        raise ValueError("dim or repeats")
    if np.ndim(reps) and len(reps) != x.shape[dim]:
        raise ValueError("one count per slice")
    return _out(op, "Out", np.repeat(x, reps, axis=dim))


def _crop_tensor_ref(op, env):
    x, a = _x(op, env), op.attrs

    def attr(name, vector, listed):
        if op.input(listed):
            return [int(np.ravel(v)[0]) for v in _xs(op, env, listed)]
        if op.input(vector):
            return [int(v) for v in np.ravel(_x(op, env, vector))]
        return list(a.get(name) or [])
    shape, offsets = attr("shape", "Shape", "ShapeTensor"), attr("offsets", "Offsets",
                                                                  "OffsetsTensor")
    if len(shape) != x.ndim or len(offsets) != x.ndim:
        raise ValueError("one entry per axis")
    index = []
    for n, size, start in zip(x.shape, shape, offsets):
        size = n - start if size == -1 else size
        if start < 0 or size < 0 or start + size > n:
            raise ValueError("the block leaves X")
        index.append(slice(start, start + size))
    return _out(op, "Out", x[tuple(index)].copy())


def _broadcast_tensors_ref(op, env):
    xs = _xs(op, env)
    if len({x.dtype for x in xs}) != 1:
        raise TypeError("one dtype")
    return _out(op, "Out", *[np.array(b) for b in np.broadcast_arrays(*xs)])


def _unbind_ref(op, env):
    x, axis = _x(op, env), op.attrs.get("axis", 0)
    if not -x.ndim <= axis < x.ndim or x.shape[axis] != len(op.output("Out")):
        raise ValueError("axis or output count")
    return _out(op, "Out", *[np.take(x, i, axis=axis) for i in range(x.shape[axis])])


def _shard_index_ref(op, env):
    x, a = _x(op, env), op.attrs
    index_num, nshards, shard_id = a["index_num"], a["nshards"], a["shard_id"]
    if x.dtype.kind != "i" or x.ndim == 0 or x.shape[-1] != 1 or index_num <= 0 \
            or nshards <= 0 or not 0 <= shard_id < nshards:
        raise ValueError("shard_index's ids or attributes")
    _in_range(x, index_num, "id")
    size = -(-index_num // nshards)
    return _out(op, "Out", np.where(x // size == shard_id, x - shard_id * size,
                                    a.get("ignore_value", -1)).astype(x.dtype))


def _multiplex_ref(op, env):
    xs, ids = _xs(op, env), _x(op, env, "Ids")
    if ids.shape != (xs[0].shape[0], 1):
        raise ValueError("Ids is [N, 1]")
    _in_range(ids, len(xs), "candidate")
    return _out(op, "Out", np.array([xs[k][i] for i, k in enumerate(ids[:, 0])],
                                    xs[0].dtype).reshape(xs[0].shape))


def _shape_attr(op, env) -> list[int]:
    """The ``shape`` attribute, or the value of the ShapeTensor (1-D) or ShapeTensorList
    (one-element tensors) that stands for it (empty, randint)."""
    if op.input("ShapeTensor"):
        return [int(d) for d in np.ravel(_x(op, env, "ShapeTensor"))]
    if op.input("ShapeTensorList"):
        return [int(np.ravel(t)[0]) for t in _xs(op, env, "ShapeTensorList")]
    return list(op.attrs.get("shape") or [])


def _empty_ref(op, env):
    """Zeros (Paddle leaves the values unspecified; paddle_nb gives zeros)."""
    a = op.attrs
    shape = _shape_attr(op, env)
    if any(d < 0 for d in shape):
        raise ValueError("a negative dim")
    return _out(op, "Out", np.zeros(shape, NUMPY_DTYPE[a.get("dtype", FP32)]))


def _gather_tree_ref(op, env):
    """Each final beam walked back step by step through its parents."""
    ids, parents = _x(op, env, "Ids"), _x(op, env, "Parents")
    if ids.ndim != 3 or parents.shape != ids.shape:
        raise ValueError("[steps, batch, beam]")
    steps, batch, beam = ids.shape
    _in_range(parents, beam, "parent")
    out = np.empty_like(ids)
    for b in range(batch):
        for k in range(beam):
            at = k
            for t in range(steps - 1, -1, -1):
                out[t, b, k] = ids[t, b, at]
                at = parents[t, b, at]
    return _out(op, "Out", out)


REFERENCES.update({"index_sample": _index_sample_ref, "take_along_axis": _take_along_axis_ref,
                   "repeat_interleave": _repeat_interleave_ref,
                   "crop_tensor": _crop_tensor_ref, "broadcast_tensors": _broadcast_tensors_ref,
                   "unbind": _unbind_ref, "shard_index": _shard_index_ref,
                   "multiplex": _multiplex_ref, "empty": _empty_ref,
                   "gather_tree": _gather_tree_ref})


# --- writing into tensors by index: set_value, index_put, index_add, scatter_nd_add,
# put_along_axis, fill_diagonal_tensor (ops/set_value.py, index_put.py, scatter_into.py,
# fill_diagonal_tensor.py): numpy's own indexing and np.add.at
def _set_value_ref(op, env):
    """out[index] = value with numpy's indexing: a Python slice per axis (a negative step
    with end -1 runs through index 0, Paddle's rule), an int where the axis is decreased.
    The value broadcasts to the part with a 1 before original axis i for each none_axes
    entry <= i (Paddle's rule, not numpy's: x[None, :, None] = v wants [1, n0, n1, 1])."""
    x, a = _x(op, env, "Input"), op.attrs

    def bounds(name, slot):
        return [int(np.ravel(v)[0]) for v in _xs(op, env, slot)] if op.input(slot) \
            else list(a.get(name) or [])
    axes = list(a.get("axes") or [])
    starts, ends = bounds("starts", "StartsTensorList"), bounds("ends", "EndsTensorList")
    steps = bounds("steps", "StepsTensorList") or [1] * len(axes)
    decrease, none_axes = list(a.get("decrease_axes") or []), list(a.get("none_axes") or [])
    index, target, pending = [], [], sorted(none_axes)
    for i in range(x.ndim):
        while pending and pending[0] <= i:
            target.append(1)
            pending.pop(0)
        if i in axes:
            s, e, k = (v[axes.index(i)] for v in (starts, ends, steps))
            n = x.shape[i]
            if i in decrease:
                index.append(s + n if s < 0 else s)
                continue
            index.append(slice(s, None if (k < 0 and e == -1) else e, k))
        else:
            index.append(slice(None))
        target.append(len(range(x.shape[i])[index[-1]]))
    target += [1] * len(pending)
    if op.input("ValueTensor"):
        value = _x(op, env, "ValueTensor")
    else:
        value = np.asarray(a.get("values"), x.dtype).reshape(a.get("shape"))
    if value.ndim > len(target) and all(d == 1 for d in value.shape[:-len(target) or None]):
        value = value.reshape(value.shape[value.ndim - len(target):])
    out = x.copy()
    part = out[tuple(index)]
    out[tuple(index)] = np.broadcast_to(value, target).reshape(part.shape)
    return _out(op, "Out", out)


def _index_put_ref(op, env):
    x, value = _x(op, env, "x"), _x(op, env, "value")
    index = []
    for i in _xs(op, env, "indices"):
        index += list(np.nonzero(i)) if i.dtype == np.bool_ else [i.astype(np.int64)]
    out = x.copy()
    if op.attrs.get("accumulate"):
        target = np.broadcast_shapes(*[i.shape for i in index]) + x.shape[len(index):]
        np.add.at(out, tuple(index), np.broadcast_to(value, target))
    else:
        out[tuple(index)] = value
    return _out(op, "out", out)


def _index_add_ref(op, env):
    x, index, value = _x(op, env), _x(op, env, "Index"), _x(op, env, "AddValue")
    axis = op.attrs.get("axis", 0) % x.ndim
    out = np.moveaxis(x.copy(), axis, 0)
    np.add.at(out, index.astype(np.int64), np.moveaxis(value, axis, 0))
    return _out(op, "Out", np.ascontiguousarray(np.moveaxis(out, 0, axis)))


def _scatter_nd_add_ref(op, env):
    x, index, updates = _x(op, env), _x(op, env, "Index"), _x(op, env, "Updates")
    out = x.copy()
    if index.shape[-1] == 0:                    # every index row names all of X
        return _out(op, "Out", out + updates.reshape((-1,) + x.shape).sum(axis=0))
    np.add.at(out, tuple(np.moveaxis(index.astype(np.int64), -1, 0)), updates)
    return _out(op, "Out", out)


def _put_along_axis_ref(op, env):
    x, index, a = _x(op, env, "Input"), _x(op, env, "Index"), op.attrs
    value = np.broadcast_to(_x(op, env, "Value"), index.shape)
    axis, reduce = a.get("Axis", 0) % x.ndim, a.get("Reduce", "assign")
    out = x.copy()
    if reduce == "add" and not a.get("Include_self", True):
        for pos in np.ndindex(*index.shape):
            out[pos[:axis] + (index[pos],) + pos[axis + 1:]] = 0
    for pos in np.ndindex(*index.shape):
        at = pos[:axis] + (index[pos],) + pos[axis + 1:]
        out[at] = value[pos] if reduce == "assign" else out[at] + value[pos]
    return _out(op, "Result", out)


def _fill_diagonal_tensor_ref(op, env):
    x, y, a = _x(op, env), _x(op, env, "Y"), op.attrs
    offset, d1, d2 = a.get("offset", 0), a.get("dim1", 0) % x.ndim, a.get("dim2", 1) % x.ndim
    out = x.copy()
    view = np.moveaxis(out, (d1, d2), (-2, -1))          # a view: writes reach out
    n1, n2 = view.shape[-2:]
    length = max(min(n1, n1 + offset, n2, n2 - offset), 0)
    y = y.reshape(view.shape[:-2] + (length,))
    for k in range(length):
        view[..., k + max(-offset, 0), k + max(offset, 0)] = y[..., k]
    return _out(op, "Out", out)


REFERENCES.update({"set_value": _set_value_ref, "index_put": _index_put_ref,
                   "index_add": _index_add_ref, "scatter_nd_add": _scatter_nd_add_ref,
                   "put_along_axis": _put_along_axis_ref,
                   "fill_diagonal_tensor": _fill_diagonal_tensor_ref})


# --- pixel_shuffle, pixel_unshuffle, channel_shuffle, unfold, fold, bilinear_tensor_product,
# rrelu, gumbel_softmax, spectral_norm, data_norm, row_conv, bernoulli, poisson, multinomial,
# randint, randperm (ops/pixel_shuffle.py, fold.py, bilinear_tensor_product.py,
# random_activations.py, spectral_norm.py, data_norm.py, row_conv.py, sampling.py)
def _nchw(x, a):
    return x.transpose(0, 3, 1, 2) if a.get("data_format") == "NHWC" else x


def _back(y, a):
    return y.transpose(0, 2, 3, 1) if a.get("data_format") == "NHWC" else y


def _pixel_shuffle_ref(op, env):
    """Out[n, c, h*r + i, w*r + j] = X[n, c*r*r + i*r + j, h, w]."""
    a = op.attrs
    x, r = _nchw(_x(op, env), a), a["upscale_factor"]
    n, c, h, w = x.shape
    if r < 1 or c % (r * r):
        raise ValueError("channels not divisible by r*r")
    out = np.empty((n, c // (r * r), h * r, w * r), x.dtype)
    for i in range(r):
        for j in range(r):
            out[:, :, i::r, j::r] = x[:, i * r + j::r * r]
    return _out(op, "Out", _back(out, a))


def _pixel_unshuffle_ref(op, env):
    """Out[n, c*r*r + i*r + j, h, w] = X[n, c, h*r + i, w*r + j]."""
    a = op.attrs
    x, r = _nchw(_x(op, env), a), a["downscale_factor"]
    n, c, h, w = x.shape
    if r < 1 or h % r or w % r:
        raise ValueError("height or width not divisible by r")
    out = np.empty((n, c * r * r, h // r, w // r), x.dtype)
    for i in range(r):
        for j in range(r):
            out[:, i * r + j::r * r] = x[:, :, i::r, j::r]
    return _out(op, "Out", _back(out, a))


def _channel_shuffle_ref(op, env):
    """Out channel k reads X channel (k % g) * (C / g) + k // g."""
    a = op.attrs
    x, g = _nchw(_x(op, env), a), a["groups"]
    c = x.shape[1]
    if g < 1 or c % g:
        raise ValueError("channels not divisible by groups")
    return _out(op, "Out", _back(x[:, [(k % g) * (c // g) + k // g for k in range(c)]], a))


def _windows_ref(a, h, w):
    (kh, kw), (sh, sw), (dh, dw) = a["kernel_sizes"], a["strides"], a["dilations"]
    pt, pl, pb, pr = a["paddings"]
    oh = (h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
    ow = (w + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
    if oh < 1 or ow < 1:
        raise ValueError("the window does not fit")
    return kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow


def _unfold_ref(op, env):
    """Y[n, (c*kh + ki)*kw + kj, oi*ow + oj] = padded X[n, c, oi*sh + ki*dh, oj*sw + kj*dw]."""
    x, a = _x(op, env), op.attrs
    n, c, h, w = x.shape
    kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow = _windows_ref(a, h, w)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for ki in range(kh):
        for kj in range(kw):
            cols[:, :, ki, kj] = xp[:, :, ki * dh:ki * dh + sh * (oh - 1) + 1:sh,
                                    kj * dw:kj * dw + sw * (ow - 1) + 1:sw]
    return _out(op, "Y", cols.reshape(n, c * kh * kw, oh * ow))


def _fold_ref(op, env):
    """unfold's adjoint: each column's values added back at its window's positions."""
    x, a = _x(op, env), op.attrs
    h, w = a["output_sizes"]
    kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow = _windows_ref(a, h, w)
    n, ckk, length = x.shape
    if ckk % (kh * kw) or length != oh * ow:
        raise ValueError("columns do not fit the windows")
    cols = _wide(x).reshape(n, ckk // (kh * kw), kh, kw, oh, ow)
    yp = np.zeros((n, ckk // (kh * kw), h + pt + pb, w + pl + pr))
    for ki in range(kh):
        for kj in range(kw):
            yp[:, :, ki * dh:ki * dh + sh * (oh - 1) + 1:sh,
               kj * dw:kj * dw + sw * (ow - 1) + 1:sw] += cols[:, :, ki, kj]
    return _out(op, "Y", yp[:, :, pt:pt + h, pl:pl + w].astype(x.dtype))


def _bilinear_tensor_product_ref(op, env):
    """(X[b] . Weight[k]) . Y[b]: X's sum first (which inf - inf a NaN comes from)."""
    x, y, w = _x(op, env), _x(op, env, "Y"), _x(op, env, "Weight")
    out = np.einsum("bkj,bj->bk", np.einsum("bi,kij->bkj", _wide(x), _wide(w)), _wide(y))
    if op.input("Bias"):
        out = out + _wide(_x(op, env, "Bias"))
    return _out(op, "Out", out.astype(x.dtype))


def _rrelu_ref(op, env):
    """Test mode: slope (lower + upper) / 2 on the negative side; training: random."""
    x, a = _x(op, env), op.attrs
    if not a.get("is_test") and (x < 0).any():         # (no negative element: no draw)
        return {**_out(op, "Out", NotComputed(x.shape, x.dtype, None, None)),
                **_out(op, "Noise", NotComputed(x.shape, x.dtype))}
    if not a.get("is_test"):
        return {**_out(op, "Out", x.copy()), **_out(op, "Noise", np.ones_like(x))}
    mid = x.dtype.type((a["lower"] + a["upper"]) / 2)
    noise = np.where(x < 0, mid, x.dtype.type(1)).astype(x.dtype)
    return {**_out(op, "Out", (x * noise).astype(x.dtype)), **_out(op, "Noise", noise)}


def _spectral_norm_ref(op, env):
    w, a = _wide(_x(op, env, "Weight")), op.attrs
    u, v = _wide(_x(op, env, "U")), _wide(_x(op, env, "V"))
    if not 0 <= a["power_iters"] <= 1000:     # (the op's bound)
        raise ValueError("power_iters out of range")
    dim = a["dim"] % w.ndim
    mat = np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)
    for _ in range(a["power_iters"]):
        v = mat.T @ u
        v = v / (np.linalg.norm(v) + a["eps"])
        u = mat @ v
        u = u / (np.linalg.norm(u) + a["eps"])
    sigma = u @ mat @ v
    return _out(op, "Out", (w / sigma).astype(_x(op, env, "Weight").dtype))


def _data_norm_ref(op, env):
    x = _x(op, env)
    size, total, squares = (_wide(_x(op, env, s)) for s in
                            ("BatchSize", "BatchSum", "BatchSquareSum"))
    means, scales = total / size, np.sqrt(size / squares)
    return {**_out(op, "Y", ((_wide(x) - means) * scales).astype(x.dtype)),
            **_out(op, "Means", means.astype(x.dtype)),
            **_out(op, "Scales", scales.astype(x.dtype))}


def _row_conv_ref(op, env):
    """Out[b, t, d] = sum over i of X[b, t + i, d] * Filter[i, d] (past the end: 0)."""
    x, f = _x(op, env), _wide(_x(op, env, "Filter"))
    xb = _wide(x)[None] if x.ndim == 2 else _wide(x)
    steps = xb.shape[1]
    out = np.zeros_like(xb)
    for i in range(min(f.shape[0], steps)):
        out[:, :steps - i] += xb[:, i:] * f[i]
    return _out(op, "Out", out.reshape(x.shape).astype(x.dtype))


def _drawn_like_x(certain):
    """Random values of X's shape; ``certain(x, attrs)`` gives them where no draw can
    change them (bernoulli of 0s and 1s, poisson of 0s, a softmax over one category),
    else None."""
    def run(op, env):
        x = _x(op, env)
        exact = certain(x, op.attrs)
        return _out(op, "Out", NotComputed(x.shape, x.dtype) if exact is None else exact)
    return run


def _bernoulli_certain(x, a):
    if x.dtype.kind != "f" or not np.isin(x, (0.0, 1.0)).all():
        return None
    return (x >= 1).astype(x.dtype)


def _poisson_certain(x, a):
    return np.zeros_like(x) if x.dtype.kind == "f" and (x == 0).all() else None


def _gumbel_softmax_certain(x, a):
    if x.ndim == 0 or not -x.ndim <= a["axis"] < x.ndim or x.shape[a["axis"]] != 1:
        return None
    return np.ones_like(x)


def _multinomial_ref(op, env):
    """Random indices; certain where each row has one positive weight (replacement)."""
    x, a = _x(op, env), op.attrs
    shape = x.shape[:-1] + (a["num_samples"],)
    if a.get("replacement") and x.size and ((x > 0).sum(axis=-1) == 1).all() \
            and (x >= 0).all():
        return _out(op, "Out", np.broadcast_to(np.argmax(x, axis=-1)[..., None], shape)
                    .astype(np.int64))
    return _out(op, "Out", NotComputed(shape, np.int64))


def _randint_ref(op, env):
    a = op.attrs
    shape = _shape_attr(op, env)
    if a["high"] == a["low"] + 1:                     # one value to draw
        return _out(op, "Out", np.full(shape, a["low"], NUMPY_DTYPE[a["dtype"]]))
    return _out(op, "Out", NotComputed(shape, NUMPY_DTYPE[a["dtype"]], a["low"], a["high"]))


REFERENCES.update({
    "pixel_shuffle": _pixel_shuffle_ref, "pixel_unshuffle": _pixel_unshuffle_ref,
    "channel_shuffle": _channel_shuffle_ref, "unfold": _unfold_ref, "fold": _fold_ref,
    "bilinear_tensor_product": _bilinear_tensor_product_ref, "rrelu": _rrelu_ref,
    "gumbel_softmax": _drawn_like_x(_gumbel_softmax_certain),
    "spectral_norm": _spectral_norm_ref,
    "data_norm": _data_norm_ref, "row_conv": _row_conv_ref,
    "bernoulli": _drawn_like_x(_bernoulli_certain), "poisson": _drawn_like_x(_poisson_certain),
    "multinomial": _multinomial_ref,
    "randint": _randint_ref,
    "randperm": lambda op, env: _out(op, "Out", NotComputed(
        (op.attrs["n"],), NUMPY_DTYPE[op.attrs["dtype"]]) if op.attrs["n"] > 1 else
        np.zeros(op.attrs["n"], NUMPY_DTYPE[op.attrs["dtype"]]))})


# --- conv3d, conv3d_transpose (ops/conv3d.py): the definition, tap by tap over 3 axes -------
def _conv3d_pads(a, in_dims, k_dims):
    """[front, back, top, bottom, left, right] and dilations after padding_algorithm."""
    p, d = list(a.get("paddings", [0, 0, 0])), list(a.get("dilations", [1, 1, 1]))
    if len(p) == 3:
        p = [p[0], p[0], p[1], p[1], p[2], p[2]]
    algorithm = a.get("padding_algorithm", "EXPLICIT")
    if algorithm == "VALID":
        p = [0] * 6
    elif algorithm == "SAME":
        for axis in range(3):
            s, n = a.get("strides", [1, 1, 1])[axis], in_dims[axis]
            total = max((int(np.ceil(n / s)) - 1) * s + k_dims[axis] - n, 0)
            p[2 * axis], p[2 * axis + 1], d[axis] = total // 2, total - total // 2, 1
    return p, d


def _channels_first_3d(a, x):
    last = a.get("data_format", "NCDHW") in ("NDHWC", "NHWC")
    return last, (x.transpose(0, 4, 1, 2, 3) if last else x)


def _conv3d_ref(op, env):
    """Output[n, o, i, j, k] = sum over the group's channels and taps of Filter * the
    padded Input at (i*s + a*d, ...)."""
    a = op.attrs
    last, x = _channels_first_3d(a, _x(op, env, "Input"))
    w, g, s = _x(op, env, "Filter"), a.get("groups", 1), a.get("strides", [1, 1, 1])
    assert x.ndim == w.ndim == 5 and x.shape[1] == w.shape[1] * g and w.shape[0] % g == 0
    k = w.shape[2:]
    p, d = _conv3d_pads(a, x.shape[2:], k)
    # Paddle's sizes: C++ division (toward zero), so a window overhanging the padded input
    # by less than a stride still counts, over zeros (padded on here)
    spans = [x.shape[2 + i] + p[2 * i] + p[2 * i + 1] - d[i] * (k[i] - 1) - 1
             for i in range(3)]
    out = [int(span / step) + 1 for span, step in zip(spans, s)]
    assert min(out) > 0
    xp = _wide(np.pad(x, ((0, 0), (0, 0)) + tuple(
        (p[2 * i], p[2 * i + 1] + max(0, -spans[i])) for i in range(3))))
    cg, og = x.shape[1] // g, w.shape[0] // g
    y = np.zeros((x.shape[0], w.shape[0]) + tuple(out))
    for tap in np.ndindex(*k):
        seen = xp[(slice(None), slice(None)) + tuple(
            slice(tap[i] * d[i], tap[i] * d[i] + (out[i] - 1) * s[i] + 1, s[i])
            for i in range(3))]
        for grp in range(g):
            y[:, grp * og:(grp + 1) * og] += np.einsum(
                "ncdhw,oc->nodhw", seen[:, grp * cg:(grp + 1) * cg],
                _wide(w[(slice(grp * og, (grp + 1) * og), slice(None)) + tap]))
    y = y.astype(x.dtype)
    return _out(op, "Output", y.transpose(0, 2, 3, 4, 1) if last else y)


def _conv3d_transpose_ref(op, env):
    """Each input element scatters Input * Filter[c] into the window it would come from."""
    a = op.attrs
    last, x = _channels_first_3d(a, _x(op, env, "Input"))
    w, g, s = _x(op, env, "Filter"), a.get("groups", 1), a.get("strides", [1, 1, 1])
    assert x.ndim == w.ndim == 5 and x.shape[1] == w.shape[0] and x.shape[1] % g == 0
    n, c, dims, k = x.shape[0], x.shape[1], x.shape[2:], w.shape[2:]
    p, d = _conv3d_pads(a, dims, k)
    size = [(dims[i] - 1) * s[i] - p[2 * i] - p[2 * i + 1] + d[i] * (k[i] - 1) + 1
            for i in range(3)]
    if a.get("output_size"):
        size = list(a["output_size"])
    elif a.get("output_padding"):
        size = [size[i] + a["output_padding"][i] for i in range(3)]
    assert min(size) > 0
    cg, og = c // g, w.shape[1]
    full = np.zeros((n, og * g) + tuple(p[2 * i] + size[i] + d[i] * k[i] + s[i] * dims[i]
                                        for i in range(3)))
    for tap in np.ndindex(*k):
        reach = tuple(slice(tap[i] * d[i], tap[i] * d[i] + dims[i] * s[i], s[i])
                      for i in range(3))
        for grp in range(g):
            full[(slice(None), slice(grp * og, (grp + 1) * og)) + reach] += np.einsum(
                "ncdhw,co->nodhw", _wide(x[:, grp * cg:(grp + 1) * cg]),
                _wide(w[(slice(grp * cg, (grp + 1) * cg), slice(None)) + tap]))
    y = full[(slice(None), slice(None)) + tuple(slice(p[2 * i], p[2 * i] + size[i])
                                                for i in range(3))].astype(x.dtype)
    return _out(op, "Output", y.transpose(0, 2, 3, 4, 1) if last else y)


REFERENCES.update({"conv3d": _conv3d_ref, "conv3d_transpose": _conv3d_transpose_ref})


# --- warpctc, warprnnt (ops/ctc_loss.py, rnnt_loss.py): the forward-backward recursions,
# whole columns at a time with np.logaddexp (the kernels go state by state) ---------------
def _ctc_one(logits, label, blank):
    """(loss, d loss / d logits) of one sequence: logits [T, C], label [L]."""
    logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    steps = len(logp)
    repeats = int(np.sum(label[1:] == label[:-1])) if len(label) else 0
    if steps == 0 or len(label) + repeats > steps:   # no alignment fits: warp-ctc's 0
        return 0.0, np.zeros_like(logp)
    ext = np.full(2 * len(label) + 1, blank)
    ext[1::2] = label
    states = len(ext)
    skip = np.zeros(states, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    emit = logp[:, ext]                                # [T, states]
    alpha = np.full((steps, states), -np.inf)
    beta = np.full((steps, states), -np.inf)
    alpha[0, :2] = emit[0, :2]
    for t in range(1, steps):
        prev = alpha[t - 1].copy()
        prev[1:] = np.logaddexp(prev[1:], alpha[t - 1, :-1])
        prev[2:] = np.where(skip[2:], np.logaddexp(prev[2:], alpha[t - 1, :-2]), prev[2:])
        alpha[t] = prev + emit[t]
    beta[-1, -2:] = emit[-1, -2:]
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1].copy()
        nxt[:-1] = np.logaddexp(nxt[:-1], beta[t + 1, 1:])
        nxt[:-2] = np.where(skip[2:], np.logaddexp(nxt[:-2], beta[t + 1, 2:]), nxt[:-2])
        beta[t] = nxt + emit[t]
    log_like = np.logaddexp.reduce(alpha[-1, -2:])
    grad = np.exp(logp)
    for s in range(states):
        grad[:, ext[s]] -= np.exp(alpha[:, s] + beta[:, s] - emit[:, s] - log_like)
    return -log_like, grad


def _warpctc_ref(op, env):
    logits, label = _x(op, env, "Logits"), _x(op, env, "Label")
    steps, lengths = _x(op, env, "LogitsLength"), _x(op, env, "LabelLength")
    blank = op.attrs["blank"]
    max_t, batch, classes = logits.shape
    if not 0 <= blank < classes or label.shape[0] != batch:
        raise ValueError("blank or Label's batch")
    loss, grad = np.zeros((batch, 1)), np.zeros(logits.shape)
    for b in range(batch):
        if not (0 <= steps[b] <= max_t and 0 <= lengths[b] <= label.shape[1]):
            raise ValueError("a length out of range")
        real = label[b, :lengths[b]]
        _in_range(real, classes, "label")
        if np.any(real == blank):
            raise IndexError("a label is the blank")
        loss[b, 0], grad[:steps[b], b] = _ctc_one(_wide(logits[:steps[b], b]), real, blank)
    return {**_out(op, "Loss", loss.astype(logits.dtype)),
            **_out(op, "WarpCTCGrad", grad.astype(logits.dtype))}


def _warprnnt_ref(op, env):
    acts, label = _x(op, env, "input"), _x(op, env, "label")
    steps, lengths = _x(op, env, "input_lengths"), _x(op, env, "label_lengths")
    blank, fastemit = op.attrs["blank"], op.attrs["fastemit_lambda"]
    batch, max_t, max_u1, classes = acts.shape
    if not 0 <= blank < classes or label.shape[0] != batch:
        raise ValueError("blank or label's batch")
    loss, grad = np.zeros(batch), np.zeros(acts.shape)
    for b in range(batch):
        T, U = int(steps[b]), int(lengths[b])
        if not (1 <= T <= max_t and 0 <= U <= min(label.shape[1], max_u1 - 1)):
            raise ValueError("a length out of range")
        y = label[b, :U]
        _in_range(y, classes, "label")
        x = _wide(acts[b, :T, :U + 1])
        stay = x[:, :, blank]                                  # [T, U + 1]: emit blank
        move = np.take_along_axis(x[:, :U], y[None, :, None].astype(np.int64),
                                  axis=2)[:, :, 0]             # [T, U]: emit y[u]
        alpha = np.full((T, U + 1), -np.inf)
        beta = np.full((T, U + 1), -np.inf)
        for t in range(T):
            for u in range(U + 1):
                alpha[t, u] = 0.0 if t == u == 0 else np.logaddexp(
                    alpha[t - 1, u] + stay[t - 1, u] if t else -np.inf,
                    alpha[t, u - 1] + move[t, u - 1] if u else -np.inf)
        for t in range(T - 1, -1, -1):
            for u in range(U, -1, -1):
                beta[t, u] = stay[t, u] if (t, u) == (T - 1, U) else np.logaddexp(
                    beta[t + 1, u] + stay[t, u] if t < T - 1 else -np.inf,
                    beta[t, u + 1] + move[t, u] if u < U else -np.inf)
        log_like = beta[0, 0]
        loss[b] = -log_like
        g = grad[b]
        g[:T - 1, :U + 1, blank] -= np.exp(alpha[:-1] + stay[:-1] + beta[1:] - log_like)
        for u in range(U):
            g[:T, u, y[u]] -= (1 + fastemit) * np.exp(alpha[:, u] + move[:, u]
                                                      + beta[:, u + 1] - log_like)
        g[T - 1, U, blank] -= np.exp(alpha[-1, -1] + stay[-1, -1] - log_like)
    return {**_out(op, "loss", loss.astype(acts.dtype)),
            **_out(op, "warprnntgrad", grad.astype(acts.dtype))}


REFERENCES.update({"warpctc": _warpctc_ref, "warprnnt": _warprnnt_ref})


# --- hierarchical_sigmoid, nce (ops/hierarchical_sigmoid.py, nce.py) -----------------------
def _hsigmoid_paths(op, env, n):
    """Each sample's [(node, bit)] root first: the default tree's code c = label +
    num_classes (node (c >> (j+1)) - 1, bit (c >> j) & 1), or PathTable/PathCode up to
    the first negative node; and the width L of PreOut."""
    if op.input("PathTable"):
        table, code = _x(op, env, "PathTable"), _x(op, env, "PathCode")
        paths = []
        for i in range(n):
            row = []
            for k, bit in zip(table[i], code[i]):
                if k < 0:
                    break
                row.append((int(k), int(bit != 0)))
            paths.append(row)
        return paths, table.shape[1]
    classes = op.attrs["num_classes"]
    labels = _x(op, env, "Label").reshape(n)
    if ((labels < 0) | (labels >= classes)).any():
        raise IndexError("hierarchical_sigmoid: a label outside the classes")
    paths = []
    for label in labels:
        c = int(label) + classes
        paths.append([((c >> (j + 1)) - 1, (c >> j) & 1) for j in range(c.bit_length() - 1)])
    return paths, (classes - 1).bit_length()


def _hierarchical_sigmoid_ref(op, env):
    x, w = _x(op, env), _x(op, env, "W")
    n = x.shape[0]
    bias = _wide(_x(op, env, "Bias")).reshape(-1) if op.input("Bias") else None
    paths, width = _hsigmoid_paths(op, env, n)
    z = np.zeros((n, width))
    bits = np.zeros((n, width))
    for i, path in enumerate(paths):
        for j, (k, bit) in enumerate(path):
            z[i, j] = np.clip(_wide(w[k]) @ _wide(x[i]) + (bias[k] if bias is not None
                                                             else 0.0), -40, 40)
            bits[i, j] = bit
    pre_out = np.logaddexp(0.0, z)           # softplus; 0 -> log 2 past a path's end
    out = (pre_out - bits * z).sum(axis=1, keepdims=True)
    made = {**_out(op, "Out", out.astype(x.dtype)),
            **_out(op, "PreOut", pre_out.astype(x.dtype))}
    if op.output("W_Out"):
        made.update(_out(op, "W_Out", w))
    return made


def _nce_ref(op, env):
    """Exact with custom_neg_classes; drawn negatives are random (NotComputed)."""
    a = op.attrs
    x, label, w = _x(op, env, "Input"), _x(op, env, "Label"), _x(op, env, "Weight")
    classes, neg = w.shape[0], a["num_neg_samples"]
    cols = label.shape[1] + neg
    if ((label < 0) | (label >= classes)).any():
        raise IndexError("nce: a label outside the classes")
    custom = list(a.get("custom_neg_classes") or [])
    if not custom and neg:
        return {**_out(op, "Cost", NotComputed((x.shape[0], 1), x.dtype)),
                **_out(op, "SampleLogits", NotComputed((x.shape[0], cols), x.dtype)),
                **_out(op, "SampleLabels", NotComputed((x.shape[0], cols), np.int64))}
    labels = np.concatenate([label, np.tile(np.int64(custom), (x.shape[0], 1))], axis=1) \
        if custom else label.astype(np.int64)
    z = np.einsum("nd,njd->nj", _wide(x), _wide(w)[labels])
    if op.input("Bias"):
        z += _wide(_x(op, env, "Bias")).reshape(-1)[labels]
    o = 1 / (1 + np.exp(-z))
    sampler = a.get("sampler", 0)
    if sampler == 0:
        p = np.full(labels.shape, 1.0 / classes)
    elif sampler == 1:
        p = np.log((labels + 2.0) / (labels + 1.0)) / np.log(classes)
    else:
        p = _wide(_x(op, env, "CustomDistProbs")).reshape(-1)[labels]
    b = p * neg
    true = np.arange(cols) < label.shape[1]
    cost = np.where(true, -np.log(o / (o + b)), -np.log(b / (o + b))).sum(axis=1, keepdims=True)
    if op.input("SampleWeight"):
        cost = cost * _wide(_x(op, env, "SampleWeight")).reshape(-1, 1)
    return {**_out(op, "Cost", cost.astype(x.dtype)),
            **_out(op, "SampleLogits", o.astype(x.dtype)),
            **_out(op, "SampleLabels", labels)}


REFERENCES.update({"hierarchical_sigmoid": _hierarchical_sigmoid_ref, "nce": _nce_ref})


def run_op(op, env) -> dict:
    """The values ``op`` writes, as ``{name: value}``, computed from ``env``."""
    try:
        fn = REFERENCES[op.type]
    except KeyError:
        raise NotImplementedError(f"the numpy interpreter has no reference for {op.type!r}") \
            from None
    return {name: v if isinstance(v, (list, NotComputed)) else np.asarray(v)
            for name, v in fn(op, env).items()}


class OpView:
    """What the interpreter reads of an op (type, slots, attrs), for an op given as plain
    data: inputs ``{slot: array or [arrays]}`` named ``x``, ``x0``, ``x1``..., outputs
    ``{slot: count}`` named ``out_out0``..., attributes as the op's desc would hold them."""

    def __init__(self, op_type: str, inputs: dict, attrs: dict, out_counts: dict):
        self.type = op_type
        self.attrs = stored_attrs(op_type, attrs)
        self._inputs = {}
        for slot, value in inputs.items():
            n = len(value) if isinstance(value, list) else 1
            self._inputs[slot] = [slot.lower()] if n == 1 else \
                [f"{slot.lower()}{i}" for i in range(n)]
        self._outputs = {slot: [f"{slot.lower()}_out{i}" for i in range(n)]
                         for slot, n in out_counts.items()}

    def input(self, slot):
        return self._inputs.get(slot, [])

    def output(self, slot):
        return self._outputs.get(slot, [])


def stored_attrs(op_type: str, attrs: dict) -> dict:
    """``attrs`` as the op's desc holds them: unset (None) ones at their declared
    defaults, a bool given for an INT attribute as the int it is stored as."""
    from paddle_nb.core import attrs as A   # noqa: PLC0415
    from paddle_nb.core import registry   # noqa: PLC0415
    specs = {a.name: a for a in registry.lookup(op_type).attrs}
    out = {name: spec.default for name, spec in specs.items()}
    for name, value in attrs.items():
        if value is None:
            continue
        if name in specs and specs[name].type in (A.INT, A.LONG) and isinstance(value, bool):
            value = int(value)
        out[name] = value
    return out


def interpret(op_type: str, inputs: dict, attrs: dict, out_counts: dict) -> dict:
    """``{slot: [value or NotComputed]}``: what one op computes from plain data (the op
    table's and the fuzzer's reference)."""
    view = OpView(op_type, inputs, attrs, out_counts)
    env = {name: value for slot, value in inputs.items()
           for name, value in zip(view.input(slot),
                                  value if isinstance(value, list) else [value])}
    values = run_op(view, env)
    return {slot: [values[n] for n in view.output(slot)] for slot in out_counts}


def run_block(block, feed: dict) -> dict:
    """Run ``block``'s ops in order from ``feed``; the environment at the end."""
    env = dict(feed)
    for op in block.ops:
        env.update(run_op(op, env))
    return env
