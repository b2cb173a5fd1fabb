"""Control-flow programs saved by PaddlePaddle (3.3.1: cond, case, switch_case, while_loop,
a While over tensor arrays; 2.6.2: the recurrent op of StaticRNN), forward and backward,
run on our executor from Paddle's parameters and compared with Paddle's fetched values.
The fixtures come from tests/fixtures/paddle_control_flow/make_fixtures.py."""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "paddle_control_flow")
CASES = json.load(open(os.path.join(HERE, "cases.json")))["cases"]


def _runs(case):
    """(suffix, feed, expected) per recorded run."""
    data = np.load(os.path.join(HERE, case["npz"]))
    suffixes = sorted({k[len(f"feed__{name}"):] for k in data for name in case["feeds"]
                       if k.startswith(f"feed__{name}")}) or [""]
    for sfx in suffixes:
        feed = {name: data[f"feed__{name}{sfx}"] for name in case["feeds"]}
        want = {name: data[f"fetch__{name}{sfx}"] for name in case["fetch"]
                if f"fetch__{name}{sfx}" in data}
        yield sfx, feed, want, {k[len("param__"):]: data[k] for k in data
                                if k.startswith("param__")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_paddle_control_flow_program_matches_paddle(name):
    case = CASES[name]
    program = pd.Program.from_bytes(open(os.path.join(HERE, case["pdesc"]), "rb").read())
    exe = pd.Executor()
    ran = 0
    for sfx, feed, want, params in _runs(case):
        scope = pd.Scope()
        for p, value in params.items():
            scope.var(p).set(value)
        names = list(want)
        got = exe.run(program, feed=feed, fetch_list=names, scope=scope)
        for n, g in zip(names, got):
            np.testing.assert_allclose(g, want[n], rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name}{sfx}: {n}")
        assert scope.kids == []
        ran += 1
    assert ran == max(1, len(case.get("runs") or []))
    assert any(n.endswith("@GRAD") for n in want)        # the backward part was checked
