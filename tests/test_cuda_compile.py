"""Every CUDA kernel, with every argument type the CUDA tests launch it with, compiles for a
real GPU — checked without one.

The simulator runs kernels as plain Python, so it never type-checks them the way numba's
CUDA compiler does (mixing signed and unsigned ints, a branch numba cannot type...). Each
launch's argument types are recorded while the CUDA tests run in the simulator
(``cuda_signatures.py``: in the same session, which runs this test last; run on its own, in
a subprocess), then each kernel is compiled to PTX with numba's real CUDA target in a
subprocess. That needs only NVVM, no GPU and no driver: ``pip install
nvidia-cuda-nvcc-cu12`` provides it. Skipped where NVVM is not installed.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_signatures

TESTS = Path(__file__).parent


def _has_nvvm(root) -> bool:
    nvvm = Path(root) / "nvvm"
    return any(nvvm.glob("lib*/libnvvm.so*")) or any(nvvm.glob("bin/nvvm64*.dll"))


def _nvcc_home():
    """The pip wheel's CUDA nvcc folder, or $CUDA_HOME, if it holds the NVVM library."""
    home = os.environ.get("CUDA_HOME")
    if home and _has_nvvm(home):
        return home
    try:
        import nvidia.cuda_nvcc as wheel   # noqa: PLC0415
    except ImportError:
        return None
    return next((root for root in getattr(wheel, "__path__", []) if _has_nvvm(root)), None)


COMPILER = '''
import importlib, json, sys
import numpy as np
import numba.cuda.dispatcher as dispatcher
from numba import cuda, from_dtype, types
from paddle_nb.kernels.pointwise import KERNELS
class Device:                 # device functions ask the current device for its CC
    compute_capability = (8, 0)
dispatcher.get_current_device = lambda: Device()
failed = []
for entry in json.load(open(sys.argv[1])):
    module, name, args = json.loads(entry)
    sig = tuple(types.Array(from_dtype(np.dtype(a[1])), a[2], a[3]) if a[0] == "array"
                else getattr(types, a[1]) for a in args)
    owner, _, loop = name.partition("__")       # <fn>__<loop>: a @pointwise kernel's loop
    kernel = getattr(importlib.import_module(module), owner)
    if loop:
        if not hasattr(kernel, "cuda_loops"):   # the module keeps the scalar function under
            kernel = KERNELS[owner]             # its name (kernels/cpu/reduce.pointwise_scalar)
        kernel = kernel.cuda_loops()[loop]
    try:
        cuda.compile_ptx(kernel.py_func, sig, cc=(8, 0))
    except Exception as e:
        failed.append(f"{module}.{name}{sig}: {str(e).splitlines()[:4]}")
print(json.dumps(failed))
'''


def _record_in_a_subprocess(sigs: Path) -> None:
    """Run the CUDA tests in the simulator with the recorder as a plugin."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", SIGNATURES_OUT=str(sigs),
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "cuda_signatures", *(str(TESTS / f) for f in cuda_signatures.FILES),
         "-k", " or ".join(cuda_signatures.WORDS)],
        env=env, capture_output=True, text=True, timeout=600, cwd=TESTS.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_every_launched_kernel_compiles_to_ptx(tmp_path):
    home = _nvcc_home()
    if home is None:
        pytest.skip("needs NVVM (pip install nvidia-cuda-nvcc-cu12, or CUDA_HOME)")
    sigs = tmp_path / "signatures.json"
    if cuda_signatures.covered():        # the suite's CUDA tests ran earlier in this session
        cuda_signatures.write(sigs)
    else:
        _record_in_a_subprocess(sigs)
    recorded = json.loads(sigs.read_text())
    assert len(recorded) > 30
    assert any("_add_segments" in s for s in recorded)           # the sparse (SelectedRows)
    assert any("adam_rows__cuda" in s for s in recorded)         # kernels too
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", CUDA_HOME=home)
    done = subprocess.run([sys.executable, "-c", COMPILER, str(sigs)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert not failed, "\n".join(failed)
