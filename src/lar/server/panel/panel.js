// Lar's web panel: plain JavaScript on Lar's own API (/api, /health), no build step.
// Everything shown from the server is set as text (never as HTML): memories, answers and tool
// output are untrusted. State-changing requests carry the CSRF token from the lar_csrf cookie.
"use strict";

const $ = (id) => document.getElementById(id);
const POLL_MS = 2000;
let openRun = null;
let following = null;

function csrf() {
  const m = document.cookie.match(/(?:^|;\s*)lar_csrf=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(path, options = {}) {
  const init = { credentials: "same-origin", ...options, headers: { ...(options.headers || {}) } };
  if (init.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  if (init.method && init.method !== "GET") init.headers["X-CSRF-Token"] = csrf();
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (r.status === 401 && path !== "/auth") {
    $("signin").hidden = false;
    throw new Error("sign in first");
  }
  if (!r.ok && r.status !== 503) {
    throw new Error((data.error && data.error.message) || `${r.status}`);
  }
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function when(t) {
  if (!t) return "";
  return new Date(t * 1000).toLocaleString();
}

function short(text, n = 160) {
  text = String(text ?? "").replace(/\s+/g, " ").trim();
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

// --- status, approvals ------------------------------------------------------------------------

async function refreshStatus() {
  const s = await api("/api/status");
  const parts = [];
  parts.push(`${s.running.length} running`);
  parts.push(`${s.queued.filter((q) => q.position > 0).length} queued`);
  parts.push(`${s.waiting.length} waiting for you`);
  $("state").textContent = parts.join(" · ");
  const live = $("live");
  live.replaceChildren();
  if (!s.running.length && !s.queued.length) {
    live.append("Nothing is running.");
  }
  for (const r of s.running) {
    live.append(el("div", {}, el("span", { class: "status running" }, "running"), " ",
      short(r.request, 100), " ", el("code", {}, r.id)));
  }
  for (const q of s.queued) {
    const where = q.position === 0 ? "at the model" : `#${q.position} in line`;
    live.append(el("div", { class: "quiet" }, `${q.engine}: ${q.run} ${where}`));
  }
  renderApprovals(s.waiting);
}

function renderApprovals(list) {
  $("approval-count").textContent = list.length ? String(list.length) : "";
  $("no-approvals").hidden = list.length > 0;
  const ul = $("approval-list");
  ul.replaceChildren();
  for (const a of list) {
    const left = Math.max(0, Math.round(a.deadline - Date.now() / 1000));
    const li = el("li", { "data-approval": a.id },
      el("div", {}, el("b", {}, a.tool), " wants to run ",
        el("span", { class: "quiet" }, `(run ${a.run}, ${left}s left)`)),
      el("pre", {}, JSON.stringify(a.arguments, null, 2)));
    for (const why of a.reasons || []) li.append(el("div", { class: "error" }, "⚠ " + why));
    if (a.changes) li.append(el("div", {}, "It would: " + a.changes));
    li.append(el("div", {},
      el("button", { class: "approve", onclick: () => answer(a.id, true) }, "Approve"), " ",
      el("button", { class: "deny", onclick: () => answer(a.id, false) }, "Deny")));
    ul.append(li);
  }
}

async function answer(id, approve) {
  await api(`/api/approvals/${encodeURIComponent(id)}`, { method: "POST", body: { approve } });
  await refreshStatus();
}

// --- runs ---------------------------------------------------------------------------------------

async function refreshRuns() {
  const { runs } = await api("/api/runs?limit=30");
  const ul = $("run-list");
  ul.replaceChildren();
  for (const r of runs) {
    ul.append(el("li", { class: "clickable", "data-run": r.id, onclick: () => showRun(r.id) },
      el("span", { class: `status ${r.status}` }, r.status),
      el("span", { class: "grow" }, short(r.request, 120)),
      el("span", { class: "quiet" }, `${r.model || ""} · ${when(r.created)}`)));
  }
}

function stepText(s) {
  const d = s.detail || {};
  const took = s.duration_ms != null ? ` (${Math.round(s.duration_ms)} ms)` : "";
  switch (s.kind) {
    case "route": return `route → ${s.name}${d.reason ? ": " + d.reason : ""}`;
    case "recall": return `recall: ${s.name}${took}`;
    case "model": return `model ${s.name}: ${d.prompt_tokens ?? "?"} tokens in, ` +
      `${d.completion_tokens ?? "?"} out${took}`;
    case "tool": return `tool ${s.name}(${short(JSON.stringify(d.arguments ?? {}), 120)}) → ` +
      `${s.ok === false ? "failed" : "ok"}: ${short(d.result ?? "", 160)}${took}`;
    case "final": return `outcome: ${s.name}`;
    default: return `${s.kind} ${s.name}: ${short(d.message ?? JSON.stringify(d), 160)}`;
  }
}

function eventStep(e) {
  switch (e.type) {
    case "routed": return ["route", `route → ${e.model}: ${e.reason}`];
    case "memory_recalled": return ["recall", `recall: ${e.items.length} memories`];
    case "model_called": return ["model",
      `model ${e.model}: ${e.usage.prompt_tokens} in, ${e.usage.completion_tokens} out`];
    case "tool_call": return ["tool", `tool ${e.call.name}(${short(JSON.stringify(e.call.arguments), 120)})`];
    case "tool_result": return [e.result.ok ? "tool" : "failed",
      `→ ${e.result.ok ? "ok" : "failed"}: ${short(e.result.content, 160)}`];
    case "waiting_user": return ["tool", `waiting for your approval of ${e.approval.tool}`];
    case "approval": return ["tool", `approval ${e.decision}`];
    case "notice": return ["notice", `notice: ${e.message}`];
    case "error": return ["error", `error: ${e.message}`];
    case "final": return ["final", `outcome: ${e.stop_reason}`];
    default: return null;
  }
}

async function showRun(id) {
  openRun = id;
  if (following) { following.close(); following = null; }
  const r = await api(`/api/runs/${encodeURIComponent(id)}`);
  $("run-detail").hidden = false;
  $("run-id").textContent = id;
  $("run-request").textContent = r.request || "";
  const ol = $("run-steps");
  ol.replaceChildren();
  const steps = r.trace && r.trace.steps && r.trace.steps.length ? r.trace.steps : null;
  if (steps) {
    for (const s of steps) {
      const cls = s.ok === false ? "failed" : s.kind;
      ol.append(el("li", { class: cls }, el("span", { class: "kind" }, s.kind), " ", stepText(s)));
    }
  } else {
    for (const e of r.events || []) addEvent(e);
    if (r.status && !["succeeded", "failed", "interrupted"].includes(r.status)) follow(id, (r.events || []).length);
  }
  $("run-answer").textContent = r.answer || "";
  $("run-detail").scrollIntoView({ block: "nearest" });
}

function addEvent(e) {
  const step = eventStep(e);
  if (!step) return;
  $("run-steps").append(el("li", { class: step[0] }, el("span", { class: "kind" }, step[0]), " ", step[1]));
  if (e.type === "final") $("run-answer").textContent = e.text;
}

function follow(id, from) {
  following = new EventSource(`/api/runs/${encodeURIComponent(id)}/events?from=${from}`);
  following.onmessage = () => {};
  for (const type of ["routed", "memory_recalled", "model_called", "tool_call", "tool_result",
    "waiting_user", "approval", "notice", "error", "final"]) {
    following.addEventListener(type, (m) => { if (openRun === id) addEvent(JSON.parse(m.data)); });
  }
  following.addEventListener("end", () => { following.close(); following = null; refreshRuns(); });
  following.onerror = () => { if (following) { following.close(); following = null; } };
}

$("close-run").addEventListener("click", () => {
  openRun = null;
  $("run-detail").hidden = true;
  if (following) { following.close(); following = null; }
});

$("ask-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = $("ask").value.trim();
  if (!text) return;
  const body = { text };
  const session = $("ask-session").value.trim();
  if (session) body.session = session;
  const run = await api("/api/runs", { method: "POST", body });
  $("ask").value = "";
  await refreshRuns();
  await showRun(run.id);
});

// --- memory -------------------------------------------------------------------------------------

async function refreshMemory() {
  const q = $("memory-q").value.trim();
  const data = await api(`/api/memory?limit=50${q ? "&q=" + encodeURIComponent(q) : ""}`);
  const ul = $("memory-list");
  ul.replaceChildren();
  if (!data.memories.length) ul.append(el("li", { class: "quiet" }, q ? "Nothing found." : "No memories yet."));
  for (const m of data.memories) {
    ul.append(el("li", { "data-memory": m.id },
      el("span", { class: "kind" }, m.type),
      el("span", { class: "grow" }, m.content),
      el("span", { class: "quiet" }, (m.score !== undefined ? `score ${m.score} · ` : "") + when(m.created)),
      el("button", { class: "small forget", onclick: () => forget(m.id) }, "forget")));
  }
}

async function forget(id) {
  await api(`/api/memory/${encodeURIComponent(id)}`, { method: "DELETE" });
  await refreshMemory();
}

$("memory-form").addEventListener("submit", (ev) => { ev.preventDefault(); refreshMemory(); });
$("verify").addEventListener("click", async () => {
  const v = await api("/api/memory/verify");
  $("verify-result").textContent = v.ok
    ? "The memory chain is intact."
    : `${v.problems.length} problem(s): ` + v.problems.map((p) => `${p.memory_id} ${p.kind}`).join("; ");
  $("verify-result").className = v.ok ? "" : "error";
});

// --- health, models, sessions -----------------------------------------------------------------

// --- inbox and schedules --------------------------------------------------------------------------

async function refreshInbox() {
  const [box, sched] = await Promise.all([api("/api/inbox?limit=20"), api("/api/jobs")]);
  const ul = $("inbox-list");
  ul.replaceChildren();
  if (!box.items.length) ul.append(el("li", { class: "quiet" }, "Nothing delivered yet."));
  for (const i of box.items) {
    ul.append(el("li", { "data-inbox": i.id },
      el("span", { class: "grow" }, i.title),
      el("span", { class: "quiet" }, when(i.created))));
  }
  const jl = $("jobs-list");
  jl.replaceChildren();
  if (!sched.jobs.length) jl.append(el("li", { class: "quiet" }, "No jobs (lar schedule add)."));
  for (const j of sched.jobs) {
    jl.append(el("li", { "data-job": j.id },
      el("span", { class: "kind" }, j.status),
      el("span", { class: "grow" }, `${j.what} — ${j.schedule}`),
      el("span", { class: "quiet" }, j.next_due ? when(j.next_due) : "")));
  }
}

// --- roles ----------------------------------------------------------------------------------------

async function refreshRoles() {
  const { roles } = await api("/api/roles");
  const ul = $("roles-list");
  ul.replaceChildren();
  if (!roles.length) ul.append(el("li", { class: "quiet" }, "No roles installed (lar role apply FILE)."));
  for (const r of roles) {
    if (r.error) {
      ul.append(el("li", { "data-role": r.name }, el("b", {}, r.name), el("span", { class: "grow error" }, r.error)));
      continue;
    }
    const last = r.runs.length ? `last run: ${r.runs[0].outcome} (${r.runs[0].final_state || "-"})` : "no runs yet";
    ul.append(el("li", { "data-role": r.name },
      el("span", { class: `status ${r.ready ? "OK" : "UNAVAILABLE"}` }, r.ready ? "READY" : "NOT READY"),
      el("b", {}, `${r.name} ${r.version}`),
      el("span", { class: "grow quiet" }, last + (r.problems.length ? " — " + r.problems.join("; ") : ""))));
    for (const c of r.capabilities) {
      const routes = Object.entries(c.degraded).map(([a, b]) => `${a} → ${b}`).join(", ");
      ul.append(el("li", { "data-role-capability": `${r.name}/${c.name}` },
        el("span", { class: `status ${c.state === "AVAILABLE" ? "OK" : c.state}` }, c.state),
        el("span", {}, c.name),
        el("span", { class: "grow quiet" }, (c.reason || "") +
          (c.state === "UNAVAILABLE" && routes ? ` — degraded: ${routes}` : ""))));
    }
    for (const b of r.breakers) {
      ul.append(el("li", { class: "quiet" }, `breaker ${b.step}: ${b.failures} failures` +
        (b.open_for_s === null ? "" : `, open for ${Math.round(b.open_for_s)}s`)));
    }
  }
}

async function refreshSystem() {
  const caps = await api("/health/capabilities");
  const ul = $("capabilities");
  ul.replaceChildren();
  for (const c of caps.capabilities) {
    ul.append(el("li", { "data-capability": c.name },
      el("span", { class: `status ${c.status}` }, c.status),
      el("b", {}, c.name),
      el("span", { class: "grow quiet" }, c.detail + (c.tools.length ? ` — tools: ${c.tools.join(", ")}` : "") +
        (c.fallback ? ` — fallback: ${c.fallback}` : ""))));
  }
  const ready = await api("/health/ready");
  $("ready").textContent = ready.status === "ready" ? "Ready." : "Not ready: " + ready.problems.join("; ");
  $("ready").className = ready.status === "ready" ? "" : "error";
  const { models } = await api("/api/models");
  const mu = $("models");
  mu.replaceChildren();
  for (const m of models) {
    mu.append(el("li", {}, el("b", {}, m.name), el("span", { class: "grow quiet" },
      `${m.engine}: ${m.model}${m.default ? " (default)" : ""}`)));
  }
}

$("reset-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const id = $("reset-session").value.trim();
  const r = await api(`/api/sessions/${encodeURIComponent(id)}/reset`, { method: "POST", body: {} });
  $("reset-result").textContent = `Session ${r.session} starts afresh (its memories stay).`;
});

$("signin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    await api("/auth", { method: "POST", body: { token: $("token").value } });
    $("signin").hidden = true;
    $("signin-error").textContent = "";
    start();
  } catch (e) {
    $("signin-error").textContent = String(e.message || e);
  }
});

// --- start --------------------------------------------------------------------------------------

let timer = null;

async function tick() {
  try {
    await refreshStatus();
    if (!openRun) await refreshRuns();
    await refreshInbox();
  } catch (e) { /* shown by the sign-in box, or retried on the next tick */ }
}

async function start() {
  try {
    await Promise.all([refreshStatus(), refreshRuns(), refreshMemory(), refreshInbox(), refreshRoles(),
      refreshSystem()]);
  } catch (e) { return; }
  if (!timer) timer = setInterval(tick, POLL_MS);
}

// `lar serve` prints the panel's address with the token after "#token=": the fragment never
// reaches a server or a log. Trade it for the session cookie, then drop it from the address.
async function signInFromLink() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (!m) return;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    await api("/auth", { method: "POST", body: { token: decodeURIComponent(m[1]) } });
  } catch (e) {
    $("signin").hidden = false;
    $("signin-error").textContent = String(e.message || e);
  }
}

signInFromLink().then(start);
