// Short alert sounds made with the WebAudio API (no audio files). Sound is on unless switched
// off (the labelled switch in the top bar); browsers allow audio only after a user gesture, so
// the first tap or key anywhere on the page unlocks it, and the switch says "tap for sound"
// until then.
const PATTERNS = {
  // [frequency Hz, start s, duration s, waveform]
  suicide: [[660, 0, 0.18, "square"], [440, 0.2, 0.18, "square"], [262, 0.4, 0.45, "square"]],
  over: [[523, 0, 0.16, "triangle"], [659, 0.17, 0.16, "triangle"], [784, 0.34, 0.16, "triangle"],
         [1047, 0.51, 0.5, "triangle"]],
  error: [[196, 0, 0.16, "sawtooth"], [196, 0.22, 0.25, "sawtooth"]],
  warning: [[880, 0, 0.12, "sine"], [880, 0.18, 0.12, "sine"]],
  info: [[880, 0, 0.1, "sine"]],
};

class Sound {
  constructor() {
    this.enabled = localStorage.getItem("referee.sound") !== "off";
    this.context = null;
    this.played = [];  // kinds played, newest last (the browser tests read it)
    this.listeners = [];
    const unlock = () => { if (this.enabled) this.ensureContext(); };
    for (const type of ["pointerdown", "keydown", "touchend"]) {
      document.addEventListener(type, unlock, { capture: true, passive: true });
    }
  }

  // "on" (the browser plays it), "blocked" (on, waiting for a first tap), or "off"
  get status() {
    if (!this.enabled) return "off";
    return this.context && this.context.state === "running" ? "on" : "blocked";
  }

  onChange(fn) { this.listeners.push(fn); }

  changed() { for (const fn of this.listeners) fn(this.status); }

  setEnabled(on) {
    this.enabled = on;
    localStorage.setItem("referee.sound", on ? "on" : "off");
    if (on) this.ensureContext();
    this.changed();
  }

  ensureContext() {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return null;
    if (!this.context) {
      this.context = new Ctx();
      this.context.addEventListener("statechange", () => this.changed());
    }
    if (this.context.state === "suspended") this.context.resume().catch(() => {});
    return this.context;
  }

  play(kind) {
    this.played.push(kind);
    if (!this.enabled) return;
    const ctx = this.ensureContext();
    const pattern = PATTERNS[kind] || PATTERNS.info;
    if (!ctx) return;
    const t0 = ctx.currentTime + 0.02;
    for (const [freq, start, dur, type] of pattern) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = type;
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, t0 + start);
      gain.gain.exponentialRampToValueAtTime(0.25, t0 + start + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + dur);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t0 + start);
      osc.stop(t0 + start + dur + 0.05);
    }
  }
}

export const sound = new Sound();
window.refereeSound = sound;
