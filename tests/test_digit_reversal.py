"""paddle_nb.examples.digit_reversal: the data are what the module says (rows of digits,
their targets reversed, training batches that never hold a held-out row), and a short run
of the tiny transformer learns to reverse (the full run is the course's chapter 9)."""
import numpy as np

import paddle_nb as pd
from paddle_nb.examples import digit_reversal as dr


def test_the_data_are_digit_rows_and_their_reversals():
    test, batch = dr.held_out_split(seed=0, n_test=500)
    ids = batch(2000)
    for rows in (test, ids):
        assert rows.dtype == np.int64 and rows.shape[1] == dr.LENGTH
        assert rows.min() >= 0 and rows.max() <= 9
    assert len(np.unique(ids)) == 10                        # every digit occurs
    np.testing.assert_array_equal(dr.targets(np.array([[3, 1, 4, 1, 5, 9]])),
                                  [[9, 5, 1, 4, 1, 3]])
    held_out = {tuple(r) for r in test}
    assert not any(tuple(r) in held_out for r in ids)
    again_test, again_batch = dr.held_out_split(seed=0, n_test=500)   # reproducible
    np.testing.assert_array_equal(again_test, test)
    np.testing.assert_array_equal(again_batch(2000), ids)


def test_a_row_counts_only_when_every_digit_is_right():
    ids = np.array([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    predicted = dr.targets(ids)
    assert dr.sequence_accuracy(predicted, ids) == 1.0
    predicted[1, 3] = 0
    assert dr.sequence_accuracy(predicted, ids) == 0.5


def test_the_program_is_embeddings_an_encoder_layer_and_a_linear_per_position():
    model = dr.build()
    types = [op.type for op in model.test.global_block().ops]
    assert types[:2] == ["lookup_table_v2", "elementwise_add"]   # + the position table
    assert types.count("softmax") == 2 and types.count("layer_norm") == 2
    assert list(model.prob.shape) == [-1, dr.LENGTH, 10]
    names = {p.name for p in model.main.global_block().all_parameters()}
    assert {"embedding_0.w_0", "position.w_0"} <= names


def test_a_short_run_learns_to_reverse():
    accuracy, losses, model, scope = dr.train(steps=100, n_test=200)
    assert losses[-1] < 0.1 * losses[0]
    assert accuracy >= 0.9
    exe = pd.Executor(pd.CPUPlace())
    ids = np.array([[3, 1, 4, 1, 5, 9]])
    np.testing.assert_array_equal(dr.predict(exe, model, scope, ids), dr.targets(ids))
