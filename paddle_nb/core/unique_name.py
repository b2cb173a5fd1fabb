"""Unique names (``fc_0``, ``fc_0.w_0``, ``tmp_3``) and ``pd.namespace`` prefixes
(the Block design).

Names follow Fluid's scheme: a key gets a counter, ``key_N``. Inside ``namespace("a")``
every generated and every explicitly requested parameter name is prefixed ``a/``, so
three submodels built under three namespaces get three different ``W``s.
"""
from __future__ import annotations

import contextlib
import threading
from collections import defaultdict

from .errors import BuildError


class UniqueNameGenerator:
    def __init__(self):
        self.counters: defaultdict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def __call__(self, key: str) -> str:
        with self._lock:
            n = self.counters[key]
            self.counters[key] += 1
        return f"{key}_{n}"


_generator = UniqueNameGenerator()
_namespaces = threading.local()


def _stack() -> list[str]:
    s = getattr(_namespaces, "stack", None)
    if s is None:
        s = _namespaces.stack = []
    return s


def prefix() -> str:
    """The active namespace prefix: ``''`` or ``'model_a/'`` (nested: ``'a/b/'``)."""
    s = _stack()
    return "".join(p + "/" for p in s)


def with_prefix(name: str) -> str:
    return prefix() + name


def generate(key: str) -> str:
    """A new unique name ``key_N``, inside the active namespace."""
    return _generator(with_prefix(key))


def generate_within(name: str, key: str) -> str:
    """A unique name under an already generated (already prefixed) ``name``:
    ``generate_within("fc_0", "tmp")`` -> ``fc_0.tmp_0``."""
    return _generator(f"{name}.{key}")


@contextlib.contextmanager
def namespace(name: str):
    """Prefix the names made inside the ``with`` block with ``name/`` (the Block design)."""
    if not isinstance(name, str) or not name or "/" in name:
        raise BuildError(f"a namespace is a non-empty name without '/', got {name!r}")
    _stack().append(name)
    try:
        yield name
    finally:
        _stack().pop()


@contextlib.contextmanager
def guard(generator: UniqueNameGenerator | None = None):
    """Use a fresh (or the given) counter set inside the block: names restart at ``_0``."""
    global _generator
    old, _generator = _generator, generator or UniqueNameGenerator()
    try:
        yield _generator
    finally:
        _generator = old


def reset() -> None:
    """Restart every counter (a new notebook program, a test)."""
    global _generator
    _generator = UniqueNameGenerator()
