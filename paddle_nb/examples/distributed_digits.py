"""The digits MLP trained twice, to the same numbers: in one process, and by parameter servers.

    (a) one process: each step runs the training program on the whole batch;
    (b) a local Ray cluster: the DistributeTranspiler's programs on 2 trainer actors and
        2 pserver actors (pd.distributed.RayCluster); each trainer runs the forward and
        backward pass on half of the batch and sends its gradients, each pserver averages
        the trainers' gradient blocks and runs the Adam update on the blocks it holds.

The loss is a mean over the batch, so the mean of the two halves' gradients is the whole
batch's gradient, and (b) computes what (a) does: the parameters agree to float rounding.
``compare()`` returns both loss curves, the largest difference between the parameters and
the test accuracy of the distributed model; ``python -m paddle_nb distributed`` prints them.

The model and the data are ``paddle_nb.examples.digits``'s (scikit-learn's bundled 8x8
digits, no download). ``fc_0.w_0`` ([64, 64]) is cut into two blocks, one per pserver
(``SMALL_BLOCKS``: Fluid's default min_block_size of 8192 elements would keep it whole).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import paddle_nb as pd
from paddle_nb.distributed import DistributeTranspilerConfig
from paddle_nb.examples import digits

# blocks of at least 1024 elements: fc_0.w_0 [64, 64] is cut in two (rows 0-31, 32-63)
SMALL_BLOCKS = DistributeTranspilerConfig(min_block_size=1024)
# 120 rows split evenly across 2, 3, 4, 5 or 6 trainers (equal shards: see compare())
BATCH_SIZE = 120
STEPS = 40


@dataclass
class Comparison:
    """What ``compare`` measured. Losses are per step; ``trainer_losses[step][i]`` is
    trainer i's loss on its shard, ``distributed_losses`` their mean."""
    trainers: int
    pservers: int
    batch_size: int
    single_losses: list[float]
    distributed_losses: list[float]
    trainer_losses: list[list[float]]
    max_param_diff: float          # max |single - distributed| over every parameter
    test_accuracy: float           # the distributed model's, on the held-out digits
    single_test_accuracy: float
    single_seconds: float
    distributed_seconds: float     # the cluster's start (actors) and every step
    parameters: dict = field(repr=False, default_factory=dict)   # the distributed model's

    @property
    def steps(self) -> int:
        return len(self.single_losses)


def batches(steps: int = STEPS, batch_size: int = BATCH_SIZE, seed: int = 0) -> list[dict]:
    """``steps`` feeds {"x", "label"} of ``batch_size`` training digits, a new random order
    each epoch (the last, smaller batch of an epoch is dropped)."""
    x, y, _, _ = digits.load_data(seed)
    per_epoch = len(x) // batch_size
    rng = np.random.default_rng(seed)
    feeds = []
    for step in range(steps):
        if step % per_epoch == 0:
            order = rng.permutation(len(x))
        idx = order[(step % per_epoch) * batch_size:(step % per_epoch + 1) * batch_size]
        feeds.append({"x": x[idx], "label": y[idx]})
    return feeds


def train_single(model: digits.DigitsModel, feeds) -> tuple[list[float], pd.Scope]:
    """(a): the training program on each whole batch; the losses and the scope."""
    scope, exe = pd.Scope(), pd.Executor(pd.CPUPlace())
    exe.run(model.startup, scope=scope)
    losses = []
    for feed in feeds:
        loss, = exe.run(model.main, feed=feed, fetch_list=[model.loss], scope=scope)
        losses.append(float(loss))
    return losses, scope


def train_distributed(model: digits.DigitsModel, feeds, trainers: int = 2, pservers: int = 2,
                      config: DistributeTranspilerConfig = SMALL_BLOCKS,
                      num_cpus: int = 2) -> tuple[list[list[float]], dict]:
    """(b): ``trainers`` x ``pservers`` on Ray (the running Ray, else a local one started
    with ``num_cpus`` and shut down at the end), each batch split across the trainers;
    each trainer's loss per step, and the parameters joined from the pservers' blocks."""
    losses = []
    with pd.distributed.RayCluster(model.main, model.startup, model.loss, trainers=trainers,
                                   pservers=pservers, config=config,
                                   num_cpus=num_cpus) as cluster:
        for feed in feeds:
            losses.append([float(np.asarray(v).reshape(-1)[0]) for v in cluster.step(feed)])
        parameters = cluster.parameters()
    return losses, parameters


def accuracy_of(model: digits.DigitsModel, parameters: dict, seed: int = 0) -> float:
    """The accuracy on the held-out digits of the model with ``parameters``."""
    _, _, x_test, y_test = digits.load_data(seed)
    scope = pd.Scope()
    for name, value in parameters.items():
        scope.var(name).set(np.array(value, copy=True))
    return digits.accuracy(pd.Executor(pd.CPUPlace()), model, scope, x_test, y_test)


def compare(steps: int = STEPS, batch_size: int = BATCH_SIZE, trainers: int = 2,
            pservers: int = 2, config: DistributeTranspilerConfig = SMALL_BLOCKS,
            seed: int = 0, num_cpus: int = 2) -> Comparison:
    """Train the digits MLP from the same start on the same batches, (a) in one process
    and (b) on a Ray cluster, and compare. ``batch_size`` should split evenly across the
    trainers: each trainer's loss is the mean over its shard, and the pservers average the
    shards' gradients, which is the whole batch's gradient only when the shards are equal."""
    feeds = batches(steps, batch_size, seed)
    model = digits.build()
    start = time.perf_counter()
    single_losses, scope = train_single(model, feeds)
    single_seconds = time.perf_counter() - start
    start = time.perf_counter()
    trainer_losses, parameters = train_distributed(model, feeds, trainers, pservers, config,
                                                   num_cpus)
    distributed_seconds = time.perf_counter() - start
    diff = max(float(np.abs(value - scope.find_var(name).get()).max())
               for name, value in parameters.items())
    single = {name: scope.find_var(name).get() for name in parameters}
    return Comparison(trainers, pservers, batch_size, single_losses,
                      [float(np.mean(s)) for s in trainer_losses], trainer_losses, diff,
                      accuracy_of(model, parameters, seed), accuracy_of(model, single, seed),
                      single_seconds, distributed_seconds, parameters)


def report(result: Comparison, every: int = 5) -> str:
    """The comparison as a few lines of text: the losses every ``every`` steps, the
    largest parameter difference, the test accuracies."""
    n = result.trainers
    lines = [f"digits MLP, Adam: {result.steps} steps of {result.batch_size} digits; "
             f"(a) one process on each whole batch, (b) {n} trainers x {result.pservers} "
             f"pservers on Ray, each trainer on {result.batch_size // n} of them",
             f"{'step':>5}  {'(a) one process':>16}  {'(b) trainers, mean':>18}  "
             f"{'|a - b|':>8}"]
    for k in range(result.steps):
        if k % every == 0 or k == result.steps - 1:
            a, b = result.single_losses[k], result.distributed_losses[k]
            lines.append(f"{k + 1:>5}  {a:>16.6f}  {b:>18.6f}  {abs(a - b):>8.1e}")
    lines += [f"max |parameter difference| (a) vs (b): {result.max_param_diff:.2e}",
              f"test accuracy of (b): {result.test_accuracy:.1%} "
              f"((a): {result.single_test_accuracy:.1%})",
              f"time: (a) {result.single_seconds:.1f} s; (b) {result.distributed_seconds:.1f} s"
              f" (starting the cluster included)"]
    return "\n".join(lines)


def main(steps: int = STEPS, trainers: int = 2, pservers: int = 2) -> Comparison:
    """Run ``compare`` and print its report (``python -m paddle_nb distributed``)."""
    print(f"training the digits MLP in one process and on a local Ray cluster "
          f"({trainers} trainers, {pservers} pservers); starting Ray takes a few seconds...",
          flush=True)
    result = compare(steps=steps, trainers=trainers, pservers=pservers)
    print(report(result))
    return result


if __name__ == "__main__":
    main()
