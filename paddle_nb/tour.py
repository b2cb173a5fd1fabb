"""``python -m paddle_nb tour``: PaddlePaddle's design documents' examples, built and run.

Each stop builds one example in its own program, prints the program as code
(``to_code()``), runs it, and prints the scope tree and the results.
"""
from __future__ import annotations

import tempfile

import numpy as np

import paddle_nb as pd
from paddle_nb.examples import digits, block_and_scope


def _title(text: str) -> None:
    print()
    print("=" * 78)
    print(text)
    print("=" * 78)


def scopes() -> None:
    _title("1. Scopes (the Scope design): a name -> variable map with a parent")
    g = pd.Scope()
    g.var("W").set(np.float32([0.314]))
    g.var("x").set(np.float32([10.0]))
    step = g.new_scope("step_0")
    step.var("x").set(np.float32([20.0]))          # shadows the parent's x
    print(g.tree())
    print("step.find_var('W') finds the parent's W:", step.find_var("W").get())
    print("step.find_var('x') finds its own x:     ", step.find_var("x").get())
    print("g.find_var('x') never looks in kids:    ", g.find_var("x").get())
    g.drop_kids()
    print("after drop_kids, kids =", g.kids)


def variables() -> None:
    _title("2. Variables and places (the Framework design)")
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        n = pd.variable.int("n", 10)
        w = pd.variable.tensor("w", np.arange(6, dtype=np.float32).reshape(3, 2),
                               estimated=True)
        y = pd.var(np.float32([[1, 2, 3]])) @ w * pd.layers.cast(n, "float32")
    print(main.to_code())
    print("w is a parameter (estimated):", w.estimated)
    ctx = pd.Context(pd.Scope(), [pd.CPUPlace()])
    exe = pd.Executor(ctx.place)
    exe.run(startup, scope=ctx.scope)
    out, = exe.run(main, fetch_list=[y], scope=ctx.scope)
    print("[1, 2, 3] @ w * n =", out)


def compile_and_run():
    _title("3. Compilation and execution (the Block and Scope design): an MLP as a ProgramDesc")
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup):
        x = pd.minibatch([[10, 20, 30, 40], [1, 2, 3, 4]], name="x")   # shape [None, 4]
        h = pd.fc(x, params=["fc.w", "fc.b"])                           # the design's form
        h = pd.relu(h)
        prob = pd.layer.fc(h, 3, act="softmax")
    print(main.to_code())
    scope = pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(startup, scope=scope)
    out, = exe.run(main, fetch_list=[prob], scope=scope)
    print("softmax rows (each sums to 1):\n", out)
    print("feeding x overrides its declared value:")
    out, = exe.run(main, feed={"x": np.ones((1, 4), np.float32)}, fetch_list=[prob],
                   scope=scope)
    print(out)
    print("scope after the runs: parameters stay, the run's temporaries are gone")
    print(scope.tree())
    print("Block.eval(targets) runs only what the target needs (Prune):")
    pruned = pd.prune(main, [h])
    print(pruned.to_code(show_vars=False))
    print(main.global_block().eval([h], scope=scope)[0])
    data = main.to_bytes()
    again = pd.Program.from_bytes(data)
    print(f"to_bytes -> {len(data)} bytes -> from_bytes -> to_bytes is byte-exact: "
          f"{again.to_bytes() == data}")
    return main, startup


def namespaces() -> None:
    _title("4. Namespaces (the Block design): three submodels, three W's, and reuse")
    main, startup = pd.Program(), pd.Program()

    def submodel(namespace, x):
        with pd.namespace(namespace):
            W = pd.get_variable("W", shape=[3, 3], reuse=True)
            return pd.matmul(x, W)

    with pd.program_guard(main, startup):
        a, b, c = (pd.data(n, [None, 3]) for n in "abc")
        outs = [submodel("model_a", a), submodel("model_b", b), submodel("model_c", c)]
        d = pd.relu(a)
        outs.append(submodel("model_a", d))      # reuses model_a's W
    print("parameters:", [p.name for p in main.all_parameters()])
    print(main.to_code(show_vars=False))


def stepping(main, startup) -> None:
    _title("5. One op at a time: Executor.steps (Executor.run drains the same generator)")
    scope = pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(startup, scope=scope)
    for step in exe.steps(main, scope=scope):
        outs = step.op.output_arg_names
        v = step.scope.find_var(outs[0]).get() if outs else None
        print(f"{step.block_path} > op {step.op_index:2d} {step.op.type:16s} -> {outs[0]} "
              f"{list(np.shape(v))}")



def ifelse_and_rnn() -> None:
    _title("7. Blocks with if-else and for (the Block and Scope design): IfElse and RNN, "
           "and the stack forest")
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        built = block_and_scope.build(block_and_scope.IFELSE)
        o1, o2 = built["o1"], built["o2"]
    print(main.to_code(show_vars=False))
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    got1, got2 = exe.run(main, fetch_list=[o1, o2], scope=scope)
    print("rows 20 and 30 took x + y, row 10 took fc(z):", got1.ravel(), got2.ravel())

    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        built = block_and_scope.build(block_and_scope.RNN)
        o1, o2, W, U = (built[name] for name in ("o1", "o2", "W", "U"))
        loss = pd.mean(pd.add(o1, o2))
        pd.optimizer.SGD(0.01).minimize(loss)
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    for step in exe.steps(main, fetch_list=[o1, o2], scope=scope):
        if step.op.type == "recurrent_grad":
            print("while the backward pass runs, every time step keeps its scope "
                  "(x is shadowed by x[t] in each):")
            print("\n".join(line for line in scope.tree().splitlines()
                            if "Scope" in line or "sequence" in line))
    print("after the minibatch, the forest is gone: kids =", scope.kids)
    print("W, U after one SGD step:", scope.find_var(W.name).get(), scope.find_var(U.name).get())


def training() -> None:
    _title("6. Training (the Framework design: gradient ops exist only when training): digits MLP")
    accuracy, history, model, scope = digits.train(epochs=15, progress=True)
    forward = [op.type for op in model.test.global_block().ops]
    everything = [op.type for op in model.main.global_block().ops]
    print(f"forward ops ({len(forward)}):", ", ".join(forward))
    print(f"training program: {len(everything)} ops, of which backward "
          f"{sum(t.endswith('_grad') for t in everything)} and adam "
          f"{everything.count('adam')}; the backward part, as code:")
    code = model.main.to_code(show_vars=False).splitlines()
    start = next(i for i, line in enumerate(code) if "@GRAD = fill_constant" in line)
    print("\n".join(code[start:start + 6]) + "\n    ...")
    print(f"loss by epoch: {history[0]:.3f} -> {history[-1]:.3f}")
    print(f"test accuracy: {accuracy:.1%}")
    with tempfile.TemporaryDirectory() as d:
        exe = pd.Executor()
        pd.io.save_inference_model(d, ["x"], [model.prob], exe, main_program=model.main,
                                   scope=scope)
        fresh = pd.Scope()
        program, feeds, fetches = pd.io.load_inference_model(d, exe, scope=fresh)
        _, _, x_test, y_test = digits.load_data(0)
        prob, = exe.run(program, feed={feeds[0]: x_test}, fetch_list=fetches, scope=fresh)
        again = float((prob.argmax(axis=1) == y_test.ravel()).mean())
        print(f"saved, reloaded into a fresh scope as an inference model "
              f"({len(program.global_block().ops)} ops with feed/fetch): accuracy {again:.1%}")


def main() -> None:
    scopes()
    variables()
    main_program, startup_program = compile_and_run()
    namespaces()
    stepping(main_program, startup_program)
    training()
    ifelse_and_rnn()
    forward = pd.registered_ops(include_grad=False)
    print(f"\nThe tour is over. {len(forward)} ops are registered, "
          f"{len(pd.registered_ops()) - len(forward)} more are their gradients:")
    print(", ".join(forward))
