"""numba's on-disk cache for this package, invalidated by a change to any of its files.

numba keys a cached kernel on its own source file only (a hash of its contents), but
kernels here inline code from sibling files (fastmath32.py into activation.py and
reduce.py, the row helpers...): after an edit to fastmath32.py alone, activation.py's
cached kernels would still hold the old exp. So the kernels of this package get numba's
usual cache locator (``__pycache__`` beside the source, or ``NUMBA_CACHE_DIR``) with a
source stamp made of every ``.py`` file in the package and in ``kernels/`` above it (the
cell math of rnn_cells.py is inlined into rnn.py's loops): editing one recompiles all
of them, lazily, as they are used. The same goes for the functions kernels/pointwise.py
compiles from an op family's file (their own file's stamp, plus this package's).
Registered by ``__init__.py`` before any kernel exists.
Uses numba's cache locator classes (``numba.core.caching``, not a public API): if they are
not there, numba's own per-file stamps apply.
"""
from __future__ import annotations

import hashlib
import os

from numba.core import caching      # numba's internals (see above)

_HERE = os.path.dirname(os.path.abspath(__file__))


# the kernels package above this one: scalar code written once for both places, which
# kernels here inline (rnn_cells.py into rnn.py; pointwise.py's and update.py's loops)
_SHARED = os.path.dirname(_HERE)


def package_stamp() -> tuple:
    """(name, sha256 of the contents) of every .py file in this package and in the
    kernels package above it (its shared files: ``../rnn_cells.py``...)."""
    stamp = []
    for folder, prefix in ((_HERE, ""), (_SHARED, "../")):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    stamp.append((prefix + name, hashlib.sha256(f.read()).hexdigest()))
    return tuple(stamp)


def install() -> bool:
    """Put the package locator first in numba's list; False if numba has no such list."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = getattr(caching, "_CacheLocator", None)
    classes = getattr(impl, "_locator_classes", None)
    if base is None:
        return False
    if not isinstance(classes, list):
        return False
    if any(getattr(c, "_paddle_nb_kernels", False) for c in classes):
        return True
    numba_own = list(classes)
    stamp = package_stamp()

    class KernelsLocator(base):
        _paddle_nb_kernels = True

        def __init__(self, inner):
            self._inner = inner

        def ensure_cache_path(self):
            return self._inner.ensure_cache_path()

        def get_cache_path(self):
            return self._inner.get_cache_path()

        def get_disambiguator(self):
            return self._inner.get_disambiguator()

        def get_source_stamp(self):
            return self._inner.get_source_stamp(), stamp

        @classmethod
        def from_function(cls, py_func, py_file):
            # kernels here, and the scalar functions and generated loops of @pointwise
            # (whose file is their op family's: ops/activation.py...), which inline
            # fastmath32.py too
            if (os.path.dirname(os.path.abspath(py_file)) != _HERE
                    and not getattr(py_func, "_pointwise", False)):
                return None
            for numba_class in numba_own:
                inner = numba_class.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner)
            return None

    classes.insert(0, KernelsLocator)
    return True
