"""``twins``: the serial loop and the ``prange`` loop of a kernel, from one item's body.

Most kernels here split independent items between threads (the rows of a softmax, the
planes of an interpolation, the groups of a batch norm, the volumes of a pool): past a
measured size their entry point runs the ``prange`` loop, below it the serial one
(threads.py keeps the threads back just after a BLAS call). The two loops differ in one
word, so the work of one item is written once, as an ``@njit(inline="always")`` function
whose last parameter is the item's number, and the loops are generated around it::

    @njit(cache=True, fastmath=True, error_model="numpy", inline="always")
    def _hard_label_loss_row(prob, label, ignore_index, out, i):
        ...

    _hard_label_loss_serial, _hard_label_loss_parallel = twins(
        _hard_label_loss_row, "_hard_label_loss", items="prob.shape[0]",
        allocate={"out": "np.empty(prob.shape[0], prob.dtype)"})

which makes (the parallel one with ``prange`` and ``parallel=True``)::

    def _hard_label_loss_serial(prob, label, ignore_index):
        out = np.empty(prob.shape[0], prob.dtype)
        for i in range(prob.shape[0]):
            BODY(prob, label, ignore_index, out, i)
        return out

- ``items``: the number of items, an expression of the loop's arguments;
- ``allocate``: arrays the loop makes before it and returns (one, or a tuple), shared by
  the items (each writes its own part);
- ``scratch``: working arrays each item needs to itself: the serial loop makes them once,
  the parallel loop once per item (threads must not share them).
The loop's arguments are the body's parameters but the item and those two kinds, in the
body's order. Both loops are compiled with the body's fast-math flags and error model,
with numba's disk cache (generated.py says how the cache finds generated source). The
names must be those the loops are assigned to: the cache tests check it.
"""
from __future__ import annotations

import inspect

import numpy as np
from numba import njit, prange

from .generated import define


def _source(name: str, params: list, items: str, allocate: dict, scratch: dict,
            parallel: bool) -> str:
    """The loop's source (the module docstring shows one)."""
    made = {**allocate, **scratch}
    args = [p for p in params[:-1] if p not in made]
    once = {**allocate, **({} if parallel else scratch)}        # before the loop
    each = scratch if parallel else {}                           # in every item
    lines = [f"def {name}({', '.join(args)}):"]
    lines += [f"    {k} = {v}" for k, v in once.items()]
    lines += [f"    for {params[-1]} in {'prange' if parallel else 'range'}({items}):"]
    lines += [f"        {k} = {v}" for k, v in each.items()]
    lines += [f"        BODY({', '.join(params)})"]
    if allocate:
        lines += [f"    return {', '.join(allocate)}"]
    return "\n".join(lines) + "\n"


def twins(body, name: str, items: str, allocate: dict | None = None,
          scratch: dict | None = None):
    """(``name``_serial, ``name``_parallel): the two loops over ``items`` around ``body``,
    an ``@njit(inline="always")`` function of (the loop's arguments, allocated and scratch
    arrays in any order, then the item's number). See the module docstring."""
    options = body.targetoptions
    if options.get("inline") != "always":
        raise ValueError(f"twins: {body.__name__} must be @njit(inline='always') (each loop "
                         f"inlines it: a call per item costs a refcount pair per array)")
    params = list(inspect.signature(body.py_func).parameters)
    made = {**(allocate or {}), **(scratch or {})}
    unknown = [k for k in made if k not in params[:-1]]
    if unknown:
        raise ValueError(f"twins: {body.__name__} has no parameter {unknown[0]!r} to pass "
                         f"the array made for it (its parameters: {params})")
    flags = {"cache": True, "fastmath": options["fastmath"],
             "error_model": options.get("error_model", "numpy")}
    scope = {"BODY": body, "np": np, "prange": prange}
    loops = []
    for parallel in (False, True):
        qualname = f"{name}_{'parallel' if parallel else 'serial'}"
        source = _source(qualname, params, items, allocate or {}, scratch or {}, parallel)
        loops.append(njit(parallel=parallel, **flags)(
            define(source, qualname, qualname, body.py_func, scope)))
    return tuple(loops)
