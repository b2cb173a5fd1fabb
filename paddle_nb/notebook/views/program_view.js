// ProgramView: a Program as nested code (one line per op, one pair of braces per block),
// a detail pane for the op you click, and a Graph tab (graphviz SVG, or text without dot).
//
// Everything drawn comes from the synced traits (see paddle_nb/notebook/widgets.py):
//   model        program_model(program): blocks -> vars, ops (program_model.py), and
//                user_names {program name: the notebook's name} ({} outside a notebook);
//                a var read from a Paddle 3 PIR file has its pir_id there (shown "%4")
//   svg          the dataflow graph ("" when graphviz's dot is missing)
//   graph_text   the text fallback of the graph
//   selected     [block, index] of the op shown in the detail pane, or []
//   next_op      [block, index] of the op the debugger runs next, or []: the current line
//                (.pd-current), as debuggers mark the line about to run
//   highlight    [block, index] of the op that ran last (the debugger), or []: .pd-last-run
//   failed       [block, index] of the op the run failed in, or []: .pd-failed
//   running      ids ("b0:1") of the ops whose blocks are running (the frame owners)
//   breakpoints  [[block, index], ...]
//   debug        true inside a DebuggerView: the gutter toggles breakpoints
//   tab          "code" or "graph"
//   collapsed    the blocks (numbers) and op groups (names) the graph draws as one node
//   graph_groups what can collapse: [{key, label, collapsed, node, cluster}] where node /
//                cluster are the SVG ids of its collapsed node / expanded cluster
//
// The graph's clicks only set traits: an op's node (id "b0:3") sets selected; a collapsed
// node (an op running collapsed blocks, "grp:fc_3", "blk:4") is taken out of collapsed; a
// cluster's label put into it. Python answers with a new svg.
//
// Stable hooks for browser tests: .pd-op[data-op="b0:3"], .pd-current, .pd-last-run,
// .pd-failed, .pd-bp, .pd-created, .pd-pir-id,
// .pd-gutter[data-bp="b0:3"], .pd-tab[data-tab="graph"], .pd-detail, .pd-fwd-link,
// .pd-named[data-var="minibatch_0"][title="x (minibatch_0)"], .pd-graph-fit,
// g.node[id="b0:3"], g.node.pd-collapsed, g.cluster[id="cluster_blk:2"] text,
// .pd-graph-toggle[data-group="0"], .pd-graph-expand-all, .pd-graph-collapse-all.

const opId = (b, i) => `b${b}:${i}`;

/** Scroll ``pane`` (only: scrollIntoView would also scroll the notebook) to show ``line``. */
function reveal(pane, line) {
  if (!line || pane.classList.contains("pd-hidden")) return;
  const p = pane.getBoundingClientRect(), r = line.getBoundingClientRect();
  if (r.top < p.top) pane.scrollTop -= p.top - r.top + 24;
  else if (r.bottom > p.bottom) pane.scrollTop += r.bottom - p.bottom + 24;
}
const FOLD_OVER = 10;    // a block declaring more variables starts with them folded

/** "x (minibatch_0)" where the notebook named the variable, else "minibatch_0". */
const shown = (names, name) => (names[name] ? `${names[name]} (${name})` : name);

/** ``text`` with every variable the notebook named wrapped in a span whose hover says the
 *  user's name: the code stays the program's, as to_code() prints it. */
function named(text, names) {
  if (!names || !Object.keys(names).length) return text;
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/[A-Za-z_][\w.@/]*/g)) {
    if (!names[m[0]]) continue;
    out.push(text.slice(last, m.index), h("span", { class: "pd-named", "data-var": m[0],
                                                     title: shown(names, m[0]) }, m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

// A line's text is one .pd-text span: where the pane is narrower than the line it ends in
// an ellipsis, and its hover (title) shows the whole line; a click shows the op's slots
// and attributes in the detail pane. The gutter, the index and the tags after the text
// (role, "next", "ran last") always stay in view.

/** "float32[-1, 4]  # x, param" for a variable declaration line. */
function varLine(v) {
  const notes = [];
  if (v.user_name) notes.push(v.user_name);
  if (v.is_parameter) notes.push("param");
  else if (v.persistable) notes.push("persistable");
  const type = v.text + (notes.length ? `  # ${notes.join(", ")}` : "");
  // a program read from Paddle 3's PIR: the value's id there, "linear_0.w_0  %4"
  const pirId = v.pir_id !== undefined ? `  %${v.pir_id}` : "";
  return h("div", { class: "pd-line pd-var" + (v.is_parameter ? " pd-param" : ""),
                    "data-block-var": v.name },
    h("span", { class: "pd-gutter" }),
    h("span", { class: "pd-idx" }),
    h("span", { class: "pd-text", title: `var ${v.name}${pirId} : ${type}` },
      "var ", h("span", { class: "pd-name" + (v.user_name ? " pd-named" : ""),
                          title: v.user_name ? `${v.user_name} (${v.name})` : null }, v.name),
      pirId ? h("span", { class: "pd-pir-id", title: "the value's id in the Paddle 3 PIR "
                                                       + "program it was read from" }, pirId)
        : null,
      " : ", h("span", { class: "pd-type" }, type)));
}

/** One op line: the printer's text with the op type picked out. Where it is cut, the
 *  outputs (at most 60% of the line) end in an ellipsis of their own, so the op type
 *  stays in view, and the line ends in one. */
function opLine(op, names) {
  const at = op.text.indexOf(op.type + "(");
  const lhs = at > 0 ? op.text.slice(0, at).replace(/ = $/, "") : "";
  const rest = at >= 0 ? op.text.slice(at + op.type.length) : op.text;
  return h("div", { class: `pd-line pd-op pd-role-${op.role}`, "data-op": op.id,
                    "data-block": op.block, "data-index": op.index, title: op.comment },
    h("span", { class: "pd-gutter", "data-bp": op.id, title: "toggle breakpoint" }, "●"),
    h("span", { class: "pd-idx" }, op.index),
    h("span", { class: "pd-text", title: `${op.text}\n\n${op.comment}` },
      lhs ? [h("span", { class: "pd-lhs" }, named(lhs, names)),
             h("span", { class: "pd-eq" }, " = ")] : null,
      h("span", { class: "pd-optype" }, at >= 0 ? op.type : ""),
      h("span", { class: "pd-args" }, named(rest, names))),
    op.role !== "forward" ? h("span", { class: "pd-role-tag" }, op.role) : null,
    op.segment !== undefined ? h("span", {
      class: "pd-role-tag pd-segment-tag",
      title: op.segment === null ? "runs in the interpreter (compiled.source() says why)"
        : `compiled into segment ${op.segment} (compiled.source(${op.block}) shows its code)` },
      op.segment === null ? "interpreted" : `segment ${op.segment}`) : null);
}

/** A block in braces; each op is followed by the blocks it owns, nested one level. */
function blockEl(model, idx, folded) {
  const b = model.blocks[idx];
  const body = h("div", { class: "pd-block-body" });
  const varsEl = h("div", { class: "pd-block-vars" + (folded.has(idx) ? " pd-hidden" : "") },
    b.vars.map(varLine));
  const fold = h("span", { class: "pd-fold", "data-fold": idx },
    b.vars.length ? `${b.vars.length} vars ${folded.has(idx) ? "▸" : "▾"}` : "");
  body.append(varsEl);
  for (const op of b.ops) {
    body.append(opLine(op, model.user_names));
    for (const sub of op.sub_blocks) {
      if (sub >= 0 && sub < model.blocks.length) body.append(blockEl(model, sub, folded));
    }
  }
  const header = `{  // block ${b.idx}` + (b.parent_idx >= 0 ? `, parent ${b.parent_idx}` : "")
    + (b.forward_block_idx >= 0 ? `, gradient of block ${b.forward_block_idx}` : "");
  return h("div", { class: "pd-block", "data-block": idx },
    h("div", { class: "pd-line pd-brace" }, h("span", { class: "pd-gutter" }),
      h("span", { class: "pd-idx" }), h("span", { class: "pd-text pd-comment", title: header },
                                        header), fold),
    body,
    h("div", { class: "pd-line pd-brace" }, h("span", { class: "pd-gutter" }),
      h("span", { class: "pd-idx" }), "}"));
}

/** The whole program: block 0, then any block no op owns (a program being built). */
function codeEl(model, folded) {
  const owned = new Set(model.blocks.flatMap((b) => b.ops.flatMap((o) => o.sub_blocks)));
  const root = h("div", {});
  model.blocks.forEach((b, i) => {
    if (i === 0 || !owned.has(i)) root.append(blockEl(model, i, folded));
  });
  return root;
}

function slotTable(slots, users) {
  const rows = Object.entries(slots || {}).map(([slot, names]) =>
    h("tr", {}, h("td", {}, slot),
      h("td", {}, names.length ? names.map((n) => shown(users || {}, n)).join(", ") : "—")));
  return rows.length ? h("table", {}, rows) : h("div", { class: "pd-empty" }, "none");
}

/** The detail pane of one op: slots, attributes, where it was created, its OpProto doc. */
function detailEl(model, op, goto) {
  if (!op) return h("div", { class: "pd-empty" }, "Click an op to see its inputs, outputs, "
    + "attributes and documentation.");
  const grads = model.blocks.flatMap((b) => b.ops)
    .filter((o) => o.forward_op && o.forward_op.id === op.id);
  const link = (id, text) => h("span", { class: "pd-link", "data-goto": id,
                                         onclick: () => goto(id) }, text);
  const block = model.blocks[op.block];
  return h("div", { "data-detail": op.id },
    h("h4", {}, `${op.type}  `, h("span", { class: "pd-comment" }, `${block.path} > op ${op.index}`)),
    h("div", {}, op.comment),
    h("h5", {}, "Inputs"), slotTable(op.inputs, model.user_names),
    h("h5", {}, "Outputs"), slotTable(op.outputs, model.user_names),
    h("h5", {}, "Attributes"),
    Object.keys(op.attrs).length
      ? h("table", {}, Object.entries(op.attrs).map(([k, v]) =>
        h("tr", {}, h("td", {}, k), h("td", {}, v))))
      : h("div", { class: "pd-empty" }, "none"),
    op.sub_blocks.length ? [h("h5", {}, "Runs"), h("div", {}, op.sub_blocks.map((s) =>
      h("div", {}, `block ${s}`)))] : null,
    op.forward_op ? [h("h5", {}, "Gradient of"),
      h("div", { class: "pd-fwd-link-row" },
        h("span", { class: "pd-link pd-fwd-link", "data-goto": op.forward_op.id,
                    onclick: () => goto(op.forward_op.id) },
          `${op.forward_op.id} ${model.blocks[op.forward_op.block].ops[op.forward_op.index].type}`))]
      : null,
    grads.length ? [h("h5", {}, "Differentiated by"),
      h("div", {}, grads.map((g) => h("div", {}, link(g.id, `${g.id} ${g.type}`))))] : null,
    h("h5", {}, "Created at"),
    h("div", { class: "pd-created" + (op.created_at ? "" : " pd-empty") },
      op.created_at || op.created_note),
    // the OpProto's slots, attributes, kernels and gradient (its comment is at the top)
    h("h5", {}, "OpProto"),
    h("pre", { class: "pd-doc" }, op.doc || "(not registered)"));
}

function render({ model, el }) {
  const folded = new Set();        // blocks whose variable declarations are hidden
  const seen = new Set();          // blocks drawn before (their fold state is the user's)
  const root = h("div", { class: "pd-widget pd-program" });
  const tabs = h("div", { class: "pd-tabs" },
    h("button", { class: "pd-tab", "data-tab": "code" }, "Code"),
    h("button", { class: "pd-tab", "data-tab": "graph" }, "Graph"));
  const code = h("div", { class: "pd-code" });
  const graph = h("div", { class: "pd-graph pd-hidden" });
  const detail = h("div", { class: "pd-detail" });
  root.append(tabs, h("div", { class: "pd-program-body" }, code, graph, detail));
  el.append(root);

  const getOp = (pair) => {
    const m = model.get("model");
    if (!pair || pair.length !== 2 || !m.blocks) return null;
    const b = m.blocks[pair[0]];
    return b ? b.ops[pair[1]] || null : null;
  };
  // Selecting shows the op in the detail pane (next to either tab) and scrolls to it.
  const select = (id) => {
    const [b, i] = id.slice(1).split(":").map(Number);
    model.set("selected", [b, i]);
    model.save_changes();
    reveal(code, code.querySelector(`[data-op="${id}"]`));
  };

  // The classes that move (current, selected, breakpoints, running) are set on the
  // existing lines, so stepping does not redraw the program.
  const idOf = (name) => {
    const pair = model.get(name);
    return pair && pair.length === 2 ? opId(pair[0], pair[1]) : null;
  };
  function mark() {
    // the op that runs next is the current line; the one that ran last is marked apart
    const marks = { "pd-current": idOf("next_op"), "pd-last-run": idOf("highlight"),
                    "pd-failed": idOf("failed"), "pd-selected": idOf("selected") };
    const bps = new Set((model.get("breakpoints") || []).map(([b, i]) => opId(b, i)));
    const running = new Set(model.get("running") || []);
    for (const line of root.querySelectorAll("[data-op]")) {
      const id = line.dataset.op;
      for (const [cls, markId] of Object.entries(marks)) line.classList.toggle(cls, id === markId);
      line.classList.toggle("pd-bp", bps.has(id));
      line.classList.toggle("pd-running", running.has(id));
    }
    for (const node of graph.querySelectorAll("g.node")) {
      for (const [cls, markId] of Object.entries(marks)) {
        node.classList.toggle(cls, node.id === markId);
      }
    }
    // an op hidden in a collapsed block or group: mark the node drawn for it
    for (const cls of ["pd-current", "pd-last-run", "pd-failed"]) {
      const id = marks[cls];
      if (!id || graph.querySelector(`g.node[id="${id}"]`)) continue;
      for (const g of model.get("graph_groups") || []) {
        const node = g.collapsed && (g.ops || []).includes(id)
          && graph.querySelector(`g.node[id="${g.node}"]`);
        if (node) { node.classList.add(cls); break; }
      }
    }
    const shown = marks["pd-current"] || marks["pd-failed"] || marks["pd-last-run"];
    if (shown) reveal(code, code.querySelector(`[data-op="${shown}"]`));
  }

  function drawDetail() {
    detail.replaceChildren(detailEl(model.get("model"), getOp(model.get("selected")), select));
  }

  function drawCode() {
    const m = model.get("model");
    // Long declaration lists (a training program's gradients) start folded, once.
    for (const b of (m && m.blocks) || []) {
      if (!seen.has(b.idx) && b.vars.length > FOLD_OVER) folded.add(b.idx);
      seen.add(b.idx);
    }
    code.replaceChildren(m && m.blocks ? codeEl(m, folded) : h("div", { class: "pd-empty" }, "no program"));
    root.classList.toggle("pd-debug", !!model.get("debug"));
    mark();
  }

  // The graph starts fitted to the pane's width (never enlarged); "actual size" shows it
  // as graphviz drew it, scrolled, for a big program whose fitted labels are too small.
  let actualSize = false;
  function fitGraph() {
    const svg = graph.querySelector("svg");
    const button = graph.querySelector(".pd-graph-fit");
    if (!svg || !button) return;
    svg.style.width = actualSize ? "" : "100%";
    svg.style.height = actualSize ? "" : "auto";
    svg.style.maxWidth = actualSize ? "none" : svg.getAttribute("width");
    button.textContent = actualSize ? "fit to width" : "actual size";
  }

  let groupsOpen = false;          // the toggles' list stays open across redraws
  const setCollapsed = (keys) => { model.set("collapsed", keys); model.save_changes(); };

  /** The bar's toggles: every block and group that can collapse, ticked when it is. */
  function groupsEl() {
    const groups = model.get("graph_groups") || [];
    if (!groups.length) return null;
    const shut = groups.filter((g) => g.collapsed).length;
    return h("details", { class: "pd-graph-groups", open: groupsOpen,
                          ontoggle: (e) => { groupsOpen = e.target.open; } },
      h("summary", {}, `${shut} of ${groups.length} collapsed`),
      h("button", { class: "pd-btn pd-graph-expand-all", onclick: () => setCollapsed([]) },
        "expand all"),
      h("button", { class: "pd-btn pd-graph-collapse-all",
                    onclick: () => setCollapsed(groups.map((g) => g.key)) }, "collapse all"),
      groups.map((g, i) => h("label", { class: "pd-graph-toggle", "data-group": i },
        h("input", { type: "checkbox", checked: g.collapsed, onchange: () => {
          const keys = model.get("collapsed") || [];
          setCollapsed(g.collapsed ? keys.filter((k) => k !== g.key) : [...keys, g.key]);
        } }), g.label)));
  }

  function drawGraph() {
    const svg = model.get("svg");
    if (svg) {
      graph.innerHTML = svg;     // made by graphviz from our own program
      graph.prepend(h("div", { class: "pd-graph-bar" },
        h("button", { class: "pd-btn pd-graph-fit",
                      onclick: () => { actualSize = !actualSize; fitGraph(); } }),
        groupsEl()));
      fitGraph();
    } else graph.replaceChildren(h("div", { class: "pd-empty" }, "graphviz's dot is not installed; "
      + "the graph as text:"), h("pre", { class: "pd-graph-text" }, model.get("graph_text")));
    mark();
  }

  function showTab() {
    const tab = model.get("tab") || "code";
    for (const b of tabs.children) b.classList.toggle("pd-tab-active", b.dataset.tab === tab);
    code.classList.toggle("pd-hidden", tab !== "code");
    graph.classList.toggle("pd-hidden", tab !== "graph");
    reveal(code, code.querySelector(".pd-op.pd-selected"));   // what the graph selected
  }

  // One listener per pane handles all clicks in it (lines are redrawn, listeners stay).
  code.addEventListener("click", (e) => {
    const fold = e.target.closest("[data-fold]");
    if (fold) {
      const idx = Number(fold.dataset.fold);
      folded.has(idx) ? folded.delete(idx) : folded.add(idx);
      drawCode();
      return;
    }
    const line = e.target.closest("[data-op]");
    if (!line) return;
    if (e.target.closest(".pd-gutter") && model.get("debug")) {
      model.send({ cmd: "toggle_breakpoint", block: Number(line.dataset.block),
                   index: Number(line.dataset.index) });
      return;
    }
    select(line.dataset.op);
  });
  graph.addEventListener("click", (e) => {
    const groups = model.get("graph_groups") || [];
    const keys = model.get("collapsed") || [];
    const node = e.target.closest("g.node");
    if (node) {
      const hit = groups.filter((g) => g.collapsed && g.node === node.id).map((g) => g.key);
      if (hit.length) setCollapsed(keys.filter((k) => !hit.includes(k)));
      if (/^b\d+:\d+$/.test(node.id)) select(node.id);
      return;
    }
    const cluster = e.target.tagName === "text" ? e.target.closest("g.cluster") : null;
    const open = cluster ? groups.filter((g) => !g.collapsed && g.cluster === cluster.id) : [];
    if (open.length) setCollapsed([...keys, ...open.map((g) => g.key)]);
  });
  // a double click on an op's node shows it in the code
  graph.addEventListener("dblclick", (e) => {
    const node = e.target.closest("g.node");
    if (node && /^b\d+:\d+$/.test(node.id)) { model.set("tab", "code"); model.save_changes(); }
  });
  tabs.addEventListener("click", (e) => {
    const tab = e.target.closest("[data-tab]");
    if (tab) { model.set("tab", tab.dataset.tab); model.save_changes(); }
  });

  const listeners = {
    "change:model": () => { drawCode(); drawDetail(); },
    "change:svg change:graph_text change:graph_groups": drawGraph,
    "change:selected": () => { mark(); drawDetail(); },
    "change:highlight change:next_op change:failed change:breakpoints change:running": mark,
    "change:debug": drawCode,
    "change:tab": showTab,
  };
  for (const [ev, fn] of Object.entries(listeners)) model.on(ev, fn);
  drawCode(); drawGraph(); drawDetail(); showTab();
  return () => { for (const [ev, fn] of Object.entries(listeners)) model.off(ev, fn); };
}

export default { render };
