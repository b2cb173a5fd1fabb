"""Make benchmarks/paddle26/: four training steps built in PaddlePaddle 2.6.2, and Paddle's
own CPU ``Executor.run`` timed on them in turns with paddle_nb on the same program and feed.

DOCUMENTATION ONLY for pytest and ``python -m benchmarks``: Paddle is never a dependency.
It runs in a throw-away virtualenv of Paddle and starts paddle_nb, in the project's own
environment, as a second process (``python -m benchmarks.vs_paddle --serve``): one
process cannot hold both, as each registers its own ``paddle.framework.proto`` in
protobuf's one default descriptor pool (a "duplicate symbol" error; giving paddle_nb a
pool of its own crashed protobuf's C extension). Re-run it from the repository's root, on
a quiet machine:

    python3.11 -m venv /tmp/paddle26
    /tmp/paddle26/bin/pip install "numpy<2" "paddlepaddle==2.6.2"
    OMP_NUM_THREADS=2 /tmp/paddle26/bin/python benchmarks/paddle26/make_programs.py \\
        [--python .venv/bin/python] [--quick] [--wait-quiet 120]

For each case (static graph, ``minimize`` of ``paddle.optimizer.SGD(0.1)``) it writes
``<case>.main.pb`` and ``<case>.startup.pb`` (``program.desc.serialize_to_string()`` of
the programs timed, their ``op_callstack`` trimmed to this script's frames),
``<case>.params.npz`` (every persistable variable as Paddle's startup program left it, so
both start equal); the feeds are ``images.npz`` (the MLP and LeNet share the batch) and
``sequence.npz`` (both RNNs). ``paddle26.json`` records the environment, each case's
files, feed shapes and fetch name, the losses of the first steps in Paddle and in
paddle_nb from those parameters, and the seconds per step of Paddle and of paddle_nb
(plain ``Executor.run`` and ``pd.CompiledProgram`` when paddle_nb has it) measured in
turns as benchmarks/timing.py's ``compare`` does, one process waiting while the other
runs; ``vs_paddle`` ratios are paired round by round (median, lowest, highest), and
``others_busy_cores`` says how many cores other processes kept busy meanwhile (the
paddle_nb process not counted): re-make a case measured above ~0.2 with ``--only CASE``,
which keeps the other cases' records (a case's files and record are made together)."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import timing   # noqa: E402  (thread counts fixed before Paddle loads)

os.environ.setdefault("FLAGS_enable_pir_api", "0")     # Paddle 2's ProgramDesc, not PIR

import numpy as np   # noqa: E402
import paddle   # noqa: E402

LR, LOSS_STEPS = 0.1, 3
BATCH, T, B, D, H = 64, 32, 16, 64, 64


def mlp():
    x = paddle.static.data("x", [None, 784])
    label = paddle.static.data("label", [None, 1], "int64")
    h = paddle.static.nn.fc(x, 256, activation="relu")
    logits = paddle.static.nn.fc(h, 10)
    return paddle.mean(paddle.nn.functional.softmax_with_cross_entropy(logits, label))


def simple_rnn():
    x = paddle.static.data("x", [T, B, D])
    out, _ = paddle.nn.SimpleRNN(D, H, time_major=True)(x)
    return paddle.mean(out)


def rnn_of_cell():
    x = paddle.static.data("x", [T, B, D])
    out, _ = paddle.nn.RNN(paddle.nn.SimpleRNNCell(D, H), time_major=True)(x)
    return paddle.mean(out)


def lenet():
    x = paddle.static.data("x", [None, 1, 28, 28])
    label = paddle.static.data("label", [None, 1], "int64")
    logits = paddle.vision.models.LeNet()(x)
    return paddle.nn.functional.cross_entropy(logits, label)


# name -> (title, the forward pass returning the loss, feed file, feed shapes)
CASES = {
    "mlp": (f"MLP 784-256-10 b{BATCH}", mlp, "images.npz",
            {"x": [BATCH, 784], "label": [BATCH, 1]}),
    "simple_rnn": (f"nn.SimpleRNN T{T} B{B} H{H}", simple_rnn, "sequence.npz",
                   {"x": [T, B, D]}),
    "rnn_of_cell": (f"nn.RNN(SimpleRNNCell) T{T} B{B} H{H}", rnn_of_cell,
                    "sequence.npz", {"x": [T, B, D]}),
    "lenet": (f"vision LeNet b{BATCH}", lenet, "images.npz",
              {"x": [BATCH, 1, 28, 28], "label": [BATCH, 1]}),
}


def feeds() -> dict:
    rng = np.random.default_rng(0)
    return {"images.npz": {"x": rng.random((BATCH, 1, 28, 28), np.float32),
                           "label": rng.integers(0, 10, (BATCH, 1), dtype=np.int64)},
            "sequence.npz": {"x": rng.standard_normal((T, B, D), np.float32)}}


def build(forward):
    """(main, startup, loss) of one training step, its names counted from 0."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.utils.unique_name.guard(), paddle.static.program_guard(main, startup):
        loss = forward()
        paddle.optimizer.SGD(LR).minimize(loss)
    for program in (main, startup):
        trim_callstacks(program)
    return main, startup, loss


def trim_callstacks(program):
    """Keep, of the Python traceback Paddle stores in every op (``op_callstack``, ~1 KB
    an op, most of it Paddle's own frames in the virtualenv), the frames in this script,
    named from the repository's root: the files stay small and name nothing outside the
    repository. Paddle reads the attribute only for its error messages."""
    here = str(Path(__file__).resolve())
    for block in program.blocks:
        for op in block.ops:
            if op.has_attr("op_callstack"):
                stack = list(op.attr("op_callstack"))
                op._set_attr("op_callstack", [
                    line.replace(here, str(Path(here).relative_to(ROOT)))
                    for frame, code in zip(stack[::2], stack[1::2]) if here in frame
                    for line in (frame, code)])


def persistables(main, scope) -> dict:
    """Every persistable tensor of ``main`` as it is in ``scope`` now."""
    tensor = paddle.framework.core.VarDesc.VarType.LOD_TENSOR
    return {v.name: np.array(scope.find_var(v.name).get_tensor()) for v in main.list_vars()
            if v.persistable and v.type == tensor and scope.find_var(v.name) is not None}


class PaddleNbProcess:
    """paddle_nb in the project's environment (benchmarks/vs_paddle.py's ``serve``)."""
    def __init__(self, python: str):
        self.proc = subprocess.Popen([python, "-m", "benchmarks.vs_paddle", "--serve"],
                                     cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"paddle_nb's process ended (exit {self.proc.wait()})")
        return json.loads(line)

    def cpu_seconds(self) -> float:
        """The CPU time it has used so far (timing.OthersWatch counts a child that is
        still running as another process)."""
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        except OSError:
            return 0.0                  # no /proc: OthersWatch has no reading either
        fields = stat.rsplit(")", 1)[1].split()          # utime, stime: fields 14 and 15
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def in_turns(contenders: dict, quick: bool) -> dict:
    """timing.compare for contenders that may live in another process: each is
    ``timed(n)``, the seconds per call of n calls made right after n others, so a remote
    one times itself and only the request crosses the pipe. Same rounds, rotation,
    settling and sample lengths as compare."""
    inner = {}
    for name, timed in contenders.items():
        time.sleep(timing.SETTLE_S)
        once = max(min(timed(1) for _ in range(3)), 1e-7)
        inner[name] = max(3 if quick else 5, int((0.002 if quick else 0.010) / once))
    samples = {k: [] for k in contenders}
    names = list(contenders)
    for r in range(7 if quick else 15):
        for name in names[r % len(names):] + names[:r % len(names)]:
            time.sleep(timing.SETTLE_S)
            samples[name].append(contenders[name](inner[name]))
    return {k: timing.Timing(v) for k, v in samples.items()}


def paddle_timed(step):
    def timed(n):
        for _ in range(n):
            step()
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        return (time.perf_counter() - t0) / n
    return timed


def make_case(name: str, ours: PaddleNbProcess, variants: list, data: dict,
              quick: bool) -> dict:
    title, forward, feed_file, shapes = CASES[name]
    main, startup, loss = build(forward)
    for program, part in ((main, "main"), (startup, "startup")):
        (HERE / f"{name}.{part}.pb").write_bytes(program.desc.serialize_to_string())
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    np.savez_compressed(HERE / f"{name}.params.npz", **persistables(main, scope))
    feed = {k: data[feed_file][k].reshape(s) for k, s in shapes.items()}

    def step():
        return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]
    case = {"title": title, "main": f"{name}.main.pb", "startup": f"{name}.startup.pb",
            "params": f"{name}.params.npz", "feed": {"file": feed_file, "shapes": shapes},
            "fetch": [loss.name],
            "ops": [len(main.block(i).ops) for i in range(main.num_blocks)]}
    case["paddle"] = {"losses": [float(np.asarray(step()).reshape(()))
                                 for _ in range(LOSS_STEPS)]}
    case["paddle_nb"] = {}
    for v in variants:
        case["paddle_nb"][v] = ours.ask(case=case, variant=v, losses=True)
    contenders = {"Paddle": paddle_timed(step)}
    contenders.update({v: (lambda n, v=v: ours.ask(case=case, variant=v, time=n)["seconds"])
                       for v in variants})
    watch, t0, ours_cpu = timing.OthersWatch(), time.perf_counter(), ours.cpu_seconds()
    times = in_turns(contenders, quick)
    others = watch.cores()
    if others is not None:
        ours_cores = (ours.cpu_seconds() - ours_cpu) / (time.perf_counter() - t0)
        others = max(0.0, others - ours_cores)
    case["others_busy_cores"] = others
    paddle_s = times["Paddle"]
    case["paddle"].update(step_s=paddle_s, low_s=paddle_s.low, high_s=paddle_s.high,
                          samples=paddle_s.samples)
    for v in variants:
        t = times[v]
        case["paddle_nb"][v].update(step_s=t, low_s=t.low, high_s=t.high, samples=t.samples,
                                    vs_paddle=list(timing.ratios(t, paddle_s)))
    return case


def git_commit() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    dirty = git("status", "--porcelain", "paddle_nb")
    return git("rev-parse", "HEAD") + (" with paddle_nb/ changes not committed" if dirty
                                       else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="make_programs.py")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                        help="the Python of paddle_nb's own environment")
    parser.add_argument("--quick", action="store_true", help="7 rounds of ~2 ms samples")
    parser.add_argument("--wait-quiet", metavar="S", type=float, default=0.0,
                        help="before each case, wait up to S s for other processes to "
                             "leave the CPU")
    parser.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args(argv)
    paddle.enable_static()
    timing.steady_allocator()
    ours = PaddleNbProcess(args.python)
    about = ours.ask(about=True)
    variants = ["Executor.run", "CompiledProgram"]
    data = feeds()
    for file, arrays in data.items():
        np.savez_compressed(HERE / file, **arrays)
    record = {"made_by": "benchmarks/paddle26/make_programs.py", "quick": args.quick,
              "environment": {
                  "date": datetime.date.today().isoformat(), "machine": platform.platform(),
                  "processor": platform.processor() or platform.machine(),
                  "cpus": os.cpu_count(), "paddle": paddle.__version__,
                  "paddle_commit": paddle.version.commit, "python": platform.python_version(),
                  "numpy": np.__version__,
                  "threads": {v: os.environ.get(v) for v in timing.THREAD_VARS},
                  "paddle_nb": {"commit": git_commit(), **about}},
              "cases": {}}
    old = json.loads((HERE / "paddle26.json").read_text())["cases"] \
        if (HERE / "paddle26.json").exists() else {}
    for name in CASES:
        if name not in args.only:
            if name in old:
                record["cases"][name] = old[name]
            continue
        if args.wait_quiet:
            timing.wait_quiet(args.wait_quiet)
        case = record["cases"][name] = make_case(name, ours, variants, data, args.quick)
        nb = case["paddle_nb"]
        print(f"{name:12s} Paddle {timing.fmt(case['paddle']['step_s'])}  " + "  ".join(
            f"{v} {timing.fmt(nb[v]['step_s'])} {nb[v]['vs_paddle'][0]:.2f}x "
            f"({nb[v]['vs_paddle'][1]:.2f}-{nb[v]['vs_paddle'][2]:.2f}) "
            f"loss {'=' if nb[v]['losses_agree'] else '!='}" for v in variants)
            + f"  others {case['others_busy_cores'] or 0:.1f} cores", flush=True)
    ours.close()
    (HERE / "paddle26.json").write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
