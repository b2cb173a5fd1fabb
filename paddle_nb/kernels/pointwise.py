"""``@pointwise``: one scalar function, compiled for every place, with its loops generated.

An elementwise op's math is a plain Python function of scalars::

    @pointwise(FLOAT_1, min_parallel=MIN_PARALLEL_MATH)
    def gelu(x):
        return 0.5 * x * (1.0 + math.erf(x * SQRT_HALF))

and that one function is all an op family writes. From it this module builds:

- for the CPU, ``gelu.cpu(x, out=...)``: a numba ufunc over the signatures given (numpy
  broadcasting, one loop per dtype; lazy_ufunc.py says why the list is explicit) and, with
  ``min_parallel``, a ``prange`` twin for large contiguous same-shape calls;
- for CUDA, ``gelu.cuda(x)``: the function compiled as a ``cuda.jit(device=True)`` function,
  called from a grid-stride kernel (operands of the output's shape read flat; others read
  through broadcast strides, as kernels/cuda/copy.py explains).

The loops are the same for every function of an arity, so they are written once here, as
source templates, and generated per function, as source rather than closures so that
numba's disk cache finds them in the next process (kernels/cpu/generated.py says why):
each is compiled with the scalar function's own file as its file name and
``<name>__<loop>`` as its name, and an edit to that file (or to kernels/cpu, cache.py)
invalidates it.

Scalar functions may call plain numba-supported math (``math.erf``) and the fast float32
helpers of kernels/cpu/fastmath32.py (``fexp``, ``ftanh``, ``fsigmoid``), which are
overloaded per target: SIMD-friendly approximations on the CPU, libm on CUDA. A literal
like ``0.5`` is float64 in numba, so a float32 loop computes such terms in float64 and
rounds once on the store.
"""
from __future__ import annotations

import inspect
import threading

import numpy as np
from numba import cuda, njit, prange

from .cpu.fastmath32 import FASTMATH32
from .cpu.generated import define
from .cpu.lazy_ufunc import LazyUfunc
from .cuda.device import broadcast_strides, empty, flat, int_array, launch

# Every pointwise kernel by name (relu, relu_grad, gelu...): what the places' ``unary`` and
# ``derivative`` look activations up in, and what the tests enumerate.
KERNELS: dict[str, "Pointwise"] = {}

# {args}: the array operands a0, a1...; {params}: trailing scalars p0... (", p0" or "")
_UFUNC = """
def {name}({args}{params}):
    return SCALAR({args}{params})
"""

_TWIN = """
def {name}({args}{params}, out):
    for i in prange(out.size):
        out[i] = SCALAR({items}{params})
"""

_CUDA_FLAT = """
def {name}({args}{params}, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = SCALAR({items}{params})
"""

# Broadcast: operand k is read at the offset its strides give the output's multi-index.
_CUDA_BROADCAST = """
def {name}(shape, {strided}{params}, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rem = i
{zero}
        for d in range(shape.size - 1, -1, -1):
            k = rem % shape[d]
            rem //= shape[d]
{step}
        out[i] = SCALAR({reads}{params})
"""


def _generate(fn, loop: str, template: str, arity: int, params: int, scalar, extra: dict):
    """The function a template makes for ``fn``'s arity (array operands, then ``params``
    scalars), named ``<fn>__<loop>``, whose code claims ``fn``'s file and module so
    numba's cache can find it again."""
    a = [f"a{k}" for k in range(arity)]
    source = template.format(
        name=fn.__name__, args=", ".join(a), items=", ".join(f"{v}[i]" for v in a),
        params="".join(f", p{k}" for k in range(params)),
        strided=", ".join(f"s{k}, a{k}" for k in range(arity)),
        zero="\n".join(f"        o{k} = 0" for k in range(arity)),
        step="\n".join(f"            o{k} += k * s{k}[d]" for k in range(arity)),
        reads=", ".join(f"a{k}[o{k}]" for k in range(arity)))
    return define(source, fn.__name__, f"{fn.__name__}__{loop}", fn,
                  {"SCALAR": scalar, **extra})


class Pointwise:
    """A scalar function and its loops for each place (see the module docstring)."""

    def __init__(self, fn, signatures, min_parallel=None, fastmath=FASTMATH32, params=0):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.py_func = self.__wrapped__ = fn    # inspect.getsource shows the scalar code
        self.params = params                    # trailing scalar arguments
        self.arity = fn.__code__.co_argcount - params       # array operands
        fn._pointwise = True
        self.scalar = scalar = njit(cache=True, fastmath=fastmath, error_model="numpy")(fn)
        twin = None
        if min_parallel is not None:
            twin = njit(cache=True, fastmath=True, error_model="numpy", parallel=True)(
                _generate(fn, "parallel", _TWIN, self.arity, params, scalar,
                          {"prange": prange}))
        self.cpu = LazyUfunc(_generate(fn, "ufunc", _UFUNC, self.arity, params, scalar, {}),
                             signatures, twin, min_parallel, params)
        self._cuda = None
        self._lock = threading.Lock()

    def cuda_loops(self) -> dict:
        """{"cuda_flat": kernel, "cuda_broadcast": kernel}, compiled on first CUDA use: a
        CPU-only process never pays for them."""
        if self._cuda is None:
            with self._lock:
                if self._cuda is None:
                    device = cuda.jit(device=True)(self.fn)
                    self._cuda = {loop: cuda.jit(_generate(self.fn, loop, template,
                                                           self.arity, self.params, device,
                                                           {"cuda": cuda}))
                                  for loop, template in (("cuda_flat", _CUDA_FLAT),
                                                         ("cuda_broadcast", _CUDA_BROADCAST))}
        return self._cuda

    def loop_source(self, loop: str) -> str:
        """The source generated for ``loop``: "ufunc", "parallel" (the CPU's), "cuda_flat" or
        "cuda_broadcast" (compiling the CUDA loops if they are not yet)."""
        if loop in ("ufunc", "parallel"):
            made = self.cpu.py_func if loop == "ufunc" else self.cpu.parallel.py_func
        else:
            kernel = self.cuda_loops()[loop]
            made = getattr(kernel, "py_func", None) or kernel.fn      # (the simulator's)
        return made.source

    def cuda(self, *args, out_dtype=None):
        """The function of device arrays (numpy broadcasting) and then its ``params``
        scalars, as a new device array in ``out_dtype`` (default: the dtype the CPU
        ufunc's loop for these operand dtypes gives, so both places agree: bool for a
        comparison)."""
        operands, scalars = args[:len(args) - self.params], args[len(args) - self.params:]
        shape = tuple(int(d) for d in np.broadcast_shapes(*(a.shape for a in operands)))
        if out_dtype is None:
            out_dtype = self.cpu.ufunc.resolve_dtypes(
                tuple(np.dtype(a.dtype) for a in operands)
                + tuple(np.dtype(a.dtype) for a in operands[:1] * self.params) + (None,))[-1]
        out = empty(shape, out_dtype)
        if out.size == 0:
            return out
        loops = self.cuda_loops()
        if all(tuple(a.shape) == shape for a in operands):
            launch(loops["cuda_flat"], out.size, *[flat(a) for a in operands], *scalars,
                   flat(out))
            return out
        run_shape = shape or (1,)          # a 0-d result is one element of rank 1
        strided = []
        for a in operands:
            strided += [int_array(broadcast_strides(a.shape, run_shape)), flat(a)]
        launch(loops["cuda_broadcast"], out.size, int_array(run_shape), *strided, *scalars,
               flat(out))
        return out

    def __repr__(self):
        return f"<pointwise {self.__name__}/{self.arity}>"


def pointwise(signatures, min_parallel=None, fastmath=FASTMATH32, params=0):
    """Decorator: the scalar function below, compiled for every place; registered in
    KERNELS by its name. ``min_parallel``: elements from which the CPU runs the ``prange``
    twin (the measured crossover); ``fastmath``: LLVM flags of the scalar code (the default
    keeps NaN and inf semantics, fastmath32.py says why); ``params``: how many of its last
    arguments are scalars for the whole array (an attribute: pow's factor), not elements."""
    def wrap(fn):
        kernel = Pointwise(fn, signatures, min_parallel, fastmath, params)
        if KERNELS.setdefault(fn.__name__, kernel) is not kernel:
            raise ValueError(f"a pointwise kernel named {fn.__name__!r} already exists "
                             f"({inspect.getfile(KERNELS[fn.__name__].fn)})")
        return kernel
    return wrap

