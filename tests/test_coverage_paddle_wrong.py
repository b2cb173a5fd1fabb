"""The coverage table's known-wrong Paddle values (paddle_nb/coverage/paddle_wrong.py),
each judged by central differences of the API's own saved program.

For every listed value: Paddle's number is far from the central differences of the
program's loss (the variable the backward's ``fill_any_like`` seeds), ours is close to
them, and everything else the API fetched still matches Paddle (its outcome is
``covered``, with a detail naming the value left out). An entry whose Paddle value were
right, or whose value here drifted, fails here."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.coverage import load_table, run_api
from paddle_nb.coverage.paddle_wrong import PADDLE_WRONG

CASES = [(key, name) for key, wrong in sorted(PADDLE_WRONG.items()) for name in wrong]


def _program_and_loss(table, key):
    program = pd.Program.from_bytes(table.program_bytes(key))
    seeds = [op for op in program.global_block().ops if op.type == "fill_any_like"]
    assert len(seeds) == 1, f"{key}: expected one backward seed"
    return program, seeds[0].input("X")[0]


def _run(table, key, program, fetch, feed_over=None):
    row = table.rows[key]
    scope = pd.Scope()
    for name in row["params"]:
        scope.var(name).set(table.value(key, "param", name))
    feed = {name: table.value(key, "feed", name) for name in row["feeds"]}
    feed.update(feed_over or {})
    with np.errstate(all="ignore"):
        return pd.Executor(pd.CPUPlace()).run(program, feed=feed, fetch_list=fetch,
                                              scope=scope)


@pytest.mark.parametrize("key,name", CASES, ids=[f"{k}:{n}" for k, n in CASES])
def test_paddles_value_is_wrong_and_ours_is_right_by_central_differences(key, name):
    table = load_table()
    program, loss = _program_and_loss(table, key)
    var = name[:-len("@GRAD")]
    assert name.endswith("@GRAD") and var in table.rows[key]["feeds"], name
    x = table.value(key, "feed", var)
    (ours,) = _run(table, key, program, [name])
    paddle = table.value(key, "fetch", name)
    # float32 feeds: a step of 1e-3 keeps the differences' error near 1e-4 here
    step = 1e-3
    positions = list(np.ndindex(x.shape))[::max(1, x.size // 24)]   # at most ~24 of them
    numeric, at = [], []
    for i in positions:
        values = []
        for sign in (1, -1):
            moved = x.copy()
            moved[i] += sign * step
            values.append(float(np.sum(_run(table, key, program, [loss], {var: moved})[0],
                                       dtype=np.float64)))
        numeric.append((values[0] - values[1]) / (2 * step))
        at.append(i)
    numeric = np.array(numeric)
    ours_at = np.array([float(ours[i]) for i in at])
    paddle_at = np.array([float(paddle[i]) for i in at])
    np.testing.assert_allclose(ours_at, numeric, atol=2e-3, err_msg=f"{key}: ours")
    assert np.abs(paddle_at - numeric).max() > 0.1, f"{key}: Paddle's {name} looks right"


@pytest.mark.parametrize("key", sorted(PADDLE_WRONG))
def test_an_api_with_a_known_wrong_paddle_value_is_covered_and_says_why(key):
    outcome = run_api(key)
    assert outcome.status == "covered", outcome.detail
    for name in PADDLE_WRONG[key]:
        assert f"Paddle's {name} not compared" in outcome.detail
