// The club's replay page: the players' names, and the organiser's correction of one.
import { askPin, getJSON, postJSON, reportError, session, toast } from "./api.js";
import { shownName } from "./club_common.js";

const $ = (id) => document.getElementById(id);
const matchId = Number($("replay").dataset.matchId);

async function load() {
  const { match } = await getJSON(`/api/matches/${matchId}`);
  $("club-names").textContent = `Table ${match.table} · ` +
    match.players.map((p) => shownName(match.names, p)).join(" · ");
  const select = $("name-colour");
  select.innerHTML = "";
  for (const p of match.players) {
    const o = document.createElement("option");
    o.value = p; o.textContent = shownName(match.names, p);
    select.appendChild(o);
  }
}

$("name-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    if (session.requirePin && !session.owner && !(await askPin())) return;
    await postJSON(`/api/matches/${matchId}/names`, { colour: $("name-colour").value, name: $("name-input").value });
    toast("Name corrected");
    await load();
  } catch (err) { reportError(err); }
});

load().catch(reportError);
