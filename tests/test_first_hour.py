"""What a new student trips on in the first hour (issue: "The first hour"), each checked
as the student meets it: the message they read, the exit code they get."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import paddle_nb as pd


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "paddle_nb", *args], capture_output=True,
                          text=True, timeout=600)


# --- python -m paddle_nb ops ------------------------------------------------------------------
def test_ops_of_a_layer_name_points_to_the_layer():
    done = _cli("ops", "fc")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "fc is a layer, not an op: pd.layer.fc" in done.stdout
    assert "mul" in done.stdout and "elementwise_add" in done.stdout


def test_ops_of_an_unknown_name_is_a_message_and_exit_code_2():
    done = _cli("ops", "fcx")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown op type 'fcx'" in done.stderr and "pd.layer.fc" in done.stderr


def test_ops_lists_each_op_with_its_one_line_doc():
    lines = _cli("ops").stdout.splitlines()
    assert len(lines) == len(pd.registered_ops())
    assert any(line.startswith("mul ") and "X" in line for line in lines)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


# --- feed errors ------------------------------------------------------------------------------
def test_a_feed_of_an_unknown_name_lists_only_the_data_variables():
    x = pd.data("x", [-1, 4])
    y = pd.layer.fc(x, 3)
    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    with pytest.raises(pd.FeedError) as err:
        exe.run(feed={"xx": np.ones((2, 4), np.float32)}, fetch_list=[y])
    text = str(err.value)
    assert "did you mean x?" in text and "variables no op writes: ['x']" in text
    assert "fc_0.tmp" not in text         # before: written by mul and elementwise_add, listed


# --- builders check their arguments ------------------------------------------------------------
@pytest.mark.parametrize("size, given", [("3", "str '3'"), (3.5, "float 3.5"), (0, "int 0"),
                                         (True, "bool True"), (-2, "int -2")])
def test_fc_refuses_a_size_that_is_not_a_positive_int(size, given):
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError, match=f"fc: argument size must be an int >= 1, got "
                                            f"{given}"):
        pd.layer.fc(x, size)
    assert pd.default_main_program().global_block().ops == []     # nothing half-built


def test_fc_refuses_num_flatten_dims_out_of_range():
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError, match=r"num_flatten_dims must be an int in \[1, 1\]"):
        pd.layer.fc(x, 3, num_flatten_dims=2)


def test_an_unknown_activation_lists_every_accepted_name():
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError) as err:
        pd.layer.fc(x, 3, act="gelu")
    assert all(name in str(err.value) for name in pd.layers.ACTIVATIONS)
    assert pd.default_main_program().global_block().ops == []     # checked before building
