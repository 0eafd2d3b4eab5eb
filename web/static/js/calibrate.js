// Calibration wizard: click the four board corners on a frozen frame, sample colours, check.
import { control, getJSON, reportError, toast } from "./api.js";

const $ = (id) => document.getElementById(id);
// Which corner is which: the board's own corners (the diagram draws corner 0 top-left), not
// the picture's, since the camera may see the board turned; where the referee found the board
// the picture is labelled with them.
const CORNER_NAMES = {
  dition: ["corner 0 (diagram's top-left)", "corner 1 (diagram's top-right)",
    "corner 2 (diagram's bottom-right)", "corner 3 (diagram's bottom-left)"],
  domination: ["the corner by a8", "the corner by h8", "the corner by h1", "the corner by a1"],
};
const CORNER_LABELS = { dition: ["0", "1", "2", "3"], domination: ["a8", "h8", "h1", "a1"] };
let corners = [];
let currentCorners = null;  // what the referee uses now (state.board.corners_px)
let frameUrl = null;

function game() { return $("cal-game").value; }

function drawMarks() {
  const img = $("cal-image");
  const svg = $("cal-marks");
  const w = img.naturalWidth || 1, h = img.naturalHeight || 1;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const r = Math.max(w, h) / 90;
  let html = "";
  if (currentCorners && currentCorners.length === 4) {
    html += `<polygon class="current" points="${currentCorners.map((p) => p.join(",")).join(" ")}" stroke-width="${r / 4}"/>`;
    // label each corner as the referee found it, pushed outwards from the board's centre
    const cx = currentCorners.reduce((a, p) => a + p[0], 0) / 4;
    const cy = currentCorners.reduce((a, p) => a + p[1], 0) / 4;
    currentCorners.forEach(([x, y], i) => {
      const d = Math.hypot(x - cx, y - cy) || 1;
      const lx = x - (x - cx) / d * r * 4, ly = y - (y - cy) / d * r * 4 + r * 1.6;  // just inside
      html += `<text class="corner-label" x="${lx}" y="${ly}" font-size="${r * 4.5}" stroke-width="${r / 2}" text-anchor="middle">${CORNER_LABELS[game()][i]}</text>`;
    });
  }
  if (corners.length >= 3) html += `<polygon points="${corners.map((p) => p.join(",")).join(" ")}" stroke-width="${r / 4}"/>`;
  corners.forEach(([x, y], i) => {
    html += `<circle cx="${x}" cy="${y}" r="${r}" stroke-width="${r / 3}"/>` +
      `<text x="${x + r * 1.3}" y="${y - r * 1.3}" font-size="${r * 2.6}" stroke-width="${r / 3}">${i}</text>`;
  });
  svg.innerHTML = html;
  drawTarget();
  const names = CORNER_NAMES[game()];
  $("corner-names").textContent = names.join(", ");
  $("cal-hint").textContent = corners.length < 4
    ? `Click ${names[corners.length]}`
    : "Four corners set: use them, or clear and click again";
  $("cal-send").disabled = corners.length !== 4;
}

async function freeze() {
  try {
    const response = await fetch(`/api/frame.jpg?overlay=0&t=${Date.now()}`, { cache: "no-store" });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.message || `no frame (${response.status})`);
    }
    const blob = await response.blob();
    if (frameUrl) URL.revokeObjectURL(frameUrl);
    frameUrl = URL.createObjectURL(blob);
    const img = $("cal-image");
    img.onload = () => { img.hidden = false; $("cal-missing").hidden = true; drawMarks(); };
    img.src = frameUrl;
    corners = [];
  } catch (err) {
    reportError(err);
  }
}

function showCheck(state) {
  const dl = $("cal-check");
  dl.innerHTML = "";
  const board = state.board && state.board.corners_px;
  const rows = {
    board: board ? "found in the current frame" : "not found yet",
    ...(board ? { "corners px": board } : {}),
    camera: state.camera ? `${state.camera.state}, ${state.camera.fps} fps, ${state.camera.dropped} dropped` : "?",
    ...(state.calibration || { calibration: "none loaded: corners and colours from this page or the markers" }),
  };
  for (const [key, value] of Object.entries(rows)) {
    const dt = document.createElement("dt");
    dt.textContent = key.replace(/_/g, " ");
    const dd = document.createElement("dd");
    dd.textContent = typeof value === "number" ? (Number.isInteger(value) ? String(value) : value.toFixed(3))
      : (typeof value === "string" ? value : JSON.stringify(value, (k, v) => typeof v === "number" && !Number.isInteger(v) ? Math.round(v * 100) / 100 : v));
    dl.append(dt, dd);
  }
}

async function refreshCheck() {
  const state = await getJSON("/api/state");
  if (state.game) $("cal-game").value = state.game;
  showCheck(state);
  currentCorners = state.board && state.board.corners_px ? state.board.corners_px : null;
  drawMarks();
}

$("cal-image").addEventListener("click", (event) => {
  if (corners.length >= 4) return;
  const img = event.currentTarget;
  const rect = img.getBoundingClientRect();
  const x = (event.clientX - rect.left) * img.naturalWidth / rect.width;
  const y = (event.clientY - rect.top) * img.naturalHeight / rect.height;
  corners.push([Math.round(x * 10) / 10, Math.round(y * 10) / 10]);
  drawMarks();
});
$("cal-freeze").addEventListener("click", freeze);
$("cal-reset").addEventListener("click", () => { corners = []; drawMarks(); });
$("cal-game").addEventListener("change", drawMarks);
$("cal-send").addEventListener("click", async () => {
  try {
    await control("set_corners", { corners_px: corners, game: game() });
    toast("Corners set", "ok");
    await refreshCheck();
  } catch (err) { reportError(err); }
});
$("cal-sample").addEventListener("click", async () => {
  try {
    await control("sample_colours", {});
    toast("Colours sampled", "ok");
    await refreshCheck();
  } catch (err) { reportError(err); }
});

let targetCorners = [];  // the calibration target's corners in the frozen frame
$("cal-photo").addEventListener("click", async () => {
  const status = $("cal-photo-status");
  setLive(true);  // between photos, the target is shown live
  try {
    await freeze();  // the frame shown is the one the referee has now
    const result = await control("capture_photo", {});
    const events = (result.result || result).events || [];
    const event = events.find((e) => e.type === "calibration") || {};
    targetCorners = event.corners_px || [];
    status.textContent = event.text || "Photo saved";
    drawTarget();
  } catch (err) {
    targetCorners = [];
    drawTarget();
    status.textContent = err.message;
  }
});

function drawTarget() {
  const svg = $("cal-marks");
  svg.querySelectorAll(".target").forEach((el) => el.remove());
  const img = $("cal-image");
  const r = Math.max(img.naturalWidth || 1, img.naturalHeight || 1) / 220;
  for (const [x, y] of targetCorners) {
    const dot = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    dot.setAttribute("class", "target");
    dot.setAttribute("cx", x); dot.setAttribute("cy", y); dot.setAttribute("r", r);
    dot.setAttribute("fill", "none"); dot.setAttribute("stroke", "#1db954");
    dot.setAttribute("stroke-width", r / 2);
    svg.appendChild(dot);
  }
}

// The live target: the camera picture at the width shown and the target's corners found in
// the latest frame, refreshed ~2.5 times a second while "Watch the target live" is on and the
// page is visible (the referee detects it only while someone asks, on a reduced picture).
const LIVE_PERIOD_MS = 400;
let live = false;
let liveUrl = null;

function drawLive(target) {
  const svg = $("cal-live-marks");
  const [w, h] = target.image_size;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.classList.toggle("ready", Boolean(target.ready));
  const r = Math.max(w, h) / 150;
  svg.innerHTML = target.corners_px.map(([x, y]) =>
    `<circle class="live-corner" cx="${x}" cy="${y}" r="${r}" stroke-width="${r / 2}"/>`).join("");
  const status = $("cal-live-status");
  status.hidden = false;
  status.textContent = target.text;
}

async function liveStep() {
  const img = $("cal-live");
  const shown = Math.round((img.parentElement.clientWidth || 640) * (window.devicePixelRatio || 1));
  const [picture, target] = await Promise.all([
    fetch(`/api/frame.jpg?overlay=0&w=${Math.max(320, shown)}&t=${Date.now()}`, { cache: "no-store" }),
    getJSON("/api/calibration/target"),
  ]);
  if (picture.ok) {
    const url = URL.createObjectURL(await picture.blob());
    img.onload = () => { if (liveUrl) URL.revokeObjectURL(liveUrl); liveUrl = url; };
    img.src = url;
  }
  drawLive(target);
}

async function liveLoop() {
  while (live) {
    if (!document.hidden) {
      try { await liveStep(); } catch (err) {
        $("cal-live-status").hidden = false;
        $("cal-live-status").textContent = err.message;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, LIVE_PERIOD_MS));
  }
}

function setLive(on) {
  if (on === live) return;
  live = on;
  const button = $("cal-live-toggle");
  button.setAttribute("aria-pressed", String(on));
  button.textContent = on ? "Stop watching" : "Watch the target live";
  $("cal-live-frame").hidden = !on;
  $("cal-live-status").hidden = !on;
  if (on) liveLoop();
}

$("cal-live-toggle").addEventListener("click", () => setLive(!live));

drawMarks();
freeze();
refreshCheck().catch(reportError);
