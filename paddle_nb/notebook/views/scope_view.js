// ScopeView: the scope forest (scopes nest like the blocks that made them), each scope's
// own variables with kind, shape, dtype, stats and a small picture of the value that this
// module draws itself: a heatmap for a matrix, a sparkline for a vector.
//
// Synced trait (see paddle_nb/notebook/widgets.py):
//   model   scope_model(scope, changed, current=...): {root, current, num_scopes, changed}
//           (paddle_nb/notebook/scope_model.py); null numbers are NaN or infinite; a
//           variable's user_name is the notebook's name for it (x for minibatch_0), or null
//
// Stable hooks for browser tests: .pd-scope-node[data-scope="0/1"][data-scope-name="run"],
// .pd-scope-node.pd-current, .pd-svar[data-var="x"] (the program's name), .pd-user-name,
// .pd-changed, .pd-heatmap, .pd-sparkline, .pd-selected-rows .pd-rowstrip.

/** A short number: 3 significant digits, exponent form when very large or small. */
function fmt(x) {
  if (x === null || x === undefined) return "NaN";
  if (typeof x === "boolean") return String(x);
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(3)));
}

/** Value -> colour. Signed data get a diverging blue-white-red scale centred on 0,
 *  one-signed data a white-to-blue ramp; NaN is drawn in a loud magenta. */
function colourScale(values) {
  const finite = values.filter((v) => v !== null);
  const lo = Math.min(...finite), hi = Math.max(...finite);
  if (lo < 0 && hi > 0) {
    const m = Math.max(-lo, hi);
    return (v) => {
      if (v === null) return "#d63fb0";
      const t = v / m;  // -1 .. 1
      return t < 0 ? mix([255, 255, 255], [59, 110, 168], -t) : mix([255, 255, 255], [200, 80, 60], t);
    };
  }
  const span = hi - lo;      // a constant tensor gets the middle colour, not "all minimum"
  return (v) => (v === null ? "#d63fb0"
    : mix([247, 247, 245], [40, 90, 150], span ? (v - lo) / span : 0.5));
}
function mix(a, b, t) {
  const c = a.map((x, i) => Math.round(x + (b[i] - x) * Math.max(0, Math.min(1, t))));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function heatmap(p, size = 128) {
  const rows = p.data.length, cols = rows ? p.data[0].length : 0;
  const cell = Math.max(2, Math.min(12, Math.floor(size / Math.max(rows, cols, 1))));
  const colour = colourScale(p.data.flat());
  const svg = s("svg", { class: "pd-heatmap", width: cols * cell, height: rows * cell,
                         "data-rows": p.rows, "data-cols": p.cols });
  p.data.forEach((row, r) => row.forEach((v, c) => {
    const rect = s("rect", { x: c * cell, y: r * cell, width: cell, height: cell, fill: colour(v) });
    rect.append(s("title", {}, document.createTextNode(fmt(v))));
    svg.append(rect);
  }));
  const shrunk = p.rows > rows || p.cols > cols;
  svg.append(s("title", {}, document.createTextNode(
    `${p.rows}×${p.cols}` + (shrunk ? ` shown as ${rows}×${cols} block means` : ""))));
  return svg;
}

// An [N, C, H, W] tensor: the first image's channels side by side, each its own heatmap
// (each channel has its own colour scale: a feature map is read by its pattern).
function images(p) {
  const box = h("span", { class: "pd-images", "data-channels": p.channels });
  p.maps.forEach((data, k) => {
    const map = heatmap({ data, rows: p.rows, cols: p.cols }, 48);
    map.append(s("title", {}, document.createTextNode(`channel ${k} (${p.rows}×${p.cols})`)));
    box.append(map);
  });
  if (p.channels > p.maps.length) box.append(h("span", { class: "pd-vtext" }, `+${p.channels - p.maps.length}`));
  return box;
}

function sparkline(p) {
  const w = 120, hgt = 26, pad = 2, n = p.data.length;
  const finite = p.data.filter((v) => v !== null);
  const svg = s("svg", { class: "pd-sparkline", width: w, height: hgt, "data-length": p.length });
  if (!finite.length) return svg;
  const lo = Math.min(...finite), hi = Math.max(...finite), span = hi - lo || 1;
  const x = (i) => pad + (n === 1 ? (w - 2 * pad) / 2 : (i * (w - 2 * pad)) / (n - 1));
  const y = (v) => hgt - pad - ((v - lo) / span) * (hgt - 2 * pad);
  // A NaN breaks the line (and gets a red tick) rather than being skipped silently.
  let seg = [];
  const flush = () => {
    if (seg.length > 1) svg.append(s("polyline", { points: seg.join(" "), fill: "none",
      stroke: "#3b6ea8", "stroke-width": 1.3 }));
    if (seg.length === 1) { const [cx, cy] = seg[0].split(","); svg.append(s("circle", { cx, cy, r: 1.5, fill: "#3b6ea8" })); }
    seg = [];
  };
  p.data.forEach((v, i) => {
    if (v === null) { flush(); svg.append(s("line", { x1: x(i), x2: x(i), y1: 0, y2: hgt, stroke: "#c8423b" })); }
    else seg.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  flush();
  svg.append(s("title", {}, document.createTextNode(`${p.length} values, ${fmt(lo)} .. ${fmt(hi)}`)));
  return svg;
}

// A SelectedRows (an embedding's sparse gradient): a strip of the table's rows, each bin
// dark where the gradient touches a row in it, beside the picture of its value rows.
function rowStrip(p) {
  const bins = p.strip.length, cell = Math.max(1, Math.min(4, Math.floor(64 / Math.max(bins, 1))));
  const svg = s("svg", { class: "pd-rowstrip", width: 8, height: bins * cell, "data-height": p.height,
                         "data-touched": p.n_touched });
  p.strip.forEach((on, i) => svg.append(s("rect", { x: 0, y: i * cell, width: 8, height: cell,
    fill: on ? "#c8423b" : "#eeeeea" })));
  svg.append(s("title", {}, document.createTextNode(
    `${p.n_touched} of ${p.height} rows changed: ${p.touched.join(", ")}` +
    (p.n_touched > p.touched.length ? ", …" : ""))));
  return svg;
}

function previewEl(v) {
  const p = v.preview || { type: "empty" };
  switch (p.type) {
    case "selected_rows": return h("span", { class: "pd-selected-rows" }, rowStrip(p), " ",
                                   previewEl({ kind: "tensor", preview: p.value }));
    case "heatmap": return heatmap(p);
    case "images": return images(p);
    case "sparkline": return sparkline(p);
    case "scalar": return h("span", { class: "pd-vtext" }, fmt(p.value));
    case "array": return h("span", { class: "pd-vtext" }, `${p.length} tensors: ` +
      p.items.map((t) => (t ? `[${t.shape.join(", ")}]` : "∅")).join(" ") + (p.length > p.items.length ? " …" : ""));
    case "scopes": return h("span", { class: "pd-vtext" }, `${p.length} scopes: ${p.names.join(", ")}`);
    case "text": return h("span", { class: "pd-vtext" }, p.text);
    default: return h("span", { class: "pd-empty" }, v.kind === "empty" ? "(no value yet)" : "");
  }
}

/** The stats as [short text, its NaN / inf counts, the long form for the title]: "-0.5 to
 *  0.497, mean 0.00552" (or "all 0"), short enough to sit on the type's line ("" for none,
 *  or for a single value). */
function statsParts(st, v) {
  if (!st) return ["", "", ""];
  if (v.preview && v.preview.type === "scalar" && !st.nan && !st.inf) return ["", "", ""];
  const bad = (st.nan ? `  ${st.nan} NaN` : "") + (st.inf ? `  ${st.inf} inf` : "");
  const long = `min ${fmt(st.min)}  max ${fmt(st.max)}  mean ${fmt(st.mean)}`;
  if (st.min === null) return ["", bad, bad.trim()];             // no finite value
  const short = st.min === st.max ? `all ${fmt(st.min)}`
    : `${fmt(st.min)} to ${fmt(st.max)}, mean ${fmt(st.mean)}`;
  return [short, bad, long + bad];
}

/** The user's name first (what the %%paddle cell said), the program's name beside it. */
function nameEl(v) {
  if (!v.user_name) return v.name;
  return [h("span", { class: "pd-user-name", title: `${v.user_name} is ${v.name} in the program` },
            v.user_name), " ",
          h("span", { class: "pd-program-name" }, v.name)];
}
const shown = (v) => (v.user_name ? `${v.user_name} (${v.name})` : v.name);

/** One variable: its name, and under it type and stats on one line, then its picture and
 *  (for a few values) the numbers. The name and the type line are one line each, ending
 *  in an ellipsis where the pane is narrow (their titles hold the whole text); the
 *  picture and the numbers go under them when there is no room beside them. */
function varRow(v) {
  const type = v.kind === "tensor" ? `${v.dtype}[${v.shape.join(", ")}]`
    : v.kind === "selected_rows" ? `SelectedRows ${v.dtype}[${v.shape.join(", ")}]` : v.kind;
  const [stats, bad, long] = statsParts(v.stats, v);
  return h("div", { class: "pd-svar" + (v.changed ? " pd-changed" : "") +
                           (v.kind === "empty" ? " pd-empty-var" : ""), "data-var": v.name },
    h("div", { class: "pd-vname-cell" },
      h("div", { class: "pd-vname", title: shown(v) }, nameEl(v)),
      h("div", { class: "pd-vtype", title: [type, long].filter(Boolean).join("  ") },
        type, "  ", h("span", { class: "pd-stats" }, stats,
                      bad ? h("span", { class: "pd-nan" }, bad) : ""))),
    h("div", { class: "pd-preview" }, previewEl(v)),
    v.text && v.preview.type !== "scalar" ? h("div", { class: "pd-vtext pd-values" }, v.text)
      : null);
}

function render({ model, el }) {
  // Which scopes are open survives redraws (by id: the path of kid positions), so
  // stepping does not fold what the student opened.
  const open = new Map();
  let filter = "";
  const root = h("div", { class: "pd-widget pd-scope" });
  const info = h("span", {});
  const box = h("input", { class: "pd-filter", placeholder: "filter variables", type: "search" });
  const tree = h("div", { class: "pd-scope-tree" });
  root.append(h("div", { class: "pd-scope-toolbar" }, info, box), tree);
  el.append(root);

  function isOpen(node, depth, onPath) {
    if (open.has(node.id)) return open.get(node.id);
    return depth === 0 || onPath.has(node.id) || (depth === 1 && node.children.length < 4);
  }

  function nodeEl(node, depth, onPath) {
    const vars = node.vars.filter((v) => !filter || shown(v).toLowerCase().includes(filter));
    const expanded = isOpen(node, depth, onPath);
    const head = h("div", { class: "pd-scope-head", "data-toggle": node.id,
                             "data-open": expanded ? "1" : "0" },
      h("span", { class: "pd-toggle" }, expanded ? "▾" : "▸"),
      h("span", { class: "pd-scope-name" }, `Scope '${node.name}'`),
      h("span", { class: "pd-count" }, `${node.vars.length} vars` +
        (node.children.length ? `, ${node.children.length} kids` : "") +
        (node.hidden_vars ? ` (+${node.hidden_vars} not shown)` : "")),
      node.current ? h("span", { class: "pd-badge" }, "current") : null);
    const el = h("div", { class: "pd-scope-node" + (node.current ? " pd-current" : ""),
                          "data-scope": node.id, "data-scope-name": node.name }, head);
    if (expanded) {
      // Variables declared but not written yet go on one line: a run scope holds every
      // local of the block from the start, and a list of "(no value yet)" hides the rest.
      const set = vars.filter((v) => v.kind !== "empty");
      const unset = vars.filter((v) => v.kind === "empty");
      if (set.length) el.append(h("div", { class: "pd-vars-table" }, set.map(varRow)));
      if (unset.length) {
        el.append(h("div", { class: "pd-unset" }, "not written yet: ",
          unset.map((v, i) => [i ? ", " : "", h("span", { class: "pd-svar pd-empty-var",
                                                          "data-var": v.name }, shown(v))])));
      }
      for (const kid of node.children) el.append(nodeEl(kid, depth + 1, onPath));
    }
    return el;
  }

  function draw() {
    const m = model.get("model");
    if (!m || !m.root) { tree.replaceChildren(h("div", { class: "pd-empty" }, "no scope")); return; }
    // The current scope and its ancestors ("0", "0/1", "0/1/3") open by default.
    const onPath = new Set();
    if (m.current) m.current.split("/").forEach((_, i, parts) => onPath.add(parts.slice(0, i + 1).join("/")));
    // The user's names for what the last step wrote, where some scope's variable has one.
    const users = new Map();
    const collect = (n) => { n.vars.forEach((v) => v.user_name && users.set(v.name, v));
                             n.children.forEach(collect); };
    collect(m.root);
    const wrote = (m.changed || []).map((n) => (users.has(n) ? shown(users.get(n)) : n));
    info.textContent = `${m.num_scopes} scope${m.num_scopes === 1 ? "" : "s"}` +
      (wrote.length ? ` · last step wrote ${wrote.join(", ")}` : "");
    tree.replaceChildren(nodeEl(m.root, 0, onPath));
  }

  tree.addEventListener("click", (e) => {
    const head = e.target.closest("[data-toggle]");
    if (!head) return;
    open.set(head.dataset.toggle, head.dataset.open !== "1");
    draw();
  });
  box.addEventListener("input", () => { filter = box.value.trim().toLowerCase(); draw(); });
  model.on("change:model", draw);
  draw();
  return () => model.off("change:model", draw);
}

export default { render };
