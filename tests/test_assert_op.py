"""The assert op (ops/assert_op.py): a false condition stops the run with an error that
names the op and shows Data; a true one lets the program go on."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import PaddleNBError


def _run(cond: bool, summarize: int):
    prog = pd.Program()
    blk = prog.global_block()
    c = blk.create_var("cond", [1], "bool")
    d = blk.create_var("data", [5], "float32")
    blk.append_op("assert", inputs={"Cond": [c], "Data": [d]}, outputs={},
                  attrs={"summarize": summarize})
    pd.Executor().run(prog, feed={"cond": np.bool_([cond]),
                                  "data": np.arange(5, dtype=np.float32)},
                      fetch_list=[], scope=pd.Scope())


def test_true_condition_runs():
    _run(True, 2)


def test_false_condition_names_the_op_and_shows_data():
    with pytest.raises(PaddleNBError) as err:
        _run(False, 2)
    message = str(err.value)
    assert "assert" in message and "cond" in message and "is false" in message
    assert "[0.0, 1.0] ... (5 values)" in message
