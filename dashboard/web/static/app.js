// lapse dashboard: keeps lapse's clock ticking on the page, follows the
// server's event stream and reloads the page's live regions when something
// changed, and sends the clock and item actions to the control API.
"use strict";

const clock = { now: 0, at: 0, mode: "real" };

// lapseNow returns lapse's time in milliseconds as the page best knows it.
function lapseNow() {
  if (clock.mode === "frozen") return clock.now;
  return clock.now + (performance.now() - clock.at);
}

function setClock(state) {
  clock.now = Date.parse(state.now);
  clock.at = performance.now();
  clock.mode = state.mode;
  const mode = document.getElementById("clock-mode");
  if (mode) {
    mode.textContent = state.mode;
    mode.className = "clock-mode mode-" + state.mode;
  }
  document.body.dataset.clockMode = state.mode;
  tick();
}

function pad(n, w) { return String(n).padStart(w || 2, "0"); }

function formatClock(ms) {
  const d = new Date(ms);
  return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
    pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
}

// span writes a length of time for people: "3d 4h", "12m 5s", "800ms".
function span(ms) {
  if (ms < 1000) return Math.max(0, Math.round(ms)) + "ms";
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d) return d + "d " + h + "h";
  if (h) return h + "h " + m + "m";
  if (m) return m + "m " + s + "s";
  return s + "s";
}

// tick updates the clock face and every countdown.
function tick() {
  const now = lapseNow();
  const face = document.getElementById("clock-now");
  if (face && clock.now) face.textContent = formatClock(now);
  for (const el of document.querySelectorAll("[data-due]")) {
    const due = Date.parse(el.dataset.due);
    if (isNaN(due)) continue;
    const left = due - now;
    el.textContent = left > 0 ? "in " + span(left) : "due";
    el.classList.toggle("overdue", left <= 0);
    el.classList.toggle("soon", left > 0 && left < 60000);
  }
}

// refresh reloads the live regions of the page, each from its fragment
// URL: soon after a change, and while changes keep coming (a burst of
// expiries) at most every refreshEvery milliseconds.
const pending = new Set();
const refreshEvery = 300;
let refreshTimer = 0;
let lastFlush = 0;
function refresh() {
  for (const el of document.querySelectorAll("[data-fragment]")) pending.add(el);
  if (refreshTimer) return;
  const wait = Math.max(50, lastFlush + refreshEvery - performance.now());
  refreshTimer = setTimeout(flush, wait);
}

async function flush() {
  refreshTimer = 0;
  lastFlush = performance.now();
  const els = [...pending];
  pending.clear();
  await Promise.all(els.map(async (el) => {
    try {
      const res = await fetch(el.dataset.fragment, { headers: { "Accept": "text/html" } });
      if (res.status === 404 && document.body.dataset.page === "entity") {
        el.innerHTML = '<p class="error">This entity no longer exists (deleted, or deleted when idle). <a href="./">Back to the overview</a></p>';
        return;
      }
      if (!res.ok) return;
      const html = await res.text();
      if (el.innerHTML !== html) {
        el.innerHTML = html;
        tick();
      }
    } catch (e) { /* the next change reloads it */ }
  }));
}

// The event stream; it reconnects by itself.
function follow() {
  const live = document.getElementById("live");
  const es = new EventSource("api/stream");
  es.addEventListener("open", () => { if (live) live.className = "live on"; });
  es.addEventListener("error", () => { if (live) live.className = "live off"; });
  es.addEventListener("clock", (e) => setClock(JSON.parse(e.data)));
  es.addEventListener("events", () => refresh());
  es.addEventListener("changed", () => refresh());
  es.addEventListener("resync", () => refresh());
}

function flash(text, kind) {
  const el = document.getElementById("flash");
  if (!el) return;
  el.textContent = text;
  el.className = "flash " + (kind || "ok");
  el.hidden = false;
  clearTimeout(flash.t);
  flash.t = setTimeout(() => { el.hidden = true; }, kind === "error" ? 8000 : 3000);
}

async function post(url, body) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? "" : JSON.stringify(body),
  });
  let data = null;
  try { data = await res.json(); } catch (e) { /* no body */ }
  if (!res.ok) throw new Error((data && data.error) || res.status + " " + res.statusText);
  return data;
}

async function clockCall(path, body, label) {
  try {
    const state = await post("api/clock/" + path, body);
    setClock(state);
    let text = label;
    if (state.applied !== undefined) text += ": " + state.applied + (state.applied === 1 ? " event" : " events");
    flash(text);
    refresh();
  } catch (e) {
    flash(e.message, "error");
  }
}

function describe(result) {
  if (!result) return "done";
  if (result.resubmitted !== undefined) return "resubmitted " + result.resubmitted + (result.to ? " to " + result.to : "");
  if (result.purged !== undefined) return "purged " + result.purged;
  return "done";
}

document.addEventListener("click", async (e) => {
  const t = e.target.closest("button, a");
  if (!t) return;
  if (t.dataset.advance) {
    clockCall("advance", { by: t.dataset.advance }, "advanced " + t.textContent.trim());
  } else if (t.dataset.clock) {
    clockCall(t.dataset.clock, undefined, t.dataset.clock === "freeze" ? "frozen" : "resumed");
  } else if (t.dataset.post) {
    if (t.dataset.confirm && !confirm(t.dataset.confirm)) return;
    t.disabled = true;
    try {
      flash(describe(await post(t.dataset.post)));
      refresh();
    } catch (err) {
      flash(err.message, "error");
    } finally {
      t.disabled = false;
    }
  } else if (t.classList.contains("copy-button")) {
    navigator.clipboard && navigator.clipboard.writeText(t.dataset.copy);
  }
});

function setupAdvanceForm() {
  const form = document.getElementById("advance-form");
  if (!form) return;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const by = document.getElementById("advance-by").value.trim();
    if (!by) return;
    clockCall("advance", { by }, "advanced " + by);
  });
}

// The data explorer: runs a query and shows its rows.
function setupExplorer() {
  const form = document.getElementById("query-form");
  if (!form) return;
  const out = document.getElementById("query-result");
  const text = document.getElementById("query-text");
  const target = document.getElementById("query-target");
  async function run() {
    const opt = target.options[target.selectedIndex];
    out.innerHTML = '<p class="muted">Running…</p>';
    try {
      const started = performance.now();
      const r = await post(opt.dataset.api + "/query", { query: text.value, max: 200 });
      const ms = Math.round(performance.now() - started);
      out.innerHTML = "";
      const head = document.createElement("p");
      head.className = "muted";
      head.id = "query-count";
      head.textContent = r.count + (r.count === 1 ? " row" : " rows") + " in " + ms + " ms" + (r.count >= 200 ? " (the first 200)" : "");
      out.appendChild(head);
      for (const row of r.rows) {
        const pre = document.createElement("pre");
        pre.className = "row";
        pre.textContent = JSON.stringify(row, null, 2);
        out.appendChild(pre);
      }
      const url = new URL(location.href);
      url.searchParams.set("name", opt.value.split("|").slice(1).join("|"));
      url.searchParams.set("protocol", opt.value.split("|")[0]);
      url.searchParams.set("query", text.value);
      history.replaceState(null, "", url);
    } catch (e) {
      out.innerHTML = "";
      const p = document.createElement("p");
      p.className = "error";
      p.id = "query-error";
      p.textContent = e.message;
      out.appendChild(p);
    }
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); run(); });
  text.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } });
}

// setupWorlds fills the world picker with the sandboxes the default world
// lists, each with its clock, and shows it when there are any; choosing one
// opens the same page of that world.
async function setupWorlds() {
  const sel = document.getElementById("world");
  if (!sel) return;
  let list = [];
  try {
    const r = await fetch("/api/sandboxes");
    if (r.ok) list = await r.json();
  } catch (e) { return; }
  const here = sel.dataset.base;
  for (const sb of list) {
    const value = "/sandboxes/" + sb.id + "/";
    let opt = [...sel.options].find((o) => o.value === value);
    if (!opt) { opt = document.createElement("option"); opt.value = value; sel.appendChild(opt); }
    opt.textContent = sb.id + " · " + sb.clock.now.replace("T", " ").replace(/\.\d+Z$/, "Z") + " " + sb.clock.mode;
    opt.selected = value === here;
  }
  if (list.length > 0 || here !== "/") document.getElementById("world-picker").hidden = false;
  sel.addEventListener("change", () => {
    const page = location.pathname.slice(here.length - 1).replace(/^\/+/, "");
    location.href = sel.value + page + location.search;
  });
}

document.addEventListener("DOMContentLoaded", () => {
  setupWorlds();
  const c = document.getElementById("clock");
  if (c) setClock({ now: c.dataset.now, mode: c.dataset.mode });
  setupAdvanceForm();
  setupExplorer();
  setInterval(tick, 250);
  follow();
});
