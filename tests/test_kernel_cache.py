"""numba's on-disk cache: a second process compiles nothing that the first compiled.

Two subprocesses run the same workload with the project's own cache, next to the kernels'
source, as a user has it: a few training steps of a small MLP through paddle_nb (fc +
relu / tanh / sigmoid, softmax_with_cross_entropy, mean, Adam and Momentum), then each
size-dispatched kernel's serial and prange variant called directly (which one a training
step picks depends on sizes and on timing, see kernels/cpu/threads.py). The first process
compiles what the suite has not compiled yet and writes it to the cache; the second must
compile nothing. (A fresh, empty cache directory made the first process compile every
kernel again, minutes of the suite's time, to prove what the suite's own cold start
already does: that the kernels get compiled and written.) "Compiled" is seen three ways, so a
miss is named whichever way it happens:
- numba's compiler pipeline ran (the ``numba:run_pass`` event: every compilation, of an
  ``@njit`` function, an ``@overload`` implementation or a ufunc loop, runs passes; a
  cache load runs none). numba 0.68 fires ``numba:compile`` only for ``@njit``
  dispatchers and not on a cache hit, so it names which dispatcher compiled;
- a dispatcher in ``paddle_nb.kernels.cpu`` has a cache miss in its ``stats``;
- a file in the cache directory was added or rewritten.
The static test beside it checks what makes caching possible at all: every kernel is a
module-level function without a closure, with ``cache=True``.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import paddle_nb.kernels.cpu as kernels_cpu
from paddle_nb.kernels.cpu.lazy_ufunc import LazyUfunc

WORKLOAD = r'''
import json, sys, time
t0 = time.perf_counter()
from numba.core import event as ev

passes, compiled = [], []


class Listener(ev.Listener):
    def on_start(self, event):
        if event.kind == "numba:run_pass":
            passes.append(1)
        elif event.kind == "numba:compile":
            compiled.append(str(event.data["dispatcher"].py_func.__qualname__))

    def on_end(self, event):
        pass


ev.register("numba:run_pass", Listener())
ev.register("numba:compile", Listener())

import numpy as np
import paddle_nb as pd
t_import = time.perf_counter() - t0


def train(act, optimizer, batch):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [None, 16])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, 24, act=act)
        logits = pd.layer.fc(h, 5)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        optimizer.minimize(loss)
    scope = pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, 16)).astype(np.float32)
    ys = rng.integers(0, 5, (batch, 1))
    for _ in range(2):
        out, = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
    assert np.isfinite(out).all()


train("relu", pd.optimizer.Adam(0.01), 8)
t_first = time.perf_counter() - t0
train("tanh", pd.optimizer.Momentum(0.01, 0.9), 8)
train("sigmoid", pd.optimizer.Adam(0.01), 8)

# every size-dispatched variant, serial and prange, on float32
from paddle_nb.kernels.cpu import loss as L
from paddle_nb.kernels.cpu import matmul as M, reduce as R
from paddle_nb.kernels.update import UPDATES
from paddle_nb.kernels.pointwise import KERNELS
f = np.float32
x = np.linspace(-3, 3, 40, dtype=f)
o = np.empty_like(x)
with np.errstate(all="ignore"):        # sqrt(-3)...: only the compiling matters here
    for kernel in KERNELS.values():    # the @pointwise ones: ufunc and generated twin
        if kernel.cpu.parallel is not None:
            args = (x,) * kernel.arity + (f(1.5),) * kernel.params
            kernel.cpu.ufunc(*args, out=o)
            kernel.cpu.parallel(*args, o)
a = x.reshape(4, 10)
lab = np.arange(4, dtype=np.int64)
R._row_sum_parallel(a), R._row_softmax_parallel(a)
prob = R._row_softmax_serial(a)
L._hard_label_loss_parallel(prob, lab, -100)
L._softmax_xent_grad_parallel(prob, lab, x[:4], -100)
L._xent_grad_parallel(prob, lab, x[:4], -100)
b = x.reshape(10, 2, 2)
M._batched_matmul_serial(b, b), M._batched_matmul_parallel(b, b)
from paddle_nb.kernels.cpu import norm as N, random as RND
v, g, s2 = x.reshape(2, 2, 2, 5), np.zeros(2), np.ones((2, 2))
for moments, normalize, grad in ((N._moments_serial, N._normalize_serial, N._grad_serial),
                                 (N._moments_parallel, N._normalize_parallel,
                                  N._grad_parallel)):
    moments(v, g.copy(), g.copy())
    normalize(v, g, g + 1, s2, s2, np.empty_like(v))
    grad(v, v, g, g + 1, s2, True, np.empty_like(v), s2.copy(), s2.copy())
RND.dropout_mask(10, 1, 0.5)
from paddle_nb.kernels.cpu import layer_norm as LN
ones, stat = np.ones(10), np.ones(4, f)
for forward, grad in ((LN._forward_serial, LN._grad_serial),
                      (LN._forward_parallel, LN._grad_parallel)):
    forward(a, ones, ones, 1e-5, np.empty_like(a), stat.copy(), stat.copy())
    grad(a, a, stat, stat, ones, 1e-5, np.empty_like(a), np.zeros((2, 10)), np.zeros((2, 10)))
from paddle_nb.kernels.cpu import embedding as EMB
EMB._lookup_serial(a, lab, -1, np.empty_like(a)), EMB._lookup_parallel(a, lab, -1, np.empty_like(a))
EMB._lookup_grad_serial(a, lab, 0, np.empty_like(a))
EMB._lookup_grad_parallel(a, lab, 0, np.empty_like(a), 2)
from paddle_nb.kernels.cpu import conv as CV
for col2im in (CV._col2im_serial, CV._col2im_parallel):   # 2x2 taps over a 3x3 image
    col2im(x[:16].reshape(4, 4), np.empty((1, 1, 3, 3), f), 2, 2, 1, 1, 0, 0, 1, 1, 2, 2)
for kernel in UPDATES.values():        # the @update ones: the optimizers' prange twins
    arrays, cells, params, outputs = kernel.shape
    if kernel.parallel is not None:
        kernel.parallel(*(x,) * arrays, *(np.full(1, 0.5, f),) * cells, *(0.5,) * params,
                        *(np.empty_like(x) for _ in range(outputs)))

misses = {}
import importlib, pkgutil
import paddle_nb.kernels.cpu as pkg
from numba.core.registry import CPUDispatcher
for info in pkgutil.iter_modules(pkg.__path__):
    mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
    for attr, value in vars(mod).items():
        if isinstance(value, CPUDispatcher) and value.stats.cache_misses:
            misses[f"{info.name}.{attr}"] = [str(s) for s in value.stats.cache_misses]
parts = [(name, {"scalar": k.scalar, "twin": k.cpu.parallel}) for name, k in KERNELS.items()]
parts += [(name, {"scalar": k.scalar, "serial": k.serial, "twin": k.parallel})
          for name, k in UPDATES.items()]
for name, loops in parts:
    for part, dispatcher in loops.items():
        if dispatcher is not None and dispatcher.stats.cache_misses:
            misses[f"{name} {part}"] = [str(s) for s in dispatcher.stats.cache_misses]
print(json.dumps({"passes": len(passes), "compiled": sorted(set(compiled)), "misses": misses,
                  "import_s": t_import, "first_step_s": t_first,
                  "total_s": time.perf_counter() - t0}))
'''


PACKAGE = Path(kernels_cpu.__file__).resolve().parents[2]     # paddle_nb/


def _run():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}   # beside the source
    out = subprocess.run([sys.executable, "-c", WORKLOAD], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _files():
    """numba's index (.nbi) and code (.nbc) files in the package's __pycache__ folders."""
    return {p: p.stat().st_mtime_ns for p in PACKAGE.rglob("__pycache__/*.nb[ic]")}


def test_a_second_process_compiles_nothing():
    cold = _run()
    written = _files()
    assert any(p.suffix == ".nbi" for p in written) and any(p.suffix == ".nbc"
                                                            for p in written)
    warm = _run()
    assert warm["compiled"] == [], f"compiled again: {warm['compiled']}"
    assert warm["misses"] == {}, f"cache misses: {warm['misses']}"
    assert warm["passes"] == 0, "a numba compiler pipeline ran in the second process"
    assert _files() == written, "the second process wrote to the cache"
    print(f"\nimport + first training step: cold {cold['first_step_s']:.2f} s "
          f"(import {cold['import_s']:.2f} s), warm {warm['first_step_s']:.2f} s "
          f"(import {warm['import_s']:.2f} s); whole workload cold {cold['total_s']:.1f} s, "
          f"warm {warm['total_s']:.1f} s")


def _kernel_modules():
    for info in pkgutil.iter_modules(kernels_cpu.__path__):
        yield importlib.import_module(f"{kernels_cpu.__name__}.{info.name}")


def test_every_kernel_is_a_cacheable_module_level_function():
    seen = 0
    for mod in _kernel_modules():
        for name, value in vars(mod).items():
            if isinstance(value, CPUDispatcher):
                func = value.py_func
            elif isinstance(value, LazyUfunc):
                func = value.py_func
                assert value.parallel is None or isinstance(value.parallel, CPUDispatcher)
            else:
                continue
            if func.__module__ != mod.__name__:
                continue                   # imported from a sibling module: checked there
            seen += 1
            where = f"{mod.__name__}.{name}"
            assert func.__qualname__ == name, f"{where} is not a module-level function"
            assert func.__closure__ is None, f"{where} closes over variables"
            if isinstance(value, CPUDispatcher):
                assert value.targetoptions.get("cache") is not False
                assert not isinstance(value._cache, NullCache), f"{where} has no cache=True"
                assert "fastmath" in value.targetoptions, \
                    f"{where}: say fastmath= (a callee inherits its first caller's flags)"
                assert value.targetoptions.get("error_model") == "numpy", where
    assert seen > 20           # (the elementwise and optimizer loops are generated: tests below)


def test_every_pointwise_kernel_is_cached_under_its_family_file():
    """@pointwise compiles a scalar function and generates its loops (kernels/pointwise.py):
    each must be cacheable (no closure) and named after the function, in its file."""
    from paddle_nb.kernels.pointwise import KERNELS
    assert {"relu", "tanh_grad"} <= set(KERNELS)
    for name, kernel in KERNELS.items():
        for dispatcher in (kernel.scalar, kernel.cpu.parallel):
            if dispatcher is not None:          # (a kernel without a twin: comparisons)
                assert not isinstance(dispatcher._cache, NullCache), name
                assert dispatcher.py_func.__closure__ is None, name
        assert kernel.cpu.py_func.__closure__ is None, name
        assert kernel.cpu.py_func.__qualname__ == f"{name}__ufunc"
        assert kernel.cpu.py_func.__code__.co_filename == kernel.fn.__code__.co_filename


def test_every_update_kernel_is_cached_under_its_family_file():
    """@update (kernels/update.py) does the same for the optimizers' loops."""
    from paddle_nb.kernels.update import UPDATES
    assert {"sgd", "momentum", "adamw", "lamb_step"} <= set(UPDATES)
    for name, kernel in UPDATES.items():
        for loop, dispatcher in (("serial", kernel.serial), ("parallel", kernel.parallel)):
            assert not isinstance(dispatcher._cache, NullCache), name
            assert dispatcher.py_func.__closure__ is None, name
            assert dispatcher.py_func.__qualname__ == f"{name}__{loop}"
            assert dispatcher.py_func.__code__.co_filename == kernel.fn.__code__.co_filename


def test_a_kernels_cache_is_stamped_with_every_file_of_the_package():
    """A kernel inlines code from sibling files (fastmath32.py into reduce.py, and into
    the @pointwise loops of ops/activation.py; kernels/rnn_cells.py into rnn.py): its cache
    entry must go stale when any of them changes, not only its own file."""
    from paddle_nb.kernels.cpu import cache, reduce, rnn
    from paddle_nb.ops import activation
    for dispatcher in (reduce._row_softmax_parallel, activation.tanh.cpu.parallel,
                       activation.tanh.scalar, rnn._forward):    # (rnn: ../rnn_cells.py's math)
        own, package = dispatcher._cache._impl.locator.get_source_stamp()
        assert {"fastmath32.py", "../rnn_cells.py"} <= {name for name, _ in package}
        assert package == cache.package_stamp()
