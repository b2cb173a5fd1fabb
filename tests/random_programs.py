"""Random valid one-block programs for the property tests (test_random_programs.py, and
test_mutated_bytes.py's starting points): ``programs()`` draws one from the registered
ops (``block.create_var`` + ``block.append_op``, as tests/test_ops_table.py builds them),
and ``check_program(built)`` runs it and compares it with tests/numpy_interpreter.py:

- *globally*: the interpreter runs the whole program from the feed; every op output is
  compared (floats with a tolerance scaled by the magnitudes upstream, ints and bools
  exactly). Outputs downstream of a discrete decision (a comparison, a cast to int) on
  values that are not bit-exact are skipped here: one rounding step can flip them.
- *locally*: each op's reference runs on the executor's own values of its inputs, so
  every op output is checked tightly, discrete ones included; the ops IEEE arithmetic
  defines exactly must agree bit for bit.

It also checks that the program round-trips through bytes unchanged (bytes and
``to_code()``), declares shapes and dtypes that fit what the kernels produce, that the
program loaded from the bytes runs to the same values, and that the run leaves the feed
as it was.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from hypothesis import assume, note
from hypothesis import strategies as st

import paddle_nb as pd
from paddle_nb.core import registry
from paddle_nb.core.framework_pb2 import VarType
from paddle_nb.ops.fill import assign_value_attrs

import op_kinds
from numpy_interpreter import CODE_OF, FP32, FP64, INT64, NotComputed, run_op

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, I64, B8 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
FLOAT_TYPES = (F32, F64)
INT_TYPES = (I32, I64)

# Values of every float variable stay below this (ops that could exceed it are not chosen),
# so float32 stays far from overflow and the tolerances below stay meaningful.
MAX_MAG = 1e4


def mag(a) -> float:
    a = np.asarray(a)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a.astype(np.float64))))


# ==========================================================================================
# 1. random programs
# ==========================================================================================
# Ops that IEEE arithmetic defines exactly (given exact inputs, any correctly rounded kernel
# gives the same bits as the reference): their outputs are bit-exact if their inputs are.
EXACT_OPS = {
    "relu", "square", "cast", "assign", "rnn_memory_helper", "reshape2", "transpose2",
    "concat", "split", "elementwise_add", "elementwise_sub", "elementwise_mul",
    "elementwise_div", "greater_than", "less_than", "equal", "not_equal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "greater_equal", "less_equal", "select_input",
    "select_output", "fill_zeros_like", "fill_any_like", "fill_constant", "assign_value",
    "fill_constant_batch_size_like",
    "increment", "split_lod_tensor", "merge_lod_tensor", "write_to_array",
    "read_from_array", "lod_array_length", "tensor_array_to_tensor",
}
# Ops whose result jumps when an input moves by one rounding step: their outputs are
# reproducible only if their inputs are bit-exact.
DISCRETE_OPS = {"greater_than", "less_than", "equal", "not_equal", "split_lod_tensor",
                "merge_lod_tensor", "greater_equal", "less_equal"}
# Ops whose rounding error scales with the product of their inputs' magnitudes.
PRODUCT_OPS = {"matmul", "matmul_v2", "bmm", "mul", "conv2d", "depthwise_conv2d",
               "conv2d_transpose", "depthwise_conv2d_transpose",
               "conv3d", "conv3d_transpose"}

# Library bugs the random programs must steer clear of until they are fixed (each with a
# minimal reproduction at the end of this file), so that they keep hunting for others.
# Fixed so far: "transpose2_0d", "softmax_0d", "optimizer_0d" (0-d tensors), and bytes
# missing a required proto2 field.
KNOWN_BUGS: set[str] = set()

NAME_PREFIXES = ["t", "fc_0.tmp_", "ns/v", "x@GRAD_", "名"]


@dataclass
class Info:
    shape: tuple
    dtype: np.dtype
    exact: bool            # bit-exact: the executor must give the reference's bits
    stable: bool           # reproducible up to rounding (no discrete step on inexact values)
    kind: str = "tensor"   # tensor | array | random | xshape
    anc_mag: float = 1.0   # the largest magnitude of it and of everything it came from
    anc_f32: bool = False  # it or something it came from is float32


class ProgramBuilder:
    """Builds a random program op by op. ``env`` holds the reference values (the numpy
    interpreter run so far), which the op builders use to keep inputs valid (log of
    positive values, no division by numbers near 0, magnitudes below MAX_MAG)."""

    def __init__(self, draw):
        self.draw = draw
        self.prog = pd.Program()
        self.blk = self.prog.global_block()
        self.feed: dict[str, np.ndarray] = {}
        self.env: dict = {}
        self.info: dict[str, Info] = {}
        self.prefix = draw(st.sampled_from(NAME_PREFIXES))
        self.count = 0
        self.extra_attrs = draw(st.booleans())

    # --- variables ---------------------------------------------------------------------
    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def add_feed(self, value: np.ndarray, unknown_batch: bool = False, **kw) -> str:
        name = self.fresh()
        shape = list(value.shape)
        if unknown_batch and shape:
            shape[0] = -1
        self.blk.create_var(name, shape=shape, dtype=value.dtype.name, **kw)
        self.feed[name] = value       # persistable ones are set in the scope, not fed
        self.env[name] = value
        self.info[name] = Info(value.shape, value.dtype, True, True,
                               anc_mag=max(1.0, mag(value)), anc_f32=value.dtype == F32)
        return name

    def tensors(self, dtypes=None, min_rank=0, max_rank=99, pred=None) -> list[str]:
        """Names of tensor variables with at least one element that fit the filters."""
        out = []
        for name, i in self.info.items():
            if i.kind != "tensor" or int(np.prod(i.shape)) == 0:
                continue
            if dtypes is not None and i.dtype not in dtypes:
                continue
            if not min_rank <= len(i.shape) <= max_rank:
                continue
            if pred is not None and not pred(name, i):
                continue
            out.append(name)
        return out

    def mag(self, name) -> float:
        return mag(self.env[name])

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    # --- ops -----------------------------------------------------------------------------
    def append(self, type_: str, inputs: dict, outputs: dict, attrs: dict | None = None, *,
               exact: bool | None = None, discrete: bool | None = None):
        """Append one op; ``outputs`` maps a slot to a number of new variables or to a list
        of names. Runs the reference on it, checks the declared shapes and records what
        the builder knows about the outputs."""
        names = {slot: [self.fresh() for _ in range(n)] if isinstance(n, int) else list(n)
                 for slot, n in outputs.items()}
        attrs = dict(attrs or {})
        if self.extra_attrs:                 # Paddle's bookkeeping attributes ride along
            attrs.update(op_role=0, op_namescope="/", use_mkldnn=False)
        op = self.blk.append_op(type_, inputs=inputs, outputs=names, attrs=attrs)
        values = run_op(op, self.env)
        in_names = op.input_arg_names
        exact_in = all(self.info[n].exact for n in in_names)
        stable_in = all(self.info[n].stable for n in in_names)
        anc = max([1.0] + [self.info[n].anc_mag for n in in_names])
        anc_f32 = any(self.info[n].anc_f32 for n in in_names)
        if discrete if discrete is not None else type_ in DISCRETE_OPS:
            out_exact = out_stable = exact_in
        else:
            out_exact = exact_in and (exact if exact is not None else type_ in EXACT_OPS)
            out_stable = stable_in
        xshape = set(op.output("XShape"))
        for name, value in values.items():
            if isinstance(value, NotComputed):
                kind, shape, dtype, m = "random", value.shape, value.dtype, 1.0
            elif isinstance(value, list):
                written = [v for v in value if v is not None]
                kind, shape, dtype = "array", written[0].shape, written[0].dtype
                m = max(mag(v) for v in written)
            else:
                kind = "xshape" if name in xshape else "tensor"
                shape, dtype, m = value.shape, value.dtype, mag(value)
            self.check_declared(op, name, shape, dtype)
            self.env[name] = value
            new = Info(tuple(shape), np.dtype(dtype), out_exact, out_stable, kind, max(anc, m),
                       anc_f32 or np.dtype(dtype) == F32)
            old = self.info.get(name)
            if old is not None:               # written again (an array): what it held stays
                new.exact &= old.exact
                new.stable &= old.stable
                new.anc_mag = max(new.anc_mag, old.anc_mag)
                new.anc_f32 |= old.anc_f32
            self.info[name] = new
        return op, names

    def check_declared(self, op, name, shape, dtype):
        """Shape inference must declare what the kernel (here: the reference) produces:
        same rank, same dims where not -1, same dtype."""
        v = self.blk.var(name)
        declared = list(v.shape)
        where = f"op {op.type} output {name}: shape inference declared {declared} " \
                f"{v.dtype}, the reference gives {list(shape)} {np.dtype(dtype).name}"
        assert len(declared) == len(shape), where
        assert all(d < 0 or d == a for d, a in zip(declared, shape)), where
        assert v.dtype == np.dtype(dtype).name, where


# --- shape helpers ---------------------------------------------------------------------------
def fit_axes(big, small) -> list[int]:
    """Where ``small`` lines up with ``big`` under Fluid's elementwise rule (its dims equal
    to big's there, or 1)."""
    return [a for a in range(len(big) - len(small) + 1)
            if all(s == b or s == 1 for s, b in zip(small, big[a:a + len(small)]))]


def matmul_out(xs, ys, tx, ty):
    if len(xs) >= 2 and tx:
        xs = xs[:-2] + (xs[-1], xs[-2])
    if len(ys) >= 2 and ty:
        ys = ys[:-2] + (ys[-1], ys[-2])
    try:
        out = np.matmul(np.zeros(xs, np.float32), np.zeros(ys, np.float32)).shape
    except ValueError:
        return None
    return xs[-1], out


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


# --- op builders ----------------------------------------------------------------------------
# ``builder(B, type_)`` appends one op of ``type_`` (and the small ops or feeds it needs)
# and returns True, or returns False when the program has nothing it can take.
def positive_feed(B, shape, dtype, low=0.25) -> str:
    """A new input with values in [low, low + 1.75) (a denominator, a log's argument)."""
    seed = B.draw(st.integers(0, 2**16))
    v = np.random.default_rng(seed).uniform(low, low + 1.75, shape).astype(dtype)
    return B.add_feed(v, unknown_batch=bool(shape) and B.draw(st.booleans()))


def b_unary(B, type_):
    if type_ in ("exp", "expm1"):
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: i.stable and B.env[n].max() <= 8)
    elif type_ in ("sinh", "cosh"):              # e^|x|: bounded both ways
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: i.stable and B.mag(n) <= 8)
    elif type_ == "tan":                         # well conditioned away from +-pi/2
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: i.stable and B.mag(n) <= 1.2)
    elif type_ in ("log", "sqrt", "rsqrt", "acosh"):   # defined (and bounded) above 0 (1)
        low = 1.05 if type_ == "acosh" else 0.05
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: i.stable and B.env[n].min() >= low)
        if not names or B.draw(st.integers(0, 3)) == 0:
            like = B.tensors()
            if not like:
                return False
            li = B.info[B.pick(like)]
            names = [positive_feed(B, li.shape, li.dtype if li.dtype in FLOAT_TYPES else F32,
                                   low=low + 0.2)]
    elif type_ == "square":
        names = B.tensors(FLOAT_TYPES + INT_TYPES, pred=lambda n, i: B.mag(n) ** 2 <= MAX_MAG)
    elif type_ in ("erfinv", "asin", "acos", "atanh"):  # defined (and well conditioned)
        # inside (-1, 1)
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: i.stable and B.mag(n) <= 0.9)
    else:
        names = B.tensors(FLOAT_TYPES)
    if not names:
        return False
    B.append(type_, {"X": [B.pick(names)]}, {"Out": 1})
    return True


def b_scale(B, type_):
    names = B.tensors(FLOAT_TYPES + INT_TYPES, pred=lambda n, i: B.mag(n) <= 1000)
    if not names:
        return False
    x = B.pick(names)
    is_int = B.info[x].dtype in INT_TYPES
    values = [-2.0, -1.0, 0.0, 1.0, 3.0] if is_int else [-2.5, -1.0, 0.0, 0.5, 1.0, 1.7, 3.0]
    scale, bias = B.pick(values), B.pick(values)
    attrs = {"scale": scale, "bias": bias, "bias_after_scale": B.draw(st.booleans())}
    inputs = {"X": [x]}
    if not is_int and B.draw(st.booleans()):        # ScaleTensor overrides the attribute
        t = B.pick(values)
        inputs["ScaleTensor"] = [B.add_feed(np.array([t], B.info[x].dtype))]
    B.append("scale", inputs, {"Out": 1}, attrs, exact=False)
    return True


def b_cast(B, type_):
    names = B.tensors()
    if not names:
        return False
    x = B.pick(names)
    dt = B.info[x].dtype
    to = B.pick([B8, I32, I64, F32, F64])
    discrete = dt in FLOAT_TYPES and to not in FLOAT_TYPES
    B.append("cast", {"X": [x]}, {"Out": 1},
             {"in_dtype": CODE_OF[dt], "out_dtype": CODE_OF[to]}, discrete=discrete)
    return True


def b_copy(B, type_):
    names = B.tensors()
    if not names:
        return False
    B.append(type_, {"X": [B.pick(names)]}, {"Out": 1})
    return True


def b_softmax(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1 if "softmax_0d" in KNOWN_BUGS else 0)
    if not names:
        return False
    x = B.pick(names)
    r = len(B.info[x].shape)
    axis = B.draw(st.integers(-r, r - 1)) if r else B.pick([-1, 0])
    B.append(type_, {"X": [x]}, {"Out": 1}, {"axis": axis})
    return True


def b_reduce(B, type_):
    dtypes = FLOAT_TYPES + INT_TYPES if type_ in ("reduce_sum", "reduce_max",
                                                  "reduce_min") else FLOAT_TYPES
    if type_ == "reduce_prod":          # a product grows fast: magnitudes at most 1
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) <= 1)
    elif type_ == "squared_l2_norm":
        names = B.tensors(FLOAT_TYPES,
                          pred=lambda n, i: B.mag(n) ** 2 * np.prod(i.shape) <= MAX_MAG)
    else:
        names = B.tensors(dtypes, pred=lambda n, i: B.mag(n) * np.prod(i.shape) <= MAX_MAG)
    if type_ in ("reduce_max", "reduce_min", "reduce_prod"):
        # a max of nothing is refused (the fuzzer checks that): non-empty tensors only
        names = [n for n in names if 0 not in B.info[n].shape]
    if not names:
        return False
    x = B.pick(names)
    if type_ in ("mean", "squared_l2_norm"):
        B.append(type_, {"X": [x]}, {"Out": 1})
        return True
    r = len(B.info[x].shape)
    if r == 0:                                      # a 0-d X: dim [0]
        dims = [0]
    else:
        dims = B.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True))
        dims = [d - r if B.draw(st.booleans()) else d for d in dims]    # negative dims too
    attrs = {"dim": dims, "keep_dim": B.draw(st.booleans())}
    if B.draw(st.integers(0, 4)) == 0:
        attrs["reduce_all"] = True
    B.append(type_, {"X": [x]}, {"Out": 1}, attrs)
    return True


def b_logsumexp(B, type_):
    """logsumexp (ops/logsumexp.py) over random axes of a non-empty float tensor (the -inf
    of an empty one would only make the ops after it refuse)."""
    names = [n for n in B.tensors(FLOAT_TYPES) if 0 not in B.info[n].shape]
    if not names:
        return False
    x = B.pick(names)
    r = len(B.info[x].shape)
    axis = B.draw(st.lists(st.integers(-r, r - 1), max_size=r, unique_by=lambda d: d % r)) \
        if r else []
    attrs = {"axis": axis, "keepdim": B.draw(st.booleans()),
             "reduce_all": B.draw(st.integers(0, 4)) == 0}
    B.append(type_, {"X": [x]}, {"Out": 1}, attrs)
    return True


def b_reshape(B, type_):
    names = B.tensors()
    if not names:
        return False
    x = B.pick(names)
    shape = B.info[x].shape
    n = int(np.prod(shape))
    k = B.draw(st.integers(0 if n == 1 else 1, 4))
    target, rest = [], n
    for _ in range(max(k - 1, 0)):
        d = B.pick(divisors(rest))
        target.append(d)
        rest //= d
    if k:
        target.append(rest)
    target = list(B.draw(st.permutations(target))) if target else []
    for i, d in enumerate(target):
        if i < len(shape) and shape[i] == d and B.draw(st.booleans()):
            target[i] = 0                           # 0: copy X's dim
    free = [i for i, d in enumerate(target) if d != 0]
    if free and B.draw(st.booleans()):
        target[B.pick(free)] = -1                   # -1: inferred
    B.append("reshape2", {"X": [x]}, {"Out": 1, "XShape": 1}, {"shape": target})
    return True


def b_squeeze(B, type_):
    names = B.tensors()
    if not names:
        return False
    x = B.pick(names)
    rank = len(B.info[x].shape)
    if type_ == "shape":
        B.append("shape", {"Input": [x]}, {"Out": 1})
        return True
    if type_ == "flatten_contiguous_range":
        start = B.draw(st.integers(-max(rank, 1), max(rank, 1) - 1))
        stop = B.draw(st.integers(start % max(rank, 1), max(rank, 1) - 1))
        attrs = {"start_axis": start, "stop_axis": stop}
    elif type_ == "unsqueeze2":
        attrs = {"axes": [B.draw(st.integers(-rank - 1, rank))]}
    else:
        # squeeze2: listed axes (any size) or none, but not a dim declared -1 (the batch):
        # whether it is 1 is known only at run time, where Paddle's rule and ours differ
        declared = B.blk.var(x).shape
        if any(d < 0 for d in declared):
            known = [i for i, d in enumerate(declared) if d >= 0]
            if not known:
                return False
            attrs = {"axes": [B.pick(known)]}
        else:
            attrs = {"axes": B.draw(st.lists(st.integers(-rank, rank - 1), max_size=rank,
                                             unique=True))} if rank else {}
    B.append(type_, {"X": [x]}, {"Out": 1, "XShape": 1}, attrs)
    return True


def b_copies(B, type_):
    """stack, unstack, expand_v2, tile, where: tensors made of copies (at most 3 of each
    element, so sizes stay small)."""
    names = B.tensors(max_rank=3)
    if not names:
        return False
    x = B.pick(names)
    xi = B.info[x]
    shape, rank = xi.shape, len(xi.shape)
    if type_ == "stack":
        same = [n for n in names if B.info[n].shape == shape and B.info[n].dtype == xi.dtype]
        xs = [B.pick(same) for _ in range(B.draw(st.integers(1, 3)))]
        B.append(type_, {"X": xs}, {"Y": 1}, {"axis": B.draw(st.integers(-rank - 1, rank))})
    elif type_ == "unstack":
        if rank == 0:
            return False
        axis = B.draw(st.integers(0, rank - 1))
        B.append(type_, {"X": [x]}, {"Y": shape[axis]},
                 {"axis": axis - rank if B.draw(st.booleans()) else axis, "num": shape[axis]})
    elif type_ == "expand_v2":
        lead = [B.draw(st.integers(1, 3)) for _ in range(B.draw(st.integers(0, 3 - rank)))]
        own = [B.draw(st.integers(1, 3)) if d == 1 else B.pick([d, -1]) for d in shape]
        B.append(type_, {"X": [x]}, {"Out": 1}, {"shape": lead + own})
    elif type_ == "tile":
        reps = B.draw(st.lists(st.integers(1, 3), min_size=1, max_size=rank + 1))
        if np.prod(reps) > 3:
            reps = [1] * (len(reps) - 1) + [B.draw(st.integers(1, 3))]
        B.append(type_, {"X": [x]}, {"Out": 1}, {"repeat_times": reps})
    else:                                             # where
        same = [n for n in names if B.info[n].shape == shape and B.info[n].dtype == xi.dtype]
        seed = B.draw(st.integers(0, 2**16))
        cond = B.add_feed(np.random.default_rng(seed).integers(0, 2, shape).astype(bool))
        B.append(type_, {"Condition": [cond], "X": [x], "Y": [B.pick(same)]}, {"Out": 1})
    return True


def b_indices(B, type_):
    """gather (indices drawn inside X's axis), one_hot_v2 (classes inside depth), arg_max
    and arg_min (over a non-empty axis). Out-of-range indices are the fuzzer's and
    tests/test_index_ranges.py's."""
    seed = B.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    if type_ == "one_hot_v2":
        depth = B.draw(st.integers(1, 4))
        shape = tuple(B.draw(st.lists(st.integers(1, 3), max_size=2)))
        x = B.add_feed(rng.integers(0, depth, shape).astype(B.pick([I32, I64])))
        B.append(type_, {"X": [x]}, {"Out": 1}, {"depth": depth})
        return True
    names = B.tensors(FLOAT_TYPES + INT_TYPES, min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    shape = B.info[x].shape
    axis = B.draw(st.integers(0, len(shape) - 1))
    if type_ == "gather":
        index = B.add_feed(rng.integers(0, shape[axis], B.draw(st.integers(1, 4)))
                           .astype(B.pick([I32, I64])))
        B.append(type_, {"X": [x], "Index": [index]}, {"Out": 1}, {"axis": axis})
    else:
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"axis": axis - len(shape) if B.draw(st.booleans()) else axis,
                  "keepdims": B.draw(st.booleans())})
    return True


def b_embedding(B, type_):
    """lookup_table_v2 / lookup_table: the rows of a 2-D float tensor of the program at ids
    drawn among its rows (lookup_table's Ids end in a dim of 1), padding_idx -1 or one of
    the rows. Out-of-range ids are the fuzzer's and tests/test_index_ranges.py's."""
    names = B.tensors(FLOAT_TYPES, min_rank=2, max_rank=2)
    if not names:
        return False
    w = B.pick(names)
    rows = B.info[w].shape[0]
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    shape = tuple(B.draw(st.lists(st.integers(1, 3), max_size=2)))
    if type_ == "lookup_table":
        shape += (1,)
    ids = B.add_feed(rng.integers(0, rows, shape).astype(B.pick([I32, I64])))
    B.append(type_, {"Ids": [ids], "W": [w]}, {"Out": 1},
             {"padding_idx": B.draw(st.integers(-1, rows - 1))}, exact=True)
    return True


def _part_bounds(B, n, stride):
    """(start, end) for a part of an axis of n >= 1 that Paddle's rules accept, written
    with negative or out-of-range bounds at random; its length."""
    if stride > 0:
        s = B.draw(st.integers(0, n))
        e = B.draw(st.integers(s, n))
        end = e - n if e < n and B.draw(st.booleans()) else (n + 3 if e == n and
                                                              B.draw(st.booleans()) else e)
    else:
        s = B.draw(st.integers(0, n - 1))
        e = B.draw(st.integers(-1, s))
        end = e - n if 0 <= e and e - n < -1 and B.draw(st.booleans()) else e
    start = s - n if s < n and B.draw(st.booleans()) else s
    return start, end, len(range(s, e, stride))


def b_parts(B, type_):
    """slice, strided_slice, flip, cumsum, pad, pad3d, expand_as_v2 and range: parts,
    borders and sums of a tensor of the program (bounds Paddle's rules accept; reflect
    paddings below the dim), range over fed bounds that reach End."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ == "range":
        dtype = B.pick([I32, I64, F32, F64])
        step = B.pick([1, 2, -1, -3]) * (0.5 if dtype in FLOAT_TYPES else 1)
        start = B.draw(st.integers(-4, 4))
        end = start + B.draw(st.integers(0, 5)) * step
        bounds = [B.add_feed(np.array([v], dtype)) for v in (start, end, step)]
        B.append(type_, dict(zip(("Start", "End", "Step"), [[b] for b in bounds])), {"Out": 1})
        return True
    if type_ == "pad3d":
        x = B.add_feed(rng.uniform(-2, 2, [B.draw(st.integers(1, 2)) for _ in range(5)])
                       .astype(B.pick(FLOAT_TYPES)))
        mode = B.pick(["constant", "reflect", "replicate", "circular"])
        layout = B.pick(["NCDHW", "NDHWC"])
        dims = B.info[x].shape[2:] if layout == "NCDHW" else B.info[x].shape[1:4]
        top = [d - 1 if mode == "reflect" else 2 for d in dims[::-1]]     # W, H, D
        paddings = [B.draw(st.integers(0, t)) for t in top for _ in range(2)]
        B.append(type_, {"X": [x]}, {"Out": 1}, {"paddings": paddings, "mode": mode,
                                                 "value": B.pick([0.0, 1.5]),
                                                 "data_format": layout})
        return True
    numeric = FLOAT_TYPES + INT_TYPES
    if type_ == "cumsum":
        names = B.tensors(numeric, pred=lambda n, i: B.mag(n) * B.env[n].size <= MAX_MAG)
    else:
        names = B.tensors(numeric if type_ != "expand_as_v2" else None,
                          min_rank=0 if type_ == "flip" else 1, max_rank=3)
    if not names:
        return False
    x = B.pick(names)
    shape, rank = B.info[x].shape, len(B.info[x].shape)
    if type_ in ("slice", "strided_slice"):
        axes = B.draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                               unique=True))
        strides = [B.pick([1, 2, -1, -2]) if type_ == "strided_slice" else 1 for _ in axes]
        parts = [_part_bounds(B, shape[a], k) for a, k in zip(axes, strides)]
        attrs = {"axes": axes, "starts": [p[0] for p in parts], "ends": [p[1] for p in parts],
                 "decrease_axis": [a for a, p in zip(axes, parts)
                                   if p[2] == 1 and B.draw(st.booleans())]}
        if type_ == "strided_slice":
            attrs["strides"] = strides
        B.append(type_, {"Input": [x]}, {"Out": 1}, attrs)
    elif type_ == "flip":
        axes = B.draw(st.lists(st.integers(0, rank - 1), max_size=rank, unique=True)) \
            if rank else []
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"axis": [a - rank if B.draw(st.booleans()) else a for a in axes]})
    elif type_ == "cumsum":
        flatten = B.draw(st.booleans())
        span = 1 if flatten else max(rank, 1)
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"axis": B.draw(st.integers(-span, span - 1)), "flatten": flatten,
                  "exclusive": B.draw(st.booleans()), "reverse": B.draw(st.booleans())})
    elif type_ == "pad":
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"paddings": [B.draw(st.integers(0, 2)) for _ in range(2 * rank)],
                  "pad_value": B.pick([0.0, 1.0, -2.0])})
    else:                                             # expand_as_v2
        lead = [B.draw(st.integers(1, 3)) for _ in range(B.draw(st.integers(0, 3 - rank)))]
        target = lead + [B.draw(st.integers(1, 3)) if d == 1 else d for d in shape]
        ins = {"X": [x]}
        if B.draw(st.booleans()):                     # with Y: Paddle's -1 for its batch dim
            ins["Y"] = [B.add_feed(rng.uniform(-1, 1, target).astype(F32))]
            target = [-1] + target[1:] if B.draw(st.booleans()) else target
        B.append(type_, ins, {"Out": 1}, {"target_shape": target})
    return True


def b_pointwise_loss(B, type_):
    """The element-by-element losses, on a tensor of the program and fresh targets (bce's
    X: fresh probabilities)."""
    names = B.tensors(FLOAT_TYPES, min_rank=1 if type_ == "label_smooth" else 0,
                      pred=lambda n, i: B.mag(n) <= 1000)
    if not names:
        return False
    x = B.pick(names)
    shape, dtype = B.info[x].shape, B.info[x].dtype
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ == "huber_loss":
        same = [n for n in names if B.info[n].shape == shape and B.info[n].dtype == dtype]
        B.append(type_, {"X": [x], "Y": [B.pick(same)]}, {"Out": 1, "Residual": 1},
                 {"delta": B.pick([0.5, 1.0, 2.0])})
    elif type_ == "label_smooth":
        B.append(type_, {"X": [x]}, {"Out": 1}, {"epsilon": B.pick([0.0, 0.1, 0.5])})
    else:
        label = B.add_feed(rng.uniform(0, 1, shape).astype(dtype))
        if type_ == "bce_loss":
            x = B.add_feed(rng.uniform(0.05, 0.95, shape).astype(dtype))
        B.append(type_, {"X": [x], "Label": [label]}, {"Out": 1})
    return True


def b_scatter(B, type_):
    """gather_nd (each index column inside its axis), scatter (rows inside X, repeats
    too), index_select (inside dim), top_k_v2 (k inside the axis; ties are broken by
    position on both sides, but a rounding step can reorder near-ties: discrete)."""
    names = B.tensors(FLOAT_TYPES + INT_TYPES, min_rank=1)
    if not names:
        return False
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    x = B.pick(names)
    shape, dtype = B.info[x].shape, B.info[x].dtype
    index_type = B.pick([I32, I64])
    if type_ == "gather_nd":
        k = B.draw(st.integers(0, len(shape)))
        rows = B.draw(st.integers(1, 3))
        index = np.stack([rng.integers(0, d, rows) for d in shape[:k]], axis=-1) if k else \
            np.zeros((rows, 0), np.int64)
        B.append(type_, {"X": [x], "Index": [B.add_feed(index.astype(index_type))]},
                 {"Out": 1})
    elif type_ == "scatter":
        ids = rng.integers(0, shape[0], B.draw(st.integers(1, 3)))
        updates = rng.integers(-4, 5, (len(ids),) + shape[1:]) / 2
        B.append(type_, {"X": [x], "Ids": [B.add_feed(ids.astype(index_type))],
                         "Updates": [B.add_feed(updates.astype(dtype))]}, {"Out": 1},
                 {"overwrite": B.draw(st.booleans())})
    elif type_ == "index_select":
        dim = B.draw(st.integers(-len(shape), len(shape) - 1))
        index = rng.integers(0, shape[dim], B.draw(st.integers(1, 4)))
        B.append(type_, {"X": [x], "Index": [B.add_feed(index.astype(index_type))]},
                 {"Out": 1}, {"dim": dim})
    else:                                                 # top_k_v2
        axis = B.draw(st.integers(-len(shape), len(shape) - 1))
        B.append(type_, {"X": [x]}, {"Out": 1, "Indices": 1},
                 {"k": B.draw(st.integers(1, shape[axis])), "axis": axis,
                  "largest": B.draw(st.booleans())}, discrete=True)
    return True


def b_p_norm(B, type_):
    names = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) * np.prod(i.shape) <= MAX_MAG
                      and 0 not in i.shape)
    if not names:
        return False
    x = B.pick(names)
    rank = len(B.info[x].shape)
    attrs = {"porder": B.pick([2.0, 1.0, 3.0, float("inf"), float("-inf"), 0.0]),
             "keepdim": B.draw(st.booleans()), "asvector": rank == 0 or B.draw(st.booleans())}
    if rank:
        attrs["axis"] = B.draw(st.integers(-rank, rank - 1))
    B.append(type_, {"X": [x]}, {"Out": 1}, attrs)
    return True


def b_smooth_l1(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=2,
                      pred=lambda n, i: B.mag(n) * np.prod(i.shape) <= MAX_MAG / 4)
    if not names:
        return False
    x = B.pick(names)
    shape, dtype = B.info[x].shape, B.info[x].dtype
    same = [n for n in names if B.info[n].shape == shape and B.info[n].dtype == dtype]
    ins = {"X": [x], "Y": [B.pick(same)]}
    if B.draw(st.booleans()):
        ins["InsideWeight"] = [positive_feed(B, shape, dtype)]
        ins["OutsideWeight"] = [positive_feed(B, shape, dtype)]
    B.append(type_, ins, {"Diff": 1, "Out": 1}, {"sigma": B.pick([0.5, 1.0, 3.0])})
    return True


def b_transpose(B, type_):
    names = B.tensors(min_rank=1 if "transpose2_0d" in KNOWN_BUGS else 0)
    if not names:
        return False
    x = B.pick(names)
    perm = B.draw(st.permutations(list(range(len(B.info[x].shape)))))
    B.append("transpose2", {"X": [x]}, {"Out": 1, "XShape": 1}, {"axis": list(perm)})
    return True


def b_concat(B, type_):
    names = B.tensors(min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    xi = B.info[x]
    r = len(xi.shape)
    axis = B.draw(st.integers(-r, r - 1))
    a = axis % r
    others = B.tensors(pred=lambda n, i: i.dtype == xi.dtype and len(i.shape) == r and all(
        j == a or s == t for j, (s, t) in enumerate(zip(i.shape, xi.shape))))
    rest = B.draw(st.lists(st.sampled_from(others), max_size=2))
    B.append("concat", {"X": [x] + rest}, {"Out": 1}, {"axis": axis})
    return True


def b_split(B, type_):
    names = B.tensors(min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    shape = B.info[x].shape
    r = len(shape)
    axis = B.draw(st.integers(-r, r - 1))
    size = shape[axis % r]
    if B.draw(st.booleans()):
        num = B.pick(divisors(size))
        B.append("split", {"X": [x]}, {"Out": num}, {"axis": axis, "num": num})
        return True
    sections, rest = [], size
    while rest and len(sections) < 3:
        s = B.draw(st.integers(1, rest))
        sections.append(s)
        rest -= s
    if rest:
        sections[-1] += rest
    if B.draw(st.booleans()):
        sections[B.draw(st.integers(0, len(sections) - 1))] = -1
    B.append("split", {"X": [x]}, {"Out": len(sections)}, {"axis": axis, "sections": sections})
    return True


def b_sum(B, type_):
    names = B.tensors(FLOAT_TYPES + INT_TYPES, pred=lambda n, i: B.mag(n) * 3 <= MAX_MAG)
    if not names:
        return False
    x = B.pick(names)
    xi = B.info[x]
    same = B.tensors(pred=lambda n, i: i.shape == xi.shape and i.dtype == xi.dtype
                     and B.mag(n) * 3 <= MAX_MAG)
    xs = [x] + B.draw(st.lists(st.sampled_from(same), max_size=2))
    # three float32 terms: the kernel adds in float32, the reference in float64
    B.append("sum", {"X": xs}, {"Out": 1}, exact=len(xs) <= 2 or xi.dtype != F32)
    return True


def binary_ok(B, type_, x, y) -> bool:
    mx, my = B.mag(x), B.mag(y)
    if type_ in ("elementwise_add", "elementwise_sub"):
        return mx + my <= MAX_MAG
    if type_ == "elementwise_mul":
        return mx * my <= MAX_MAG
    if type_ != "elementwise_div":
        return True
    yv = B.env[y]
    if B.info[y].dtype in INT_TYPES:                 # integer division: positive divisors
        return B.info[y].exact and yv.min() >= 1
    return B.info[y].stable and np.abs(yv).min() >= 0.25 and mx * 4 <= MAX_MAG


def b_elementwise(B, type_):
    dtypes = FLOAT_TYPES + INT_TYPES + ((B8,) if type_ in ("equal", "not_equal") else ())
    names = B.tensors(dtypes)
    if type_ == "elementwise_div" and B.draw(st.integers(0, 2)) == 0:
        xs = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) * 4 <= MAX_MAG)
        if not xs:
            return False
        x = B.pick(xs)
        shape = B.info[x].shape
        lo = B.draw(st.integers(0, len(shape)))     # a positive Y of a trailing sub-shape
        y = positive_feed(B, shape[lo:], B.info[x].dtype)
        B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1}, {"axis": lo})
        return True
    pairs = []
    for x in names:
        xi = B.info[x]
        for y in names:
            yi = B.info[y]
            if yi.dtype != xi.dtype or not binary_ok(B, type_, x, y):
                continue
            big, small = (xi, yi) if len(yi.shape) <= len(xi.shape) else (yi, xi)
            for a in fit_axes(big.shape, small.shape):
                pairs.append((x, y, a, a == len(big.shape) - len(small.shape)))
    if not pairs:
        return False
    x, y, a, at_end = B.pick(pairs)
    if at_end and B.draw(st.booleans()):
        attrs = B.pick([{}, {"axis": -1}])
    else:
        attrs = {"axis": a}
    B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1}, attrs)
    return True


def _np_broadcastable(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def bool_feed(B, shape) -> str:
    seed = B.draw(st.integers(0, 2**16))
    return B.add_feed(np.random.default_rng(seed).integers(0, 2, shape).astype(bool))


def b_logical(B, type_):
    names = B.tensors((B8,))
    if not names or B.draw(st.integers(0, 3)) == 0:
        like = B.tensors()
        names = names + [bool_feed(B, B.info[B.pick(like)].shape if like else (2, 3))]
    x = B.pick(names)
    if type_ == "logical_not":
        B.append(type_, {"X": [x]}, {"Out": 1})
        return True
    xs = B.info[x].shape
    ys = [y for y in names if _np_broadcastable(xs, B.info[y].shape)]
    B.append(type_, {"X": [x], "Y": [B.pick(ys)]}, {"Out": 1})
    return True


def b_matmul(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1)
    combos = []
    for x in names:
        for y in names:
            xi, yi = B.info[x], B.info[y]
            if xi.dtype != yi.dtype:
                continue
            for tx in (False, True):
                for ty in (False, True):
                    got = matmul_out(xi.shape, yi.shape, tx, ty)
                    if got and got[0] * B.mag(x) * B.mag(y) * 2 <= MAX_MAG:
                        combos.append((x, y, tx, ty))
    if not combos:
        return False
    x, y, tx, ty = B.pick(combos)
    if type_ == "matmul_v2":
        attrs = {"trans_x": tx, "trans_y": ty}
    else:
        attrs = {"transpose_X": tx, "transpose_Y": ty, "alpha": B.pick([1.0, 0.5, -2.0])}
    B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1}, attrs)
    return True


def b_bmm(B, type_):
    """bmm of a 3-D tensor X with a 3-D Y of the same batch whose rows match X's columns:
    one already in the program, or a new input of that shape."""
    xs = B.tensors(FLOAT_TYPES, min_rank=3, max_rank=3)
    if xs:
        x = B.pick(xs)
    else:       # none in the program: a new input (else a program may never take bmm)
        rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
        x = B.add_feed(rng.uniform(-1, 1, [B.draw(st.integers(1, 3)) for _ in range(3)])
                       .astype(B.pick(FLOAT_TYPES)))
    (b, _, k), dtype = B.info[x].shape, B.info[x].dtype
    ys = [y for y in B.tensors([dtype], min_rank=3, max_rank=3)
          if B.info[y].shape[:2] == (b, k) and k * B.mag(x) * B.mag(y) * 2 <= MAX_MAG]
    if ys and B.draw(st.booleans()):
        y = B.pick(ys)
    else:
        y = positive_feed(B, (b, k, B.draw(st.integers(1, 3))), dtype)
        if k * B.mag(x) * B.mag(y) * 2 > MAX_MAG:
            return False
    B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1})
    return True


def b_mul(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1)
    combos = []
    for x in names:
        for y in names:
            xs, ys = B.info[x].shape, B.info[y].shape
            if B.info[x].dtype != B.info[y].dtype or len(ys) < 2:
                continue
            for xn in range(1, len(xs) + 1):
                for yn in range(1, len(ys)):
                    k = int(np.prod(xs[xn:]))
                    if k == int(np.prod(ys[:yn])) and k * B.mag(x) * B.mag(y) <= MAX_MAG:
                        combos.append((x, y, xn, yn))
    if not combos:                     # a new Y that fits some X
        if not names:
            return False
        x = B.pick(names)
        xs = B.info[x].shape
        xn = B.draw(st.integers(1, len(xs)))
        k = int(np.prod(xs[xn:]))
        if k * B.mag(x) * 2 > MAX_MAG:
            return False
        y = B.add_feed(B.draw(input_values((k, B.draw(st.integers(1, 4))), B.info[x].dtype)))
        combos = [(x, y, xn, 1)]
    x, y, xn, yn = B.pick(combos)
    B.append("mul", {"X": [x], "Y": [y]}, {"Out": 1},
             {"x_num_col_dims": xn, "y_num_col_dims": yn})
    return True


def mask_feed(B, n) -> str:
    return B.add_feed(np.array([B.draw(st.integers(0, n - 1))], np.int32))


def b_select(B, type_):
    names = B.tensors()
    if not names:
        return False
    x = B.pick(names)
    if type_ == "select_input":
        xi = B.info[x]
        same = B.tensors(pred=lambda n, i: i.shape == xi.shape and i.dtype == xi.dtype)
        xs = [x] + B.draw(st.lists(st.sampled_from(same), max_size=2))
        B.append(type_, {"X": xs, "Mask": [mask_feed(B, len(xs))]}, {"Out": 1})
    else:
        n = B.draw(st.integers(1, 3))
        B.append(type_, {"X": [x], "Mask": [mask_feed(B, n)]}, {"Out": n})
    return True


def b_fill(B, type_):
    dtype = B.pick([F32, F64, I32, I64, B8])
    value = B.pick([0.0, 1.0, -2.0, 0.5]) if dtype in FLOAT_TYPES else \
        B.pick([0.0, 1.0, -3.0]) if dtype in INT_TYPES else B.pick([0.0, 1.0])
    shape = B.draw(st.lists(st.integers(1, 4), max_size=3))
    if type_ == "fill_constant":
        B.append(type_, {}, {"Out": 1}, {"shape": shape, "dtype": CODE_OF[dtype],
                                         "value": value})
        return True
    if type_ == "assign_value":
        seed = B.draw(st.integers(0, 2**16))
        v = np.random.default_rng(seed).integers(-4, 5, shape) / 2
        array = (v > 0) if dtype == B8 else v.astype(dtype)
        B.append(type_, {}, {"Out": 1}, assign_value_attrs(np.asarray(array)))
        return True
    if type_ == "increment":
        names = B.tensors(FLOAT_TYPES + INT_TYPES, pred=lambda n, i: np.prod(i.shape) == 1
                          and B.mag(n) <= 1000)
        if not names:
            return False
        x = B.pick(names)
        step = B.pick([1.0, -1.0, 2.0] if B.info[x].dtype in INT_TYPES else [1.0, -0.5, 2.5])
        B.append(type_, {"X": [x]}, {"Out": 1}, {"step": step})
        return True
    names = B.tensors(min_rank=1 if type_ == "fill_constant_batch_size_like" else 0)
    if not names:
        return False
    x = B.pick(names)
    if type_ == "fill_zeros_like":
        B.append(type_, {"X": [x]}, {"Out": 1})
    elif type_ == "fill_any_like":
        code = B.pick([-1, CODE_OF[dtype]])
        if code == -1 and B.info[x].dtype != dtype:
            value = 1.0
        B.append(type_, {"X": [x]}, {"Out": 1}, {"value": value, "dtype": code})
    else:
        shape = shape or [1]
        out_idx = B.draw(st.integers(0, len(shape) - 1))
        shape[out_idx] = -1
        in_idx = B.draw(st.integers(0, len(B.info[x].shape) - 1))
        B.append(type_, {"Input": [x]}, {"Out": 1},
                 {"shape": shape, "value": value, "dtype": CODE_OF[dtype],
                  "input_dim_idx": in_idx, "output_dim_idx": out_idx})
    return True


def b_random(B, type_):
    shape = B.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    attrs = {"shape": shape, "seed": B.draw(st.integers(1, 1000)),
             "dtype": B.pick([FP32, FP64])}
    if type_ == "uniform_random":
        attrs.update(min=B.pick([-1.0, 0.0, 2.0]), max=B.pick([3.0, 4.5]))
    else:
        attrs.update(mean=B.pick([0.0, 1.0]), std=B.pick([1.0, 0.5]))
    B.append(type_, {}, {"Out": 1}, attrs)
    return True


def row_masks(B, n) -> list[str]:
    """Bit-exact bool variables with one value per row of an n-row tensor."""
    return B.tensors((B8,), pred=lambda m, i: i.exact and i.shape in ((n,), (n, 1)))


def b_split_lod(B, type_="split_lod_tensor"):
    names = B.tensors(min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    n = B.info[x].shape[0]
    masks = row_masks(B, n)
    if masks and B.draw(st.booleans()):
        m = B.pick(masks)
    else:
        m = bool_feed(B, (n, 1))
    B.append("split_lod_tensor", {"X": [x], "Mask": [m]}, {"OutTrue": 1, "OutFalse": 1})
    return True


def merge_candidates(B):
    combos = []
    for m, mi in B.info.items():
        if mi.kind != "tensor" or mi.dtype != B8 or not mi.exact or \
                len(mi.shape) not in (1, 2) or mi.shape[1:] not in ((), (1,)):
            continue
        rows = np.asarray(B.env[m]).reshape(-1)
        n_true, n_false = int(rows.sum()), int((~rows).sum())
        for t, ti in B.info.items():
            if ti.kind != "tensor" or len(ti.shape) < 1 or ti.shape[0] != n_true:
                continue
            for f, fi in B.info.items():
                if fi.kind == "tensor" and fi.dtype == ti.dtype and len(fi.shape) >= 1 \
                        and fi.shape[0] == n_false and fi.shape[1:] == ti.shape[1:]:
                    combos.append((m, t, f))
    return combos


def b_merge_lod(B, type_):
    combos = merge_candidates(B)
    if not combos:                      # split something first (split outputs always fit)
        if not b_split_lod(B):
            return False
        combos = merge_candidates(B)
    m, t, f = B.pick(combos)
    B.append("merge_lod_tensor", {"X": [m], "Mask": [m], "InTrue": [t], "InFalse": [f]},
             {"Out": 1})
    return True


def index_var(B, i: int) -> str:
    _, out = B.append("fill_constant", {}, {"Out": 1},
                      {"shape": [1], "dtype": INT64, "value": float(i)})
    return out["Out"][0]


def b_array(B, type_):
    """write_to_array x k into one array, then ``type_`` (read_from_array,
    lod_array_length or tensor_array_to_tensor). The array is written only here, before it
    is read."""
    names = B.tensors(min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    xi = B.info[x]
    same = B.tensors(pred=lambda n, i: i.shape == xi.shape and i.dtype == xi.dtype)
    xs = [x] + B.draw(st.lists(st.sampled_from(same), max_size=2))
    order = list(B.draw(st.permutations(list(range(len(xs))))))
    arr = B.fresh()
    B.blk.create_var(arr, type=VarType.LOD_TENSOR_ARRAY, dtype=xi.dtype.name)
    for pos, value in zip(order, xs):
        B.append("write_to_array", {"X": [value], "I": [index_var(B, pos)]}, {"Out": [arr]})
    if type_ == "read_from_array":
        i = index_var(B, B.draw(st.integers(0, len(xs) - 1)))
        B.append(type_, {"X": [arr], "I": [i]}, {"Out": 1})
    elif type_ == "lod_array_length":
        B.append(type_, {"X": [arr]}, {"Out": 1})
    else:
        stack = B.draw(st.booleans())
        r = len(xi.shape) + (1 if stack else 0)
        B.append(type_, {"X": [arr]}, {"Out": 1, "OutIndex": 1},
                 {"axis": B.draw(st.integers(0, r - 1)), "use_stack": stack})
    return True


def b_softmax_xent(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1, pred=lambda n, i: B.mag(n) <= 1000)
    if not names:
        return False
    x = B.pick(names)
    shape = B.info[x].shape
    r = len(shape)
    axis = B.draw(st.integers(-r, r - 1))
    classes = shape[axis % r]
    label_shape = list(shape)
    label_shape[axis % r] = 1
    seed = B.draw(st.integers(0, 2**16))
    label = np.random.default_rng(seed).integers(0, classes, label_shape)
    attrs = {"axis": axis}
    if B.draw(st.booleans()):                   # some rows ignored
        attrs["ignore_index"] = B.pick([-100, 0])
        label = np.where(np.random.default_rng(seed + 1).random(label_shape) < 0.3,
                         attrs["ignore_index"], label)
    B.append(type_, {"Logits": [x], "Label": [B.add_feed(label.astype(np.int64))]},
             {"Softmax": 1, "Loss": 1}, attrs)
    return True


def b_cross_entropy(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1,
                      pred=lambda n, i: i.stable and B.env[n].min() >= 0.05)
    if not names:
        like = B.tensors(min_rank=1)
        if not like:
            return False
        li = B.info[B.pick(like)]
        names = [positive_feed(B, li.shape, li.dtype if li.dtype in FLOAT_TYPES else F32)]
    x = B.pick(names)
    xi = B.info[x]
    soft = B.tensors(pred=lambda n, i: i.shape == xi.shape and i.dtype == xi.dtype
                     and i.stable and B.env[n].min() >= 0 and B.mag(n) <= 100)
    if soft and type_ == "cross_entropy" and B.draw(st.booleans()):
        B.append(type_, {"X": [x], "Label": [B.pick(soft)]}, {"Y": 1}, {"soft_label": True})
        return True
    seed = B.draw(st.integers(0, 2**16))
    label = np.random.default_rng(seed).integers(0, xi.shape[-1], xi.shape[:-1] + (1,))
    if type_ == "cross_entropy2":             # hard labels only; some rows ignored
        label = np.where(np.random.default_rng(seed + 1).random(label.shape) < 0.3, -100,
                         label)
        B.append(type_, {"X": [x], "Label": [B.add_feed(label.astype(np.int64))]},
                 {"Y": 1, "MatchX": 1, "XShape": 1})
        return True
    B.append(type_, {"X": [x], "Label": [B.add_feed(label.astype(np.int64))]}, {"Y": 1})
    return True


def b_optimizer(B, type_):
    names = B.tensors(FLOAT_TYPES, min_rank=1 if "optimizer_0d" in KNOWN_BUGS else 0,
                      pred=lambda n, i: B.mag(n) <= 100)
    if not names:
        return False
    p = B.pick(names)
    pi = B.info[p]
    like = B.tensors(pred=lambda n, i: i.shape == pi.shape and i.dtype == pi.dtype
                     and B.mag(n) <= 100)
    lr = B.add_feed(np.array([B.pick([0.1, 0.5, 1.0])], np.float32))
    ins = {"Param": [p], "Grad": [B.pick(like)], "LearningRate": [lr]}
    if type_ == "sgd":
        B.append(type_, ins, {"ParamOut": 1})
    elif type_ == "momentum":
        ins["Velocity"] = [B.pick(like)]
        B.append(type_, ins, {"ParamOut": 1, "VelocityOut": 1},
                 {"mu": B.pick([0.9, 0.5]), "use_nesterov": B.draw(st.booleans())})
    elif type_ == "adagrad":
        ins["Moment"] = [positive_feed(B, pi.shape, pi.dtype)]
        B.append(type_, ins, {"ParamOut": 1, "MomentOut": 1},
                 {"epsilon": B.pick([1e-6, 1e-2])})
    elif type_ == "rmsprop":
        centered = B.draw(st.booleans())
        # centered divides by MeanSquare - MeanGrad^2: a MeanGrad well below it
        ins.update(MeanSquare=[positive_feed(B, pi.shape, pi.dtype)],
                   Moment=[B.pick(like)],
                   MeanGrad=[B.add_feed(np.full(pi.shape, 0.1, pi.dtype))])
        B.append(type_, ins, {"ParamOut": 1, "MomentOut": 1, "MeanSquareOut": 1,
                              "MeanGradOut": 1},
                 {"centered": centered, "momentum": B.pick([0.0, 0.9]),
                  "decay": B.pick([0.9, 0.5]), "epsilon": 1e-6})
    else:                                     # adam, adamw, lamb
        m2 = [n for n in like if B.info[n].stable and B.env[n].min() >= 0.05]
        m2 = [B.pick(m2)] if m2 and B.draw(st.booleans()) else \
            [positive_feed(B, pi.shape, pi.dtype)]
        ins.update(Moment1=[B.pick(like)], Moment2=m2,
                   Beta1Pow=[B.add_feed(np.array([B.pick([0.9, 0.5])], np.float32))],
                   Beta2Pow=[B.add_feed(np.array([B.pick([0.999, 0.7])], np.float32))])
        attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": B.pick([1e-8, 1e-3])}
        if type_ == "adamw":
            attrs.update(coeff=B.pick([0.0, 0.01, 0.5]), with_decay=B.draw(st.booleans()),
                         lr_ratio=B.pick([1.0, 0.5]))
        if type_ == "lamb":
            attrs.update(weight_decay=B.pick([0.0, 0.01]),
                         always_adapt=B.draw(st.booleans()))
        B.append(type_, ins, {"ParamOut": 1, "Moment1Out": 1, "Moment2Out": 1,
                              "Beta1PowOut": 1, "Beta2PowOut": 1}, attrs)
    return True


def b_clip_by_norm(B, type_):
    names = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) <= 1000)
    if not names:
        return False
    B.append(type_, {"X": [B.pick(names)]}, {"Out": 1},
             {"max_norm": B.pick([0.1, 1.0, 100.0])})
    return True


def b_conv(B, type_):
    """conv2d, conv2d_transpose and their depthwise twins on a 4-D float tensor of the
    program (or a fresh one) and a fresh filter (conv3d, conv3d_transpose: 5-D, smaller
    spatial dims): either layout, groups dividing the channels, windows that fit the
    input, an output_padding the strides reach."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    last = B.draw(st.booleans())
    rank = 3 if "3d" in type_ else 2                      # spatial dims
    names = B.tensors(FLOAT_TYPES, min_rank=rank + 2, max_rank=rank + 2,
                      pred=lambda n, i: B.mag(n) <= 100 and min(i.shape) > 0)
    if names and B.draw(st.booleans()):
        x = B.pick(names)
    else:
        dims = [B.draw(st.integers(1, 2)), B.draw(st.integers(1, 4))] + \
            [B.draw(st.integers(1, 5 if rank == 2 else 3)) for _ in range(rank)]
        x = B.add_feed(rng.uniform(-1, 1, dims).astype(B.pick(FLOAT_TYPES)))
    shape, dtype = B.info[x].shape, B.info[x].dtype
    c, hw = (shape[-1], shape[1:-1]) if last else (shape[1], shape[2:])
    groups = c if type_.startswith("depthwise") else B.pick(divisors(c))
    k = [B.draw(st.integers(1, min(3, n))) for n in hw]
    d = [B.pick([1, 2]) if 2 * (kk - 1) + 1 <= n else 1 for kk, n in zip(k, hw)]
    s = [B.pick([1, 2]) for _ in hw]
    # (a transposed conv's paddings stay within the window's reach: its output is not empty)
    top = [1 if not type_.endswith("transpose") else min(1, dd * (kk - 1) // 2)
           for dd, kk in zip(d, k)]
    pads = B.pick([[B.draw(st.integers(0, t)) for t in top],
                   [B.draw(st.integers(0, t)) for t in top for _ in range(2)]])
    attrs = {"strides": s, "paddings": pads, "dilations": d, "groups": groups,
             "padding_algorithm": B.pick(["EXPLICIT", "EXPLICIT", "SAME", "VALID"]),
             "data_format": "NHWC" if last else "NCHW"}
    if type_ == "conv3d":                     # (Paddle saves conv3d_transpose's as NCHW/NHWC)
        attrs["data_format"] = "NDHWC" if last else "NCDHW"
    if type_.endswith("transpose"):
        w = rng.uniform(-1, 1, [c, 1 if groups == c else B.draw(st.integers(1, 2))] + k)
        if B.draw(st.booleans()):
            # (SAME sets the dilations to 1 first: conv.pads_and_dilations)
            reach = d if attrs["padding_algorithm"] != "SAME" else [1] * len(d)
            attrs["output_padding"] = [B.draw(st.integers(0, max(a, b) - 1))
                                       for a, b in zip(s, reach)]
    else:
        w = rng.uniform(-1, 1, [groups * B.draw(st.integers(1, 2)), c // groups] + k)
    f = B.add_feed(w.astype(dtype))
    B.append(type_, {"Input": [x], "Filter": [f]}, {"Output": 1}, attrs)
    return True


def b_norm(B, type_):
    """batch_norm (training or with the given statistics, either layout), instance_norm
    and group_norm on a fresh float tensor of rank 2 to 4 (values spread over [-1, 1), so
    no group is nearly constant: normalizing one would magnify rounding), per-channel
    Scale, Bias and, for batch_norm, running statistics (a positive Variance)."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    dtype = B.pick(FLOAT_TYPES)
    rank = B.draw(st.integers(2 if type_ != "instance_norm" else 3, 4))
    dims = [B.draw(st.integers(2, 3)) for _ in range(rank)]
    last = type_ != "instance_norm" and rank > 2 and B.draw(st.booleans())
    c = dims[-1] if last else dims[1]
    x = B.add_feed(rng.uniform(-1, 1, dims).astype(dtype))
    vec = lambda low, high: B.add_feed(rng.uniform(low, high, c).astype(dtype))  # noqa: E731
    ins = {"X": [x], "Scale": [vec(0.5, 1.5)], "Bias": [vec(-1, 1)]}
    attrs = {"epsilon": B.pick([1e-5, 1e-3])}
    if type_ == "batch_norm":
        ins.update(Mean=[vec(-1, 1)], Variance=[vec(0.5, 2)])
        attrs.update(momentum=B.pick([0.9, 0.5]), is_test=B.draw(st.booleans()),
                     use_global_stats=B.draw(st.booleans()),
                     data_layout="NHWC" if last else "NCHW")
        outs = {"Y": 1, "MeanOut": 1, "VarianceOut": 1, "SavedMean": 1, "SavedVariance": 1}
    elif type_ == "group_norm":
        attrs.update(groups=B.pick(divisors(c)), data_layout="NHWC" if last else "NCHW")
        outs = {"Y": 1, "Mean": 1, "Variance": 1}
    else:
        outs = {"Y": 1, "SavedMean": 1, "SavedVariance": 1}
    B.append(type_, ins, outs, attrs)
    return True


def b_layer_norm(B, type_):
    """layer_norm on a fresh float tensor of rank 2 to 4 (values spread over [-1, 1), as
    b_norm's), begin_norm_axis anywhere inside it, with or without Scale and Bias."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    dtype = B.pick(FLOAT_TYPES)
    rank = B.draw(st.integers(2, 4))
    dims = [B.draw(st.integers(2, 3)) for _ in range(rank)]
    axis = B.draw(st.integers(1, rank - 1))
    right = int(np.prod(dims[axis:]))
    ins = {"X": [B.add_feed(rng.uniform(-1, 1, dims).astype(dtype))]}
    for slot, low, high in (("Scale", 0.5, 1.5), ("Bias", -1, 1)):
        if B.draw(st.booleans()):
            ins[slot] = [B.add_feed(rng.uniform(low, high, right).astype(dtype))]
    B.append(type_, ins, {"Y": 1, "Mean": 1, "Variance": 1},
             {"begin_norm_axis": axis, "epsilon": B.pick([1e-5, 1e-3])})
    return True


def b_rnn(B, type_):
    """The fused rnn op on a fresh time-major float sequence: any mode, 1 or 2 layers,
    either direction count, lengths or none (some 0, some full), small weights."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    dtype = B.pick(FLOAT_TYPES)
    mode = B.pick(["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
    steps, batch, size, hidden = (B.draw(st.integers(1, 3)) for _ in range(4))
    layers, dirs = B.draw(st.integers(1, 2)), B.draw(st.integers(1, 2))
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)

    def feed(*shape):
        return B.add_feed(rng.uniform(-0.6, 0.6, shape).astype(dtype))
    mats, biases = [], []
    for k in range(layers * dirs):
        mats += [feed(gates * hidden, size if k < dirs else dirs * hidden),
                 feed(gates * hidden, hidden)]
        biases += [feed(gates * hidden), feed(gates * hidden)]
    states = 2 if mode == "LSTM" else 1
    ins = {"Input": [feed(steps, batch, size)],
           "PreState": [feed(layers * dirs, batch, hidden) for _ in range(states)],
           "WeightList": mats + biases}
    if B.draw(st.booleans()):
        ins["SequenceLength"] = [B.add_feed(rng.integers(0, steps + 1, batch))]
    B.append(type_, ins, {"Out": 1, "State": states, "Reserve": 1},
             {"mode": mode, "input_size": size, "hidden_size": hidden, "num_layers": layers,
              "is_bidirec": dirs == 2})
    return True


def b_dropout(B, type_):
    """dropout of a float tensor: in test mode, or training with p = 0 or 1 (all kept, all
    dropped: the reference knows those), or a seeded random mask (shapes only)."""
    names = B.tensors(FLOAT_TYPES)
    if not names:
        return False
    attrs = {"dropout_prob": B.pick([0.0, 0.3, 1.0]), "is_test": B.draw(st.booleans()),
             "dropout_implementation": B.pick(["downgrade_in_infer", "upscale_in_train"]),
             "fix_seed": True, "seed": B.draw(st.integers(1, 1000))}
    B.append(type_, {"X": [B.pick(names)]}, {"Out": 1, "Mask": 1}, attrs)
    return True


def b_pool(B, type_):
    """pool2d (max or avg, either layout, paddings below the window, ceil_mode where the
    last window still holds an element, SAME/VALID, global, adaptive),
    max_pool2d_with_index (its Mask moves on a near-tie: discrete), the interpolations
    (a size or a scale, align_corners, align_mode), prelu (each mode) and maxout, on a 4-D float
    tensor of the program or a fresh one."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    names = B.tensors(FLOAT_TYPES, min_rank=4, max_rank=4, pred=lambda n, i: min(i.shape) > 0)
    if names and B.draw(st.booleans()):
        x = B.pick(names)
    else:
        dims = [B.draw(st.integers(1, 2)), B.draw(st.integers(1, 3)),
                B.draw(st.integers(1, 5)), B.draw(st.integers(1, 5))]
        x = B.add_feed(rng.uniform(-1, 1, dims).astype(B.pick(FLOAT_TYPES)))
    shape, dtype = B.info[x].shape, B.info[x].dtype
    last = type_ != "max_pool2d_with_index" and B.draw(st.booleans())
    hw = shape[1:3] if last else shape[2:]
    if type_ == "prelu":
        mode = B.pick(["all", "channel", "element"])
        alpha = {"all": [1], "channel": [shape[3] if last else shape[1]],
                 "element": list(shape[1:])}[mode]
        a = B.add_feed(rng.uniform(-1, 1, alpha).astype(dtype))
        B.append(type_, {"X": [x], "Alpha": [a]}, {"Out": 1},
                 {"mode": mode, "data_format": "NHWC" if last else "NCHW"})
        return True
    if type_ == "maxout":                   # groups: a divisor of the channel count
        groups = B.pick(divisors(shape[3] if last else shape[1]))
        B.append(type_, {"X": [x]}, {"Out": 1}, {"groups": groups, "axis": -1 if last else 1})
        return True
    if type_.endswith("interp_v2"):
        method = type_.split("_")[0]
        attrs = {"interp_method": method, "align_corners": B.draw(st.booleans()),
                 "align_mode": B.pick([0, 1]), "data_layout": "NHWC" if last else "NCHW"}
        if B.draw(st.booleans()):
            attrs.update(out_h=B.draw(st.integers(1, 6)), out_w=B.draw(st.integers(1, 6)))
        else:
            attrs["scale"] = [B.pick([1.0, 1.5, 2.0]), B.pick([1.0, 1.5, 2.0])]
        B.append(type_, {"X": [x]}, {"Out": 1}, attrs)
        return True
    return _append_pool(B, type_, x, hw, ("NHWC" if last else "NCHW") if type_ == "pool2d"
                        else None)


# (op type, builder): every op type is equally likely. The simplest come first, as
# hypothesis shrinks toward the start of the list.
OP_CHOICES = (
    [(t, b_unary) for t in registry.types_where("unary")]      # relu, sigmoid, ..., gelu
    + [("scale", b_scale), ("cast", b_cast), ("assign", b_copy),
       ("rnn_memory_helper", b_copy)]
    + [(t, b_elementwise) for t in ("elementwise_add", "elementwise_sub", "elementwise_mul",
                                    "elementwise_div", "elementwise_max", "elementwise_min",
                                    "greater_than", "less_than", "equal", "not_equal")]
    + [(t, b_reduce) for t in ("mean", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                               "reduce_prod", "squared_l2_norm")]
    + [(t, b_squeeze) for t in ("squeeze2", "unsqueeze2", "flatten_contiguous_range",
                                "shape")]
    + [("log_softmax", b_softmax)]
    + [("logsumexp", b_logsumexp)]
    + [(t, b_copies) for t in ("stack", "unstack", "expand_v2", "tile", "where")]
    + [(t, b_indices) for t in ("gather", "one_hot_v2", "arg_max", "arg_min")]
    + [(t, b_embedding) for t in ("lookup_table_v2", "lookup_table")]
    + [(t, b_parts) for t in ("slice", "strided_slice", "flip", "cumsum", "pad", "pad3d",
                              "expand_as_v2", "range")]
    + [(t, b_pointwise_loss) for t in ("sigmoid_cross_entropy_with_logits", "bce_loss",
                                       "huber_loss", "label_smooth")]
    + [("softmax", b_softmax), ("reshape2", b_reshape), ("transpose2", b_transpose),
       ("concat", b_concat), ("split", b_split), ("sum", b_sum),
       ("matmul_v2", b_matmul), ("matmul", b_matmul), ("mul", b_mul), ("bmm", b_bmm)]
    + [(t, b_logical) for t in ("logical_and", "logical_or", "logical_not")]
    + [("select_input", b_select), ("select_output", b_select)]
    + [(t, b_fill) for t in ("fill_zeros_like", "fill_any_like", "fill_constant",
                             "assign_value", "fill_constant_batch_size_like", "increment")]
    + [("split_lod_tensor", b_split_lod), ("merge_lod_tensor", b_merge_lod)]
    + [(t, b_array) for t in ("read_from_array", "lod_array_length",
                              "tensor_array_to_tensor")]
    + [("softmax_with_cross_entropy", b_softmax_xent), ("cross_entropy", b_cross_entropy)]
    + [(t, b_scatter) for t in ("gather_nd", "scatter", "index_select", "top_k_v2")]
    + [("p_norm", b_p_norm), ("smooth_l1_loss", b_smooth_l1),
       ("cross_entropy2", b_cross_entropy)]
    + [(t, b_optimizer) for t in ("sgd", "momentum", "adam", "adamw", "adagrad", "rmsprop",
                                  "lamb")]
    + [("clip_by_norm", b_clip_by_norm)]
    + [(t, b_conv) for t in ("conv2d", "depthwise_conv2d", "conv2d_transpose",
                             "depthwise_conv2d_transpose", "conv3d", "conv3d_transpose")]
    + [(t, b_norm) for t in ("batch_norm", "instance_norm", "group_norm")]
    + [("layer_norm", b_layer_norm), ("rnn", b_rnn)]
    + [("dropout", b_dropout)]
    + [(t, b_pool) for t in ("pool2d", "max_pool2d_with_index", "nearest_interp_v2",
                             "bilinear_interp_v2", "prelu", "maxout")]
    + [(t, b_random) for t in ("uniform_random", "gaussian_random")]
)


# --- argsort, masked_select, roll, meshgrid, tril_triu (ops/sort.py, masked_select.py,
# roll.py, meshgrid.py, triangular.py) ------------------------------------------------------
def b_manipulation(B, type_):
    """argsort (ties by position on both sides, but a rounding step can reorder near-ties:
    discrete), masked_select (a fed mask of X's shape, or of its last dim, broadcast),
    roll (shifts of either sign along some axes, or flattened), meshgrid (2 or 3 vectors of
    one dtype), tril_triu (a diagonal in [-3, 3] of matrices)."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ == "meshgrid":
        names = B.tensors(FLOAT_TYPES + INT_TYPES, max_rank=1)
        if not names:
            return False
        dtype = B.info[B.pick(names)].dtype
        same = [n for n in names if B.info[n].dtype == dtype]
        xs = [B.pick(same) for _ in range(B.draw(st.integers(2, 3)))]
        B.append(type_, {"X": xs}, {"Out": len(xs)})
        return True
    min_rank = {"tril_triu": 2, "argsort": 1}.get(type_, 0)
    names = B.tensors(FLOAT_TYPES + INT_TYPES, min_rank=min_rank)
    if not names:
        return False
    x = B.pick(names)
    shape = B.info[x].shape
    rank = len(shape)
    if type_ == "argsort":
        B.append(type_, {"X": [x]}, {"Out": 1, "Indices": 1},
                 {"axis": B.draw(st.integers(-rank, rank - 1)),
                  "descending": B.draw(st.booleans())}, discrete=True)
    elif type_ == "masked_select":
        mask_shape = shape[-1:] if rank and B.draw(st.booleans()) else shape
        mask = B.add_feed(rng.integers(0, 2, mask_shape).astype(bool))
        B.append(type_, {"X": [x], "Mask": [mask]}, {"Y": 1})
    elif type_ == "roll":
        axes = [] if rank == 0 or B.draw(st.booleans()) else \
            B.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank))
        shifts = [B.draw(st.integers(-7, 7)) for _ in range(max(len(axes), 1))]
        B.append(type_, {"X": [x]}, {"Out": 1}, {"shifts": shifts, "axis": axes})
    else:                                                 # tril_triu
        B.append(type_, {"X": [x]}, {"Out": 1}, {"diagonal": B.draw(st.integers(-3, 3)),
                                                 "lower": B.draw(st.booleans())})
    return True


OP_CHOICES += [(t, b_manipulation)
               for t in ("argsort", "masked_select", "roll", "meshgrid", "tril_triu")]


# --- accuracy (ops/metrics.py), nll_loss, kldiv_loss (ops/log_prob_losses.py) ---------------
def b_log_prob(B, type_):
    """accuracy over a top_k of a [N, C] tensor and labels in [0, C] (C: a class no row
    has); nll_loss of a [N, C] tensor (log-probabilities or not: it only picks) with labels,
    some rows ignored, maybe weighted; kldiv_loss of X against a target >= 0 of its shape."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ == "kldiv_loss":
        names = B.tensors(FLOAT_TYPES, min_rank=1, pred=lambda n, i: B.mag(n) <= 100)
        if not names:
            return False
        x = B.pick(names)
        xi = B.info[x]
        target = B.add_feed(rng.uniform(0.0, 1.0, xi.shape).astype(xi.dtype))
        B.append(type_, {"X": [x], "Target": [target]}, {"Loss": 1},
                 {"reduction": B.draw(st.sampled_from(["none", "sum", "mean", "batchmean"]))})
        return True
    names = B.tensors(FLOAT_TYPES, min_rank=2, max_rank=2, pred=lambda n, i: B.mag(n) <= 100)
    if not names:
        return False
    x = B.pick(names)
    n, c = B.info[x].shape
    if type_ == "accuracy":
        k = B.draw(st.integers(1, c))
        _, top = B.append("top_k_v2", {"X": [x]}, {"Out": 1, "Indices": 1}, {"k": k},
                          discrete=True)
        label = B.add_feed(rng.integers(0, c + 1, (n, 1)).astype(np.int64))
        B.append(type_, {"Out": top["Out"], "Indices": top["Indices"], "Label": [label]},
                 {"Accuracy": 1, "Correct": 1, "Total": 1}, discrete=True)
        return True
    label = np.where(rng.random(n) < 0.25, -100, rng.integers(0, c, n)).astype(np.int64)
    ins = {"X": [x], "Label": [B.add_feed(label)]}
    if B.draw(st.booleans()):
        ins["Weight"] = [B.add_feed(rng.uniform(0.5, 2.0, c).astype(B.info[x].dtype))]
    B.append(type_, ins, {"Out": 1, "Total_weight": 1},
             {"reduction": B.draw(st.sampled_from(["none", "sum", "mean"])),
              "ignore_index": -100})
    return True


OP_CHOICES += [(t, b_log_prob) for t in ("accuracy", "nll_loss", "kldiv_loss")]


# --- isnan_v2 / isinf_v2 / isfinite_v2, size, reduce_all / reduce_any, bitwise_*,
# sequence_mask (ops/finite_checks.py, size.py, bool_reduce.py, bitwise.py,
# sequence_mask.py); greater_equal, less_equal and logical_xor join their families above ---
def b_bool_and_bits(B, type_):
    """The checks of float values (NaN and infinities among them where earlier ops made
    them), numel of any tensor, all/any over some dims of a bool (or number) tensor,
    bitwise ops on ints or bools (broadcast), and a mask from lengths in [0, 5]."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ == "sequence_mask":
        lengths = B.add_feed(rng.integers(0, 6, B.draw(st.integers(1, 4))).astype(np.int64))
        B.append(type_, {"X": [lengths]}, {"Y": 1},
                 {"maxlen": B.draw(st.sampled_from([-1, 3, 6])),
                  "out_dtype": B.draw(st.sampled_from([2, 3, 5]))}, discrete=True)
        return True
    if type_ in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"):
        names = B.tensors(INT_TYPES + (B8,))
        if not names:
            like = B.tensors()
            names = [bool_feed(B, B.info[B.pick(like)].shape if like else (2, 3))]
        x = B.pick(names)
        if type_ == "bitwise_not":
            B.append(type_, {"X": [x]}, {"Out": 1}, discrete=True)
            return True
        xi = B.info[x]
        ys = [y for y in names if B.info[y].dtype == xi.dtype
              and _np_broadcastable(xi.shape, B.info[y].shape)]
        B.append(type_, {"X": [x], "Y": [B.pick(ys)]}, {"Out": 1}, discrete=True)
        return True
    names = B.tensors(FLOAT_TYPES if type_.startswith("is") else None)
    if not names:
        return False
    x = B.pick(names)
    if type_ in ("reduce_all", "reduce_any"):
        r = len(B.info[x].shape)
        dims = B.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True)) \
            if r else [0]
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"dim": dims, "keep_dim": B.draw(st.booleans()),
                  "reduce_all": B.draw(st.integers(0, 4)) == 0}, discrete=True)
        return True
    slots = {"size": ("Input", "Out")}.get(type_, ("X", "Out"))
    B.append(type_, {slots[0]: [x]}, {slots[1]: 1}, discrete=True)
    return True


OP_CHOICES += [(t, b_bool_and_bits)
               for t in ("isnan_v2", "isinf_v2", "isfinite_v2", "size", "reduce_all",
                         "reduce_any", "bitwise_and", "bitwise_or", "bitwise_xor",
                         "bitwise_not", "sequence_mask")]
OP_CHOICES += [("greater_equal", b_elementwise), ("less_equal", b_elementwise),
               ("logical_xor", b_logical)]


# --- cumprod (ops/cumprod.py), i0, polygamma (ops/bessel_and_polygamma.py) -----------------
def b_math_tail(B, type_):
    """cumprod along one axis of values of magnitude <= 1 (a product grows fast); i0 of
    values in [-2, 2]; polygamma of order 0..3 at x in [0.25, 2) (clear of its poles)."""
    if type_ == "cumprod":
        names = B.tensors(FLOAT_TYPES, min_rank=1, pred=lambda n, i: B.mag(n) <= 1)
        if not names:
            return False
        x = B.pick(names)
        rank = len(B.info[x].shape)
        B.append(type_, {"X": [x]}, {"Out": 1}, {"dim": B.draw(st.integers(-rank, rank - 1))})
        return True
    if type_ == "i0":
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) <= 2)
        if not names:
            return False
        B.append(type_, {"x": [B.pick(names)]}, {"out": 1})
        return True
    like = B.tensors(FLOAT_TYPES)
    li = B.info[B.pick(like)] if like else None
    x = positive_feed(B, li.shape if li else (2, 3), li.dtype if li else F64)
    B.append(type_, {"x": [x]}, {"out": 1}, {"n": B.draw(st.integers(0, 3))})
    return True


OP_CHOICES += [(t, b_math_tail) for t in ("cumprod", "i0", "polygamma")]


# --- lerp, atan2, elementwise_fmax/_fmin/_heaviside, nextafter (ops/binary_math.py); i0e,
# i1, i1e; renorm; reduce_amax/_amin; isclose, allclose, equal_all, is_empty; log_loss ------
_SAME_SHAPE = ("atan2", "isclose", "allclose")


def b_more_math(B, type_):
    """Float operands of one dtype (numpy broadcasting; one shape where the op wants it);
    the Bessel functions at |x| <= 2; renorm and amax/amin over some axes; log_loss of
    fresh probabilities in [0.1, 0.9]."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    if type_ in ("i0e", "i1", "i1e"):
        names = B.tensors(FLOAT_TYPES, pred=lambda n, i: B.mag(n) <= 2)
        if not names:
            return False
        B.append(type_, {"x": [B.pick(names)]}, {"out": 1})
        return True
    if type_ == "log_loss":
        like = B.tensors()
        shape = B.info[B.pick(like)].shape if like else (2, 3)
        dtype = B.draw(st.sampled_from(FLOAT_TYPES))
        p, label = (B.add_feed(rng.uniform(0.1, 0.9, shape).astype(dtype)) for _ in range(2))
        B.append(type_, {"Predicted": [p], "Labels": [label]}, {"Loss": 1},
                 {"epsilon": 1e-4})
        return True
    names = B.tensors(None if type_ in ("is_empty", "equal_all") else FLOAT_TYPES,
                      min_rank=1 if type_ == "renorm" else 0)
    if not names:
        return False
    x = B.pick(names)
    xi = B.info[x]
    if type_ == "is_empty":
        B.append(type_, {"X": [x]}, {"Out": 1}, discrete=True)
        return True
    if type_ == "renorm":
        rank = len(xi.shape)
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"p": B.draw(st.sampled_from([1.0, 2.0, 3.0])),
                  "axis": B.draw(st.integers(-rank, rank - 1)),
                  "max_norm": B.draw(st.sampled_from([0.5, 1.0, 5.0]))})
        return True
    if type_ in ("reduce_amax", "reduce_amin"):
        r = len(xi.shape)
        dims = B.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True)) \
            if r else [0]
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"dim": dims, "keep_dim": B.draw(st.booleans()),
                  "reduce_all": B.draw(st.integers(0, 4)) == 0})
        return True
    ys = [y for y in names if B.info[y].dtype == xi.dtype and (
        B.info[y].shape == xi.shape if type_ in _SAME_SHAPE
        else _np_broadcastable(xi.shape, B.info[y].shape))]
    y = B.pick(ys)
    if type_ == "lerp":
        weight = B.add_feed(rng.uniform(0, 1, xi.shape[len(xi.shape) // 2:]).astype(xi.dtype))
        B.append(type_, {"X": [x], "Y": [y], "Weight": [weight]}, {"Out": 1})
    elif type_ == "atan2":
        B.append(type_, {"X1": [x], "X2": [y]}, {"Out": 1})
    elif type_ == "nextafter":
        B.append(type_, {"x": [x], "y": [y]}, {"out": 1})
    elif type_ in ("isclose", "allclose"):
        B.append(type_, {"Input": [x], "Other": [y]}, {"Out": 1},
                 {"rtol": "1e-05", "atol": "1e-08", "equal_nan": B.draw(st.booleans())},
                 discrete=True)
    elif type_ == "equal_all":
        B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1}, discrete=True)
    else:                                       # elementwise_fmax / _fmin / _heaviside
        B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1})
    return True


OP_CHOICES += [(t, b_more_math)
               for t in ("lerp", "atan2", "elementwise_fmax", "elementwise_fmin",
                         "elementwise_heaviside", "nextafter", "i0e", "i1", "i1e", "renorm",
                         "reduce_amax", "reduce_amin", "isclose", "allclose", "equal_all",
                         "is_empty", "log_loss")]


# --- cummax, cummin (ops/cum_extrema.py), logcumsumexp (ops/logcumsumexp.py) ----------------
def b_running_scans(B, type_):
    """cummax / cummin along one axis (their indices discrete: a rounding step can move a
    tie), logcumsumexp of floats along one axis or flattened, either direction."""
    kinds = FLOAT_TYPES + (INT_TYPES if type_ != "logcumsumexp" else ())
    names = B.tensors(kinds, min_rank=1)
    if not names:
        return False
    x = B.pick(names)
    rank = len(B.info[x].shape)
    axis = B.draw(st.integers(-rank, rank - 1))
    if type_ == "logcumsumexp":
        flatten = B.draw(st.booleans())          # X as one row: axis 0 or -1 of it
        B.append(type_, {"X": [x]}, {"Out": 1},
                 {"axis": -1 if flatten else axis, "flatten": flatten,
                  "exclusive": False, "reverse": B.draw(st.booleans())})
    else:
        B.append(type_, {"x": [x]}, {"out": 1, "indices": 1}, {"axis": axis},
                 discrete=True)
    return True


OP_CHOICES += [(t, b_running_scans) for t in ("cummax", "cummin", "logcumsumexp")]


# --- index_sample, take_along_axis, repeat_interleave, crop_tensor, broadcast_tensors,
# unbind, multiplex (ops/take_along.py ... multiplex.py) --------------------------------------
def b_by_index(B, type_):
    """Reading and reshaping by index on a drawn tensor: positions (index_sample,
    take_along_axis, multiplex's candidate numbers) drawn inside their range, repeat
    counts as the attribute or a fed tensor, a crop inside X (a size -1 now and then),
    X broadcast against a fed tensor with some of its dims 1, unbind along any axis.
    Out-of-range positions are the fuzzer's."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    min_rank = 2 if type_ == "index_sample" else 1
    names = B.tensors(FLOAT_TYPES + INT_TYPES, min_rank=min_rank,
                      max_rank=2 if type_ == "index_sample" else 99)
    if not names:
        return False
    x = B.pick(names)
    shape, dtype = B.info[x].shape, B.info[x].dtype
    rank = len(shape)
    index_type = B.pick([I32, I64])
    if type_ == "index_sample":
        index = B.add_feed(rng.integers(0, shape[1], (shape[0], B.draw(st.integers(1, 4))))
                           .astype(index_type))
        B.append(type_, {"X": [x], "Index": [index]}, {"Out": 1})
    elif type_ == "take_along_axis":
        axis = B.draw(st.integers(-rank, rank - 1))
        index_shape = [B.draw(st.integers(1, 4)) if d == axis % rank else
                       B.draw(st.integers(1, n)) for d, n in enumerate(shape)]
        index = B.add_feed(rng.integers(0, shape[axis], index_shape).astype(index_type))
        B.append(type_, {"Input": [x], "Index": [index]}, {"Result": 1}, {"Axis": axis})
    elif type_ == "repeat_interleave":
        dim = B.draw(st.integers(-rank, rank - 1))
        if B.draw(st.booleans()):
            counts = B.add_feed(rng.integers(0, 3, shape[dim]).astype(index_type))
            B.append(type_, {"X": [x], "RepeatsTensor": [counts]}, {"Out": 1}, {"dim": dim})
        else:
            B.append(type_, {"X": [x]}, {"Out": 1},
                     {"Repeats": B.draw(st.integers(0, 3)), "dim": dim})
    elif type_ == "crop_tensor":
        offsets = [B.draw(st.integers(0, n - 1)) for n in shape]
        sizes = [-1 if B.draw(st.integers(0, 3)) == 0 else B.draw(st.integers(1, n - o))
                 for n, o in zip(shape, offsets)]
        B.append(type_, {"X": [x]}, {"Out": 1}, {"shape": sizes, "offsets": offsets})
    elif type_ == "broadcast_tensors":
        other_shape = tuple(1 if B.draw(st.booleans()) else n
                            for n in shape[B.draw(st.integers(0, rank - 1)):])
        other = B.add_feed(rng.uniform(-2, 2, other_shape).astype(dtype))
        B.append(type_, {"X": [x, other]}, {"Out": 2})
    elif type_ == "unbind":
        axis = B.draw(st.integers(-rank, rank - 1))
        B.append(type_, {"X": [x]}, {"Out": shape[axis]}, {"axis": axis})
    else:                                                 # multiplex
        k = B.draw(st.integers(1, 3))
        candidates = [x] + [B.add_feed(rng.uniform(-2, 2, shape).astype(dtype))
                            for _ in range(k - 1)]
        ids = B.add_feed(rng.integers(0, k, (shape[0], 1)).astype(index_type))
        B.append(type_, {"Ids": [ids], "X": candidates}, {"Out": 1})
    return True


OP_CHOICES += [(t, b_by_index)
               for t in ("index_sample", "take_along_axis", "repeat_interleave", "crop_tensor",
                         "broadcast_tensors", "unbind", "multiplex")]

# --- set_value, index_put, index_add, scatter_nd_add, put_along_axis, fill_diagonal_tensor
# (ops/set_value.py, index_put.py, scatter_into.py, fill_diagonal_tensor.py) -----------------
def b_write_by_index(B, type_):
    """Writing into a drawn tensor: a strided part of one axis (set_value, the value fed,
    broadcast along some dims), positions drawn inside their range (negative ones too
    where the op takes them: index_put), with repeats, and a diagonal at any offset.
    Out-of-range positions are the fuzzer's."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    min_rank = 2 if type_ == "fill_diagonal_tensor" else 1
    names = B.tensors(FLOAT_TYPES + INT_TYPES, min_rank=min_rank)
    if not names:
        return False
    x = B.pick(names)
    shape, dtype = B.info[x].shape, B.info[x].dtype
    rank = len(shape)
    index_type = B.pick([I32, I64])

    def feed(value_shape):
        return B.add_feed(rng.uniform(-2, 2, value_shape).astype(dtype))
    if type_ == "set_value":
        a = B.draw(st.integers(0, rank - 1))
        n, step = shape[a], B.pick([1, 2, -1])
        start = B.draw(st.integers(0, n - 1))
        end = B.draw(st.integers(start + 1, n)) if step > 0 else \
            B.draw(st.integers(-1, start - 1))               # -1: through index 0
        part = list(shape)
        part[a] = len(range(n)[slice(start, None if end == -1 else end, step)])
        value = feed([1 if B.draw(st.booleans()) else d for d in part])
        B.append(type_, {"Input": [x], "ValueTensor": [value]}, {"Out": 1},
                 {"axes": [a], "starts": [start], "ends": [end], "steps": [step]})
    elif type_ == "index_put":
        k = B.draw(st.integers(1, 4))
        index = B.add_feed(rng.integers(-shape[0], shape[0], k).astype(index_type))
        value = feed((1,) if B.draw(st.booleans()) else (k,) + tuple(shape[1:]))
        B.append(type_, {"x": [x], "indices": [index], "value": [value]}, {"out": 1},
                 {"accumulate": B.draw(st.booleans())})
    elif type_ == "index_add":
        axis = B.draw(st.integers(-rank, rank - 1))
        k = B.draw(st.integers(1, 4))
        index = B.add_feed(rng.integers(0, shape[axis], k).astype(index_type))
        added = list(shape)
        added[axis] = k
        B.append(type_, {"X": [x], "Index": [index], "AddValue": [feed(added)]}, {"Out": 1},
                 {"axis": axis})
    elif type_ == "scatter_nd_add":
        k, m = B.draw(st.integers(1, rank)), B.draw(st.integers(1, 4))
        index = B.add_feed(np.stack([rng.integers(0, shape[j], m) for j in range(k)],
                                    axis=1).astype(index_type))
        B.append(type_, {"X": [x], "Index": [index],
                         "Updates": [feed((m,) + tuple(shape[k:]))]}, {"Out": 1})
    elif type_ == "put_along_axis":
        axis = B.draw(st.integers(-rank, rank - 1))
        index_shape = [B.draw(st.integers(1, 4)) if d == axis % rank else
                       B.draw(st.integers(1, n)) for d, n in enumerate(shape)]
        index = B.add_feed(rng.integers(0, shape[axis], index_shape).astype(index_type))
        B.append(type_, {"Input": [x], "Index": [index], "Value": [feed(index_shape)]},
                 {"Result": 1}, {"Axis": axis, "Reduce": B.pick(["assign", "add"]),
                                 "Include_self": B.draw(st.booleans())})
    else:                                                 # fill_diagonal_tensor
        dim1, dim2 = B.draw(st.permutations(range(rank)))[:2]
        offset = B.draw(st.integers(-2, 2))
        n1, n2 = shape[dim1], shape[dim2]
        length = max(min(n1, n1 + offset, n2, n2 - offset), 0)
        others = [d for i, d in enumerate(shape) if i not in (dim1, dim2)]
        B.append(type_, {"X": [x], "Y": [feed(others + [length])]}, {"Out": 1},
                 {"offset": offset, "dim1": dim1, "dim2": dim2})
    return True


OP_CHOICES += [(t, b_write_by_index)
               for t in ("set_value", "index_put", "index_add", "scatter_nd_add",
                         "put_along_axis", "fill_diagonal_tensor")]


# --- pool3d, max_pool3d_with_index (ops/pool.py) ---------------------------------------------
def b_pool3d(B, type_):
    """pool3d (max or avg, either layout, paddings below the window, ceil_mode where the
    last window still holds an element, SAME/VALID, global, adaptive) and
    max_pool3d_with_index (its Mask moves on a near-tie: discrete), on a 5-D float tensor
    of the program or a fresh one."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    names = B.tensors(FLOAT_TYPES, min_rank=5, max_rank=5, pred=lambda n, i: min(i.shape) > 0)
    if names and B.draw(st.booleans()):
        x = B.pick(names)
    else:
        dims = [B.draw(st.integers(1, 2)), B.draw(st.integers(1, 2))] + \
            [B.draw(st.integers(1, 4)) for _ in range(3)]
        x = B.add_feed(rng.uniform(-1, 1, dims).astype(B.pick(FLOAT_TYPES)))
    shape = B.info[x].shape
    last = type_ == "pool3d" and B.draw(st.booleans())
    dhw = shape[1:4] if last else shape[2:]
    return _append_pool(B, type_, x, dhw, ("NDHWC" if last else "NCDHW")
                        if type_ == "pool3d" else None)


def _append_pool(B, type_, x, spatial, layout):
    """A pool2d/pool3d (``layout`` its data_format) or a max_pool*_with_index (``layout``
    None) over the ``spatial`` dims of ``x``: windows, strides and paddings that fit."""
    k = [B.draw(st.integers(1, min(3, n))) for n in spatial]
    s = [B.pick([1, 2]) for _ in spatial]
    p = [B.draw(st.integers(0, kk - 1)) for kk in k]
    attrs = {"ksize": k, "strides": s, "paddings": p,
             "global_pooling": B.draw(st.integers(0, 5)) == 0,
             "adaptive": B.draw(st.integers(0, 3)) == 0}
    if attrs["adaptive"]:
        attrs["ksize"] = [B.draw(st.integers(1, n + 1)) for n in spatial]
    if layout is not None:
        ceil = B.draw(st.booleans()) and all(
            ((n - kk + 2 * pp + ss - 1) // ss) * ss - pp < n
            for n, kk, ss, pp in zip(spatial, k, s, p))
        attrs.update(pooling_type=B.pick(["max", "avg"]), ceil_mode=ceil,
                     exclusive=B.draw(st.booleans()), data_format=layout,
                     padding_algorithm=B.pick(["EXPLICIT", "EXPLICIT", "SAME", "VALID"]))
        B.append(type_, {"X": [x]}, {"Out": 1}, attrs)
    else:
        B.append(type_, {"X": [x]}, {"Out": 1, "Mask": 1}, attrs, discrete=True)
    return True


OP_CHOICES += [(t, b_pool3d) for t in ("pool3d", "max_pool3d_with_index")]


# --- mv, dot, multi_dot, matrix_power, addmm, kron, cross, dist, frobenius_norm, diagonal,
# trace, diag_v2, eye, histogram, bincount (ops/matrix_products.py, kron_and_cross.py,
# distances.py, diagonals.py, histogram.py) -----------------------------------------------
def b_linalg_products(B, type_):
    """A tensor of the program where the op takes any shape (frobenius_norm, diagonal,
    trace, diag_v2, kron, histogram); fresh operands in [-1, 1] of fitting shapes for the
    products; matrix_power of a fresh matrix near 2I (its inverse is tame); bincount of
    fresh small ints; eye from attributes."""
    rng = np.random.default_rng(B.draw(st.integers(0, 2**16)))
    floats = B.tensors(FLOAT_TYPES, max_rank=3)
    dtype = B.info[B.pick(floats)].dtype if floats else F64

    def fresh(*shape, like=None):
        return B.add_feed(rng.uniform(-1, 1, shape).astype(B.info[like].dtype if like
                                                             else dtype))
    n = lambda: B.draw(st.integers(1, 4))            # noqa: E731
    if type_ == "eye":
        B.append(type_, {}, {"Out": 1}, {"num_rows": B.draw(st.integers(0, 4)),
                                         "num_columns": B.draw(st.integers(-1, 4)),
                                         "dtype": B.pick([2, 3, 5, 6])}, exact=True)
    elif type_ == "bincount":
        x = B.add_feed(rng.integers(0, 6, n()).astype(B.pick([np.int32, np.int64])))
        inputs = {"X": [x]}
        if B.draw(st.booleans()):
            inputs["Weights"] = [fresh(len(B.env[x]))]
        B.append(type_, inputs, {"Out": 1}, {"minlength": B.draw(st.integers(0, 4))},
                 discrete=True)
    elif type_ in ("frobenius_norm", "diagonal", "trace", "diag_v2", "kron", "histogram"):
        min_rank = 2 if type_ in ("diagonal", "trace") else 0
        max_rank = 2 if type_ == "diag_v2" else 3
        names = B.tensors(FLOAT_TYPES, min_rank=min_rank, max_rank=max_rank)
        if not names:
            return False
        x = B.pick(names)
        rank = len(B.info[x].shape)
        if type_ == "frobenius_norm":
            B.append(type_, {"X": [x]}, {"Out": 1},
                     {"dim": [B.draw(st.integers(-rank, rank - 1))] if rank else [],
                      "keep_dim": B.draw(st.booleans()), "reduce_all": B.draw(st.booleans())})
        elif type_ in ("diagonal", "trace"):
            a1, a2 = B.draw(st.permutations(range(rank)))[:2]
            B.append(type_, {"Input": [x]}, {"Out": 1},
                     {"offset": B.draw(st.integers(-2, 2)), "axis1": a1, "axis2": a2})
        elif type_ == "diag_v2":
            B.append(type_, {"X": [x]}, {"Out": 1}, {"offset": B.draw(st.integers(-2, 2)),
                                                     "padding_value": 0.5})
        elif type_ == "kron":
            y = fresh(*[B.draw(st.integers(1, 2)) for _ in range(B.draw(st.integers(0, 2)))],
                      like=x)
            B.append(type_, {"X": [x], "Y": [y]}, {"Out": 1})
        else:
            B.append(type_, {"X": [x]}, {"Out": 1}, {"bins": n(), "min": 0, "max": 0},
                     discrete=True)
    elif type_ == "matrix_power":
        m = n()
        x = B.add_feed((2 * np.eye(m) + 0.3 * rng.uniform(-1, 1, (m, m))).astype(dtype))
        B.append(type_, {"X": [x]}, {"Out": 1}, {"n": B.draw(st.integers(-2, 3))})
    elif type_ == "mv":
        r, c = n(), n()
        B.append(type_, {"X": [fresh(r, c)], "Vec": [fresh(c)]}, {"Out": 1})
    elif type_ in ("dot", "cross", "dist"):
        shape = [n(), 3] if type_ == "cross" else [n() for _ in range(B.draw(st.integers(1, 2)))]
        attrs = {"p": B.pick([1.0, 2.0, 3.0, float("inf")])} if type_ == "dist" else {}
        B.append(type_, {"X": [fresh(*shape)], "Y": [fresh(*shape)]}, {"Out": 1}, attrs)
    elif type_ == "multi_dot":
        dims = [n() for _ in range(B.draw(st.integers(3, 4)))]
        xs = [fresh(a, b) for a, b in zip(dims, dims[1:])]
        B.append(type_, {"X": xs}, {"Out": 1})
    else:                                                  # addmm
        r, k, c = n(), n(), n()
        B.append(type_, {"Input": [fresh(c)], "X": [fresh(r, k)], "Y": [fresh(k, c)]},
                 {"Out": 1}, {"Alpha": 0.5, "Beta": 2.0})
    return True


OP_CHOICES += [(t, b_linalg_products)
               for t in ("mv", "dot", "multi_dot", "matrix_power", "addmm", "kron", "cross",
                         "dist", "frobenius_norm", "diagonal", "trace", "diag_v2", "eye",
                         "histogram", "bincount")]


def covered_op_types() -> set[str]:
    """The op types the builders append (write_to_array comes with the array reads)."""
    return {t for t, _ in OP_CHOICES} | {"write_to_array"}


# Ops that need a sub-block (tests/op_kinds.py asks the registry which own one), or that
# the executor runs for a program's own feed/fetch; they are tested by building real
# control flow (tests/test_cond.py, test_while.py, ...). fc and the fused elementwise ops
# are made by passes (passes/), never by a builder: tests/test_passes.py.
NOT_GENERATED = {*op_kinds.BLOCK_OWNERS, "feed", "fetch", "fc",
                 "fused_elemwise_activation", "fused_elemwise_add_activation",
                 # their domains (a base above 0, a nonzero divisor) are the op table's
                 # rows, the fuzzer's and the Paddle fixture's (tests/fixtures/paddle/math*)
                 "elementwise_pow", "elementwise_floordiv", "elementwise_mod",
                 # made by the DistributeTranspiler: the remote ops (OpDef.remote) need a
                 # transport and servers, listen_and_serv owns optimize blocks (above), and
                 # split_byref (split along dim 0) is the op table's and the fuzzer's:
                 # tests/test_distributed_transpiler.py
                 *op_kinds.REMOTE, "split_byref",
                 # its buckets accumulate across runs (StatPosOut is StatPos's own
                 # variable): tests/test_metrics.py runs Paddle's program three times
                 "auc",
                 # assert stops the run when its condition is false (its rows and
                 # tests/test_assert_op.py); as_complex / as_real: complex tensors, which
                 # the random programs' dtypes leave out (their rows and the coverage's)
                 "assert", "as_complex", "as_real",
                 # outputs sized by the data, and ops whose positions depend on ties (a
                 # rounding step moves them): the op table's rows, the fuzzer's and
                 # the coverage table's programs (ops/unique.py, order_statistics.py)
                 "unique", "unique_consecutive", "where_index", "kthvalue", "mode",
                 "nanmedian",
                 # needs a sorted sequence: the op table's rows and the fuzzer's
                 "searchsorted",
                 # ids, beams and new tensors, not values of the drawn float data: the op
                 # table's rows, the fuzzer's and the coverage table's programs
                 # (ops/shard_index.py, gather_tree.py, empty.py)
                 "shard_index", "gather_tree", "empty",
                 # sequence losses over labels and lengths, not values of the drawn float
                 # data: the op table's rows, the fuzzer's and the coverage table's
                 # programs (ops/ctc_loss.py, rnnt_loss.py)
                 "warpctc", "warprnnt",
                 # matrix decompositions (ops/svd.py, qr.py, eigh.py, eig.py, matrix_rank.py,
                 # lstsq.py): square or full-rank matrices with distinct spectra, which
                 # random data is not; the op table's rows, the fuzzer's, the coverage
                 # table's programs and tests/test_spectral_ops.py
                 "svd", "qr", "eigh", "eigvalsh", "eig", "eigvals", "matrix_rank", "lstsq",
                 # Indices are a max pool's Mask, positions inside output_size: the op
                 # table's rows, the fuzzer's and the coverage table's programs
                 # (ops/unpool.py)
                 "unpool", "unpool3d",
                 # triangular factorizations and solves (ops/triangular_factor.py,
                 # linear_solve.py): positive definite, triangular or invertible matrices
                 # and lu's own pivots, which random data is not; the op table's rows, the
                 # fuzzer's, the coverage table's programs, tests/test_triangular_factor.py
                 "cholesky", "lu", "lu_unpack", "determinant", "solve", "triangular_solve",
                 "cholesky_solve",
                 # images and columns with divisible channels or fitting windows, matrices of
                 # matching widths, running statistics: the op table's rows, the fuzzer's and
                 # the coverage table's programs (ops/pixel_shuffle.py, fold.py,
                 # bilinear_tensor_product.py, spectral_norm.py, data_norm.py, row_conv.py)
                 "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "unfold", "fold",
                 "bilinear_tensor_product", "spectral_norm", "data_norm", "row_conv",
                 # random draws numpy cannot repeat: the op table's certain rows and
                 # tests/test_layer_ops.py's statistics (ops/random_activations.py, sampling.py)
                 "rrelu", "gumbel_softmax", "bernoulli", "poisson", "multinomial", "randint",
                 "randperm",
                 # class labels that must lie in a tree / class range and tree paths, and
                 # random negatives: the op table's rows, the fuzzer's and the coverage
                 # table's programs (ops/hierarchical_sigmoid.py, nce.py)
                 "hierarchical_sigmoid", "nce"}


def small_shapes(min_dims=1):
    return st.lists(st.integers(1, 5), min_size=min_dims, max_size=4).map(tuple)


@st.composite
def input_values(draw, shape, dtype):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):             # a grid of quarters: ties for the comparisons
        v = rng.integers(-8, 9, shape) / 4
    else:
        v = rng.uniform(-2, 2, shape)
    return np.asarray(v).astype(dtype)


class Built:
    def __init__(self, prog, feed, env, info):
        self.prog, self.feed, self.env, self.info = prog, feed, env, info

    def __repr__(self):
        return f"Built(feed shapes={ {k: v.shape for k, v in self.feed.items()} })\n" + \
            self.prog.to_code()


@st.composite
def programs(draw, max_ops=8, first: str | None = None):
    """A random program of 1..max_ops ops (and the small ops and inputs they need). With
    ``first``, an op of that type is appended before the random ones."""
    B = ProgramBuilder(draw)
    base = draw(small_shapes())
    main = draw(st.sampled_from(FLOAT_TYPES))
    for i in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["same", "part", "other"])) if i else "same"
        if how == "same":
            shape = base
        elif how == "part":            # a sub-range of base's dims, some of them 1
            lo = draw(st.integers(0, len(base) - 1))
            hi = draw(st.integers(lo + 1, len(base)))
            shape = tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in base[lo:hi])
        else:
            shape = draw(small_shapes())
        dtype = draw(st.sampled_from([main, main, F32, F64]))
        kw = {}
        if draw(st.integers(0, 5)) == 0:
            kw = dict(persistable=draw(st.booleans()), stop_gradient=draw(st.booleans()),
                      lod_level=draw(st.integers(0, 1)))
        B.add_feed(draw(input_values(shape, dtype)), unknown_batch=draw(st.booleans()), **kw)
    n_ops = draw(st.integers(1, max_ops))
    # The op types in a random order, the next one taken when a builder finds nothing to
    # work on. (A seeded shuffle: hypothesis' own sampled_from and permutations favour the
    # first entries, and some op types would then hardly ever be drawn.)
    order = list(OP_CHOICES)
    random.Random(draw(st.integers(0, 2**32 - 1))).shuffle(order)
    appended = 0
    if first is not None:
        builder = dict(OP_CHOICES)[first]
        for type_, other in order:          # other ops first, until the program has inputs
            if builder(B, first):           # that suit ``first``
                appended += 1
                break
            other(B, type_)
        else:
            raise AssertionError(f"no program took a {first} op")
    for type_, builder in order:
        if appended == n_ops:
            break
        if builder(B, type_):
            appended += 1
    assume(appended > 0)
    return Built(B.prog, B.feed, B.env, B.info)


# --- checks -------------------------------------------------------------------------------
def float_rtol(dtype, local: bool) -> float:
    if dtype == F32:
        return 1e-5 if local else 1e-4
    return 1e-12 if local else 1e-9


def assert_same(actual, expected, where, *, exact: bool, rtol=0.0, atol=0.0):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
    if exact or not np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_equal(actual, expected, err_msg=where)
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=where)


def check_random(actual, expected: NotComputed, where):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, where
    assert np.all(np.isfinite(actual)), where
    if expected.low is not None:
        assert actual.min() >= expected.low and actual.max() < expected.high, where


def as_env_value(value, info: Info):
    """A fetched value as the interpreter holds it (a fetched array comes back stacked)."""
    return list(value) if info.kind == "array" else value


def local_tolerance(op, inputs: dict, expected) -> tuple[float, float]:
    """rtol, atol for one op's float output computed from the executor's inputs."""
    rtol = float_rtol(expected.dtype, local=True)
    mags = sorted((mag(v) for v in inputs.values() if isinstance(v, np.ndarray)),
                  reverse=True) or [1.0]
    scale = mags[0] * (mags[1] if op.type in PRODUCT_OPS and len(mags) > 1 else 1.0)
    terms = max([int(np.size(v)) for v in inputs.values() if isinstance(v, np.ndarray)]
                + [1])
    return rtol, rtol * terms * max(1.0, scale, mag(expected))


def check_program(built: Built):
    prog, feed = built.prog, built.feed
    note(prog.to_code())

    # bytes and text round trip
    data = prog.to_bytes()
    loaded = pd.Program.from_bytes(data)
    assert loaded.to_bytes() == data
    assert loaded.to_code() == prog.to_code()
    assert prog.clone().to_bytes() == data

    # run; every op output is fetched (tensor arrays come back stacked)
    blk = prog.global_block()
    fetch = [n for op in blk.ops for n in op.output_arg_names]
    fetch = list(dict.fromkeys(fetch))
    exe = pd.Executor(pd.CPUPlace())

    def run(program):
        scope, fed = pd.Scope(), {}
        for k, v in feed.items():
            if program.global_block().var(k).persistable:
                scope.var(k).set(v.copy())
            else:
                fed[k] = v.copy()
        values = exe.run(program, feed=fed, fetch_list=fetch, scope=scope)
        for k, v in feed.items():
            now = fed[k] if k in fed else scope.find_var(k).get()
            np.testing.assert_array_equal(now, v, err_msg=f"the run changed input {k}")
        return values

    got = dict(zip(fetch, run(prog)))
    # the program loaded from the bytes computes the same values
    again = run(loaded)
    for name, value in zip(fetch, again):
        if np.asarray(value).dtype.kind == "f" and \
                not np.array_equal(value, got[name], equal_nan=True):
            # Two runs of one softmax once differed in the last bit (CI, 2026-11-25: a
            # float64 softmax along axis 0 of a tensor-array read; not reproduced since,
            # cause not found). A program read back from its bytes may differ by no more.
            np.testing.assert_array_max_ulp(value, got[name], maxulp=1)
        else:
            np.testing.assert_array_equal(value, got[name], err_msg=f"{name} after from_bytes")

    # globally: the interpreter from the feed
    for name in fetch:
        info, want = built.info[name], built.env[name]
        where = f"{name} (global)"
        if info.kind == "random":
            check_random(got[name], want, where)
        elif info.kind == "xshape":
            assert got[name].shape == want.shape, where
        elif info.stable:
            want = np.stack(want) if info.kind == "array" else want
            rtol = float_rtol(F32 if info.anc_f32 else want.dtype, local=False)
            assert_same(got[name], want, where, exact=info.exact,
                        rtol=rtol, atol=rtol * info.anc_mag)

    # locally: each op's reference on the executor's own inputs
    values = {**feed, **got}
    for i, op in enumerate(blk.ops):
        if op.type == "write_to_array":      # the array is fetched once, after all writes
            continue
        ins = {n: as_env_value(values[n], built.info[n]) for n in op.input_arg_names}
        want = run_op(op, ins)
        exact = op.type in EXACT_OPS or op.type == "sum" and (
            len(op.input("X")) <= 2 or ins[op.input("X")[0]].dtype != F32)
        for name, w in want.items():
            where = f"op {i} {op.type} output {name} (local)"
            if isinstance(w, NotComputed):
                check_random(got[name], w, where)
            elif name in op.output("XShape"):
                assert got[name].shape == w.shape, where
            else:
                rtol, atol = local_tolerance(op, ins, w)
                assert_same(got[name], w, where, exact=exact, rtol=rtol, atol=atol)


