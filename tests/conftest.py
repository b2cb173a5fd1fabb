"""Every test starts from fresh default programs, name counters and global scope.

CUDA kernels run in numba's simulator unless the environment says otherwise: the variable
must be set before numba is imported, hence here, first. On a GPU machine run
``NUMBA_ENABLE_CUDASIM=0 python -m pytest -m gpu`` (tests marked ``gpu`` are skipped
where no real GPU is present).
"""
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest  # noqa: E402

import paddle_nb as pd  # noqa: E402
from paddle_nb.kernels.cuda import device  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if device.available() and not device.simulated():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (NUMBA_ENABLE_CUDASIM=0 on a GPU "
                                   "machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def fresh_state():
    pd.reset()
    yield
    pd.reset()


@pytest.fixture
def exe():
    return pd.Executor(pd.CPUPlace())
