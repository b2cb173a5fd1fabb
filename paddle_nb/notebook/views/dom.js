// Shared by every view: the two element builders the drawing code is written with.
// widgets.py puts this file in front of each view's module (anywidget loads a module from
// text, where a relative import has nothing to resolve against).

/** document.createElement with attributes and children; "on<event>" attributes listen. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes; children are nodes, or one string as its text. */
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) {
    if (c === null || c === undefined) continue;
    if (c instanceof Node) el.append(c);
    else el.textContent = String(c);
  }
  return el;
}
