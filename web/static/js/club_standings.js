// A round's standings (wins, draws, losses per player), its CSV, and the organiser's rounds.
import { askPin, getJSON, postJSON, reportError, session, toast } from "./api.js";
import { fillRounds } from "./club_common.js";

const $ = (id) => document.getElementById(id);

async function load() {
  const round = $("round").value;
  const q = round ? `?round=${round}` : "";
  $("csv").href = `/api/standings?format=csv${round ? "&round=" + round : ""}`;
  const { standings } = await getJSON(`/api/standings${q}`);
  const body = $("standings").querySelector("tbody");
  body.innerHTML = "";
  standings.forEach((r, i) => {
    const tr = document.createElement("tr");
    for (const v of [i + 1, r.player, r.played, r.wins, r.draws, r.losses, r.points]) {
      const td = document.createElement("td");
      td.textContent = String(v);
      tr.appendChild(td);
    }
    body.appendChild(tr);
  });
  $("standings-empty").hidden = standings.length > 0;
}

async function loadRounds(selected) {
  const { rounds } = await getJSON("/api/rounds");
  fillRounds($("round"), rounds, selected ?? $("round").value);
}

async function asOrganiser(action) {
  if (session.requirePin && !session.owner && !(await askPin())) return;
  await action();
}

async function send(method, url, payload) {
  if (method === "POST") return postJSON(url, payload);
  const response = await fetch(url, { method, headers: { "Content-Type": "application/json" },
                                      body: JSON.stringify(payload), credentials: "same-origin" });
  const data = await response.json();
  if (!response.ok) throw new Error(data.message || response.statusText);
  return data;
}

$("round").addEventListener("change", () => load().catch(reportError));
$("round-form").addEventListener("submit", (e) => {
  e.preventDefault();
  asOrganiser(async () => {
    const { round } = await send("POST", "/api/rounds", { name: $("round-name").value });
    toast(`${round.name} started`);
    await loadRounds(round.id);
    await load();
  }).catch(reportError);
});
$("rename-round").addEventListener("click", () => {
  const id = $("round").value;
  if (!id) { toast("Select a round to rename", "warning"); return; }
  asOrganiser(async () => {
    await send("PATCH", `/api/rounds/${id}`, { name: $("round-name").value });
    await loadRounds(id);
  }).catch(reportError);
});

loadRounds(new URLSearchParams(location.search).get("round")).then(load).catch(reportError);
