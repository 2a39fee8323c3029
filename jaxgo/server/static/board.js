// jaxgo analysis board: a clickable Go board talking to `jaxgo serve --http` (KataGo-style JSON queries,
// responses streamed as server-sent events from /api/stream).
"use strict";

const COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";
const state = {
  size: 9, komi: 7.5,
  setup: {},          // point -> "B" | "W" (initial stones)
  firstPlayer: "B",
  moves: [],          // [["B", "E5"], ...] (the whole line, possibly from an SGF)
  turn: 0,            // moves[0..turn) are on the board
  analysis: null,     // last response for the shown position
  version: 0,         // bumped by every change of the position: a response for an older one is dropped
  source: null,       // EventSource of the live analysis
  graph: {},          // turn -> Black win rate
  graphSource: null,
  queryCount: 0,
};

const $ = (id) => document.getElementById(id);

function vertex(point) {
  if (point === state.size * state.size) return "pass";
  const row = Math.floor(point / state.size), col = point % state.size;
  return COLUMNS[col] + (state.size - row);
}

function pointOf(v) {
  if (v.toLowerCase() === "pass") return state.size * state.size;
  const col = COLUMNS.indexOf(v[0].toUpperCase());
  const row = state.size - parseInt(v.slice(1), 10);
  return row * state.size + col;
}

function neighbours(p) {
  const n = state.size, r = Math.floor(p / n), c = p % n, out = [];
  if (r > 0) out.push(p - n);
  if (r < n - 1) out.push(p + n);
  if (c > 0) out.push(p - 1);
  if (c < n - 1) out.push(p + 1);
  return out;
}

function chainWithoutLiberty(board, p) {
  const colour = board[p], seen = new Set([p]), stack = [p];
  while (stack.length) {
    const q = stack.pop();
    for (const nb of neighbours(q)) {
      if (board[nb] === 0) return null;
      if (board[nb] === colour && !seen.has(nb)) { seen.add(nb); stack.push(nb); }
    }
  }
  return seen;
}

// Board after moves[0..turn): +1 black, -1 white, 0 empty; null if a move is impossible (occupied / suicide).
function position(turn) {
  const board = new Array(state.size * state.size).fill(0);
  for (const [p, c] of Object.entries(state.setup)) board[p] = c === "B" ? 1 : -1;
  for (let i = 0; i < turn; i++) {
    const [c, v] = state.moves[i];
    const p = pointOf(v);
    if (p === state.size * state.size) continue;
    if (board[p] !== 0) return null;
    const me = c === "B" ? 1 : -1;
    board[p] = me;
    for (const nb of neighbours(p)) {
      if (board[nb] === -me) {
        const dead = chainWithoutLiberty(board, nb);
        if (dead) for (const q of dead) board[q] = 0;
      }
    }
    if (chainWithoutLiberty(board, p)) return null;
  }
  return board;
}

function toPlay(turn) {
  if (turn < state.moves.length) return state.moves[turn][0];
  if (turn === 0) return state.firstPlayer;
  return state.moves[turn - 1][0] === "B" ? "W" : "B";
}

function query(extra) {
  const initialStones = Object.entries(state.setup).map(([p, c]) => [c, vertex(Number(p))]);
  return Object.assign({
    id: "web" + (state.queryCount++), rules: "chinese", komi: state.komi,
    boardXSize: state.size, boardYSize: state.size, initialStones, initialPlayer: state.firstPlayer,
    moves: state.moves.slice(0, state.turn),
    // the board's fields count playouts: one playout a visit, whatever the server's default for KaTrain
    overrideSettings: { playouts_per_visit: 1 },
  }, extra);
}

// -- drawing ----------------------------------------------------------------------------------------------
function geometry() {
  const canvas = $("board"), n = state.size;
  const step = canvas.width / (n + 1);
  return { canvas, ctx: canvas.getContext("2d"), n, step, at: (i) => step * (i + 1) };
}

function draw() {
  const { canvas, ctx, n, step, at } = geometry();
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#dcb35c";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const board = position(state.turn) || new Array(n * n).fill(0);
  const a = state.analysis;
  if (a && a.ownership && $("showown").checked) {
    for (let p = 0; p < n * n; p++) {
      const v = a.ownership[p], r = Math.floor(p / n), c = p % n;
      ctx.fillStyle = v > 0 ? `rgba(0,0,0,${0.6 * v})` : `rgba(255,255,255,${-0.85 * v})`;
      ctx.fillRect(at(c) - step / 2, at(r) - step / 2, step, step);
    }
  }
  ctx.strokeStyle = "#333";
  ctx.lineWidth = 1;
  for (let i = 0; i < n; i++) {
    ctx.beginPath(); ctx.moveTo(at(0), at(i)); ctx.lineTo(at(n - 1), at(i)); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(at(i), at(0)); ctx.lineTo(at(i), at(n - 1)); ctx.stroke();
  }
  ctx.fillStyle = "#333";
  ctx.font = `${Math.max(9, step * 0.3)}px sans-serif`;
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  for (let i = 0; i < n; i++) {
    ctx.fillText(COLUMNS[i], at(i), step * 0.4);
    ctx.fillText(String(n - i), step * 0.4, at(i));
  }
  for (let p = 0; p < n * n; p++) {
    if (!board[p]) continue;
    const r = Math.floor(p / n), c = p % n;
    ctx.beginPath();
    ctx.arc(at(c), at(r), step * 0.46, 0, 2 * Math.PI);
    ctx.fillStyle = board[p] > 0 ? "#111" : "#f8f8f8";
    ctx.fill();
    ctx.strokeStyle = "#000"; ctx.stroke();
  }
  if (state.turn > 0) {
    const p = pointOf(state.moves[state.turn - 1][1]);
    if (p < n * n) {
      ctx.beginPath();
      ctx.arc(at(p % n), at(Math.floor(p / n)), step * 0.18, 0, 2 * Math.PI);
      ctx.strokeStyle = "#e33"; ctx.lineWidth = 2; ctx.stroke(); ctx.lineWidth = 1;
    }
  }
  if (a && a.moveInfos) {
    a.moveInfos.slice(0, 5).forEach((m, i) => {
      const p = pointOf(m.move);
      if (p >= n * n || board[p]) return;
      const x = at(p % n), y = at(Math.floor(p / n));
      ctx.beginPath(); ctx.arc(x, y, step * 0.42, 0, 2 * Math.PI);
      ctx.fillStyle = i === 0 ? "rgba(60,170,255,0.9)" : "rgba(120,210,120,0.85)"; ctx.fill();
      ctx.fillStyle = "#000";
      ctx.font = `${Math.max(8, step * 0.26)}px sans-serif`;
      ctx.fillText(String(i + 1), x, y);
    });
  }
  $("slider").max = state.moves.length;
  $("slider").value = state.turn;
  $("turn").textContent = `move ${state.turn} / ${state.moves.length}`;
  $("toplay").textContent = `${toPlay(state.turn) === "B" ? "Black" : "White"} to play`;
  drawGraph();
}

function clearAnalysis() {
  state.analysis = null;
  $("winrate").textContent = "Black win rate: -";
  $("moves").innerHTML = "";
}

function showAnalysis(a) {
  state.analysis = a;
  const rate = a.rootInfo ? a.rootInfo.winrate : null;
  $("winrate").textContent = rate === null ? "Black win rate: -" :
    `Black win rate: ${(100 * rate).toFixed(1)}%  score lead ${a.rootInfo.scoreLead.toFixed(1)}  (${a.rootInfo.visits} playouts)`;
  const list = $("moves");
  list.innerHTML = "";
  for (const m of (a.moveInfos || []).slice(0, 6)) {
    const li = document.createElement("li");
    li.textContent = `${m.move.padEnd(4)} ${String(m.visits).padStart(5)} playouts  ${(100 * m.winrate).toFixed(1)}%  pv ${m.pv.slice(0, 6).join(" ")}`;
    list.appendChild(li);
  }
  draw();
}

function drawGraph() {
  const canvas = $("graphcanvas"), ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, total = Math.max(1, state.moves.length);
  ctx.clearRect(0, 0, w, h);
  ctx.strokeStyle = "#ccc";
  ctx.beginPath(); ctx.moveTo(0, h / 2); ctx.lineTo(w, h / 2); ctx.stroke();
  const x = (t) => 4 + (w - 8) * t / total, y = (v) => 4 + (h - 8) * (1 - v);
  ctx.strokeStyle = "#36c"; ctx.lineWidth = 2; ctx.beginPath();
  let started = false;
  for (let t = 0; t <= state.moves.length; t++) {
    if (!(t in state.graph)) continue;
    if (!started) { ctx.moveTo(x(t), y(state.graph[t])); started = true; } else ctx.lineTo(x(t), y(state.graph[t]));
  }
  ctx.stroke(); ctx.lineWidth = 1;
  ctx.strokeStyle = "#e33";
  ctx.beginPath(); ctx.moveTo(x(state.turn), 0); ctx.lineTo(x(state.turn), h); ctx.stroke();
  ctx.fillStyle = "#333"; ctx.font = "11px sans-serif"; ctx.textAlign = "left";
  ctx.fillText("Black win rate", 6, 12);
}

// -- analysis ---------------------------------------------------------------------------------------------
function stopAnalysis() {
  if (state.source) { state.source.close(); state.source = null; }
}

function analyze() {
  stopAnalysis();
  const q = query({ maxVisits: Number($("visits").value) || 1000, includeOwnership: true,
                    reportDuringSearchEvery: 0.4 });
  const version = state.version;
  $("status").textContent = "analysing...";
  const source = new EventSource("/api/stream?q=" + encodeURIComponent(JSON.stringify(q)));
  state.source = source;
  source.onmessage = (event) => {
    const a = JSON.parse(event.data);
    if (a.error) { $("status").textContent = "error: " + a.error; return; }
    if (a.warning || version !== state.version) return;  // a position shown before: not this one
    showAnalysis(a);
    $("status").textContent = a.isDuringSearch ? "analysing..." : "done";
  };
  source.addEventListener("done", () => { source.close(); if (state.source === source) state.source = null; });
  source.onerror = () => { source.close(); };
}

function graph() {
  if (state.graphSource) state.graphSource.close();
  state.graph = {};
  const turns = [...Array(state.moves.length + 1).keys()];
  const q = query({ moves: state.moves, analyzeTurns: turns, maxVisits: Number($("graphvisits").value) || 200 });
  const source = new EventSource("/api/stream?q=" + encodeURIComponent(JSON.stringify(q)));
  state.graphSource = source;
  $("status").textContent = "graph: analysing " + turns.length + " positions...";
  source.onmessage = (event) => {
    const a = JSON.parse(event.data);
    if (a.error) { $("status").textContent = "error: " + a.error; return; }
    if (a.turnNumber === undefined || a.isDuringSearch || !a.rootInfo) return;
    state.graph[a.turnNumber] = a.rootInfo.winrate;
    $("status").textContent = `graph: ${Object.keys(state.graph).length} / ${turns.length} positions`;
    drawGraph();
  };
  source.addEventListener("done", () => { source.close(); $("status").textContent = "graph done"; });
  source.onerror = () => source.close();
}

async function engineMove() {
  // The engine's move for the side to play (a search of "playouts" playouts), played on the board.
  const version = state.version, colour = toPlay(state.turn);
  $("status").textContent = "engine thinking...";
  const reply = await fetch("/api/query", { method: "POST", body: JSON.stringify(
    query({ maxVisits: Number($("visits").value) || 1000, includeOwnership: true })) });
  const answers = await reply.json();
  const final = answers.find((a) => a.turnNumber !== undefined && !a.isDuringSearch);
  const error = answers.find((a) => a.error);
  if (version !== state.version) return;  // the position changed meanwhile
  if (!final || !final.moveInfos || !final.moveInfos.length) {
    $("status").textContent = error ? "error: " + error.error : "no move";
    return;
  }
  const move = final.moveInfos[0].move;
  state.moves = state.moves.slice(0, state.turn).concat([[colour, move]]);
  state.turn = state.moves.length;
  changed();
  $("status").textContent = `engine played ${colour} ${move}`;
}

// -- input ------------------------------------------------------------------------------------------------
const NO_ANALYSIS = "no analysis of this position (Analyze)";

function changed() {
  // A new position: its old analysis is dropped; a running analysis starts again on it, else the status says
  // that nothing is analysed (never a stale "done").
  state.version += 1;
  clearAnalysis();
  draw();
  if (state.source) analyze(); else $("status").textContent = NO_ANALYSIS;
}

function clickBoard(event) {
  const { canvas, n, step } = geometry();
  const rect = canvas.getBoundingClientRect();
  const c = Math.round((event.clientX - rect.left) * canvas.width / rect.width / step) - 1;
  const r = Math.round((event.clientY - rect.top) * canvas.height / rect.height / step) - 1;
  if (r < 0 || c < 0 || r >= n || c >= n) return;
  const p = r * n + c;
  const mode = document.querySelector("input[name=mode]:checked").value;
  if (mode === "play") {
    const moves = state.moves.slice(0, state.turn).concat([[toPlay(state.turn), vertex(p)]]);
    const saved = state.moves;
    state.moves = moves;
    if (!position(moves.length)) { state.moves = saved; $("status").textContent = "illegal move"; return; }
    state.turn = moves.length;
  } else {
    state.moves = state.moves.slice(0, state.turn);
    const board = position(state.turn);
    if (mode === "E") delete state.setup[p];
    else if (!board[p] || state.setup[p]) state.setup[p] = mode;
    if (state.turn > 0) {  // set-up edits start a fresh line from the current position
      const now = position(state.turn);
      state.setup = {};
      now.forEach((v, q) => { if (v) state.setup[q] = v > 0 ? "B" : "W"; });
      if (mode === "E") delete state.setup[p]; else state.setup[p] = mode;
      state.firstPlayer = toPlay(state.turn);
      state.moves = []; state.turn = 0;
    }
  }
  changed();
}

function newBoard(size) {
  if (state.graphSource) { state.graphSource.close(); state.graphSource = null; }
  Object.assign(state, { size, setup: {}, moves: [], turn: 0, firstPlayer: "B", graph: {} });
  $("size").value = String(size);
  changed();
}

async function loadSgf(file) {
  const text = await file.text();
  const reply = await fetch("/api/sgf", { method: "POST", body: text });
  const data = await reply.json();
  if (data.error) { $("status").textContent = "SGF: " + data.error; return; }
  newBoard(data.size);
  state.komi = data.komi; $("komi").value = data.komi;
  for (const [c, v] of data.initialStones) state.setup[pointOf(v)] = c;
  state.firstPlayer = data.initialPlayer;
  state.moves = data.moves; state.turn = data.moves.length;
  changed();
  if (!state.source) $("status").textContent = `loaded ${data.moves.length} moves`;
}

function goTo(turn) {
  state.turn = Math.max(0, Math.min(state.moves.length, turn));
  changed();
}

function init() {
  $("board").addEventListener("click", clickBoard);
  $("size").addEventListener("change", () => newBoard(Number($("size").value)));
  $("komi").addEventListener("change", () => { state.komi = Number($("komi").value); changed(); });
  $("clear").addEventListener("click", () => newBoard(state.size));
  $("pass").addEventListener("click", () => {
    state.moves = state.moves.slice(0, state.turn).concat([[toPlay(state.turn), "pass"]]);
    state.turn = state.moves.length; changed();
  });
  $("undo").addEventListener("click", () => goTo(state.turn - 1));
  $("analyze").addEventListener("click", analyze);
  $("enginemove").addEventListener("click", engineMove);
  $("stop").addEventListener("click", () => { stopAnalysis(); $("status").textContent = "stopped"; });
  $("showown").addEventListener("change", draw);
  $("first").addEventListener("click", () => goTo(0));
  $("prev").addEventListener("click", () => goTo(state.turn - 1));
  $("next").addEventListener("click", () => goTo(state.turn + 1));
  $("last").addEventListener("click", () => goTo(state.moves.length));
  $("slider").addEventListener("input", () => goTo(Number($("slider").value)));
  $("sgffile").addEventListener("change", (e) => { if (e.target.files.length) loadSgf(e.target.files[0]); });
  $("graph").addEventListener("click", graph);
  $("graphcanvas").addEventListener("click", (e) => {
    const rect = e.target.getBoundingClientRect();
    goTo(Math.round((e.clientX - rect.left) / rect.width * Math.max(1, state.moves.length)));
  });
  draw();
}

window.jaxgo = { state, analyze, graph, loadSgf, goTo, newBoard, vertex, engineMove };
init();
