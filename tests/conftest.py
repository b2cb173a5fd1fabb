"""Every test starts from fresh default programs, name counters and global scope.

CUDA kernels run in numba's simulator unless the environment says otherwise: the variable
must be set before numba is imported, hence here, first. On a GPU machine run
``NUMBA_ENABLE_CUDASIM=0 python -m pytest -m gpu`` (tests marked ``gpu`` are skipped
where no real GPU is present).
"""
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest  # noqa: E402

import cuda_signatures  # noqa: E402
import paddle_nb as pd  # noqa: E402
from paddle_nb.kernels.cuda import device  # noqa: E402

cuda_signatures.install()


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
