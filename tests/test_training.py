"""Real training runs: the digits MLP, and save/load of what it learned."""
import numpy as np

import paddle_nb as pd
from paddle_nb.examples import digits


def test_digits_mlp_reaches_95_percent():
    accuracy, history, model, scope = digits.train(epochs=15, seed=0)
    assert accuracy >= 0.95
    assert history[-1] < 0.25 * history[0]                 # the loss really went down
    ops = [op.type for op in model.main.global_block().ops]
    assert ops.count("adam") == 4 and "mul_grad" in ops
    assert [op.type for op in model.test.global_block().ops] == [
        "mul", "elementwise_add", "relu", "mul", "elementwise_add", "softmax"]


def test_training_is_reproducible_with_seeds():
    a = digits.train(epochs=2, seed=3)
    b = digits.train(epochs=2, seed=3)
    assert a[1] == b[1]
    for p in a[2].main.all_parameters():
        np.testing.assert_array_equal(a[3].find_var(p.name).get(), b[3].find_var(p.name).get())


def test_trained_parameters_survive_save_and_load(tmp_path):
    accuracy, _, model, scope = digits.train(epochs=3, seed=0)
    exe = pd.Executor()
    pd.io.save_persistables(exe, str(tmp_path), model.main, scope=scope)
    fresh = pd.Scope()
    pd.io.load_persistables(exe, str(tmp_path), model.main, scope=fresh)
    _, _, x_test, y_test = digits.load_data(0)
    assert digits.accuracy(exe, model, fresh, x_test, y_test) == accuracy
    for name in scope.local_var_names():
        np.testing.assert_array_equal(fresh.find_var(name).get(), scope.find_var(name).get())
