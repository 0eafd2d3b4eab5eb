// The match history: every match in the log, with replay and export links.
import { fillMatchList, getJSON, matchLinks, reportError, when } from "./api.js";
import { PLAYER_NAMES, playerName } from "./diagram.js";

function resultText(match) {
  const r = match.result;
  if (!match.ended_at) return "in progress";
  if (!r) return "ended";
  if (r.text) return r.text;
  if (r.winner) return `${playerName(r.winner)} won${r.reason ? " (" + r.reason + ")" : ""}`;
  return r.reason ? `draw (${r.reason})` : "draw";
}

async function load() {
  const { matches } = await getJSON("/api/matches");
  fillMatchList(matches, (li, m) => {
    const game = m.game[0].toUpperCase() + m.game.slice(1);
    const players = (m.players || []).map((p) => PLAYER_NAMES[p] || p).join(" · ");
    li.innerHTML = `
      <div class="match-title"><a href="/replay/${m.id}">#${m.id} ${game}</a><span class="result"></span></div>
      <div class="match-meta"></div>
      ${matchLinks(m.id)}`;
    li.querySelector(".result").textContent = resultText(m);
    li.querySelector(".match-meta").textContent =
      `${players} · ${m.variant} · ${m.events} events · ${when(m.started_at)}`;
  });
}

load().catch(reportError);
