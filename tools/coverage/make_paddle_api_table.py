"""Make the coverage data of ``python -m paddle_nb coverage`` with real PaddlePaddle 2.6.2:
one small static program per public API, with what Paddle computed.

DOCUMENTATION ONLY: run once in the scratch virtualenv that has paddlepaddle, never
imported by the project or pytest:

    cd tools/coverage && /tmp/paddle26/bin/python make_paddle_api_table.py

The list of APIs is Paddle's, not chosen: the ``__all__`` of paddle.nn,
paddle.nn.functional, paddle.metric and paddle.static.nn, and for the paddle.tensor
submodules (math, manipulation, search, logic, linalg, random, stat), whose ``__all__`` is
empty in 2.6.2, the public functions each defines that ``paddle`` or ``paddle.linalg``
export. A name bound to the same object as an earlier one (``mod`` is ``remainder``) is
listed once, under the first.

For each API: a call from api_calls.CALLS, or one made from its signature (``x``/``input``
a float tensor [2, 3], ``y``/``other`` a second one, ``label`` a float target; a Layer
constructed with its defaults and called so); a skip from api_calls.SKIPS (out of scope,
with its reason); or, when neither works, "no call yet" with Paddle's error. A program
that builds is run on Paddle's CPU; where an output is a float tensor, Paddle's backward
of sum(out * W) (W fed, so that a softmax's gradient is not trivially zero) is appended
with ``paddle.static.gradients`` for every float input and parameter.

Writes ../../paddle_nb/coverage/paddle_2_6_2_apis.npz (``<api>/__program__`` the
ProgramDesc bytes with op_callstack emptied; ``<api>/feed/<var>``, ``<api>/param/<var>``
and ``<api>/fetch/<var>`` the feeds, the startup-initialised persistables and what Paddle
fetched) and paddle_2_6_2_apis.json (the index).
"""
import importlib
import inspect
import json
import os
import sys
import traceback

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

import api_calls  # noqa: E402

paddle.enable_static()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "paddle_nb",
                   "coverage")
MODULES = [("nn", "paddle.nn"), ("F", "paddle.nn.functional")] + [
    (f"tensor.{s}", f"paddle.tensor.{s}")
    for s in ("math", "manipulation", "search", "logic", "linalg", "random", "stat")] + [
    ("metric", "paddle.metric"), ("static.nn", "paddle.static.nn")]

# Signature names the generic caller knows how to feed.
FLOAT_ARGS = {"x", "input", "logit", "logits", "x1", "x2", "input1", "input2", "positive",
              "negative", "anchor", "other", "y", "arr", "query", "key", "value", "mat2",
              "inputs", "label", "variance"}


def list_apis():
    """(key, module, name, object) for every public API, deduplicated by identity."""
    seen, apis = {}, []
    for short, module_name in MODULES:
        module = importlib.import_module(module_name)
        names = list(dict.fromkeys(getattr(module, "__all__", None) or []))
        if not names:     # paddle.tensor.* in 2.6.2: __all__ = []
            names = [n for n, v in vars(module).items()
                     if inspect.isfunction(v) and v.__module__ == module_name
                     and not n.startswith("_")
                     and (n in paddle.__all__ or n in paddle.linalg.__all__)]
        for name in names:
            obj = getattr(module, name)
            key = f"{short}.{name}"
            if id(obj) in seen:
                print(f"{key} is {seen[id(obj)]}: listed once")
                continue
            seen[id(obj)] = key
            apis.append((key, module_name, name, obj))
    return apis


class Inputs:
    """Declares fed inputs (``paddle.static.data``) and remembers their values."""

    def __init__(self, rng):
        self.rng, self.feed, self.grad_inputs = rng, {}, []

    def _name(self, name):
        base, k = name or "x", 1
        while (name or base) in self.feed:
            name = f"{base}{k}"
            k += 1
        return name or base

    def v(self, value, name=None, grad=None):
        name = self._name(name)
        value = np.asarray(value)
        var = paddle.static.data(name, list(value.shape), value.dtype.name)
        var.stop_gradient = not (value.dtype.kind == "f" if grad is None else grad)
        if not var.stop_gradient:
            self.grad_inputs.append(var)
        self.feed[name] = value
        return var

    def f(self, shape=(2, 3), name=None, low=0.1, high=0.9, dtype="float32", grad=True):
        return self.v(self.rng.uniform(low, high, shape).astype(dtype), name, grad)

    def i(self, shape, high, name="label", low=0, dtype="int64"):
        return self.v(self.rng.integers(low, high, shape).astype(dtype), name)

    def b(self, shape, name="mask"):
        return self.v(self.rng.uniform(0, 1, shape) > 0.5, name)

    def img(self, name="x"):
        return self.f((2, 3, 4, 4), name)

    def seq(self, name="x"):
        return self.f((2, 3, 8), name)

    def vol(self, name="x"):
        return self.f((2, 3, 4, 4, 4), name)


class NoGenericCall(Exception):
    pass


def _generic_args(signature, t):
    args = []
    for p in signature.parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not p.empty:
            continue
        if p.name not in FLOAT_ARGS:
            raise NoGenericCall(f"no generic value for argument {p.name!r}")
        args.append(t.f(name=p.name, grad=p.name not in ("label",)))
    return args


def generic_call(obj):
    def call(t):
        if inspect.isclass(obj):
            layer = obj(*_generic_args(inspect.signature(obj.__init__), t))
            return layer(*_generic_args(inspect.signature(obj.forward), t))
        return obj(*_generic_args(inspect.signature(obj), t))
    return call


def _flatten(out):
    if isinstance(out, (list, tuple)):
        return [v for item in out for v in _flatten(item)]
    if isinstance(out, dict):
        return [v for item in out.values() for v in _flatten(item)]
    return [out]


def _is_float(var):
    return var.dtype in (paddle.float32, paddle.float64)


def build(key, call, rng_seed, backward):
    """The API's program: (main, startup, inputs, outputs, forward op types, grads)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    t = Inputs(np.random.default_rng(rng_seed))
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        result = call(t)
        outs = [v for v in _flatten(result) if isinstance(v, paddle.static.Variable)]
        forward_ops = [op.type for b in main.blocks for op in b.ops]
        grads = []
        if backward:
            floats = [o for o in outs if _is_float(o) and not o.stop_gradient]
            params = [p for p in main.all_parameters() if p.trainable]
            wrt = t.grad_inputs + params
            if floats and wrt:
                total = 0
                for k, out in enumerate(floats):
                    if all(d > 0 for d in out.shape):
                        w = t.f(tuple(out.shape) or (1,), f"loss_w{k}", -1.0, 1.0,
                                "float64" if out.dtype == paddle.float64 else "float32",
                                grad=False)
                        if not out.shape:
                            w = paddle.reshape(w, [])
                        total = total + paddle.sum(out * w)
                    else:
                        total = total + paddle.sum(out)
                grads = [(v.name, g) for v, g in zip(wrt, paddle.static.gradients([total], wrt))
                         if g is not None]
    return main, startup, t, result, outs, forward_ops, grads


def program_bytes(program):
    for block in program.blocks:
        for op in block.ops:
            if op.has_attr("op_callstack"):
                op._set_attr("op_callstack", [])
    return np.frombuffer(program.desc.serialize_to_string(), np.uint8)


def run_one(key, call, seed, arrays):
    """The index row of one API; its arrays go into ``arrays``."""
    shape_only = key in api_calls.SHAPE_ONLY
    backward = not shape_only and key not in api_calls.NO_GRAD
    try:
        built = build(key, call, seed, backward)
    except NoGenericCall as e:
        return {"status": "no_call", "reason": str(e)}
    except Exception as e:   # Paddle refused the call: a call still to be written
        if not backward:
            return {"status": "no_call", "reason": _line(e)}
        try:    # perhaps only its backward failed
            built = build(key, call, seed, False)
            backward_error = _line(e)
        except Exception:
            return {"status": "no_call", "reason": _line(e)}
    else:
        backward_error = None
    main, startup, t, result, outs, forward_ops, grads = built
    if not outs:
        return {"status": "host", "reason": f"builds no program (returns "
                                            f"{type(result).__name__})"}
    all_ops = [op.type for b in main.blocks for op in b.ops]
    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    persistables = [v.name for v in main.list_vars() if v.persistable
                    and v.name not in ("feed", "fetch")]
    fetch = list(dict.fromkeys([o.name for o in outs] + [g.name for _, g in grads]))
    try:
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            params = {}
            for name in persistables:
                var = scope.find_var(name)
                try:            # a persistable the startup leaves empty is not saved
                    params[name] = np.array(var.get_tensor())
                except Exception:
                    pass
            values = exe.run(main, feed=t.feed, fetch_list=fetch, return_numpy=True)
    except Exception as e:
        return {"status": "no_call", "reason": "Paddle could not run it: " + _line(e)}
    arrays[f"{key}/__program__"] = program_bytes(main)
    # Apart by kind: a fetched variable may be a fed one (a while loop's carried value) or
    # a parameter (after an optimizer step), with another value than went in.
    for kind, named in (("feed", t.feed), ("param", params), ("fetch", zip(fetch, values))):
        for name, value in dict(named).items():
            arrays[f"{key}/{kind}/{name}"] = np.asarray(value)
    n_forward = len(forward_ops)
    return {"status": "built", "compare": "shape" if shape_only else "values",
            "forward_ops": sorted(set(forward_ops)),
            "backward_ops": sorted(set(all_ops[n_forward:]) - set(forward_ops))
            if grads else [],
            "all_ops": sorted(set(all_ops)),
            "feeds": sorted(t.feed), "params": sorted(params), "fetch": fetch,
            "grads": [g.name for _, g in grads],
            **({"backward_error": backward_error} if backward_error else {})}


def _line(e):
    text = str(e).strip().splitlines()
    text = [line for line in text if line.strip() and not line.startswith("---")]
    return f"{type(e).__name__}: {(text[0] if text else '')[:200]}"


def main():
    only = set(sys.argv[1:])
    index, arrays = {}, {}
    for seed, (key, module, name, obj) in enumerate(list_apis()):
        if only and key not in only:
            continue
        row = {"module": module, "name": name}
        if key in api_calls.SKIPS:
            reason, why = api_calls.SKIPS[key]
            row.update(status="skipped", reason=reason, detail=why)
        elif key in api_calls.HOST:
            row.update(status="host", reason=api_calls.HOST[key])
        elif key in api_calls.NO_CALL:
            row.update(status="no_call", reason=api_calls.NO_CALL[key])
        else:
            call = api_calls.CALLS.get(key) or generic_call(obj)
            try:
                row.update(run_one(key, call, seed, arrays))
            except Exception as e:
                traceback.print_exc()
                row.update(status="no_call", reason="maker: " + _line(e))
        index[key] = row
        print(f"{key:45} {row['status']:8} {row.get('reason', '')[:90]}")
    if only:
        return
    os.makedirs(OUT, exist_ok=True)
    np.savez_compressed(os.path.join(OUT, "paddle_2_6_2_apis.npz"), **arrays)
    with open(os.path.join(OUT, "paddle_2_6_2_apis.json"), "w") as f:
        json.dump({"paddle": paddle.__version__, "apis": index}, f, indent=1, sort_keys=True)
    counts = {}
    for row in index.values():
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    print(counts)


if __name__ == "__main__":
    main()
