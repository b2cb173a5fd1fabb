"""The two programs of the "Block and Scope" design document, as it writes them:
a row-wise if-else and a recurrent network, in this package's builders.

They are kept here once, as source text, because they are shown and run in several places
(the tour, the %%paddle magic's tests, the IfElse and RNN tests): ``build(IFELSE)`` runs
the lines in the current default programs and returns the names they made (``o1``, ``o2``,
...); a notebook cell is ``"%%paddle\\n" + IFELSE``.
"""
from __future__ import annotations

import paddle_nb as pd    # examples stand above the package's API: nothing below imports them

IFELSE = """\
x = pd.minibatch([10, 20, 30])  # shape=[None, 1]
y = pd.var(1)  # shape=[1], value=1
z = pd.minibatch([10, 20, 30])  # shape=[None, 1]
cond = pd.larger_than(x, 15)  # [false, true, true]

ie = pd.ifelse()
with ie.true_block():
    d = pd.layer.add_scalar(x, y)
    ie.output(d, pd.layer.softmax(d))
with ie.false_block():
    d = pd.layer.fc(z)
    ie.output(d, d + 1)
o1, o2 = ie(cond)
"""

RNN = """\
x = pd.sequence([10, 20, 30])  # shape=[None, 1]
m = pd.var(0)  # shape=[1]
W = pd.var(0.314, param=True)  # shape=[1]
U = pd.var(0.375, param=True)  # shape=[1]

rnn = pd.rnn()
with rnn.step():
    h = rnn.memory(init=m)
    h_prev = rnn.previous_memory(h)
    a = pd.layer.fc(W, x)
    b = pd.layer.fc(U, h_prev)
    s = pd.add(a, b)
    act = pd.sigmoid(s)
    rnn.update_memory(h, act)
    rnn.output(a, b)
o1, o2 = rnn()
"""


def build(source: str) -> dict:
    """Run an example's lines (``pd`` is paddle_nb) in the current default programs; the
    names they defined."""
    names = {"pd": pd}
    exec(compile(source, "<design doc example>", "exec"), names)   # noqa: S102 (our text)
    return names
