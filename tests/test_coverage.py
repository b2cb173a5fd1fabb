"""``python -m paddle_nb coverage``: Paddle 2.6.2's public APIs, each a program saved by
real Paddle (tools/coverage/make_paddle_api_table.py), run here and compared.

The data is checked against itself (every row's arrays are there, every skip has an
allowed reason, skips stay under 15% of the list); a sample of simple APIs must run and
match; a broken program, a wrong value and a crash deep inside must each come out as the
right outcome, and the report must print; the whole list must meet the bar (a minute)."""
import json

import numpy as np
import pytest

from paddle_nb.__main__ import main as cli
from paddle_nb.coverage import ApiTable, format_report, load_table, run_all, run_api, summarize
from paddle_nb.coverage import run as run_module
from paddle_nb.coverage.table import ARRAYS_PATH, INDEX_PATH, SKIP_REASONS, STATUSES

# Simple APIs that run here and match Paddle (a regression in any of them fails).
KNOWN_COVERED = ["F.relu", "F.sigmoid", "F.softmax", "F.gelu", "F.cross_entropy",
                 "F.embedding", "F.dropout", "nn.Linear", "nn.LayerNorm", "nn.Conv2D",
                 "nn.MaxPool2D", "tensor.math.add", "tensor.math.multiply",
                 "tensor.math.sum", "tensor.manipulation.concat",
                 "tensor.manipulation.reshape", "tensor.manipulation.transpose",
                 "tensor.stat.mean", "static.nn.fc"]


@pytest.fixture(scope="module")
def table():
    return load_table()


def test_the_index_and_the_arrays_agree(table):
    stored = set(table.arrays.files)
    expected = set()
    for key, row in table.rows.items():
        assert row["status"] in STATUSES, key
        assert row["module"].startswith("paddle."), key
        if row["status"] != "built":
            assert row.get("reason"), f"{key}: {row['status']} without a reason"
            assert not any(f.startswith(key + "/") for f in stored if f.count("/") == 1)
            continue
        assert row["fetch"], key          # (nn.Identity emits no forward op)
        assert set(row["grads"]) <= set(row["fetch"]), key
        expected.add(f"{key}/__program__")
        expected |= {f"{key}/feed/{n}" for n in row["feeds"]}
        expected |= {f"{key}/param/{n}" for n in row["params"]}
        expected |= {f"{key}/fetch/{n}" for n in row["fetch"]}
    assert stored == expected
    assert INDEX_PATH.stat().st_size + ARRAYS_PATH.stat().st_size < 5_000_000


def test_the_list_is_paddles_and_skips_are_few_and_in_scope_reasons(table):
    rows = table.rows
    assert table.paddle_version == "2.6.2"
    assert len(rows) > 500 and {"nn.ReLU", "F.relu", "tensor.math.add", "metric.accuracy",
                                "static.nn.fc"} <= set(rows)
    assert "tensor.math.mod" not in rows         # the same function as remainder, once
    skips = {k: r for k, r in rows.items() if r["status"] == "skipped"}
    assert len(skips) <= 0.15 * len(rows)
    for key, row in skips.items():
        assert row["reason"] in SKIP_REASONS and row.get("detail"), key


@pytest.mark.parametrize("key", KNOWN_COVERED)
def test_known_apis_run_and_match_paddle(table, key):
    outcome = run_api(key, table)
    assert outcome.status == "covered", f"{key}: {outcome.status}: {outcome.detail}"


def test_gradients_are_compared_too(table):
    row = table.rows["nn.Linear"]
    assert any(g.endswith("@GRAD") for g in row["grads"]) and row["params"]
    assert "matmul_v2_grad" in row["backward_ops"]


def _copy_with(tmp_path, table, key, change_fetch=None, program=None):
    """A one-API table in ``tmp_path``: ``key``'s row and arrays, altered."""
    row = dict(table.rows[key])
    arrays = {f: table.arrays[f] for f in table.arrays.files if f.startswith(key + "/")}
    if change_fetch:
        name = row["fetch"][0]
        arrays[f"{key}/fetch/{name}"] = change_fetch(arrays[f"{key}/fetch/{name}"])
    if program is not None:
        arrays[f"{key}/__program__"] = np.frombuffer(program, np.uint8)
    np.savez(tmp_path / "a.npz", **arrays)
    (tmp_path / "a.json").write_text(json.dumps({"paddle": "2.6.2", "apis": {key: row}}))
    return ApiTable(tmp_path / "a.json", tmp_path / "a.npz")


def test_a_wrong_value_is_a_mismatch_with_its_size(tmp_path, table):
    bad = _copy_with(tmp_path, table, "F.relu", change_fetch=lambda v: v + 0.25)
    outcome = run_api("F.relu", bad)
    assert outcome.status == "mismatch" and "max difference 0.25" in outcome.detail


def test_an_unknown_op_type_is_missing_and_ranked(tmp_path, table):
    import paddle_nb as pd
    program = pd.Program.from_bytes(table.program_bytes("F.relu"))
    for op in program.global_block().ops:
        if op.type == "relu":
            op.desc.type = "relu_from_the_future"
    bad = _copy_with(tmp_path, table, "F.relu", program=program.desc.SerializeToString())
    outcome = run_api("F.relu", bad)
    assert outcome.status == "missing_ops" and outcome.missing == ("relu_from_the_future",)
    summary = summarize([outcome, run_api("F.relu", table)])
    assert summary["missing_op_types"] == [{"op_type": "relu_from_the_future", "apis": 1}]
    assert summary["covered"] == 1 and summary["share"] == 0.5


def test_a_crash_deep_inside_is_reported_with_where_not_raised(monkeypatch, table):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("deep inside")
    monkeypatch.setattr(run_module, "_compare", broken)
    outcome = run_api("F.relu", table)
    assert outcome.status == "crash"
    assert outcome.detail.startswith("ZeroDivisionError: deep inside at paddle_nb/coverage/")
    assert "Traceback" in outcome.full


def test_the_command_prints_the_summary_for_a_module(capsys):
    assert cli(["coverage", "--module", "paddle.metric"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Coverage of PaddlePaddle 2.6.2's public API:")
    assert "paddle.metric" in out and "Build no program" in out and "metric.Auc" in out


def test_the_command_runs_one_api_and_says_json(capsys):
    assert cli(["coverage", "--api", "relu", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["api"] == "F.relu" and out["status"] == "covered"
    assert out["forward_ops"] == ["relu"] and "relu_grad" in out["backward_ops"]
    assert cli(["coverage", "--api", "no_such_api"]) == 2


def test_the_whole_list_meets_the_bar(table):
    """The measure itself: at least 95% of the in-scope APIs covered, no op type that three
    or more APIs need left unregistered, and nothing crashing deep inside."""
    outcomes = run_all(table.keys(), table)
    summary = summarize(outcomes, table.paddle_version)
    text = format_report(summary)
    assert summary["in_scope"] + summary["skipped"] + len(summary["host"]) == len(table.rows)
    assert summary["share"] >= 0.95, text
    assert [r for r in summary["missing_op_types"] if r["apis"] >= 3] == [], text
    assert "crash" not in summary["by_status"], text
    assert text.startswith("Coverage of PaddlePaddle 2.6.2's public API")
