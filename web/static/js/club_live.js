// The club page: every table's current position and verdict, pushed by Server-Sent Events
// (the senders' NOTIFYs on the club database).
import { getJSON, reportError } from "./api.js";
import { renderDiagram } from "./diagram.js";
import { resultText, shownName, when } from "./club_common.js";

const $ = (id) => document.getElementById(id);

function normalise(position, game) {
  if (position) return position;
  return game === "dition" ? { discs: [] } : { stacks: {} };
}

function card(t) {
  const el = document.createElement("article");
  el.className = "card club-table";
  el.dataset.table = t.table;
  el.innerHTML = `
    <div class="card-head"><h2></h2><span class="pill"></span></div>
    <p class="muted players"></p>
    <svg class="diagram" role="img"></svg>
    <div class="verdict kind-info"><div class="verdict-kind"></div><div class="verdict-text"></div></div>
    <p class="muted meta"></p>
    <div class="exports"><a class="btn small primary replay">Replay</a></div>`;
  return el;
}

function render(state) {
  const list = $("tables");
  const club = state.club || {};
  $("club-status").textContent = club.listening ? `${state.tables.length} table(s), live`
    : (club.error || "connecting to the club database…");
  $("tables-empty").hidden = state.tables.length > 0;
  const seen = new Set();
  for (const t of state.tables) {
    seen.add(t.table);
    let el = list.querySelector(`[data-table="${CSS.escape(t.table)}"]`);
    if (!el) { el = card(t); list.appendChild(el); }
    el.querySelector("h2").textContent = t.table;
    const pill = el.querySelector(".pill");
    pill.textContent = t.ended_at ? "over" : "playing";
    pill.className = "pill " + (t.ended_at ? "off" : "on");
    el.querySelector(".players").textContent =
      (t.players || []).map((p) => shownName(t.names, p)).join(" · ") + ` · ${t.game}`;
    const svg = el.querySelector("svg");
    svg.setAttribute("aria-label", `Board of table ${t.table}`);
    renderDiagram(svg, { game: t.game, players: t.players, position: normalise(t.position, t.game),
                         to_move: t.to_move, instruction: { highlight: [] } }, {});
    el.querySelector(".verdict-kind").textContent = t.verdict ? `Event ${t.verdict.seq} · ${t.verdict.type}` : "";
    el.querySelector(".verdict-text").textContent = t.verdict ? t.verdict.text : "No verdict yet";
    el.querySelector(".meta").textContent = `Match ${t.club_match_id} · ${resultText(t)} · last report ${when(t.last_seen)}`;
    el.querySelector(".replay").href = `/replay/${t.club_match_id}`;
  }
  for (const el of [...list.children]) if (!seen.has(el.dataset.table)) el.remove();
}

const source = new EventSource("/api/events");
source.addEventListener("state", (e) => {
  try { render(JSON.parse(e.data)); } catch (err) { console.error(err); }
});
window.clubRender = render;
getJSON("/api/state").then(render).catch(reportError);
