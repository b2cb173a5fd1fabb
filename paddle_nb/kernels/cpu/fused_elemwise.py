"""fused_elemwise_activation in a compiled block (ops/fused_elemwise.py says what it is).

Per element, the two ops' own @pointwise scalar functions (the ufuncs' math the
interpreter runs: add or mul, relu, tanh, sigmoid, or scale), the inner result stored into
an array of the op's dtype before the outer function reads it (the rounding of the
interpreter's two ufunc calls). Y broadcast into X along a run of X's dims is read by
index; the gradient's loop takes X, Y and dOut of one shape.

The functions are chosen by number (the op passes them as constants). add, mul and the
activations are op families' scalar functions (ops/elementwise.py, ops/activation.py),
which a kernel does not import: ``binary``, ``activation`` and ``derivative`` look them
up by name in ``pointwise.KERNELS`` when numba types a loop below (``@overload``), which
is after the op that calls the loop has registered them.
"""
import numpy as np
from numba import njit
from numba.extending import overload

from ..pointwise import KERNELS
from ..scale import scale_then_bias

ADD, MUL = 0, 1
RELU, TANH, SIGMOID, SCALE = 0, 1, 2, 3
_SCALE = scale_then_bias.scalar


def binary(which, a, b):
    """add (ADD) or mul (MUL) of two scalars: numba code only (below)."""
    raise NotImplementedError("fused_elemwise.binary is called from numba code")


def activation(which, v, scale, zero):
    """relu, tanh, sigmoid or scale (v * scale + zero, as the places' ``unary``) of v:
    numba code only (below)."""
    raise NotImplementedError("fused_elemwise.activation is called from numba code")


def derivative(which, value, dout, scale, zero):
    """d activation / d its input times dout, read from the activation's output
    ``value``: numba code only (below)."""
    raise NotImplementedError("fused_elemwise.derivative is called from numba code")


@overload(binary, jit_options={"fastmath": False, "error_model": "numpy"})
def _binary(which, a, b):
    add, mul = KERNELS["add"].scalar, KERNELS["mul"].scalar

    def binary_of(which, a, b):
        return add(a, b) if which == ADD else mul(a, b)
    return binary_of


@overload(activation, jit_options={"fastmath": False, "error_model": "numpy"})
def _activation(which, v, scale, zero):
    relu, tanh, sigmoid = (KERNELS[name].scalar for name in ("relu", "tanh", "sigmoid"))

    def activation_of(which, v, scale, zero):
        if which == RELU:
            return relu(v)
        if which == TANH:
            return tanh(v)
        if which == SIGMOID:
            return sigmoid(v)
        return _SCALE(v, scale, zero)
    return activation_of


@overload(derivative, jit_options={"fastmath": False, "error_model": "numpy"})
def _derivative(which, value, dout, scale, zero):
    relu_grad, tanh_grad, sigmoid_grad = (KERNELS[name + "_grad"].scalar
                                          for name in ("relu", "tanh", "sigmoid"))

    def derivative_of(which, value, dout, scale, zero):
        if which == RELU:
            return relu_grad(value, dout)
        if which == TANH:
            return tanh_grad(value, dout)
        if which == SIGMOID:
            return sigmoid_grad(value, dout)
        return _SCALE(dout, scale, zero)
    return derivative_of


@njit(cache=True, fastmath=False, error_model="numpy")
def _y_steps(x, y, axis):
    """(Y's size, X's elements per step of Y): Y's dims are X's from ``axis`` on."""
    if axis < 0 or axis + y.ndim > x.ndim:
        raise ValueError("fused_elemwise_activation: Y does not fit into X at axis")
    post = 1
    for d in range(x.ndim):
        if axis <= d < axis + y.ndim and x.shape[d] != y.shape[d - axis]:
            raise ValueError("fused_elemwise_activation: Y does not fit into X at axis")
        if d >= axis + y.ndim:
            post *= x.shape[d]
    return y.size, post


@njit(cache=True, fastmath=False, error_model="numpy")
def _flat(a):
    return np.ascontiguousarray(a).reshape(a.size)


@njit(cache=True, fastmath=False, error_model="numpy")
def unary_of_binary(x, y, axis, binary_code, unary_code, scale, zero):
    """(Out, IntermediateOut) = (unary(binary(X, Y)), binary(X, Y)), both of X's shape."""
    n, post = _y_steps(x, y, axis)
    xf, yf = _flat(x), _flat(y)
    out, mid = np.empty(x.shape, x.dtype), np.empty(x.shape, x.dtype)
    of, mf = out.reshape(x.size), mid.reshape(x.size)
    for i in range(x.size):
        mf[i] = binary(binary_code, xf[i], yf[(i // post) % n])
        of[i] = activation(unary_code, mf[i], scale, zero)
    return out, mid


@njit(cache=True, fastmath=False, error_model="numpy")
def binary_of_unary(x, y, axis, binary_code, unary_code, scale, zero):
    """(Out, IntermediateOut) = (binary(X, unary(Y)), unary(Y)) of X's and Y's shapes."""
    n, post = _y_steps(x, y, axis)
    xf, yf = _flat(x), _flat(y)
    out, mid = np.empty(x.shape, x.dtype), np.empty(y.shape, y.dtype)
    of, mf = out.reshape(x.size), mid.reshape(y.size)
    for j in range(y.size):
        mf[j] = activation(unary_code, yf[j], scale, zero)
    for i in range(x.size):
        of[i] = binary(binary_code, xf[i], mf[(i // post) % n])
    return out, mid


@njit(cache=True, fastmath=False, error_model="numpy")
def unary_of_binary_out(x, y, axis, binary_code, unary_code, scale, zero):
    """unary_of_binary's Out alone (IntermediateOut not saved: the kernel writes none)."""
    return unary_of_binary(x, y, axis, binary_code, unary_code, scale, zero)[0]


@njit(cache=True, fastmath=False, error_model="numpy")
def binary_of_unary_out(x, y, axis, binary_code, unary_code, scale, zero):
    return binary_of_unary(x, y, axis, binary_code, unary_code, scale, zero)[0]


@njit(cache=True, fastmath=False, error_model="numpy")
def fused_grad(x, y, out, mid, dout, binary_code, unary_code, unary_compound, has_mid, scale,
               zero):
    """(dX, dY, dIntermediateOut) of operands of one shape: ``x`` is dOut where the op has
    no X (an add's gradient does not read it), ``out`` dOut where it has no Out (scale's
    derivative does not read it), ``mid`` Y where it has no IntermediateOut (recomputed
    as the kernel recomputes it)."""
    if y.shape != x.shape or dout.shape != x.shape or out.shape != x.shape or \
            mid.size != x.size:
        raise ValueError("fused_elemwise_activation_grad: operands of other shapes")
    xf, yf, of, df, given = _flat(x), _flat(y), _flat(out), _flat(dout), _flat(mid)
    dx, dy, dm = (np.empty(x.shape, x.dtype), np.empty(x.shape, x.dtype),
                  np.empty(x.shape, x.dtype))
    dxf, dyf, dmf = dx.reshape(x.size), dy.reshape(x.size), dm.reshape(x.size)
    m = np.empty(1, x.dtype)              # the activation's output, in the op's dtype
    for i in range(x.size):
        if unary_compound:                 # Out = u(b(X, Y))
            dmf[i] = derivative(unary_code, of[i], df[i], scale, zero)
            dxf[i] = dmf[i] if binary_code == ADD else binary(MUL, dmf[i], yf[i])
            dyf[i] = dmf[i] if binary_code == ADD else binary(MUL, dmf[i], xf[i])
        else:                              # Out = b(X, u(Y))
            m[0] = given[i] if has_mid else activation(unary_code, yf[i], scale, zero)
            dxf[i] = df[i] if binary_code == ADD else binary(MUL, df[i], m[0])
            dmf[i] = df[i] if binary_code == ADD else binary(MUL, df[i], xf[i])
            dyf[i] = derivative(unary_code, m[0], dmf[i], scale, zero)
    return dx, dy, dm
