"""``place_loops``: the CPU loop and the CUDA kernel over a batch's items, from one item's body.

Some kernels do the same work for each item of a batch on both places (the loss of one
sequence in ctc.py and rnnt.py, one element of a scaled gradient): the work is written
once as a ``register_jitable`` function (both numba's CPU compiler and its CUDA compiler
take it, and the CUDA simulator runs it as plain Python), whose last parameter is the
item's number, and the two loops over the items are generated around it::

    @register_jitable
    def ctc_sequence(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss, b):
        ...

    ctc_batch, ctc_kernel = place_loops(ctc_sequence, items="logits.shape[1]",
                                        cpu_name="ctc_batch", cuda_name="ctc_kernel")

which makes::

    def ctc_batch(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss):
        for b in range(logits.shape[1]):                        # njit: one after another
            BODY(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss, b)

    def ctc_kernel(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss):
        for b in range(cuda.grid(1), logits.shape[1], cuda.gridsize(1)):   # cuda.jit
            BODY(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss, b)

The loops take the body's parameters but the last, in its order; ``items`` is the number
of items, an expression of them. The CUDA kernel is grid-stride (one thread per item where
the grid is large enough: device.launch or launch_1d choose it). Both are compiled with
numba's disk cache under the body's file (cpu/generated.py says how the cache finds
generated source), the CPU loop with ``fastmath=False`` and numpy's error model. The names
must be those the loops are assigned to: the CUDA compile test finds a kernel by its name.
(cpu/twins.py is the CPU-only sibling: a serial and a ``prange`` loop.)
"""
from __future__ import annotations

import inspect

from numba import cuda, njit

from .cpu.generated import define

_LOOPS = {
    "cpu": "for {item} in range({items}):",
    "cuda": "for {item} in range(cuda.grid(1), {items}, cuda.gridsize(1)):",
}


def _source(name: str, params: list, items: str, place: str) -> str:
    """The loop's source (the module docstring shows both)."""
    header = _LOOPS[place].format(item=params[-1], items=items)
    return (f"def {name}({', '.join(params[:-1])}):\n"
            f"    {header}\n"
            f"        BODY({', '.join(params)})\n")


def place_loops(body, items: str, cpu_name: str, cuda_name: str):
    """(the ``njit`` loop named ``cpu_name``, the ``cuda.jit`` kernel named ``cuda_name``) over
    ``items`` around ``body``, a ``register_jitable`` function of (the loops' arguments,
    then the item's number). See the module docstring."""
    if hasattr(body, "py_func"):
        raise ValueError(f"place_loops: {body.__name__} must be a register_jitable function, "
                         f"given a compiled one (the CUDA kernel cannot call a CPU-compiled "
                         f"function)")
    params = list(inspect.signature(body).parameters)
    scope = {"BODY": body, "cuda": cuda}
    cpu_loop = njit(cache=True, fastmath=False, error_model="numpy")(
        define(_source(cpu_name, params, items, "cpu"), cpu_name, cpu_name, body, scope))
    cuda_loop = cuda.jit(cache=True)(
        define(_source(cuda_name, params, items, "cuda"), cuda_name, cuda_name, body, scope))
    return cpu_loop, cuda_loop
