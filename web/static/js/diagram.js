// The board diagram in SVG, drawn from a /api/state payload (or a replay event's position).
// Board frames follow DESIGN.md: Dition [0,20]^2 in disc diameters, x right, y down;
// Domination [0,8]^2 in cells, a8 top-left, cell (file f, rank r) centred at (f+.5, 8-r+.5).

const SVG_NS = "http://www.w3.org/2000/svg";
export const PIECE_COLOURS = { G: "#2f9e44", R: "#d0352b", B: "#2463c9", Y: "#e9c21c" };
export const PLAYER_NAMES = { G: "Green", R: "Red", B: "Blue", Y: "Yellow", black: "Black", white: "White" };
// the verdicts name these rings in words ("ringed in red"): referee/dition_match.py RING_WORDS
const ROLE_COLOURS = { remove: "#ff3b30", placed: "#34c759", wrong: "#ff9f0a", missing: "#ff9f0a", borderline: "#ffd60a", capture: "#ff3b30" };
const DANGER_COLOURS = {
  suicide: [255, 59, 48], sacrifice: [255, 159, 10], capture: [52, 199, 89],
  illegal: [90, 90, 90], occupied: [90, 90, 90], blocked: [90, 90, 90], safe: null, quiet: null,
};
const FILES = "abcdefgh";
const CUT_CELLS = new Set(["a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"]);

// "G+B" (a team) -> "Green & Blue"
export function playerName(p) {
  if (!p) return "";
  return String(p).split("+").map((x) => PLAYER_NAMES[x] || x).join(" & ");
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function cellCentre(cell) {
  const f = FILES.indexOf(cell[0]);
  const r = parseInt(cell.slice(1), 10);
  return [f + 0.5, 8 - r + 0.5];
}

export function cellAt(x, y) {
  const f = Math.floor(x);
  const row = Math.floor(y);
  if (f < 0 || f > 7 || row < 0 || row > 7) return null;
  const cell = `${FILES[f]}${8 - row}`;
  return CUT_CELLS.has(cell) ? null : cell;
}

function defs(svg) {
  const d = el("defs", {}, svg);
  for (const [id, colour] of [["arrow-move", "#0a84ff"], ["arrow-candidate", "#ffd60a"]]) {
    const marker = el("marker", { id, viewBox: "0 0 10 10", refX: "7", refY: "5",
      markerWidth: "4", markerHeight: "4", orient: "auto-start-reverse" }, d);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }, marker);
  }
}

function arrow(layer, from, to, kind, label) {
  const [x1, y1] = from, [x2, y2] = to;
  const len = Math.hypot(x2 - x1, y2 - y1) || 1;
  const shrink = 0.28;
  const ax = x1 + (x2 - x1) * shrink / len, ay = y1 + (y2 - y1) * shrink / len;
  const bx = x2 - (x2 - x1) * shrink / len, by = y2 - (y2 - y1) * shrink / len;
  el("line", { x1: ax, y1: ay, x2: bx, y2: by, class: `arrow ${kind}`,
    "marker-end": `url(#arrow-${kind})` }, layer);
  if (label) {
    const t = el("text", { x: (ax + bx) / 2, y: (ay + by) / 2 - 0.12, class: `arrow-label ${kind}` }, layer);
    t.textContent = label;
  }
}

// ---------------------------------------------------------------------------- Dition
function drawDition(svg, root, state, opts) {
  svg.setAttribute("viewBox", "-0.8 -0.8 21.6 21.6");
  el("rect", { x: -0.8, y: -0.8, width: 21.6, height: 21.6, class: "plate", rx: 0.3 }, root);
  if (opts.danger && state.danger) drawDanger(root, state.danger);
  el("rect", { x: 0, y: 0, width: 20, height: 20, class: "board-line" }, root);
  el("rect", { x: 3, y: 3, width: 14, height: 14, class: "board-line" }, root);
  const discs = (state.position && state.position.discs) || [];
  const rangeLayer = el("g", { class: "range-layer" }, root);
  const pairLayer = el("g", { class: "pairs" }, root);
  const discLayer = el("g", { class: "discs" }, root);
  const markLayer = el("g", { class: "marks" }, root);
  const showRange = new Set(opts.rangeFor || []);
  discs.forEach((d, i) => {
    if (opts.range || showRange.has(i)) {
      el("circle", { cx: d.x, cy: d.y, r: 1.5, class: `range ${d.colour}` }, rangeLayer);
    }
    const g = el("g", { class: `disc ${d.colour}`, "data-index": i }, discLayer);
    el("circle", { cx: d.x, cy: d.y, r: 0.5 }, g);
    el("circle", { cx: d.x, cy: d.y, r: 0.125, class: "dot" }, g);
  });
  for (const pair of state.borderline || []) {
    const [i, j, dist] = pair;
    const a = discs[i], b = discs[j];
    if (!a || !b) continue;
    el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "borderline-pair" }, pairLayer);
    const t = el("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 0.25, class: "pair-label" }, pairLayer);
    t.textContent = typeof dist === "number" ? dist.toFixed(2) : "?";
  }
  const last = state.last_move;
  if (last && typeof last.x === "number") {
    el("circle", { cx: last.x, cy: last.y, r: 0.78, class: "last-move" }, markLayer);
  }
  for (const h of highlights(state)) {
    if (typeof h.x !== "number") continue;
    const colour = ROLE_COLOURS[h.role] || "#fff";
    const onBoard = discs.some((d) => Math.hypot(d.x - h.x, d.y - h.y) < 0.25);
    if (!onBoard) {  // a disc the record no longer holds (to be removed, or misplaced): its ghost
      el("circle", { cx: h.x, cy: h.y, r: 0.5, class: `ghost ghost-${h.role}` }, markLayer);
    }
    el("circle", { cx: h.x, cy: h.y, r: 0.66, class: `hl hl-${h.role}`, stroke: colour }, markLayer);
    if (h.role === "remove") {
      const s = 0.3;
      el("path", { d: `M${h.x - s},${h.y - s} L${h.x + s},${h.y + s} M${h.x + s},${h.y - s} L${h.x - s},${h.y + s}`,
        class: "hl-cross", stroke: colour }, markLayer);
    }
  }
}

function dangerMeaning(codes, code) {
  if (!codes) return String(code);
  const v = codes[code] ?? codes[String(code)];
  if (v !== undefined) return String(v);
  for (const [name, c] of Object.entries(codes)) if (c === code) return name;  // {name: code}
  return String(code);
}

function drawDanger(svg, danger) {
  const grid = danger.grid || [];
  const rows = grid.length, cols = rows ? grid[0].length : 0;
  if (!rows || !cols) return;
  const res = danger.resolution || 20 / cols;
  const canvas = document.createElement("canvas");
  canvas.width = cols; canvas.height = rows;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(cols, rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const rgb = DANGER_COLOURS[dangerMeaning(danger.codes, grid[r][c]).toLowerCase()];
      const k = 4 * (r * cols + c);
      if (rgb) { img.data[k] = rgb[0]; img.data[k + 1] = rgb[1]; img.data[k + 2] = rgb[2]; img.data[k + 3] = 150; }
    }
  }
  ctx.putImageData(img, 0, 0);
  // grid[iy][ix] is the code of a disc centred at (x0 + ix*res, y0 + iy*res): each sample
  // covers the res x res square around its point
  const x0 = typeof danger.x0 === "number" ? danger.x0 : res / 2;
  const y0 = typeof danger.y0 === "number" ? danger.y0 : res / 2;
  el("image", { href: canvas.toDataURL(), x: x0 - res / 2, y: y0 - res / 2, width: cols * res, height: rows * res,
    preserveAspectRatio: "none", class: "danger" }, svg);
}

export function dangerLegend(danger) {
  if (!danger || !danger.codes) return [];
  const names = new Set();
  for (const row of danger.grid || []) for (const code of row) names.add(dangerMeaning(danger.codes, code).toLowerCase());
  return [...names].filter((n) => DANGER_COLOURS[n]).map((n) => ({ name: n, rgb: DANGER_COLOURS[n] }));
}

// ------------------------------------------------------------------------ Domination
function drawDomination(svg, root, state, opts) {
  svg.setAttribute("viewBox", "-0.6 -0.6 9.2 9.2");  // square about the board centre: it turns
  el("rect", { x: -0.6, y: -0.6, width: 9.2, height: 9.2, class: "plate", rx: 0.12 }, root);
  const cells = el("g", { class: "cells" }, root);
  for (let f = 0; f < 8; f++) {
    for (let row = 0; row < 8; row++) {
      const cell = `${FILES[f]}${8 - row}`;
      if (CUT_CELLS.has(cell)) continue;
      el("rect", { x: f, y: row, width: 1, height: 1, class: `cell ${(f + row) % 2 ? "odd" : "even"}`,
        "data-cell": cell }, cells);
    }
  }
  const labels = el("g", { class: "coords" }, root);
  for (let f = 0; f < 8; f++) {
    const t = el("text", { x: f + 0.5, y: 8.35 }, labels); t.textContent = FILES[f];
  }
  for (let row = 0; row < 8; row++) {
    const t = el("text", { x: -0.3, y: row + 0.6 }, labels); t.textContent = String(8 - row);
  }
  const position = state.position || {};
  const stacks = position.stacks || {};
  const pieces = el("g", { class: "stacks" }, root);
  for (const [cell, stack] of Object.entries(stacks)) {
    if (!stack || stack === ".") continue;
    const [cx, cy] = cellCentre(cell);
    const top = stack[stack.length - 1];
    const g = el("g", { class: "stack", "data-cell": cell }, pieces);
    el("circle", { cx: cx - 0.07, cy, r: 0.36, fill: PIECE_COLOURS[top] || "#888", class: "top" }, g);
    if (stack.length > 1) {
      const t = el("text", { x: cx - 0.07, y: cy + 0.14, class: "height" }, g);
      t.textContent = String(stack.length);
    }
    // the stack itself, bottom to top, as a column at the cell's right edge
    const slot = 0.16;
    [...stack].forEach((p, k) => {
      el("rect", { x: cx + 0.33, y: cy + 0.42 - (k + 1) * slot, width: 0.13, height: slot - 0.025,
        fill: PIECE_COLOURS[p] || "#888", class: "slot" }, g);
    });
  }
  const marks = el("g", { class: "marks" }, root);
  for (const h of highlights(state)) {
    if (!h.cell) continue;
    const [cx, cy] = cellCentre(h.cell);
    el("rect", { x: cx - 0.47, y: cy - 0.47, width: 0.94, height: 0.94, rx: 0.08,
      class: `hl hl-${h.role}`, stroke: ROLE_COLOURS[h.role] || "#fff" }, marks);
  }
  const last = state.last_move && (state.last_move.move || state.last_move);
  if (last && last.from && last.to) {
    arrow(marks, cellCentre(last.from), cellCentre(last.to), "move", last.count > 1 ? `×${last.count}` : "");
  } else if (last && last.place) {
    const [cx, cy] = cellCentre(last.place);
    el("circle", { cx: cx - 0.07, cy, r: 0.45, class: "last-move" }, marks);
  }
  const question = state.question;
  for (const a of (question && question.arrows) || []) {
    if (a.from && a.to) arrow(marks, cellCentre(a.from), cellCentre(a.to), "candidate", a.label || "");
  }
}

function highlights(state) {
  return (state.instruction && state.instruction.highlight) || [];
}

// Draw `state` into `svg`. opts: {range, rangeFor: [disc indices], danger, turns}
// turns: quarter turns clockwise, to show the board as the camera sees it (state.view) or from
// a player's side; the labels stay upright.
export function renderDiagram(svg, state, opts = {}) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.dataset.game = state.game || "";
  defs(svg);
  const root = el("g", { class: "view" }, svg);
  if (state.game === "domination") drawDomination(svg, root, state, opts);
  else drawDition(svg, root, state, opts);
  const turns = (((opts.turns || 0) % 4) + 4) % 4;
  svg.dataset.turns = String(turns);
  if (!turns) return;
  const c = state.game === "domination" ? 4 : 10;
  root.setAttribute("transform", `rotate(${90 * turns} ${c} ${c})`);
  for (const t of root.querySelectorAll("text")) {
    t.setAttribute("transform", `rotate(${-90 * turns} ${t.getAttribute("x")} ${t.getAttribute("y")})`);
  }
}

// Board coordinates of a pointer event on the diagram.
export function boardPoint(svg, event) {
  const pt = svg.createSVGPoint();
  pt.x = event.clientX; pt.y = event.clientY;
  const root = svg.querySelector("g.view") || svg;  // through the turn of the diagram
  const p = pt.matrixTransform(root.getScreenCTM().inverse());
  return [p.x, p.y];
}

// Reserves and captures per player (Domination), or disc counts (Dition).
export function renderPlayers(container, state) {
  container.innerHTML = "";
  const players = state.players || [];
  const position = state.position || {};
  for (const p of players) {
    const row = document.createElement("div");
    row.className = "player" + (state.to_move === p ? " to-move" : "");
    row.dataset.player = p;
    const swatch = document.createElement("span");
    swatch.className = `swatch swatch-${p}`;
    if (PIECE_COLOURS[p]) swatch.style.background = PIECE_COLOURS[p];
    const name = document.createElement("span");
    name.className = "player-name";
    name.textContent = PLAYER_NAMES[p] || p;
    const info = document.createElement("span");
    info.className = "player-info";
    if (state.game === "domination") {
      const reserve = (position.reserves || {})[p] ?? 0;
      const captured = (position.captured || {})[p] || {};
      const caps = Object.entries(captured).filter(([, n]) => n > 0)
        .map(([c, n]) => `<span class="cap"><i style="background:${PIECE_COLOURS[c] || "#888"}"></i>${n}</span>`).join("");
      info.innerHTML = `<span class="reserve" title="reserve">reserve ${reserve}</span>` +
        `<span class="captures" title="captured">${caps || '<span class="muted">no captures</span>'}</span>`;
    } else {
      const n = (position.discs || []).filter((d) => d.colour === p).length;
      info.textContent = `${n} disc${n === 1 ? "" : "s"} on the board`;
    }
    row.append(swatch, name, info);
    container.appendChild(row);
  }
}
