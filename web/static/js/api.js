// Talking to the referee's JSON API, plus the bits every page shares (PIN, toast, sound switch).
import { sound } from "./sound.js";

const body = document.body;
const SPEAKER_OFF = '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/><path d="M16 9l5 6M21 9l-5 6" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>';
const SPEAKER_ON = '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/><path d="M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>';
export const session = {
  requirePin: body.dataset.requirePin === "true",
  owner: body.dataset.owner === "true",
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function parse(response) {
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const code = (data && data.error) || `http_${response.status}`;
    const message = (data && data.message) || response.statusText;
    throw new ApiError(response.status, code, message);
  }
  return data;
}

// A match's replay and export buttons (the history page and the club's archive).
/** A match's start time as the reader's locale writes it ("" for none; the text if unreadable). */
export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Fill the page's match list (#matches, #matches-empty) with one <li data-match-id> per
 * match; `fill(li, match)` writes its content. Shared by the table's history and the club's
 * archive. */
export function fillMatchList(matches, fill) {
  const list = document.getElementById("matches");
  document.getElementById("matches-empty").hidden = matches.length > 0;
  list.innerHTML = "";
  for (const m of matches) {
    const li = document.createElement("li");
    li.dataset.matchId = m.id;
    fill(li, m);
    list.appendChild(li);
  }
}

export function matchLinks(id) {
  return `<div class="exports">
        <a class="btn small primary" href="/replay/${id}">Replay</a>
        <a class="btn small" href="/api/matches/${id}/export?format=json">JSON</a>
        <a class="btn small" href="/api/matches/${id}/export?format=csv">CSV</a>
        <a class="btn small" href="/api/matches/${id}/export?format=txt">Game record</a>
      </div>`;
}

export async function getJSON(url) {
  return parse(await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" }));
}

export async function postJSON(url, payload) {
  return parse(await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(payload || {}),
    credentials: "same-origin",
  }));
}

// Send a control; asks for the PIN first when needed and retries once after logging in.
export async function control(name, payload = {}) {
  try {
    return await postJSON(`/api/control/${name}`, payload);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      const ok = await askPin();
      if (ok) return postJSON(`/api/control/${name}`, payload);
    }
    throw err;
  }
}

export function toast(message, kind = "info", ms = 3500) {
  const el = document.getElementById("toast");
  if (!el) return;
  el.textContent = message;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(toast._t);
  toast._t = setTimeout(() => { el.hidden = true; }, ms);
}

export function reportError(err) {
  const message = err instanceof ApiError ? err.message : String(err && err.message || err);
  toast(message, "error", 5000);
  sound.play("error");
}

function updateBadge() {
  const badge = document.getElementById("owner-badge");
  if (!badge) return;
  if (!session.requirePin) { badge.hidden = true; return; }
  badge.hidden = false;
  badge.textContent = session.owner ? "owner" : "spectator";
  badge.classList.toggle("owner", session.owner);
  badge.title = session.owner ? "Controls unlocked: click to lock" : "Click to unlock the controls";
  body.classList.toggle("spectator", !session.owner);
}

// Opens the PIN dialog; resolves true once the server accepted the PIN.
export function askPin() {
  const dialog = document.getElementById("pin-dialog");
  const form = document.getElementById("pin-form");
  const input = document.getElementById("pin-input");
  const error = document.getElementById("pin-error");
  error.textContent = "";
  input.value = "";
  return new Promise((resolve) => {
    const onSubmit = async (event) => {
      if (event.submitter && event.submitter.value === "cancel") return;
      event.preventDefault();
      try {
        await postJSON("/api/login", { pin: input.value });
        session.owner = true;
        updateBadge();
        cleanup();
        dialog.close();
        resolve(true);
      } catch (err) {
        error.textContent = err.message;
        input.select();
      }
    };
    const onClose = () => { cleanup(); resolve(session.owner); };
    const cleanup = () => {
      form.removeEventListener("submit", onSubmit);
      dialog.removeEventListener("close", onClose);
    };
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("close", onClose);
    dialog.showModal();
    input.focus();
  });
}

function initShell() {
  updateBadge();
  const badge = document.getElementById("owner-badge");
  badge?.addEventListener("click", async () => {
    if (session.owner) {
      await postJSON("/api/logout", {}).catch(reportError);
      session.owner = false;
      updateBadge();
    } else {
      askPin();
    }
  });
  const toggle = document.getElementById("sound-toggle");
  const LABELS = { on: "Sound on", blocked: "Tap for sound", off: "Sound off" };
  const show = () => {
    const status = sound.status;
    toggle.setAttribute("aria-pressed", String(sound.enabled));
    toggle.dataset.sound = status;
    toggle.innerHTML = (sound.enabled ? SPEAKER_ON : SPEAKER_OFF) +
      `<span class="sound-label">${LABELS[status]}</span>`;
    toggle.title = sound.enabled
      ? "Sound on suicide, game end and errors: click to mute"
      : "Sound off: click for alerts on suicide, game end and errors";
  };
  toggle?.addEventListener("click", () => {
    sound.setEnabled(!sound.enabled);
    show();
    if (sound.enabled) sound.play("info");
  });
  if (toggle) { sound.onChange(show); show(); }
}

initShell();
