// The club's archive: every table's matches, with filters, replay and exports.
import { fillMatchList, getJSON, matchLinks, reportError } from "./api.js";
import { fillRounds, resultText, shownName, when } from "./club_common.js";

const form = document.getElementById("filters");

async function load() {
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v) params.set(k, v);
  history.replaceState(null, "", params.toString() ? `?${params}` : location.pathname);
  const { matches } = await getJSON(`/api/matches?${params}`);
  fillMatchList(matches, (li, m) => {
    li.innerHTML = `
      <div class="match-title"><a href="/replay/${m.id}"></a><span class="result"></span></div>
      <div class="match-meta"></div>
      ${matchLinks(m.id)}`;
    li.querySelector(".match-title a").textContent = `#${m.id} ${m.table} · ${m.game}`;
    li.querySelector(".result").textContent = resultText(m);
    li.querySelector(".match-meta").textContent =
      `${m.players.map((p) => shownName(m.names, p)).join(" · ")} · ${m.variant} · ${m.events} events · ${when(m.started_at)}`;
  });
}

async function init() {
  const params = new URLSearchParams(location.search);
  for (const [k, v] of params) if (form.elements[k]) form.elements[k].value = v;
  const { rounds } = await getJSON("/api/rounds");
  fillRounds(document.getElementById("round-filter"), rounds, params.get("round"));
  form.addEventListener("submit", (e) => { e.preventDefault(); load().catch(reportError); });
  await load();
}

init().catch(reportError);
