// The live page: verdict pushed by Server-Sent Events, board diagram, camera, controls.
import { control, getJSON, reportError, toast } from "./api.js";
import { renderDiagram, renderPlayers, boardPoint, cellAt, dangerLegend, PLAYER_NAMES, PIECE_COLOURS, playerName } from "./diagram.js";
import { sound } from "./sound.js";

const $ = (id) => document.getElementById(id);
const KIND_TITLES = {
  info: "Referee", remove: "Remove", capture: "Capture", sacrifice: "Sacrifice", suicide: "Suicide",
  over: "Game over", warning: "Check", error: "Problem", question: "Question",
};
const STATUS_TITLES = {
  waiting: "Waiting", settling: "Watching…", instruction: "Referee", question: "Question",
  paused: "Paused", camera_lost: "Camera lost", over: "Game over",
};
const SOUND_KINDS = new Set(["suicide", "over", "error"]);
// [option id, label, variant sent, players ticked]
const VARIANTS = {
  dition: [["standard", "Standard", "standard", ["black", "white"]]],
  domination: [
    ["standard-2", "2 players", "standard", ["G", "R"]],
    ["fast-2", "2 players, fast (first capture wins)", "fast", ["G", "R"]],
    ["standard-3", "3 players", "standard", ["G", "R", "B"]],
    ["standard-4", "4 players, partners opposite", "standard", ["G", "R", "B", "Y"]],
  ],
};

let current = null;           // the last state received
let lastSoundKey = null;      // instruction already announced
let gameOverDismissed = null; // match id whose game-over screen was closed
const view = { range: false, danger: false, correct: false, rangeFor: [], turns: 0,
  // quarter turns a player added (to see the board from their side), kept on this phone
  extraTurns: Number(localStorage.getItem("referee.turns") || 0) % 4 };

// ---------------------------------------------------------------------------- render
function instructionKey(state) {
  const ins = state.instruction || {};
  return `${state.match_id}|${state.move_number}|${ins.kind}|${ins.text}`;
}

function render(state) {
  const previous = current;
  current = state;
  window.refereeState = state;
  const ins = state.instruction || { kind: "info", text: "" };
  const kind = state.status === "over" ? "over" : (ins.kind || "info");
  const verdict = $("verdict");
  const text = ins.text || "";
  verdict.className = `verdict kind-${kind} status-${state.status}` +
    (text.length > 160 ? " verdict-longer" : text.length > 70 ? " verdict-long" : "");
  const kindEl = $("verdict-kind");
  kindEl.textContent = state.status === "instruction" || state.status === "over"
    ? (KIND_TITLES[kind] || kind)
    : (state.status === "waiting" && state.to_move ? `${playerName(state.to_move)} to move`
      : (STATUS_TITLES[state.status] || state.status));
  if (state.status === "waiting" && state.to_move) {  // whose move, by name and colour
    const dot = document.createElement("i");
    dot.className = `swatch swatch-${state.to_move}`;
    if (PIECE_COLOURS[state.to_move]) dot.style.background = PIECE_COLOURS[state.to_move];
    kindEl.prepend(dot);
  }
  $("verdict-text").textContent = ins.text || STATUS_TITLES[state.status] || "";

  const game = state.game ? state.game[0].toUpperCase() + state.game.slice(1) : "—";
  $("status-game").textContent = state.match_id != null
    ? `${game} · match ${state.match_id}${state.variant && state.variant !== "standard" ? " · " + state.variant : ""}`
    : `${game} · no match`;
  $("status-move").textContent = state.to_move
    ? `Move ${state.move_number} · ${PLAYER_NAMES[state.to_move] || state.to_move} to move` : "";
  const cam = state.camera || {};
  const camEl = $("status-camera");
  camEl.textContent = cam.state === "ok" ? `camera ${cam.fps != null ? cam.fps.toFixed(1) + " fps" : "ok"}` : `camera ${cam.state || "?"}`;
  camEl.className = `pill ${cam.state === "ok" ? "on" : "off"}`;
  const log = state.log || { ok: true };
  $("log-fault").hidden = log.ok !== false;
  $("log-fault").textContent = log.ok === false ? log.message : "";
  const exposure = state.exposure;
  $("camera-advice").hidden = !exposure;
  $("camera-advice").textContent = exposure ? exposure.text : "";
  const club = state.club;
  $("status-club").hidden = !club;
  if (club) {
    $("status-club").textContent = club.text;
    $("status-club").className = `pill club-line ${club.state === "connected" ? "on" : "off"}`;
    $("status-club").title = club.error || `Reporting to the club as table ${club.table}`;
  }
  $("pause-btn").textContent = state.status === "paused" ? "Resume" : "Pause";
  $("pause-btn").dataset.command = state.status === "paused" ? "resume" : "pause";

  renderQuestion(state.question, ins.text);
  drawBoard();
  renderPlayers($("players"), state);
  renderEvents(state.events || []);
  $("opt-danger-wrap").hidden = state.game !== "dition";
  $("opt-range-wrap").hidden = state.game !== "dition";

  const key = instructionKey(state);
  if (previous && key !== lastSoundKey && SOUND_KINDS.has(kind)) sound.play(kind);
  lastSoundKey = key;

  const over = state.status === "over";
  $("game-over").hidden = !over || gameOverDismissed === state.match_id;
  if (over) {
    const w = state.winner;
    $("game-over-title").textContent = w ? `${playerName(w)} win${w.includes("+") ? "" : "s"}` : "Draw";
    $("game-over-text").textContent = ins.text || "";
  }
}

function drawBoard() {
  if (!current) return;
  const camera = (current.view && current.view.quarter_turns) || 0;
  view.turns = camera + view.extraTurns;
  $("opt-turn").textContent = view.extraTurns ? `${90 * view.extraTurns}°` : "turn";
  $("opt-turn").title = "Turn the diagram a quarter turn (to see it from your side of the table)";
  renderDiagram($("diagram"), current, view);
  const legend = $("diagram-legend");
  legend.innerHTML = "";
  if (view.danger && current.danger) {
    for (const item of dangerLegend(current.danger)) {
      const span = document.createElement("span");
      span.innerHTML = `<i style="background:rgb(${item.rgb.join(",")})"></i>${item.name}`;
      legend.appendChild(span);
    }
  }
  if ((current.borderline || []).length) {
    const span = document.createElement("span");
    span.innerHTML = `<i class="borderline-key"></i>borderline: measure these`;
    legend.appendChild(span);
  }
}

function renderQuestion(question, verdictText) {
  const box = $("question");
  if (!question) { box.hidden = true; box.dataset.id = ""; return; }
  box.hidden = false;
  if (box.dataset.id === question.id) return;
  box.dataset.id = question.id;
  $("question-text").textContent = question.text || "Which is it?";
  $("question-text").hidden = question.text === verdictText;  // already in large type above
  const choices = $("question-choices");
  choices.innerHTML = "";
  for (const choice of question.choices || []) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn choice";
    b.textContent = choice.label || choice.id;
    b.dataset.choice = choice.id;
    b.addEventListener("click", () => send("answer", { question_id: question.id, choice: choice.id }));
    choices.appendChild(b);
  }
}

function describe(event) {
  if (event.text) return event.text;
  if (event.type === "move") {
    const who = PLAYER_NAMES[event.colour] || event.colour || "";
    if (typeof event.x === "number") return `${who} placed at (${event.x.toFixed(1)}, ${event.y.toFixed(1)})${event.outcome && event.outcome !== "quiet" ? " · " + event.outcome : ""}`;
    const m = event.move || {};
    if (m.place) return `${who} placed a reserve piece on ${m.place}`;
    if (m.from) return `${who} moved ${m.count || 1} from ${m.from} to ${m.to}`;
  }
  return event.type.replace(/_/g, " ");
}

function renderEvents(events) {
  const list = $("events");
  list.innerHTML = "";
  for (const event of [...events].reverse().slice(0, 8)) {
    const li = document.createElement("li");
    li.value = event.seq;
    li.innerHTML = `<span class="ev-seq"></span><span class="ev-type"></span><span class="ev-text"></span>`;
    li.children[0].textContent = String(event.seq);
    li.children[1].textContent = event.type.replace(/_/g, " ");
    li.children[2].textContent = describe(event);
    li.title = describe(event);
    list.appendChild(li);
  }
  if (!events.length) list.innerHTML = '<li class="muted">Nothing yet</li>';
}

// -------------------------------------------------------------------------- controls
async function send(name, payload = {}) {
  try {
    const result = await control(name, payload);
    if (name !== "answer") toast(`${name.replace(/_/g, " ")}: done`, "ok", 1500);
    return result;
  } catch (err) {
    reportError(err);
    return null;
  }
}

function initControls() {
  for (const b of document.querySelectorAll("[data-command]")) {
    b.addEventListener("click", () => {
      const message = b.dataset.confirm;
      if (message && !window.confirm(message)) return;
      send(b.dataset.command);
    });
  }
  const dialog = $("new-match-dialog");
  const open = () => {
    if (current && current.game) $("nm-game").value = current.game;
    fillVariants();
    $("nm-error").textContent = "";
    dialog.showModal();
  };
  $("new-match-btn").addEventListener("click", open);
  $("game-over-new").addEventListener("click", open);
  $("game-over-close").addEventListener("click", () => {
    gameOverDismissed = current && current.match_id;
    $("game-over").hidden = true;
  });
  $("nm-game").addEventListener("change", fillVariants);
  $("nm-variant").addEventListener("change", fillPlayers);
  $("new-match-form").addEventListener("submit", async (event) => {
    if (event.submitter && event.submitter.value === "cancel") return;
    event.preventDefault();
    const game = $("nm-game").value;
    const option = VARIANTS[game].find(([id]) => id === $("nm-variant").value) || VARIANTS[game][0];
    const variant = option[2];
    const players = [...document.querySelectorAll("#nm-player-list input:checked")].map((i) => i.value);
    const names = {};
    for (const input of document.querySelectorAll("#nm-player-list input.nm-name")) {
      if (players.includes(input.dataset.colour) && input.value.trim()) names[input.dataset.colour] = input.value.trim();
    }
    try {
      await control("new_match", { game, variant, players, names });
      gameOverDismissed = null;
      dialog.close();
    } catch (err) {
      $("nm-error").textContent = err.message;
    }
  });
}

function fillVariants() {
  const select = $("nm-variant");
  select.innerHTML = "";
  for (const [id, label] of VARIANTS[$("nm-game").value]) {
    const o = document.createElement("option");
    o.value = id; o.textContent = label;
    select.appendChild(o);
  }
  fillPlayers();
}

function fillPlayers() {
  const game = $("nm-game").value;
  const variant = VARIANTS[game].find(([id]) => id === $("nm-variant").value) || VARIANTS[game][0];
  const list = $("nm-player-list");
  list.innerHTML = "";
  const all = game === "dition" ? ["black", "white"] : ["G", "R", "B", "Y"];
  for (const p of all) {
    const label = document.createElement("label");
    label.className = `pick pick-${p}`;
    label.innerHTML = `<input type="checkbox" value="${p}"${variant[3].includes(p) ? " checked" : ""}${game === "dition" ? " disabled" : ""}> <span>${PLAYER_NAMES[p]}</span>`;
    const name = document.createElement("input");
    Object.assign(name, { type: "text", className: "nm-name", maxLength: 60, placeholder: "name (optional)" });
    name.dataset.colour = p;
    name.setAttribute("aria-label", `${PLAYER_NAMES[p]}'s name`);
    label.appendChild(name);
    list.appendChild(label);
  }
}

// ---------------------------------------------------------------- diagram interaction
function initDiagram() {
  const svg = $("diagram");
  $("opt-turn").addEventListener("click", () => {
    view.extraTurns = (view.extraTurns + 1) % 4;
    localStorage.setItem("referee.turns", String(view.extraTurns));
    drawBoard();
  });
  $("opt-range").addEventListener("change", (e) => { view.range = e.target.checked; drawBoard(); });
  $("opt-danger").addEventListener("change", (e) => { view.danger = e.target.checked; drawBoard(); });
  $("opt-correct").addEventListener("change", (e) => {
    view.correct = e.target.checked;
    svg.classList.toggle("correcting", view.correct);
    hidePopover();
    if (view.correct) toast("Tap a piece or a spot on the diagram to correct the reading", "info");
  });
  svg.addEventListener("click", (event) => {
    if (!current) return;
    const [x, y] = boardPoint(svg, event);
    if (view.correct) return openCorrection(event, x, y);
    if (current.game === "dition") {   // tap a disc: show its range circle
      const i = discAt(x, y);
      view.rangeFor = i == null ? [] : (view.rangeFor[0] === i ? [] : [i]);
      drawBoard();
    }
  });
}

function discAt(x, y) {
  const discs = (current.position && current.position.discs) || [];
  let best = null, bestD = 0.55;
  discs.forEach((d, i) => {
    const dist = Math.hypot(d.x - x, d.y - y);
    if (dist < bestD) { best = i; bestD = dist; }
  });
  return best;
}

function hidePopover() { $("correct-popover").hidden = true; }

function popover(event, title, buttons) {
  const pop = $("correct-popover");
  pop.innerHTML = "";
  const h = document.createElement("div");
  h.className = "popover-title";
  h.textContent = title;
  pop.appendChild(h);
  for (const [label, action] of buttons) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "btn small"; b.textContent = label;
    b.addEventListener("click", () => { hidePopover(); action(); });
    pop.appendChild(b);
  }
  const area = pop.parentElement.getBoundingClientRect();
  pop.hidden = false;
  const left = Math.min(Math.max(event.clientX - area.left - pop.offsetWidth / 2, 4), area.width - pop.offsetWidth - 4);
  pop.style.left = `${left}px`;
  pop.style.top = `${event.clientY - area.top + 12}px`;
}

function openCorrection(event, x, y) {
  if (current.game === "dition") {
    const i = discAt(x, y);
    const round = (v) => Math.round(v * 100) / 100;
    if (i != null) {
      const d = current.position.discs[i];
      const other = d.colour === "black" ? "white" : "black";
      popover(event, `${PLAYER_NAMES[d.colour]} disc at (${d.x.toFixed(1)}, ${d.y.toFixed(1)})`, [
        ["Not there: remove", () => send("correct", { remove: i })],
        [`It is ${other}`, () => send("correct", { index: i, colour: other })],
        ["Cancel", () => {}],
      ]);
    } else if (x >= 0.5 && x <= 19.5 && y >= 0.5 && y <= 19.5) {
      popover(event, `Missed disc at (${x.toFixed(1)}, ${y.toFixed(1)})?`, [
        ["Black here", () => send("correct", { add: { x: round(x), y: round(y), colour: "black" } })],
        ["White here", () => send("correct", { add: { x: round(x), y: round(y), colour: "white" } })],
        ["Cancel", () => {}],
      ]);
    }
  } else {
    const cell = cellAt(x, y);
    if (!cell) return;
    const stack = ((current.position || {}).stacks || {})[cell] || "";
    popover(event, `${cell}: ${stack || "empty"} (bottom → top)`, [
      ["Empty", () => send("correct", { cell, stack: "" })],
      ["Cancel", () => {}],
    ]);
    // the stack as it really is, bottom to top: letters of the players' colours
    const form = document.createElement("form");
    form.className = "stack-form";
    form.innerHTML = `<input type="text" name="stack" autocomplete="off" autocapitalize="characters"
      spellcheck="false" maxlength="20" pattern="[GRBYgrby]*" aria-label="Stack on ${cell}, bottom to top">
      <button class="btn small primary" type="submit">Set</button>`;
    const input = form.querySelector("input");
    input.value = stack;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      hidePopover();
      send("correct", { cell, stack: input.value.toUpperCase().replace(/[^GRBY]/g, "") });
    });
    const pop = $("correct-popover");
    pop.insertBefore(form, pop.children[1]);
    input.focus();
  }
}

// ------------------------------------------------------------------------------ camera
function initCamera() {
  const img = $("camera");
  const missing = $("camera-missing");
  let timer = null;
  const next = (delay) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (document.hidden) return next(1000);
      const overlay = $("opt-overlay").checked ? 1 : 0;
      // encoded at the size shown (a full-size encode for a third of it is wasted work)
      const width = Math.round((img.clientWidth || img.parentElement.clientWidth)
                               * (window.devicePixelRatio || 1));
      const size = width > 0 ? `&w=${width}` : "";
      img.src = `/api/frame.jpg?overlay=${overlay}${size}&t=${Date.now()}`;
    }, delay);
  };
  img.addEventListener("load", () => { img.hidden = false; missing.hidden = true; next(350); });
  img.addEventListener("error", () => { img.hidden = true; missing.hidden = false; next(2000); });
  $("opt-overlay").addEventListener("change", () => next(0));
  next(0);
}

// ------------------------------------------------------------------------------ joining
async function initJoin() {
  try {
    const info = await getJSON("/api/join");
    $("join-qr").innerHTML = info.qr_svg || "";
    $("join-qr").hidden = !info.qr_svg;
    const list = $("join-urls");
    list.innerHTML = "";
    for (const url of info.urls || []) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = url; a.textContent = url;
      li.appendChild(a);
      list.appendChild(li);
    }
    $("join-note").textContent = info.note || (info.mdns ? `or find "${info.mdns}" on the network` : "");
  } catch (err) {
    $("join-note").textContent = `Addresses unavailable: ${err.message}`;
  }
}

// ---------------------------------------------------------------------------- updates
function connect() {
  const link = $("status-link");
  const source = new EventSource("/api/events");
  source.addEventListener("open", () => { link.textContent = "live"; link.className = "pill on"; });
  source.addEventListener("state", (e) => {
    try { render(JSON.parse(e.data)); } catch (err) { console.error(err); }
  });
  source.addEventListener("error", () => { link.textContent = "reconnecting"; link.className = "pill off"; });
}

window.refereeRender = render;  // for debugging from the console: render(stateObject)
initControls();
initDiagram();
initCamera();
initJoin();
getJSON("/api/state").then(render).catch(reportError);
connect();
document.addEventListener("keydown", (e) => { if (e.key === "Escape") hidePopover(); });
