"""paddle_nb: PaddlePaddle's Block and Scope design, in Python, for Jupyter.

    import paddle_nb as pd

    x = pd.data("x", [None, 4])
    y = pd.layer.fc(x, 3, act="softmax")
    exe = pd.Executor(pd.CPUPlace())
    exe.run(pd.default_startup_program())
    out, = exe.run(feed={"x": batch}, fetch_list=[y])

The layout: ``core/`` (ProgramDesc views, SymbolTable, Scope, registry, executor),
``ops/`` (one declaration per op), ``kernels/`` (numba), ``passes/`` (program rewrites),
and the builders here (layers, initializers, the variable API).

This file is a light facade: ``import paddle_nb`` (or ``import paddle_nb.lab``, which the
Jupyter server does at start) loads no numpy, numba or protobuf. The first ``pd.<name>``
loads the public API (``public_api.py``) and every op; ``lazy.py`` is the one home for
what loads when, and why.
"""
from . import lazy as _lazy

__version__ = "0.1.0"

# The core's registry names no module above it: it asks for the ops through the lazy
# home, and this is what declares them (the public API imports the ops package first).
_lazy.declare_ops_with(_lazy.public_api)


def __getattr__(name):
    """``pd.<name>`` not loaded yet: the public API (or a widget) now (PEP 562)."""
    return _lazy.attribute(name, globals())


def __dir__():
    return _lazy.names(globals())
