// Replay: step through a logged match's events with the snapshot and the diagram.
import { getJSON, reportError } from "./api.js";
import { renderDiagram, renderPlayers, PLAYER_NAMES } from "./diagram.js";

const $ = (id) => document.getElementById(id);
const matchId = Number($("replay").dataset.matchId);
let match = null;
let events = [];
let index = 0;

function highlightsFor(event) {
  if (Array.isArray(event.highlight)) return event.highlight;
  const out = [];
  if (event.type === "move" && typeof event.x === "number") out.push({ x: event.x, y: event.y, role: "placed" });
  for (const r of event.removed || []) {
    if (Array.isArray(r) && r.length === 2) out.push({ x: r[0], y: r[1], role: "remove" });
    else if (typeof r === "string" && /^[a-h][1-8]$/.test(r)) out.push({ cell: r, role: "remove" });
  }
  return out;
}

// A logged position: Dition {discs, to_move, ...}; Domination {state: {stacks, reserves, ...}}.
function normalise(position) {
  if (!position) return null;
  return position.state && typeof position.state === "object" ? position.state : position;
}

function positionAt(i) {
  for (let k = i; k >= 0; k--) if (events[k].position) return normalise(events[k].position);
  return normalise(match.start_position) || (match.game === "dition" ? { discs: [] } : { stacks: {} });
}

function kindOf(event) {
  if (event.type === "move") return event.outcome && event.outcome !== "quiet" ? event.outcome : "info";
  if (event.type === "end") return "over";
  if (["warning", "question"].includes(event.type)) return "warning";
  if (event.type === "error") return "error";
  return "info";
}

function describe(event) {
  if (event.text) return event.text;
  const who = PLAYER_NAMES[event.colour] || event.colour || "";
  if (event.type === "move") {
    if (typeof event.x === "number") {
      const n = (event.removed || []).length;
      return `${who} placed at (${event.x.toFixed(2)}, ${event.y.toFixed(2)})` +
        (event.outcome && event.outcome !== "quiet" ? ` · ${event.outcome}` : "") + (n ? ` · ${n} removed` : "");
    }
    const m = event.move || {};
    if (m.place) return `${who} placed a reserve piece on ${m.place}`;
    if (m.from) return `${who} moved ${m.count || 1} from ${m.from} to ${m.to}`;
  }
  return event.type.replace(/_/g, " ");
}

function show(i) {
  if (!events.length) return;
  index = Math.max(0, Math.min(events.length - 1, i));
  const event = events[index];
  $("step-slider").value = String(index);
  const kind = kindOf(event);
  $("replay-event").className = `verdict kind-${kind}`;
  $("replay-event-kind").textContent = `Event ${event.seq} of ${events[events.length - 1].seq} · ${event.type}`;
  $("replay-event-text").textContent = describe(event);
  const position = positionAt(index);
  const state = {
    game: match.game, players: match.players, position,
    instruction: { highlight: highlightsFor(event) },
    last_move: event.type === "move" ? (event.move || event) : null,
    borderline: event.borderline || [],
    to_move: position.to_move || null,
  };
  renderDiagram($("diagram"), state, {});
  renderPlayers($("players"), state);
  const img = $("snapshot");
  if (event.snapshot) {
    img.src = `/api/matches/${matchId}/snapshots/${event.seq}.jpg`;
    img.hidden = false; $("snapshot-missing").hidden = true;
  } else {
    img.hidden = true; $("snapshot-missing").hidden = false;
  }
  history.replaceState(null, "", `#${event.seq}`);
}

async function load() {
  const data = await getJSON(`/api/matches/${matchId}`);
  match = data.match;
  events = data.events;
  const game = match.game[0].toUpperCase() + match.game.slice(1);
  $("replay-title").textContent = `Match ${match.id} · ${game}`;
  $("replay-meta").textContent = `${(match.players || []).map((p) => PLAYER_NAMES[p] || p).join(" · ")} · ` +
    `${match.variant} · ${events.length} events · started ${new Date(match.started_at).toLocaleString()}`;
  $("step-slider").max = String(Math.max(0, events.length - 1));
  if (!events.length) {
    $("replay-event-text").textContent = "No events in this match";
    renderDiagram($("diagram"), { game: match.game, position: positionAt(-1) }, {});
    return;
  }
  const fromHash = Number(location.hash.slice(1));
  const start = events.findIndex((e) => e.seq === fromHash);
  show(start >= 0 ? start : 0);
}

$("step-first").addEventListener("click", () => show(0));
$("step-prev").addEventListener("click", () => show(index - 1));
$("step-next").addEventListener("click", () => show(index + 1));
$("step-last").addEventListener("click", () => show(events.length - 1));
$("step-slider").addEventListener("input", (e) => show(Number(e.target.value)));
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft") show(index - 1);
  if (e.key === "ArrowRight") show(index + 1);
});
$("snapshot").addEventListener("error", () => { $("snapshot").hidden = true; $("snapshot-missing").hidden = false; });

load().catch((err) => {
  reportError(err);
  $("replay-event-text").textContent = err.message;
});
