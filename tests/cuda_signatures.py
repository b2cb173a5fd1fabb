"""The argument types each CUDA kernel is launched with in numba's simulator, recorded for
``test_cuda_compile.py``, which compiles every kernel for a real GPU with them.

The CUDA tests already launch every kernel in the simulator during the suite: recording
there (``conftest.py`` switches the recorder on around those tests, then runs the compile
test last) costs nothing extra, where running those tests again in a subprocess cost minutes.
Run on its own, the compile test still runs them in a subprocess, with this module as a
pytest plugin (``pytest_sessionfinish`` writes the file ``SIGNATURES_OUT`` names).
"""
from __future__ import annotations

import json
import os

# The tests whose launches are recorded: those files' tests matching the words (the
# ``-k "cuda or kernels or training"`` a subprocess run uses).
FILES = ("test_cuda_kernels.py", "test_ops_table.py", "test_op_gradients.py",
         "test_cuda_training.py", "test_selected_rows.py")
WORDS = ("cuda", "kernels", "training")

SIGNATURES: set[str] = set()
_state = {"on": False, "installed": False}


def _describe(a):
    import numba   # noqa: PLC0415 (after conftest chose the simulator)
    import numpy as np   # noqa: PLC0415
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray   # noqa: PLC0415
    a = a._ary if isinstance(a, FakeCUDAArray) else a
    if isinstance(a, np.ndarray):
        return ["array", a.dtype.str, a.ndim, "C" if a.flags.c_contiguous else "A"]
    return ["scalar", str(numba.typeof(a))]


def install() -> bool:
    """Wrap the simulator's kernel launch (once); False where the simulator is not in use."""
    if _state["installed"]:
        return True
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        return False
    from numba.cuda.simulator import kernel   # noqa: PLC0415
    launch = kernel.FakeCUDAKernel.__call__

    def recording_launch(self, *args):
        if _state["on"] and not self._device:
            SIGNATURES.add(json.dumps([self.fn.__module__, self.fn.__qualname__,
                                       [_describe(a) for a in args]]))
        return launch(self, *args)
    kernel.FakeCUDAKernel.__call__ = recording_launch
    _state["installed"] = True
    return True


def records(nodeid: str) -> bool:
    """Whether the test ``nodeid`` is one whose launches are recorded."""
    path, _, name = nodeid.partition("::")
    return os.path.basename(path) in FILES and any(w in nodeid.lower() for w in WORDS)


def recording(on: bool) -> None:
    _state["on"] = on


def write(path) -> None:
    with open(path, "w") as f:
        json.dump(sorted(SIGNATURES), f)


def covered() -> bool:
    """Whether this session collected the recording tests of every file in ``FILES`` and all
    of them have run (``conftest.py`` counts), so the set is the whole suite's."""
    return _state.get("complete", False) and _state.get("ran", 0) == _state["expected"]


def expect(nodeids) -> None:
    """The session's collected tests (``conftest.py``, after collection)."""
    recorded = [n for n in nodeids if records(n)]
    files = {os.path.basename(n.partition("::")[0]) for n in recorded}
    _state.update(expected=len(recorded), ran=0, complete=files == set(FILES))


def ran_one() -> None:
    _state["ran"] = _state.get("ran", 0) + 1


# --- as a pytest plugin in the compile test's subprocess -------------------------------------
def pytest_sessionfinish(session, exitstatus):
    write(os.environ["SIGNATURES_OUT"])
