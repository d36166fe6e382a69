// The play page: draws the server's state (board SVG from carc_env.render.svg) and sends actions.
"use strict";
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
let S = null;          // the current game (or replay) state from the server
let mode = "none";     // "game" | "replay"
let rot = 0;           // the drawn tile's rotation shown to the player
let pending = null;    // {x, y}: the cell where the drawn tile is previewed
let view = null;       // the board's viewBox {x, y, w, h}
let userView = false;  // the player panned or zoomed: keep the view (shifted with the board's origin)
let agentTimer = null;
let busy = false;
let options = {pretrained: [], expansions: []};

function showError(msg) {
  const e = $("error");
  if (!msg) { e.hidden = true; e.textContent = ""; return; }
  e.textContent = msg; e.hidden = false;
}

async function api(method, url, body) {
  const init = {method, headers: {"Content-Type": "application/json"}};
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(url, init);
  let data;
  try { data = await r.json(); } catch (e) { data = {error: `the server answered ${r.status}`}; }
  if (!r.ok) throw new Error(data.error || `the server answered ${r.status}`);
  return data;
}

// ------------------------------------------------------------------ new-game form
function seatRow(i, value) {
  const d = document.createElement("div");
  d.className = "seat";
  const list = ["human", "random", "greedy", "greedy:0.1", "mcts:200", "mcts:1000"]
    .concat(options.pretrained.map((n) => "pretrained:" + n));
  d.innerHTML = `<span class="swatch" style="background:${["#de2424", "#2462e8", "#face14", "#9840ce", "#181818"][i]}"></span>
    P${i} <input class="spec" list="specs" value="${value}">`;
  return d;
}

function buildSeats() {
  const n = +$("nplayers").value;
  const old = [...document.querySelectorAll(".seat .spec")].map((e) => e.value);
  const seats = $("seats");
  seats.innerHTML = "";
  const dflt = options.pretrained.includes("base-2p") ? "pretrained:base-2p" : "greedy";
  for (let i = 0; i < n; i++) seats.appendChild(seatRow(i, old[i] || (i === 0 ? "human" : dflt)));
}

async function init() {
  try { options = await api("GET", "/api/options"); } catch (e) { showError(e.message); }
  const dl = document.createElement("datalist");
  dl.id = "specs";
  for (const s of ["human", "random", "greedy", "greedy:0.1", "mcts:200", "mcts:1000"]
    .concat(options.pretrained.map((n) => "pretrained:" + n))) {
    const o = document.createElement("option"); o.value = s; dl.appendChild(o);
  }
  document.body.appendChild(dl);
  for (const k of options.expansions) {
    const l = document.createElement("label");
    l.innerHTML = `<input type="checkbox" class="exp" value="${k}"> ${k}`;
    $("exps").appendChild(l);
  }
  buildSeats();
  $("nplayers").onchange = buildSeats;
  $("form").onsubmit = (ev) => { ev.preventDefault(); newGame(); };
  $("rotl").onclick = () => rotate(-1);
  $("rotr").onclick = () => rotate(1);
  $("place").onclick = placePending;
  $("zin").onclick = () => zoom(0.8);
  $("zout").onclick = () => zoom(1.25);
  $("zfit").onclick = () => { view = null; userView = false; fitView(); };
  $("inspect").onchange = refreshInspector;
  $("hint").onclick = () => loadInspector();
  $("recordfile").onchange = loadRecord;
  $("rfirst").onclick = () => replayGo(0);
  $("rback").onclick = () => replayGo(S.pos - 1);
  $("rfwd").onclick = () => replayGo(S.pos + 1);
  $("rlast").onclick = () => replayGo(S.total);
  document.addEventListener("keydown", onKey);
  setupPanZoom();
  const m = location.hash.match(/game=([0-9a-f]+)/);  // a reload keeps the game
  if (m) {
    mode = "game";
    await request(() => api("GET", `/api/games/${m[1]}`), true);
    if (S && S.seats) syncForm();
  }
}

// the form shows the game on the page (after a reload), so "Start" plays the same set-up again
function syncForm() {
  $("nplayers").value = String(S.seats.length);
  buildSeats();
  document.querySelectorAll(".seat .spec").forEach((e, i) => { e.value = S.seats[i].spec; });
  document.querySelectorAll(".exp").forEach((e) => { e.checked = S.expansions.includes(e.value); });
  $("rules").value = S.rules && Object.keys(S.rules).length ? JSON.stringify(S.rules) : "";
}

async function newGame() {
  const players = [...document.querySelectorAll(".seat .spec")].map((e) => e.value.trim() || "human");
  const expansions = [...document.querySelectorAll(".exp:checked")].map((e) => e.value);
  const seed = $("seed").value === "" ? null : +$("seed").value;
  let rules = {};
  if ($("rules").value.trim()) {
    try { rules = JSON.parse($("rules").value); } catch (e) {
      showError(`rule options must be JSON such as {"maps_germany": {"town_extra_turn": true}}: ${e.message}`);
      return;
    }
  }
  await request(() => api("POST", "/api/games", {players, expansions, seed, rules}), true);
}

// ------------------------------------------------------------------ talking to the server
async function request(fn, fresh) {
  if (busy) return;
  busy = true;
  try {
    const st = await fn();
    showError(null);
    setState(st, fresh);
  } catch (e) {
    showError(e.message);
    if (mode === "game" && S) {  // show the server's state again (it is unchanged by the refused request)
      try { setState(await api("GET", `/api/games/${S.id}`)); } catch (e2) { /* keep the message */ }
    }
  } finally {
    busy = false;
  }
  if (mode === "game") scheduleAgent();
}

function act(action) {
  if (!S || mode !== "game") return;
  return request(() => api("POST", `/api/games/${S.id}/act`, {action, expect: S.n}));
}

function deciderIsAgent() {
  return S && mode === "game" && !S.over && !S.seats[S.player].human;
}

async function scheduleAgent() {
  clearTimeout(agentTimer);
  if (!deciderIsAgent()) return;
  // with the inspector on, the agent's own view is shown for the delay before it moves
  if ($("inspect").checked && !S.inspector) await loadInspector();
  if (!deciderIsAgent()) return;
  const delay = Math.max(0, +$("delay").value || 0);
  agentTimer = setTimeout(async () => {
    if (!deciderIsAgent() || busy) { scheduleAgent(); return; }
    const id = S.id, n = S.n;
    await request(() => api("POST", `/api/games/${id}/agent`, {expect: n}));
  }, delay);
}

// ------------------------------------------------------------------ drawing
function setState(st, fresh) {
  const newBoard = !S || S.id !== st.id;
  const old = S && S.layout;
  S = st;
  if (fresh || newBoard) { view = null; rot = 0; userView = false; }
  else if (!userView) view = null;
  else if (old && view) {  // the same cells stay where they were on the screen
    const L = S.layout;
    view.x += (L.left - old.left) + (old.x0 - L.x0) * L.tile_px;
    view.y += (L.top - old.top) + (old.y0 - L.y0) * L.tile_px;
  }
  pending = null;
  if (mode === "game" && S.id && !S.replay) history.replaceState(null, "", `#game=${S.id}`);
  if (S.phase === "tile" && S.legal) {
    // start from a rotation that fits somewhere
    const fits = new Set(Object.values(S.legal).flat());
    for (let k = 0; k < 4 && !fits.has(rot); k++) rot = (rot + 1) % 4;
  }
  draw();
  if ($("inspect").checked && !S.inspector && mode === "game" && !S.over && !deciderIsAgent()) loadInspector();
}

function draw() {
  const board = $("board");
  $("boardg").innerHTML = S.svg;
  fitView();
  drawOverlay();
  drawSide();
}

function fitView() {
  if (!S) return;
  const L = S.layout;
  if (!view) view = {x: 0, y: 0, w: L.width, h: L.height};
  $("board").setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
}

function zoom(f, cx, cy) {
  if (!view) return;
  userView = true;
  cx = cx ?? view.x + view.w / 2; cy = cy ?? view.y + view.h / 2;
  view = {x: cx - (cx - view.x) * f, y: cy - (cy - view.y) * f, w: view.w * f, h: view.h * f};
  fitView();
}

function setupPanZoom() {
  const board = $("board");
  let drag = null;
  board.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const p = toBoard(ev);
    zoom(ev.deltaY > 0 ? 1.15 : 0.87, p.x, p.y);
  }, {passive: false});
  board.addEventListener("mousedown", (ev) => { drag = {x: ev.clientX, y: ev.clientY, v: {...view}, moved: false}; });
  window.addEventListener("mousemove", (ev) => {
    if (!drag || !view) return;
    const r = board.getBoundingClientRect();
    const k = Math.max(view.w / r.width, view.h / r.height);
    const dx = (ev.clientX - drag.x) * k, dy = (ev.clientY - drag.y) * k;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) { view = {...drag.v, x: drag.v.x - dx, y: drag.v.y - dy}; userView = true; fitView(); }
  });
  window.addEventListener("mouseup", (ev) => {
    const d = drag; drag = null;
    if (d && !d.moved) onBoardClick(ev);
  });
}

function toBoard(ev) {
  const board = $("board");
  const pt = board.createSVGPoint();
  pt.x = ev.clientX; pt.y = ev.clientY;
  return pt.matrixTransform(board.getScreenCTM().inverse());
}

function cellAt(ev) {
  const L = S.layout, p = toBoard(ev);
  return {x: Math.floor((p.x - L.left) / L.tile_px) + L.x0, y: Math.floor((p.y - L.top) / L.tile_px) + L.y0};
}

function onBoardClick(ev) {
  if (!S || mode !== "game" || S.over || deciderIsAgent()) return;
  const t = ev.target;
  const hit = t.closest && t.closest(".spot, .target");
  if (hit) { act(hit.dataset.action); return; }
  if (S.phase !== "tile") return;
  const c = cellAt(ev);
  const rots = S.legal[`${c.x},${c.y}`];
  if (!rots) return;
  if (pending && pending.x === c.x && pending.y === c.y) { placePending(); return; }
  pending = c;
  if (!rots.includes(rot)) rot = nextRot(rots, rot, 1);
  drawOverlay();
}

function nextRot(rots, r, dir) {
  for (let k = 1; k <= 4; k++) { const q = (r + dir * k + 8) % 4; if (rots.includes(q)) return q; }
  return r;
}

function rotate(dir) {
  if (!S || S.phase !== "tile") return;
  if (pending) rot = nextRot(S.legal[`${pending.x},${pending.y}`], rot, dir);
  else rot = (rot + dir + 4) % 4;
  drawOverlay();
}

function placePending() {
  if (pending) act(`tile ${pending.x},${pending.y} r${rot}`);
}

function onKey(ev) {
  if (ev.target.tagName === "INPUT") return;
  if (ev.key === "q" || ev.key === "Q" || ev.key === "ArrowLeft") rotate(-1);
  else if ("eErR".includes(ev.key) || ev.key === "ArrowRight") rotate(1);
  else if (ev.key === "Enter") placePending();
  else if (ev.key === "p" && S && S.can_pass && !deciderIsAgent()) act("pass");
}

function drawOverlay() {
  const g = $("overlay");
  g.innerHTML = "";
  if (!S) return;
  const L = S.layout, tp = L.tile_px;
  const human = mode === "game" && !S.over && !deciderIsAgent();
  document.querySelectorAll("#boardg .cell.legal").forEach((c) => {
    const rots = c.dataset.rots.split(",").map(Number);
    c.classList.toggle("fits", rots.includes(rot));
  });
  $("drawnbox").hidden = !(S.phase === "tile" && S.drawn_svg && S.drawn_svg.length);
  if (!$("drawnbox").hidden) {
    $("drawnid").textContent = S.drawn;
    $("drawn").innerHTML = S.drawn_svg[rot];
    $("place").disabled = !pending || !human;
  }
  if (pending && S.phase === "tile") {
    const x = L.left + (pending.x - L.x0) * tp, y = L.top + (pending.y - L.y0) * tp;
    const p = document.createElementNS(SVGNS, "g");
    p.setAttribute("class", "pending");
    p.setAttribute("transform", `translate(${x},${y})`);
    p.innerHTML = S.drawn_svg[rot] + `<rect width="${tp}" height="${tp}" fill="none" stroke="#ffd628" stroke-width="3"/>`;
    p.setAttribute("data-x", pending.x); p.setAttribute("data-y", pending.y);
    g.appendChild(p);
  }
  if (human && S.decision) drawTargets(g, tp);
  if (human) {
    for (const s of S.spots) {
      const c = document.createElementNS(SVGNS, "g");
      c.setAttribute("class", "spot");
      c.dataset.action = s.action;
      c.innerHTML = `<circle cx="${s.x}" cy="${s.y}" r="${tp * 0.13}" fill="${S.colours[S.player]}" fill-opacity="0.75"
        stroke="white" stroke-width="2"/><title>${esc(s.tip || s.action)} (${esc(s.action)})</title>`;
      g.appendChild(c);
    }
  }
}

// a plug-in's decision on the board: a quarter (area) or a feature / road (point), each a clickable target
function drawTargets(g, tp) {
  for (const c of S.decision.choices) {
    if (!c.area && !c.point) continue;
    const e = document.createElementNS(SVGNS, "g");
    e.setAttribute("class", "target " + (c.area ? "area" : "point"));
    e.dataset.action = c.action;
    if (c.area) {
      const [x, y, w, h] = c.area;
      e.innerHTML = `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="4" fill="#ffd628" fill-opacity="0.25"
        stroke="#ffd628" stroke-width="3" stroke-dasharray="6 3"/>`;
    } else {
      const [x, y] = c.point, r = tp * 0.17;
      e.innerHTML = `<circle cx="${x}" cy="${y}" r="${r}" fill="#ffd628" fill-opacity="0.55" stroke="#fff"
        stroke-width="2"/><svg x="${x - r * 0.8}" y="${y - r * 0.8}" width="${r * 1.6}" height="${r * 1.6}"
        viewBox="0 0 32 32">${c.icon}</svg>`;
    }
    const title = document.createElementNS(SVGNS, "title");
    title.textContent = `${c.label}: ${c.tip}`;
    e.appendChild(title);
    e.addEventListener("mouseenter", () => hot(c.action, true));
    e.addEventListener("mouseleave", () => hot(c.action, false));
    g.appendChild(e);
  }
}

// hovering a control lights its target on the board and the other way round
function hot(action, on) {
  for (const e of document.querySelectorAll(".target, .choice")) {
    if (e.dataset.action === action) e.classList.toggle("hot", on);
  }
}

function decisionControls(ch) {
  const d = S.decision;
  const p = document.createElement("div");
  p.className = "prompt";
  p.textContent = d.prompt;
  ch.appendChild(p);
  let group = null, box = ch;
  for (const c of d.choices) {
    if (c.passes) continue;
    if (c.group !== group) {
      group = c.group;
      box = ch;
      if (group) {
        const h = document.createElement("div"); h.className = "group"; h.textContent = group; ch.appendChild(h);
        box = document.createElement("div"); box.className = "groupbox"; ch.appendChild(box);
      }
    }
    const b = document.createElement("button");
    b.className = "choice decision" + (c.area || c.point ? " onboard" : "");
    b.dataset.action = c.action;
    b.title = c.tip;
    b.innerHTML = (c.icon ? `<svg width="28" height="28" viewBox="0 0 32 32">${c.icon}</svg>` : "") +
      `<span>${esc(c.label)}</span>`;
    b.onclick = () => act(c.action);
    b.onmouseenter = () => hot(c.action, true);
    b.onmouseleave = () => hot(c.action, false);
    box.appendChild(b);
  }
  for (const a of d.other) {  // an enabled action no control covers (none with the built-in plug-ins)
    if (a === "pass") continue;
    const b = document.createElement("button"); b.className = "choice"; b.dataset.action = a; b.textContent = a;
    b.onclick = () => act(a);
    ch.appendChild(b);
  }
  const pass = d.choices.find((c) => c.passes);
  if (pass || d.other.includes("pass")) {
    const b = document.createElement("button"); b.id = "pass"; b.dataset.action = "pass";
    b.textContent = pass ? pass.label : "Pass"; b.title = pass ? pass.tip : "pass"; b.onclick = () => act("pass");
    ch.appendChild(b);
  }
}

function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }

function drawSide() {
  const n = S.scores.length;
  let rows = "<tr><th></th><th>seat</th><th>points</th><th>followers</th></tr>";
  for (let p = 0; p < n; p++) {
    const who = S.seats ? S.seats[p].spec : "";
    const cls = !S.over && S.player === p ? "tomove" : "";
    rows += `<tr class="${cls}" data-seat="${p}"><td><span class="swatch" style="background:${S.colours[p]}"></span></td>
      <td>P${p} ${esc(who)}</td><td class="score">${S.scores[p]}</td><td>${S.supply[p]}/${S.followers}</td></tr>`;
  }
  $("players").innerHTML = rows;
  $("tiles").textContent = `Tiles left: ${S.tiles_left}`;
  $("turn").textContent = S.over ? "Game over" : `Turn ${S.turn}, phase ${S.phase}, P${S.player} to move` +
    (deciderIsAgent() ? ` (${S.seats[S.player].spec} is thinking)` : "");
  $("status").innerHTML = S.status.map((s) => `<div>${esc(s.text)}</div>`).join("");
  $("panels").innerHTML = (S.panels || []).join("");  // the plug-ins' panel blocks (Stained Glass's windows)
  // choices: pass and the other legal actions of this phase (expansion phases as a list)
  const ch = $("choices");
  ch.innerHTML = "";
  if (mode === "game" && !S.over && !deciderIsAgent() && S.decision) {
    decisionControls(ch);
  } else if (mode === "game" && !S.over && !deciderIsAgent()) {
    if (S.phase !== "tile") {
      const h = document.createElement("div");
      h.textContent = S.spots.length ? `Phase ${S.phase}: click a follower spot on the board, or` : `Phase ${S.phase}:`;
      ch.appendChild(h);
    }
    for (const a of S.actions) {
      const b = document.createElement("button"); b.className = "choice"; b.textContent = a; b.onclick = () => act(a);
      ch.appendChild(b);
    }
    if (S.can_pass) {
      const b = document.createElement("button"); b.id = "pass"; b.textContent = "Pass"; b.onclick = () => act("pass");
      ch.appendChild(b);
    }
  }
  $("hint").hidden = !(mode === "game" && S.hint && !S.over && !deciderIsAgent());
  $("log").innerHTML = (S.log || []).slice().reverse().map((e) =>
    `<li>turn ${e.turn}: ${esc(e.text)}<div class="items">${e.items.map(esc).join("; ")}</div></li>`).join("");
  drawFinal();
  drawInspector();
  $("replayctl").hidden = mode !== "replay";
  if (mode === "replay") {
    $("rpos").textContent = `${S.pos} / ${S.total}`;
    $("rnext").textContent = (S.played ? `played: ${S.played}. ` : "") + (S.next ? `next: ${S.next}` : "end of the record");
  }
}

function drawFinal() {
  const f = $("final");
  if (!S.over || !S.final) { f.hidden = true; return; }
  const kinds = [...new Set(S.final.kinds.flatMap((k) => Object.keys(k)))].sort();
  let h = `<h3>Game over: ${S.final.winners.map((p) => "P" + p).join(", ")} won</h3><table><tr><th></th>`;
  for (let p = 0; p < S.scores.length; p++) h += `<th>P${p}</th>`;
  h += "</tr>";
  for (const k of kinds) {
    h += `<tr><td>${esc(k)}</td>` + S.final.kinds.map((t) => `<td>${t[k] || 0}</td>`).join("") + "</tr>";
  }
  h += "<tr><td><b>total</b></td>" + S.final.scores.map((s) => `<td><b>${s}</b></td>`).join("") + "</tr></table>";
  h += `<button id="swap">Same deck, seats swapped</button> <a href="/api/games/${S.id}/record" download="game.json">record</a>`;
  f.innerHTML = h; f.hidden = false;
  $("swap").onclick = () => request(() => api("POST", `/api/games/${S.id}/swap`), true);
}

function drawInspector() {
  const box = $("inspector");
  const v = S.inspector;
  if (!v) { box.innerHTML = ""; return; }
  let h = `<div>${esc(v.model)} for P${v.seat}: value <b id="value">${v.value.toFixed(3)}</b> (${v.legal} legal)</div>
    <div class="small">value: the network's estimate of its return (+1 win, &minus;1 loss, plus 0.05 per point of
    score lead gained); on the board, the likeliest cells with the chance of placing there</div><table>`;
  for (const r of v.top) h += `<tr><td>${esc(r.action)}</td><td>${(100 * r.p).toFixed(1)}%</td></tr>`;
  box.innerHTML = h + "</table>";
}

async function loadInspector() {
  if (!S || mode !== "game" || S.over) return;
  const id = S.id, n = S.n;
  try {
    const st = await api("GET", `/api/games/${id}?inspect=1`);
    if (S.id === id && S.n === n) { S = st; draw(); }
  } catch (e) { showError(e.message); }
}

function refreshInspector() {
  if (!S) return;
  if ($("inspect").checked) loadInspector();
  else if (S.inspector) { S.inspector = null; api("GET", `/api/games/${S.id}`).then((st) => { S = st; draw(); }); }
}

// ------------------------------------------------------------------ replays
async function loadRecord(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  const text = await file.text();
  clearTimeout(agentTimer);
  let rec;
  try { rec = JSON.parse(text); } catch (e) { showError(`the file is not JSON: ${e.message}`); return; }
  const prev = mode;
  mode = "replay";
  await request(() => api("POST", "/api/replays", {record: rec}), true);
  if (!S || !S.replay) mode = prev;
  ev.target.value = "";
}

function replayGo(k) {
  if (!S || mode !== "replay") return;
  k = Math.max(0, Math.min(S.total, k));
  return request(() => api("GET", `/api/replays/${S.id}?step=${k}`));
}

// a new game switches back from a replay
const _newGame = newGame;
newGame = async function () { mode = "game"; return _newGame(); };

init();
