"""Loops generated from source templates, compiled so that numba's disk cache finds them.

Three places write a loop once and generate it per kernel: ``@pointwise`` (the elementwise
loops around a scalar function, ../pointwise.py), ``@update`` (an optimizer's loops,
../update.py) and ``twins`` (the serial and ``prange`` loops around one item's body,
twins.py). Why source and not closures: numba's on-disk cache keys a function on its
file, its qualified name, its first line and the bytes of its closure, and a closure over
a compiled function pickles differently in every process, so a closure-made loop would be
compiled again in every new process. A generated loop instead names what it calls as
globals of its own scope, and is compiled with ``like``'s file as its file name and a
qualified name of its own: the next process finds it in the cache again, and an edit to
that file (or to kernels/cpu: cache.py) makes it stale.
"""
from __future__ import annotations

import inspect


def define(source: str, name: str, qualname: str, like, scope: dict):
    """The function ``name`` that ``source`` defines, as if written in ``like``'s file and
    module under ``qualname``; ``scope``: the globals it calls (a kernel's body, ``prange``,
    ``np``...)."""
    scope = dict(scope)
    exec(compile(source, inspect.getfile(like), "exec"), scope)    # noqa: S102 (our template)
    made = scope[name]
    made.__qualname__ = qualname
    made.__module__ = like.__module__
    made.source = source.strip()    # inspect.getsource would read like's file at these lines
    made._pointwise = True          # cache.py stamps it with kernels/cpu too, wherever it is
    return made
