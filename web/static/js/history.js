// The match history: every match in the log, with replay and export links.
import { getJSON, matchLinks, reportError } from "./api.js";
import { PLAYER_NAMES, playerName } from "./diagram.js";

function resultText(match) {
  const r = match.result;
  if (!match.ended_at) return "in progress";
  if (!r) return "ended";
  if (r.text) return r.text;
  if (r.winner) return `${playerName(r.winner)} won${r.reason ? " (" + r.reason + ")" : ""}`;
  return r.reason ? `draw (${r.reason})` : "draw";
}

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

async function load() {
  const { matches } = await getJSON("/api/matches");
  const list = document.getElementById("matches");
  document.getElementById("matches-empty").hidden = matches.length > 0;
  list.innerHTML = "";
  for (const m of matches) {
    const li = document.createElement("li");
    li.dataset.matchId = m.id;
    const game = m.game[0].toUpperCase() + m.game.slice(1);
    const players = (m.players || []).map((p) => PLAYER_NAMES[p] || p).join(" · ");
    li.innerHTML = `
      <div class="match-title"><a href="/replay/${m.id}">#${m.id} ${game}</a><span class="result"></span></div>
      <div class="match-meta"></div>
      ${matchLinks(m.id)}`;
    li.querySelector(".result").textContent = resultText(m);
    li.querySelector(".match-meta").textContent =
      `${players} · ${m.variant} · ${m.events} events · ${when(m.started_at)}`;
    list.appendChild(li);
  }
}

load().catch(reportError);
