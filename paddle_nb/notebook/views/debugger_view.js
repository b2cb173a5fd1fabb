// The debugger's control bar: buttons, a status line, the frame stack and, at the end, the
// fetched results. It sends every click to Python as a message ({cmd: "step"}, ...);
// Python runs the debugger and answers by changing the traits below (and the ProgramView
// and ScopeView next to this bar). Nothing is decided here.
//
// Synced traits (DebuggerControls in paddle_nb/notebook/widgets.py):
//   status       "ran block 1 > op 2 relu (step 14) — next: block 1 > op 3 scale" (and,
//                after Back, "— 2 steps behind the live run: stepping forward replays
//                them"), "ready — next: ...", "finished — 40 steps", or an error with, from
//                a %%paddle --step cell, which cell built the failing op and how to fix it
//   state        "ready" | "paused" | "finished" | "error"
//   frames       [{block_idx, block_path, scope_name, owner_type, owner_index}], outermost first
//   results      [{name, user_name, shown, text}] once finished: shown is "y (softmax_0.tmp_0)"
//                where the notebook named the variable, else the program's name
//   still        a snapshot (DebuggerView.snapshot()): no buttons, a "snapshot" tag instead
//   can_step_back  the Back button is enabled (a step the debugger's history can undo)
//   alert        the first NaN/Inf under check_nan_inf, several lines ("" for none)
//
// Stable hooks for browser tests: .pd-btn[data-cmd="step_back"|"step"|"step_over"|
// "step_out"|"continue"|"restart"|"run_to_end"], .pd-status[data-state],
// .pd-frame[data-frame="0"], .pd-results [data-result="softmax_0.tmp_0"], .pd-still-tag,
// .pd-alert. Keyboard (when the bar has focus): b back, s step, n step over, o step out,
// c continue, r restart.

const BUTTONS = [
  ["step_back", "\u25C0 Back", "b", "go back one step: the values the later ops wrote are " +
   "put back (forward commands replay them)"],
  ["step", "Step", "s", "run one op; enters the block of a control-flow op"],
  ["step_over", "Step over", "n", "run one op of this block; a control-flow op runs whole"],
  ["step_out", "Step out", "o", "run until the op that owns this block has finished"],
  ["continue", "Continue", "c", "run until a breakpoint or the end"],
  ["run_to_end", "Run to end", "", "run every remaining op, ignoring breakpoints"],
  ["restart", "Restart", "r", "start a new run with the same feed"],
];

function render({ model, el }) {
  const root = h("div", { class: "pd-widget pd-debugger", tabindex: 0 });
  const toolbar = h("div", { class: "pd-toolbar" }, BUTTONS.map(([cmd, label, key, tip]) =>
    h("button", { class: "pd-btn", "data-cmd": cmd, title: tip + (key ? ` (${key})` : "") },
      label, key ? h("span", { class: "pd-key" }, key) : null)));
  const stillTag = h("div", { class: "pd-still-tag" }, "snapshot: the debugger as it was " +
    "here (it does not change; the live debugger is the view the code drives)");
  const status = h("div", { class: "pd-status" });
  const frames = h("ol", { class: "pd-frames" });
  const results = h("div", { class: "pd-results" });
  const alert = h("div", { class: "pd-alert pd-hidden" });
  root.append(toolbar, stillTag, status, alert, frames, results);
  el.append(root);

  const send = (cmd, extra = {}) => model.send({ cmd, ...extra });
  toolbar.addEventListener("click", (e) => {
    const b = e.target.closest("[data-cmd]");
    if (b && !b.disabled) send(b.dataset.cmd);
  });
  frames.addEventListener("click", (e) => {
    const f = e.target.closest("[data-frame]");
    if (f && !model.get("still")) send("select_frame", { index: Number(f.dataset.frame) });
  });
  const keys = { b: "step_back", s: "step", n: "step_over", o: "step_out", c: "continue",
                 r: "restart" };
  root.addEventListener("keydown", (e) => {
    if (model.get("still")) return;
    if (e.ctrlKey || e.metaKey || e.altKey || !keys[e.key]) return;
    e.preventDefault();
    e.stopPropagation();       // keep JupyterLab's command-mode shortcuts out of it
    send(keys[e.key]);
  });

  function draw() {
    const still = !!model.get("still");
    toolbar.classList.toggle("pd-hidden", still);
    stillTag.classList.toggle("pd-hidden", !still);
    root.classList.toggle("pd-still", still);
    const state = model.get("state");
    status.textContent = model.get("status");
    status.className = `pd-status pd-state-${state}`;
    status.dataset.state = state;
    const over = state === "finished" || state === "error";
    for (const b of toolbar.querySelectorAll("[data-cmd]")) {
      b.disabled = b.dataset.cmd === "step_back" ? !model.get("can_step_back")
        : over && b.dataset.cmd !== "restart";
    }
    const bad = model.get("alert") || "";
    alert.textContent = bad;
    alert.classList.toggle("pd-hidden", !bad);
    const fs = model.get("frames") || [];
    frames.replaceChildren(...fs.map((f, i) => h("li", { class: "pd-frame", "data-frame": i,
                                                          style: `padding-left: ${6 + 14 * i}px` },
      (f.owner_type ? `${f.owner_type}@${f.owner_index} → ` : "") +
      `block ${f.block_idx}   scope '${f.scope_name}'`)));
    const rs = model.get("results") || [];
    // A matrix's later rows line up under its first: "y (softmax_0.tmp_0) = [[...]\n   [...]]"
    results.replaceChildren(...rs.map((r) => {
      const lhs = `${r.shown || r.name} = `;
      return h("div", { "data-result": r.name },
               lhs + r.text.replaceAll("\n", "\n" + " ".repeat(lhs.length)));
    }));
  }
  const events = ["change:status", "change:state", "change:frames", "change:results",
                  "change:still", "change:can_step_back", "change:alert"];
  for (const ev of events) model.on(ev, draw);
  draw();
  return () => { for (const ev of events) model.off(ev, draw); };
}

export default { render };
