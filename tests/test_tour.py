"""The main job, ``python -m paddle_nb tour``, runs and shows what it promises."""
import re
import subprocess
import sys


def test_tour_runs_the_design_doc_examples():
    done = subprocess.run([sys.executable, "-m", "paddle_nb", "tour"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "g.find_var('x') never looks in kids:     [10.]" in out
    assert "[1, 2, 3] @ w * n = [[160. 220.]]" in out
    assert "fc_0.tmp_0 = mul(X=[x], Y=[fc.w])" in out                 # pd.fc(a, params=...)
    assert "byte-exact: True" in out
    assert "parameters: ['model_a/W', 'model_b/W', 'model_c/W']" in out
    assert "block 0 > op  6 softmax" in out
    assert "Scope 'global'" in out
    assert "mean_0.tmp_0@GRAD = fill_constant() {dtype=float32, shape=[], value=1}" in out
    accuracy = float(re.search(r"test accuracy: ([\d.]+)%", out).group(1))
    assert accuracy >= 95.0
    assert f"accuracy {accuracy}%" in out              # the reloaded model agrees
    assert "rows 20 and 30 took x + y, row 10 took fc(z)" in out
    assert out.count("    Scope 'recurrent@") == 3 and "sequence_0: float32[1] [30.]" in out
    assert "after the minibatch, the forest is gone: kids = []" in out


def test_ops_command_documents_an_op():
    done = subprocess.run([sys.executable, "-m", "paddle_nb", "ops", "mul"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "x_num_col_dims" in done.stdout
