"""Numba kernels, installed as ``paddle_nb.kernels``.

Plain functions over arrays: no knowledge of ops, programs, scopes or the front end.
``cpu/`` holds module-level ``@njit``/``@vectorize`` kernels (``cache=True`` so a second
process compiles nothing; ``error_model="numpy"`` and ``fastmath`` so loops vectorise);
a kernel's serial and ``prange`` loops are generated around one item's body
(``cpu/twins.py``). ``cuda/`` holds ``cuda.jit`` kernels, all launched through
``cuda/device.launch``. Here, code written once for both places: ``@pointwise`` and
``@update`` (loops generated around a scalar function), ``scale``, the CTC/RNN-T and
linear-algebra routines. The places' backends (``paddle_nb/backends``) and the op
declarations in ``paddle_nb/ops/`` bind them to op types; nothing here imports them.
"""
