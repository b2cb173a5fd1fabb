"""Every test starts from fresh default programs, name counters and global scope."""
import pytest

import paddle_nb as pd


@pytest.fixture(autouse=True)
def fresh_state():
    pd.reset()
    yield
    pd.reset()


@pytest.fixture
def exe():
    return pd.Executor(pd.CPUPlace())
