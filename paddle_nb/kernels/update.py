"""``@update``: one scalar function that updates several same-shaped arrays, for every place.

An optimizer's step is elementwise but writes several arrays at once (the parameter and
its accumulators), so ``@pointwise``'s ufuncs do not fit it. Its math is still one plain
scalar function of one element, returning the new values as a tuple::

    @update(arrays=3, cells=1, outputs=2, min_parallel=MIN_PARALLEL_ADAGRAD)
    def adagrad(param, grad, moment, lr, epsilon):
        moment = moment + grad * grad
        return param - lr * grad / (math.sqrt(moment) + epsilon), moment

Its arguments are, in order:
- ``arrays``: elements of arrays of the parameter's size (Param, Grad, the accumulators);
- ``cells``: one-element arrays read once per call (the learning rate, Adam's beta powers).
  On CUDA they stay on the device and the kernel reads them, so a step copies nothing back
  to the host; on both places the generated loop loads them before the loop, so a term of
  cells only (Adam's bias correction) is computed once, not per element;
- the rest: plain scalars (attributes: epsilon, beta1).

From it this module generates, as pointwise.py does (and for its reason: numba's on-disk
cache finds generated source again in the next process, closures it does not):
``kernel.cpu(*arrays, *cells, *params)`` (a serial loop, and with ``min_parallel`` a
``prange`` twin for large parameters), ``kernel.cuda(...)`` (a grid-stride kernel) and
``kernel.returning(...)`` (the serial loop as a compiled block calls it: paddle_nb/compiler).
Both return new arrays of the first array's shape and dtype, one per returned value: the
executor stores them as ParamOut, MomentOut..., so a value a user put in a scope is never
changed behind their back, and a run that fails can be undone.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import cuda, njit, prange

from .cpu.fastmath32 import FASTMATH32
from .cpu.generated import define
from .cpu.threads import parallel_ok
from .cuda.device import empty, flat, launch

# Every update kernel by name (sgd, momentum, adamw...): what the tests enumerate.
UPDATES: dict[str, "Update"] = {}

_CPU = """
def {name}({args}, {outs}):
{loads}
    for i in {loop}({first}.size):
        {targets} = SCALAR({call})
"""

# a compiled block's form (paddle_nb/compiler): new arrays made and returned around the
# serial loop (a compiled block cannot ask threads.parallel_ok), the sizes checked first as
# the ops' read_state checks them (raising: the interpreter then reruns the block)
_RETURNING = """
def {name}({args}):
    if {size_mismatch}:
        raise ValueError("an array of the update has another size than its first")
    if {cell_mismatch}:
        raise ValueError("a one-element input of the update has another size")
{allocs}
    SERIAL({flat_args}, {flat_outs})
    return {outs}
"""

_CUDA = """
def {name}({args}, {outs}):
{loads}
    for i in range(cuda.grid(1), {first}.size, cuda.gridsize(1)):
        {targets} = SCALAR({call})
"""


def _names(shape: tuple) -> tuple[list[str], ...]:
    """The generated loops' names of the arrays, cells, params and outputs."""
    return tuple([f"{prefix}{k}" for k in range(count)] for prefix, count in zip("acpo", shape))


def _generate(fn, loop: str, template: str, shape: tuple, scalar, extra: dict):
    """The loop ``template`` makes for ``fn`` (``shape``: arrays, cells, params, outputs),
    named ``<fn>__<loop>`` under ``fn``'s file and module (cpu/generated.py says why)."""
    a, c, p, o = _names(shape)
    source = template.format(
        name=fn.__name__, args=", ".join(a + c + p), outs=", ".join(o), first=o[0],
        loop="prange" if loop == "parallel" else "range",
        loads="\n".join(f"    v{k} = c{k}[0]" for k in range(len(c))) or "    pass",
        targets=", ".join(f"{v}[i]" for v in o),
        call=", ".join([f"{v}[i]" for v in a] + [f"v{k}" for k in range(len(c))] + p))
    return define(source, fn.__name__, f"{fn.__name__}__{loop}", fn,
                  {"SCALAR": scalar, **extra})


def _generate_returning(fn, shape: tuple, serial):
    """``<fn>__returning(*arrays, *cells, *params)``: the new arrays (_RETURNING)."""
    a, c, p, o = _names(shape)
    source = _RETURNING.format(
        name=fn.__name__, args=", ".join(a + c + p),
        size_mismatch=" or ".join(f"{v}.size != a0.size" for v in a[1:]) or "False",
        cell_mismatch=" or ".join(f"{v}.size != 1" for v in c) or "False",
        allocs="\n".join(f"    {v} = np.empty(a0.shape, a0.dtype)" for v in o),
        flat_args=", ".join([f"np.ascontiguousarray({v}).reshape(-1)" for v in a + c] + p),
        flat_outs=", ".join(f"{v}.reshape(-1)" for v in o),
        outs=", ".join(o))
    return define(source, fn.__name__, f"{fn.__name__}__returning", fn,
                  {"SERIAL": serial, "np": np})


class Update:
    """A scalar update function and its loops for each place (see the module docstring)."""

    def __init__(self, fn, arrays: int, cells: int, outputs: int, min_parallel, fastmath):
        self.fn = self.py_func = self.__wrapped__ = fn
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__
        params = fn.__code__.co_argcount - arrays - cells
        self.shape = (arrays, cells, params, outputs)
        self.outputs = outputs
        fn._pointwise = True
        self.scalar = scalar = njit(cache=True, fastmath=fastmath, error_model="numpy")(fn)
        loop = {"SCALAR": scalar, "prange": prange}
        self.serial = njit(cache=True, fastmath=fastmath, error_model="numpy")(
            _generate(fn, "serial", _CPU, self.shape, scalar, loop))
        self.parallel = None if min_parallel is None else njit(
            cache=True, fastmath=fastmath, error_model="numpy", parallel=True)(
            _generate(fn, "parallel", _CPU, self.shape, scalar, loop))
        # in a compiled block: returning(*arrays, *cells, *params) -> the new arrays
        self.returning = njit(cache=True, fastmath=fastmath, error_model="numpy")(
            _generate_returning(fn, self.shape, self.serial))
        self.min_parallel = min_parallel
        self._cuda = None
        self._lock = threading.Lock()

    def _split(self, args):
        arrays, cells = self.shape[0], self.shape[1]
        if len(args) != sum(self.shape[:3]):
            raise TypeError(f"{self.__name__} takes {sum(self.shape[:3])} arguments "
                            f"(arrays, cells, scalars), {len(args)} given")
        return args[:arrays], args[arrays:arrays + cells], args[arrays + cells:]

    def cpu(self, *args, out=None):
        """The new arrays (a tuple, or one array for one output), in the first's dtype;
        into ``out`` (contiguous arrays of the first's shape and dtype) when given."""
        # (an optimizer calls this once per parameter per step: kept to a few lines)
        arrays, cells, params = self._split(args)
        first = arrays[0]
        if out is None:
            out = [np.empty(first.shape, first.dtype) for _ in range(self.outputs)]
        run = self.serial
        if self.parallel is not None and first.size >= self.min_parallel and parallel_ok():
            run = self.parallel
        run(*[a.reshape(-1) for a in arrays + cells], *params, *[o.reshape(-1) for o in out])
        return out[0] if self.outputs == 1 else tuple(out)

    def cuda_loops(self) -> dict:
        """{"cuda": the grid-stride kernel}, compiled on first CUDA use (the same interface
        as pointwise.py's, which the tests enumerate)."""
        if self._cuda is None:
            with self._lock:
                if self._cuda is None:
                    device = cuda.jit(device=True)(self.fn)
                    self._cuda = {"cuda": cuda.jit(_generate(self.fn, "cuda", _CUDA, self.shape,
                                                             device, {"cuda": cuda}))}
        return self._cuda

    def cuda(self, *args):
        """As ``cpu``, on device arrays; the cells are read by the kernel on the device."""
        arrays, cells, params = self._split(args)
        outs = [empty(arrays[0].shape, arrays[0].dtype) for _ in range(self.outputs)]
        launch(self.cuda_loops()["cuda"], outs[0].size, *[flat(a) for a in arrays + cells],
               *params, *[flat(o) for o in outs])
        return outs[0] if self.outputs == 1 else tuple(outs)

    def loop_source(self, loop: str) -> str:
        """The generated source of "serial", "parallel" or "cuda"."""
        if loop == "cuda":
            kernel = self.cuda_loops()["cuda"]
            return (getattr(kernel, "py_func", None) or kernel.fn).source
        return getattr(self, loop).py_func.source

    def __repr__(self):
        return f"<update {self.__name__}{self.shape}>"


def update(arrays: int, cells: int = 0, outputs: int = 1, min_parallel=None,
           fastmath=FASTMATH32):
    """Decorator: the scalar update below, compiled for every place (module docstring);
    it returns ``outputs`` values.
    ``min_parallel``: parameter elements from which the CPU runs the ``prange`` twin;
    ``fastmath``: LLVM's fast-math flags (the default keeps NaN and inf semantics: a
    diverged step must show as NaN, as numpy and Paddle show it)."""
    def wrap(fn):
        kernel = Update(fn, arrays, cells, outputs, min_parallel, fastmath)
        if UPDATES.setdefault(fn.__name__, kernel) is not kernel:
            raise ValueError(f"an update kernel named {fn.__name__!r} already exists")
        return kernel
    return wrap


@njit(cache=True, fastmath=False, error_model="numpy")
def times(a, factor):
    """``a * factor`` as a new array of a's dtype (numpy's rule for an array times a Python
    float): what an optimizer's one-element state (Adam's beta powers) becomes in a
    compiled block."""
    return a * a.dtype.type(factor)
