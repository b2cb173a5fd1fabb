"""Products of matrices and vectors beyond matmul, and their gradients (Fluid's slots and
attributes, as ``paddle.mv``, ``paddle.dot``, ``paddle.linalg.multi_dot``,
``paddle.linalg.matrix_power`` and ``paddle.addmm`` save them):

- ``mv``: Out = X @ Vec (a matrix times a vector);
- ``dot``: Out = sum(X * Y) along the last axis (vectors, or the rows of two matrices);
- ``multi_dot``: Out = X[0] @ X[1] @ ... (the first may be a row vector, the last a
  column vector, as numpy's ``multi_dot``);
- ``matrix_power``: Out = X^n for each square matrix of X (n = 0: the identity; n < 0:
  the inverse's power);
- ``addmm``: Out = Beta * Input + Alpha * X @ Y (Input broadcasts to the product's shape).

Every product is the places' ``matmul`` (backends/: BLAS on the CPU, the tiled kernel
on CUDA), so no new GEMM is written here. ``matrix_power`` squares its way up (about
2 log2 n products, not n) and its gradient does the same with the identity
d(A^a A^b) = d(A^a) A^b + A^a d(A^b); a negative n inverts first (kernels/small_linalg.py,
Gauss-Jordan, one thread per matrix on CUDA).
"""
from __future__ import annotations

from functools import partial

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.infer_shape import dims_compatible
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import small_linalg as SL
from ..kernels.cpu import linalg as KL
from ..kernels.cpu import matmul as KM
from ..kernels.cpu.in_python import in_python, like
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, Y, broadcast_shapes, int_shape
from .matmul import declare_product, plain_product
from ..backends import CPU, CUDA

FLOATS = ("float32", "float64")
NUMBERS = ("int32", "int64", "float32", "float64")
LINALG = {CPU: SL.CPU, CUDA: SL.CUDA}      # each place's small-matrix kernels


def require_types(ctx, slots, allowed, op_type: str) -> None:
    """Each of ``slots`` holds one of ``allowed`` (Paddle 2.6.2's CPU kernels' types), and
    all the same one."""
    for slot in slots:
        for i in range(len(ctx.input_names(slot))):
            if dtypes.name(ctx.dtype(slot, i)) not in allowed:
                ctx.fail(f"{op_type} takes {' or '.join(allowed)} elements (Paddle's CPU "
                         "kernels)", slot=slot, expected="one of those",
                         given=ctx.describe_input(slot, i))
            if ctx.dtype(slot, i) != ctx.dtype(slots[0]):
                ctx.fail(f"every input of {op_type} has one element type", slot=slot,
                         expected=ctx.describe_input(slots[0]),
                         given=ctx.describe_input(slot, i))


def _swap_last(a):
    """a with its last two axes swapped (a copy on CUDA, a view on the CPU)."""
    perm = list(range(len(a.shape)))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return arrays.transpose(a, perm)


# --- mv --------------------------------------------------------------------------------------
VEC = Slot("Vec", "the vector")


def _mv_infer(ctx):
    require_types(ctx, ["X", "Vec"], FLOATS, "mv")
    xs, vs = ctx.shape("X"), ctx.shape("Vec")
    if len(xs) != 2 or len(vs) != 1:
        ctx.fail("mv multiplies a matrix by a vector", slot="X",
                 expected="X [M, N] and Vec [N]",
                 given=f"X {ctx.describe_input('X')}, Vec {ctx.describe_input('Vec')}")
    if not dims_compatible(xs[1], vs[0]):
        ctx.fail("X's columns must equal Vec's length", slot="Vec",
                 expected=f"Vec [{xs[1]}]", given=ctx.describe_input("Vec"))
    ctx.set_output("Out", [xs[0]], ctx.dtype("X"))


def _mv_grad(place):
    """dX = dOut (outer) Vec, dVec = X^T @ dOut."""
    def run(ctx):
        x, vec = ctx.input("X"), ctx.input("Vec")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape((int(x.shape[0]), 1))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.matmul(dout, vec.reshape((1, int(vec.shape[0]))),
                                                  False, False))
        if ctx.has_output("Vec@GRAD"):
            ctx.set_output("Vec@GRAD", place.matmul(x, dout, True, False)
                           .reshape((int(vec.shape[0]),)))
    return run


# --- in a compiled block: the kernels' own steps (kernels/cpu/matmul.py), for the types BLAS
# and reduce_sum's row sums take
def _same_float_type(info, slots) -> bool:
    dtype = info.dtype(slots[0])
    return dtype.name in FLOATS and all(info.dtype(s) == dtype for s in slots)


def _lowered_mv(info):
    return Call(KM.mv, ("X", "Vec"), ("Out",)) if _same_float_type(info, ("X", "Vec")) \
        else None


def _lowered_mv_grad(info):
    if not _same_float_type(info, ("X", "Vec", "Out@GRAD")):
        return None
    return tuple(Call(fn, ("X", "Vec", "Out@GRAD"), (slot,))
                 for fn, slot in ((KM.mv_grad_x, "X@GRAD"), (KM.mv_grad_vec, "Vec@GRAD"))
                 if info.has_output(slot)) or None


declare_product("mv", "Out = X @ Vec: X [M, N], Vec [N], Out [M].", _mv_infer,
                partial(plain_product, second="Vec"), _mv_grad, second=VEC,
                lowered=_lowered_mv, grad_lowered=_lowered_mv_grad)


# --- dot -------------------------------------------------------------------------------------
def _dot_infer(ctx):
    require_types(ctx, ["X", "Y"], NUMBERS, "dot")
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    if len(xs) not in (1, 2):
        ctx.fail("dot takes vectors, or matrices whose rows are multiplied", slot="X",
                 expected="a 1-D or 2-D tensor", given=ctx.describe_input("X"))
    if len(xs) != len(ys) or not all(dims_compatible(a, b) for a, b in zip(xs, ys)):
        ctx.fail("X and Y must have the same shape", slot="Y", expected=str(xs),
                 given=ctx.describe_input("Y"))
    ctx.set_output("Out", xs[:-1], ctx.dtype("X"))


def _dot(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        if int_shape(x) != int_shape(y):
            raise ValueError(f"dot: slot Y: X and Y must have the same shape; expected "
                             f"{list(int_shape(x))}, given {list(int_shape(y))}")
        product = place.binary("elementwise_mul", x, y, None)
        ctx.set_output("Out", place.sum_axes(product, [x.ndim - 1], False))
    return run


def _dot_grad(place):
    """dX = dOut * Y, dY = dOut * X (dOut broadcast along the summed axis)."""
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(int_shape(x)[:-1] + (1,))
        ctx.set_output("X@GRAD", place.binary("elementwise_mul", y, dout, None))
        ctx.set_output("Y@GRAD", place.binary("elementwise_mul", x, dout, None))
    return run


def _lowered_dot(info):
    """Floats only: integers are summed by numpy, not by the row-sum kernel."""
    if not _same_float_type(info, ("X", "Y")):
        return None
    rank = info.ndim("X")
    return Call(KM.dot, ("X", "Y"), ("Out",), (tuple(range(rank)), rank - 1))


def _lowered_dot_grad(info):
    if not _same_float_type(info, ("X", "Y", "Out@GRAD")):
        return None
    return Call(KM.dot_grad, ("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD"))


declare_product("dot", "Out = sum(X * Y) along the last axis: X, Y [N] give a 0-d Out, "
                       "[B, N] give [B].", _dot_infer, _dot, _dot_grad,
                lowered=_lowered_dot, grad_lowered=_lowered_dot_grad)


# --- multi_dot -------------------------------------------------------------------------------
def _as_matrices(shapes):
    """The chain's shapes as matrices: a 1-D first is a row [1, K], a 1-D last a column."""
    mats = [list(s) for s in shapes]
    if len(mats[0]) == 1:
        mats[0] = [1] + mats[0]
    if len(mats[-1]) == 1:
        mats[-1] = mats[-1] + [1]
    return mats


def _multi_dot_infer(ctx):
    require_types(ctx, ["X"], FLOATS, "multi_dot")
    shapes = ctx.shapes("X")
    if len(shapes) < 2:
        ctx.fail("multi_dot multiplies a chain of two or more tensors", slot="X",
                 expected="at least 2 inputs", given=f"{len(shapes)}")
    for i, s in enumerate(shapes):
        ends = i in (0, len(shapes) - 1)
        if len(s) != 2 and not (ends and len(s) == 1):
            ctx.fail("multi_dot takes matrices (the first and last may be vectors)", slot="X",
                     expected="a 2-D tensor" + (" or a vector" if ends else ""),
                     given=ctx.describe_input("X", i))
    mats = _as_matrices(shapes)
    for i in range(1, len(mats)):
        if not dims_compatible(mats[i - 1][1], mats[i][0]):
            ctx.fail("each matrix's columns must equal the next one's rows", slot="X",
                     expected=f"input {i} with {mats[i - 1][1]} rows",
                     given=ctx.describe_input("X", i))
    out = ([] if len(shapes[0]) == 1 else [mats[0][0]]) + \
        ([] if len(shapes[-1]) == 1 else [mats[-1][1]])
    ctx.set_output("Out", out, ctx.dtype("X"))


def _matrices(xs):
    """The inputs as 2-D arrays (the vectors at the ends as a row and a column)."""
    mats = list(xs)
    if len(int_shape(mats[0])) == 1:
        mats[0] = mats[0].reshape((1, int(mats[0].shape[0])))
    if len(int_shape(mats[-1])) == 1:
        mats[-1] = mats[-1].reshape((int(mats[-1].shape[0]), 1))
    for i in range(1, len(mats)):
        if int(mats[i - 1].shape[1]) != int(mats[i].shape[0]):
            raise ValueError(f"multi_dot: slot X: input {i} must have {int(mats[i - 1].shape[1])}"
                             f" rows; expected {int(mats[i - 1].shape[1])}, given shape "
                             f"{list(int_shape(xs[i]))}")
    return mats


def _chain(place, mats):
    out = mats[0]
    for m in mats[1:]:
        out = place.matmul(out, m, False, False)
    return out


# multi_dot's and matrix_power's math: one function each of the arrays and attributes on
# ``place`` (the kernels' own); a compiled block calls them with the CPU's from numba code,
# so its products are the places' matmul, bit for bit (kernels/cpu/linalg.py)
def multi_dot_arrays(xs, place=CPU):
    out = _chain(place, _matrices(xs))
    shape = ([] if len(int_shape(xs[0])) == 1 else [int(out.shape[0])]) + \
        ([] if len(int_shape(xs[-1])) == 1 else [int(out.shape[1])])
    return out.reshape(tuple(shape))


def _multi_dot(place):
    def run(ctx):
        ctx.set_output("Out", multi_dot_arrays(ctx.inputs("X"), place))
    return run


def _multi_dot_grad(place):
    def run(ctx):
        grads = multi_dot_grad_arrays(ctx.inputs("X"), ctx.input("Out@GRAD"), place)
        for i, g in enumerate(grads):
            ctx.set_output("X@GRAD", g, i)
    return run


def multi_dot_grad_arrays(xs, dout, place=CPU):
    """dX[i] = (X[0] ... X[i-1])^T @ dOut @ (X[i+1] ... X[k-1])^T: the prefixes from the
    left, the suffixes from the right, each product computed once."""
    mats = _matrices(xs)
    k = len(mats)
    rows, cols = int(mats[0].shape[0]), int(mats[-1].shape[1])
    dout = arrays.astype(dout, mats[0].dtype).reshape((rows, cols))
    prefix = [None] * k                   # prefix[i] = X[0] ... X[i-1]
    for i in range(1, k):
        prefix[i] = mats[0] if i == 1 else place.matmul(prefix[i - 1], mats[i - 1],
                                                        False, False)
    suffix = [None] * k                   # suffix[i] = X[i+1] ... X[k-1]
    for i in range(k - 2, -1, -1):
        suffix[i] = mats[k - 1] if i == k - 2 else place.matmul(mats[i + 1], suffix[i + 1],
                                                                False, False)
    grads = []
    for i in range(k):
        g = dout if prefix[i] is None else place.matmul(prefix[i], dout, True, False)
        if suffix[i] is not None:
            g = place.matmul(g, suffix[i], False, True)
        grads.append(g.reshape(int_shape(xs[i])))
    return tuple(grads)


multi_dot_in_python = in_python(multi_dot_arrays, KL.chain_product)
multi_dot_grad_in_python = in_python(multi_dot_grad_arrays, KL.like_each)


def _lowered_multi_dot(info):
    if not all(info.dtype("X", i).name in FLOATS for i in range(len(info.pop.in_ix["X"]))):
        return None
    return Call(multi_dot_in_python, ("X",), ("Out",))


def _lowered_multi_dot_grad(info):
    if not info.has_input("Out@GRAD") or _lowered_multi_dot(info) is None:
        return None
    return Call(multi_dot_grad_in_python, ("X", "Out@GRAD"), ("X@GRAD",))


register(OpDef(
    "multi_dot", [Slot("X", "the chain of matrices (the first and last may be vectors)",
                       duplicable=True)], [OUT], [],
    comment="Out = X[0] @ X[1] @ ... @ X[k-1].",
    infer_shape=_multi_dot_infer, kernels={"cpu": _multi_dot(CPU), "cuda": _multi_dot(CUDA)},
    lowered=_lowered_multi_dot,
    grad=Grad(reads=["X"], kernel=_multi_dot_grad(CPU), cuda_kernel=_multi_dot_grad(CUDA),
              lowered=_lowered_multi_dot_grad)))


# --- matrix_power ----------------------------------------------------------------------------
def _matrix_power_infer(ctx):
    require_types(ctx, ["X"], FLOATS, "matrix_power")
    xs = ctx.shape("X")
    if len(xs) < 2 or not dims_compatible(xs[-1], xs[-2]):
        ctx.fail("matrix_power takes square matrices", slot="X",
                 expected="[..., M, M]", given=ctx.describe_input("X"))
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _check_square(x, op_type: str):
    shape = int_shape(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{op_type}: slot X: takes square matrices; expected [..., M, M], "
                         f"given {list(shape)}")


def _power(place, a, n: int):
    """a^n for n >= 1 by repeated squaring."""
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else place.matmul(result, square, False, False)
        n >>= 1
        if not n:
            return result
        square = place.matmul(square, square, False, False)


def _power_grad(place, a, g, n: int):
    """d(a^n) back to a, given dOut = g, for n >= 1: with B = a^T,
    S(n) = sum over k < n of B^k g B^(n-1-k), and S(p + q) = B^p S(q) + S(p) B^q."""
    b = _swap_last(a)

    def walk(m):                               # (B^m, S(m))
        if m == 1:
            return b, g
        if m % 2:
            p, s = walk(m - 1)                 # S(1 + (m-1)) = B S(m-1) + g B^(m-1)
            return (place.matmul(b, p, False, False),
                    arrays.add(place.matmul(b, s, False, False), place.matmul(g, p, False, False)))
        p, s = walk(m // 2)                    # S(h + h) = B^h S(h) + S(h) B^h
        return (place.matmul(p, p, False, False),
                arrays.add(place.matmul(p, s, False, False), place.matmul(s, p, False, False)))
    return walk(n)[1]


def _identity_like(place, x):
    shape = int_shape(x)
    return LINALG[place].eyes(shape[:-2], shape[-1], shape[-1], x.dtype)


def matrix_power_arrays(x, n, place=CPU):
    _check_square(x, "matrix_power")
    if n == 0:
        return _identity_like(place, x)
    base = x if n > 0 else LINALG[place].inverse(x, "matrix_power")
    out = _power(place, base, abs(n))
    return arrays.copy(x) if out is x else out      # n = 1: a new array, not X itself


def matrix_power_grad_arrays(x, dout, n, place=CPU):
    """n > 0: the sum above; n < 0: through the inverse, d(A^-1) = -A^-T dA^-1 A^-T; n = 0:
    zeros (the identity does not depend on X)."""
    _check_square(x, "matrix_power_grad")
    dout = arrays.astype(dout, x.dtype).reshape(int_shape(x))
    if n == 0:
        return place.full(int_shape(x), 0, x.dtype)
    if n > 0:
        return _power_grad(place, x, dout, n)
    inv = LINALG[place].inverse(x, "matrix_power_grad")
    d_inv = _power_grad(place, inv, dout, -n)
    return place.scale(place.matmul(place.matmul(inv, d_inv, True, False), inv, False, True),
                       -1.0)


def _matrix_power(place):
    def run(ctx):
        ctx.set_output("Out", matrix_power_arrays(ctx.input("X"), ctx.attr("n"), place))
    return run


def _matrix_power_grad(place):
    def run(ctx):
        ctx.set_output("X@GRAD", matrix_power_grad_arrays(ctx.input("X"), ctx.input("Out@GRAD"),
                                                          ctx.attr("n"), place))
    return run


matrix_power_in_python = in_python(matrix_power_arrays, like(0))
matrix_power_grad_in_python = in_python(matrix_power_grad_arrays, like(0))


def _lowered_matrix_power(info):
    return Call(matrix_power_in_python, ("X",), ("Out",), (int(info.attr("n")),))


def _lowered_matrix_power_grad(info):
    if not info.has_input("Out@GRAD"):
        return None
    return Call(matrix_power_grad_in_python, ("X", "Out@GRAD"), ("X@GRAD",),
                (int(info.attr("n")),))


register(OpDef(
    "matrix_power", [X], [OUT], [Attr("n", A.INT, 1, "the power (0: identity; negative: "
                                                     "of the inverse)")],
    comment="Out = X^n for each square matrix of X [..., M, M].",
    infer_shape=_matrix_power_infer,
    kernels={"cpu": _matrix_power(CPU), "cuda": _matrix_power(CUDA)},
    lowered=_lowered_matrix_power,
    grad=Grad(reads=["X", "Out"], writes=["X"], kernel=_matrix_power_grad(CPU),
              cuda_kernel=_matrix_power_grad(CUDA), lowered=_lowered_matrix_power_grad)))


# --- addmm -----------------------------------------------------------------------------------
INPUT = Slot("Input", "added to the product (broadcasts to its shape)")


def _addmm_infer(ctx):
    require_types(ctx, ["Input", "X", "Y"], FLOATS, "addmm")
    xs, ys, ins = ctx.shape("X"), ctx.shape("Y"), ctx.shape("Input")
    if len(xs) != 2 or len(ys) != 2:
        ctx.fail("addmm multiplies two matrices", slot="X", expected="X [M, K], Y [K, N]",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    if not dims_compatible(xs[1], ys[0]):
        ctx.fail("X's columns must equal Y's rows", slot="Y", expected=f"Y [{xs[1]}, N]",
                 given=ctx.describe_input("Y"))
    out = [xs[0], ys[1]]
    if len(ins) > 2 or broadcast_shapes([1] * (2 - len(ins)) + list(ins), out) != out:
        ctx.fail("Input must broadcast to the product's shape", slot="Input",
                 expected=f"a shape that broadcasts to {out}", given=ctx.describe_input("Input"))
    ctx.set_output("Out", out, ctx.dtype("X"))


def _addmm(place):
    def run(ctx):
        inp, x, y = ctx.input("Input"), ctx.input("X"), ctx.input("Y")
        product = place.matmul(x, y, False, False, ctx.attr("Alpha"))
        rows, cols = int_shape(product)
        try:
            fits = arrays.broadcast_shape(int_shape(inp), (rows, cols)) == (rows, cols)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"addmm: slot Input: Input must broadcast to the product's shape; "
                             f"expected a shape that broadcasts to {[rows, cols]}, given "
                             f"{list(int_shape(inp))}")
        added = place.binary("elementwise_add", product,
                             place.scale(inp, ctx.attr("Beta")), None)
        ctx.set_output("Out", added)
    return run


def _addmm_grad(place):
    """dInput = Beta * dOut summed to Input's shape; dX = Alpha dOut @ Y^T; dY = Alpha X^T
    @ dOut."""
    def run(ctx):
        inp, x, y = ctx.input("Input"), ctx.input("X"), ctx.input("Y")
        alpha, beta = ctx.attr("Alpha"), ctx.attr("Beta")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(
            (int(x.shape[0]), int(y.shape[1])))
        if ctx.has_output("Input@GRAD"):
            shape = int_shape(inp)
            view = (1,) * (2 - len(shape)) + shape
            ctx.set_output("Input@GRAD", arrays.unbroadcast(place.scale(dout, beta), view,
                                                            shape))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.matmul(dout, y, False, True, alpha))
        if ctx.has_output("Y@GRAD"):
            ctx.set_output("Y@GRAD", place.matmul(x, dout, True, False, alpha))
    return run


def _lowered_addmm(info):
    if not _same_float_type(info, ("Input", "X", "Y")) or info.ndim("Input") == 0:
        return None
    return Call(KM.addmm, ("Input", "X", "Y"), ("Out",), (info.attr("Beta"), info.attr("Alpha")))


def _lowered_addmm_grad(info):
    """dX and dY are products; dInput sums dOut's rows where Input is one row, and
    declines an Input broadcast along the columns (numpy sums that axis pairwise)."""
    if not _same_float_type(info, ("Input", "X", "Y", "Out@GRAD")) or \
            info.ndim("Input") == 0:
        return None
    if info.has_output("Input@GRAD") and info.shape("Input")[-1] != info.shape("Y")[-1]:
        return "its operands broadcast along the columns: numpy sums them pairwise"
    alpha = info.attr("Alpha")
    calls = (Call(KM.product, ("Out@GRAD", "Y"), ("X@GRAD",), (False, True, alpha)),
             Call(KM.product, ("X", "Out@GRAD"), ("Y@GRAD",), (True, False, alpha)),
             Call(KM.addmm_grad_input, ("Input", "Out@GRAD"), ("Input@GRAD",),
                  (info.attr("Beta"),)))
    return tuple(c for c in calls if info.has_output(c.writes[0])) or None


register(OpDef(
    "addmm", [INPUT, X, Y], [OUT],
    [Attr("Beta", A.FLOAT, 1.0, "Input's factor"),
     Attr("Alpha", A.FLOAT, 1.0, "the product's factor")],
    comment="Out = Beta * Input + Alpha * X @ Y: X [M, K], Y [K, N], Input broadcast to "
            "[M, N].",
    infer_shape=_addmm_infer, kernels={"cpu": _addmm(CPU), "cuda": _addmm(CUDA)},
    lowered=_lowered_addmm,
    grad=Grad(reads=["Input", "X", "Y"], kernel=_addmm_grad(CPU),
              cuda_kernel=_addmm_grad(CUDA), lowered=_lowered_addmm_grad)))
