"""Every test starts from fresh default programs, name counters and global scope.

CUDA kernels run in numba's simulator unless the environment says otherwise: the variable
must be set before numba is imported, hence here, first. On a GPU machine run
``NUMBA_ENABLE_CUDASIM=0 python -m pytest -m gpu`` (tests marked ``gpu`` are skipped
where no real GPU is present).
"""
import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest  # noqa: E402

import cuda_signatures  # noqa: E402
import paddle_nb as pd  # noqa: E402
from paddle_nb.kernels.cuda import device  # noqa: E402

cuda_signatures.install()

# numba's simulator runs each GPU thread of a block as a Python thread, beside a manager that
# polls them in a busy loop (numba/cuda/simulator/kernel.py, BlockManager.run). At Python's
# default 5 ms switch interval the poller may keep the GIL for 5 ms each time a simulated
# thread ends, so a small launch mostly spins: at 0.5 ms the CUDA gradient table runs in 31 s
# instead of 90 s. Only the test process is set so; paddle_nb itself never changes the
# interpreter's settings.
_DEFAULT_SWITCH_INTERVAL = sys.getswitchinterval()


def pytest_configure(config):
    sys.setswitchinterval(5e-4)


def pytest_unconfigure(config):
    sys.setswitchinterval(_DEFAULT_SWITCH_INTERVAL)


def pytest_collection_modifyitems(config, items):
    # The PTX compile test last, with the launches the CUDA tests recorded on the way.
    items.sort(key=lambda item: item.path.name == "test_cuda_compile.py")
    cuda_signatures.expect(item.nodeid for item in items)
    if device.available() and not device.simulated():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (NUMBA_ENABLE_CUDASIM=0 on a GPU "
                                   "machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    records = cuda_signatures.records(item.nodeid)
    cuda_signatures.recording(records)
    try:
        yield
    finally:
        cuda_signatures.recording(False)
        if records:
            cuda_signatures.ran_one()


@pytest.fixture(autouse=True)
def fresh_state():
    pd.reset()
    yield
    pd.reset()


@pytest.fixture
def exe():
    return pd.Executor(pd.CPUPlace())
