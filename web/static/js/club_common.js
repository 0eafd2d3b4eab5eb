// What the club pages share: a player's shown name, a match's result in words, a date.
import { playerName } from "./diagram.js";

export function shownName(names, colour) {
  const n = (names || {})[colour];
  return n ? `${n} (${playerName(colour)})` : playerName(colour);
}

export function resultText(match) {
  const r = match.result;
  if (!match.ended_at) return "in progress";
  if (!r) return "ended";
  if (r.text) return r.text;
  if (r.winner) return `${shownName(match.names, r.winner)} won`;
  return r.reason ? `draw (${r.reason})` : "draw";
}

export { when } from "./api.js";  // one formatting of a start time for the table and the club

export function fillRounds(select, rounds, selected) {
  const keep = select.querySelector("option[value='']");
  select.innerHTML = "";
  if (keep) select.appendChild(keep);
  for (const r of rounds) {
    const o = document.createElement("option");
    o.value = String(r.id);
    o.textContent = `${r.name} (from ${when(r.started)})`;
    if (String(r.id) === String(selected)) o.selected = true;
    select.appendChild(o);
  }
}
