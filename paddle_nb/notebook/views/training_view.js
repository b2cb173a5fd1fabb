// TrainingView: the loss curve of a training loop, redrawn as Python appends points.
//
// Synced traits (TrainingView in paddle_nb/notebook/widgets.py):
//   steps, losses   two equally long lists (a loss may be null: NaN or infinite)
//   title           shown above the plot
//   scale           "auto" | "log" | "linear": the button next to the title sets it
//   log_y           plot log10(loss) (when every loss is positive); Python decides it from
//                   scale, and for "auto" from how many decades the losses span
//
// Stable hooks for browser tests: .pd-training svg.pd-loss-plot[data-points][data-log],
// polyline.pd-curve, .pd-last-value, .pd-scale-toggle.

function fmt(x) {
  if (x === null || x === undefined || !isFinite(x)) return "NaN";
  const a = Math.abs(x);
  return a !== 0 && (a >= 1e4 || a < 1e-3) ? x.toExponential(2) : String(Number(x.toPrecision(4)));
}

/** Up to ~5 round tick values between lo and hi. */
function ticks(lo, hi) {
  const span = hi - lo || 1;
  const step = Math.pow(10, Math.floor(Math.log10(span / 4)));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((st) => span / st <= 5) || span;
  const out = [];
  for (let t = Math.ceil(lo / nice) * nice; t <= hi + 1e-12; t += nice) out.push(t);
  return out;
}

/** Log-axis ticks (in log10 units): the powers of ten in [lo, hi], and 2x and 5x between
 *  them when the range spans too few decades to have two powers of ten. */
function logTicks(lo, hi) {
  const out = [];
  for (let d = Math.floor(lo); d <= Math.ceil(hi); d++) {
    for (const m of [1, 2, 5]) {
      const t = d + Math.log10(m);
      if (t >= lo - 1e-9 && t <= hi + 1e-9) out.push({ t, major: m === 1 });
    }
  }
  const majors = out.filter((o) => o.major);
  return (majors.length >= 2 ? majors : out).map((o) => o.t);
}

const TICK_CHAR_W = 6.2;   // px per character of a 10px monospace tick label

function render({ model, el }) {
  const W = 420, H = 200, L = 48, R = 12, T = 8, B = 24;
  const root = document.createElement("div");
  root.className = "pd-widget pd-training";
  const title = document.createElement("span");
  title.className = "pd-title";
  const toggle = document.createElement("button");
  toggle.className = "pd-btn pd-scale-toggle";
  toggle.title = "switch the loss axis between linear and logarithmic";
  // The page draws the choice at once (also in a saved notebook, without a kernel);
  // Python keeps it from then on instead of deciding "auto".
  toggle.addEventListener("click", () => {
    const log = !model.get("log_y");
    model.set("scale", log ? "log" : "linear");
    model.set("log_y", log);
    model.save_changes();
  });
  const head = document.createElement("div");
  head.className = "pd-training-head";
  head.append(title, toggle);
  const plot = s("svg", { class: "pd-loss-plot", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  root.append(head, plot);
  el.append(root);

  function draw() {
    const xs = model.get("steps") || [], ys0 = model.get("losses") || [];
    const positive = ys0.every((y) => y === null || y > 0);
    const log = model.get("log_y") && positive;
    toggle.textContent = log ? "log axis → linear" : "linear axis → log";
    toggle.style.display = positive && ys0.length ? "" : "none";
    const ys = ys0.map((y) => (y === null ? null : log ? Math.log10(y) : y));
    const last = ys0.length ? ys0[ys0.length - 1] : null;
    title.textContent = (model.get("title") || "loss") +
      (xs.length ? ` — step ${xs[xs.length - 1]}: ${fmt(last)}` : " — no points yet");
    plot.replaceChildren();
    plot.setAttribute("data-points", xs.length);
    plot.setAttribute("data-log", log ? "1" : "0");
    const pts = xs.map((x, i) => [x, ys[i]]).filter(([, y]) => y !== null && isFinite(y));
    if (!pts.length) return;
    const x0 = Math.min(...pts.map((p) => p[0])), x1 = Math.max(...pts.map((p) => p[0]));
    let y0 = Math.min(...pts.map((p) => p[1])), y1 = Math.max(...pts.map((p) => p[1]));
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    const sx = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
    const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    plot.append(s("line", { class: "pd-axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
                s("line", { class: "pd-axis", x1: L, y1: T, x2: L, y2: H - B }));
    for (const t of log ? logTicks(y0, y1) : ticks(y0, y1)) {
      plot.append(s("text", { class: "pd-tick", x: L - 4, y: sy(t) + 3, "text-anchor": "end" },
                    log ? fmt(Math.pow(10, t)) : fmt(t)));
    }
    for (const t of ticks(x0, x1)) {
      // A label centred on the last tick would stick out past the right edge (and be cut
      // off): it ends at the edge instead.
      const label = String(Math.round(t));
      const over = sx(t) + (label.length * TICK_CHAR_W) / 2 > W - 1;
      plot.append(s("text", { class: "pd-tick pd-xtick", x: over ? W - 1 : sx(t), y: H - B + 14,
                              "text-anchor": over ? "end" : "middle" }, label));
    }
    // Thousands of points would only blur: keep about one per horizontal pixel.
    const every = Math.max(1, Math.floor(pts.length / (W - L - R)));
    const shown = pts.filter((_, i) => i % every === 0 || i === pts.length - 1);
    plot.append(s("polyline", { class: "pd-curve",
      points: shown.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ") }));
    const [lx, ly] = pts[pts.length - 1];
    plot.append(s("circle", { class: "pd-last", cx: sx(lx), cy: sy(ly), r: 3 }));
    plot.append(s("text", { class: "pd-tick pd-last-value", x: sx(lx) - 5,
                            y: Math.max(sy(ly) - 6, T + 8), "text-anchor": "end" }, fmt(last)));
  }
  const events = ["change:steps", "change:losses", "change:title", "change:log_y"];
  for (const ev of events) model.on(ev, draw);
  draw();
  return () => { for (const ev of events) model.off(ev, draw); };
}

export default { render };
