/* cog-arena replay page: draws the frames that build_site re-derived with the engine.
 *
 * The page's data sits in <script id="page-data">. The position shown is
 * (game, ply, tick): ply 0 is the start, ply N the position after the N-th
 * recorded ply; the battle also steps through the ticks of a command turn.
 * The URL hash (#game=1&ply=17, battle also &tick=35) opens a position and
 * follows every step. Every drawn cell carries data-cell (a1 bottom-left,
 * the battle's "x,y" 1-based) and every piece data-piece, for people and tests.
 */
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("page-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const SEAT_COLOURS = ["#d23c3c", "#2f6fd6"];
  const PLAY_MS = { battle: 90, backgammon: 550, default: 700 };
  // games whose plies have sub-positions: the battle's ticks, backgammon's checker steps
  const SUBSTEPS = { battle: "tick", backgammon: "step" };

  // -- small DOM helpers ---------------------------------------------------------

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    put(node, ...children);
    return node;
  }

  // Appends the children that are there: the DOM's own append() would print null as "null".
  function put(node, ...children) {
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
  }

  function s(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    setAttrs(node, attrs);
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function svgRoot(width, height, label) {
    return s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label });
  }

  // -- position state ------------------------------------------------------------

  const view = { game: 0, ply: 0, tick: 0, playing: false, timer: null, seatView: null, selected: null };

  function current() { return DATA.games[view.game]; }
  function lastPly() { return current().plies.length; }
  function ticksOf(ply) {
    const frame = current().frames[ply];
    if (!frame) return 1;
    if (frame.ticks) return frame.ticks.length;
    return frame.steps && frame.steps.length ? frame.steps.length : 1;
  }

  function seatColour(seat) {
    const own = current().static.seat_colours;
    return own ? own[seat] : SEAT_COLOURS[seat];
  }

  function setPosition(game, ply, tick) {
    view.game = clamp(game, 0, DATA.games.length - 1);
    view.ply = clamp(ply, 0, lastPly());
    const ticks = ticksOf(view.ply);
    view.tick = tick === undefined || tick === null ? ticks - 1 : clamp(tick, 0, ticks - 1);
    render();
    writeHash();
  }

  function clamp(n, lo, hi) { return Math.max(lo, Math.min(hi, Number.isFinite(n) ? n : lo)); }

  function step(delta) { setPosition(view.game, view.ply + delta); }

  function stepTick(delta) {
    let { ply, tick } = view;
    tick += delta;
    if (tick >= ticksOf(ply)) { if (ply >= lastPly()) return false; ply += 1; tick = 0; }
    if (tick < 0) { if (ply <= 0) return false; ply -= 1; tick = ticksOf(ply) - 1; }
    setPosition(view.game, ply, tick);
    return true;
  }

  function togglePlay(force) {
    view.playing = force === undefined ? !view.playing : force;
    clearInterval(view.timer);
    if (view.playing) {
      if (view.ply >= lastPly() && view.tick >= ticksOf(view.ply) - 1) setPosition(view.game, 0);
      const sub = DATA.game in SUBSTEPS;
      view.timer = setInterval(() => {
        const moved = sub ? stepTick(1) : view.ply < lastPly() && (step(1), true);
        if (!moved) togglePlay(false);
      }, PLAY_MS[DATA.game] || PLAY_MS.default);
    }
    renderControls();
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const index = Number(params.get("game") || DATA.games[0].index);
    const game = Math.max(0, DATA.games.findIndex((g) => g.index === index));
    const ply = params.has("ply") ? Number(params.get("ply")) : 0;
    let tick;
    if (params.has("tick")) tick = Number(params.get("tick")) - firstTick(game, ply);
    if (params.has("step")) tick = Number(params.get("step")) - 1;
    return { game, ply, tick };
  }

  function firstTick(gameIdx, ply) {
    const frames = DATA.games[gameIdx].frames;
    const frame = frames[clamp(ply, 0, frames.length - 1)];
    return frame && frame.first_tick !== undefined ? frame.first_tick : 0;
  }

  function writeHash() {
    let hash = `#game=${current().index}&ply=${view.ply}`;
    if (DATA.game === "battle" && view.tick < ticksOf(view.ply) - 1) {
      hash += `&tick=${firstTick(view.game, view.ply) + view.tick}`;
    }
    if (DATA.game === "backgammon" && view.tick < ticksOf(view.ply) - 1) hash += `&step=${view.tick + 1}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // -- page skeleton ---------------------------------------------------------------

  const ui = {};

  function build() {
    const app = document.getElementById("app");
    app.textContent = "";
    const m = DATA.match || {};
    const params = Object.entries(DATA.params || {}).map(([k, v]) => `${k}=${v}`).join(", ");
    app.append(
      h("p", { class: "meta" }, h("a", { href: "../index.html" }, "← league"), ` run ${DATA.run}`),
      h("h1", {}, `${DATA.game} · ${DATA.episode}`),
      h("div", { class: "meta", id: "meta" },
        h("span", {}, "game ", h("b", { id: "resolved-game" }, DATA.game), m.entry && m.entry !== DATA.game ? ` (entry ${m.entry})` : ""),
        h("span", {}, "seed ", h("b", { id: "seed" }, DATA.seed)),
        DATA.card_seed ? h("span", {}, "card seed ", h("code", { id: "card-seed" }, DATA.card_seed)) : null,
        h("span", {}, `match ${m.id || "?"}`),
        h("span", {}, `rules v${DATA.rules_version}`),
        params ? h("span", {}, params) : null),
    );
    if (DATA.games.length > 1) {
      ui.tabs = h("div", { class: "tabs", id: "game-tabs" },
        DATA.games.map((g, i) => h("button", { "data-game": g.index, onclick: () => { togglePlay(false); setPosition(i, 0); } }, `game ${g.index}`)));
      app.append(ui.tabs);
    }
    ui.result = h("p", { class: "result", id: "result" });
    ui.viewToggle = h("div", { class: "tabs viewtoggle", id: "view-toggle" });
    ui.top = h("div", { class: "player", id: "player-1" });
    ui.bottom = h("div", { class: "player", id: "player-0" });
    ui.board = h("div", { class: "board", id: "board" });
    ui.caption = h("div", { class: "caption", id: "board-caption" });
    ui.eval = h("figure", { class: "evalbar", id: "evalbar" });
    ui.controls = h("div", { class: "controls", id: "controls" });
    ui.graph = h("figure", { class: "graph", id: "graph" });
    ui.extra = h("div", { id: "extra" });
    // the heading sits above the scrolled list, never inside it, so it cannot cover a row
    ui.moves = h("ol", { class: "moves", id: "moves" });
    const movesCard = h("div", { class: "card moves-card", id: "moves-card" }, h("h3", { class: "moves-heading", id: "moves-heading" }, "Moves"), ui.moves);
    ui.details = h("div", { class: "details card", id: "details" }, h("span", { class: "meta" }, "Click a move for its attempts and raw replies."));
    app.append(
      ui.result,
      ui.viewToggle,
      h("div", { class: "replay" },
        h("div", { class: "board-col" },
          ui.top,
          h("div", { class: "stage" }, ui.eval, ui.board),
          ui.bottom, ui.caption, ui.controls, ui.graph),
        h("div", { class: "side-col" }, ui.extra, movesCard, ui.details)),
    );
    buildControls();
  }

  function buildControls() {
    const button = (id, label, title, action) => h("button", { id, title, "aria-label": title, onclick: action }, label);
    ui.play = button("play", "▶", "play / pause (space)", () => togglePlay());
    ui.where = h("span", { class: "where", id: "where" });
    ui.slider = h("input", { type: "range", id: "ply-slider", min: 0, value: 0, "aria-label": "ply",
      oninput: (e) => { togglePlay(false); setPosition(view.game, Number(e.target.value)); } });
    ui.controls.append(
      button("first", "«", "first (Home)", () => { togglePlay(false); setPosition(view.game, 0); }),
      button("prev", "‹", "previous (←)", () => { togglePlay(false); step(-1); }),
      ui.play,
      button("next", "›", "next (→)", () => { togglePlay(false); step(1); }),
      button("last", "»", "last (End)", () => { togglePlay(false); setPosition(view.game, lastPly()); }),
      ui.where, ui.slider);
    const sub = SUBSTEPS[DATA.game];
    if (sub) {
      ui.tickSlider = h("input", { type: "range", id: "tick-slider", min: 0, value: 0, "aria-label": sub,
        oninput: (e) => { togglePlay(false); setPosition(view.game, view.ply, Number(e.target.value)); } });
      ui.controls.append(
        button("prev-tick", "−1", `previous ${sub} (,)`, () => { togglePlay(false); stepTick(-1); }),
        button("next-tick", "+1", `next ${sub} (.)`, () => { togglePlay(false); stepTick(1); }),
        h("span", { class: "meta" }, sub === "tick" ? "ticks of this turn" : "checker steps of this play"), ui.tickSlider);
    }
  }

  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    const keys = {
      ArrowRight: () => step(1), ArrowLeft: () => step(-1),
      Home: () => setPosition(view.game, 0), End: () => setPosition(view.game, lastPly()),
      ".": () => stepTick(1), ",": () => stepTick(-1),
    };
    if (e.key === " ") { e.preventDefault(); togglePlay(); return; }
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault();
    togglePlay(false);
    action();
  });
  window.addEventListener("hashchange", () => {
    const at = readHash();
    togglePlay(false);
    setPosition(at.game, at.ply, at.tick);
  });

  // -- drawing one position ----------------------------------------------------------

  function render() {
    const g = current();
    const frame = g.frames[view.ply];
    document.body.dataset.ply = String(view.ply);
    document.body.dataset.game = String(g.index);
    if (ui.tabs) for (const b of ui.tabs.children) b.classList.toggle("on", Number(b.dataset.game) === g.index);
    renderToggle();
    const renderer = RENDERERS[DATA.game];
    ui.board.textContent = "";
    ui.caption.textContent = "";
    ui.extra.textContent = "";
    ui.board.append(renderer(g.static, frame, g));
    renderPlayers(g, frame);
    renderEval(g);
    renderControls();
    renderGraph(g);
    renderMoves(g);
    renderResult(g);
  }

  function seatName(g, seat) {
    const sides = g.static.sides;
    if (g.static.colours) return g.static.colours[seat];
    return sides ? sides[String(seat)] : DATA.game === "battle" ? (g.static.letters[seat] === "A" ? "Alpha" : "Bravo") : `seat ${seat}`;
  }

  function spectator() { return view.seatView === null; }

  function renderPlayers(g, frame) {
    for (const seat of [0, 1]) {
      const box = seat === 0 ? ui.bottom : ui.top;
      box.textContent = "";
      box.classList.toggle("to-move", frame.to_move === seat);
      box.dataset.seat = String(seat);
      put(box,
        h("span", { class: "swatch", style: `background:${seatColour(seat)}` }),
        h("span", { class: "alias" }, aliasOf(g, seat)), policyOf(g, seat),
        h("span", { class: "extra" }, `seat ${seat} · ${sideLabel(g, seat)}`, playerExtra(g, frame, seat)));
      const say = lastSay(g, seat);
      if (say && (spectator() || view.seatView === seat)) {
        box.append(h("span", { class: `say${say.stale ? " stale" : ""}`, "data-say-seat": seat, title: `said at ply ${say.ply}` }, say.text));
      }
    }
  }

  // The seat's alias; a replay without one (never written today) falls back to its side's name.
  function aliasOf(g, seat) { return (g.aliases || [])[seat] || seatName(g, seat); }

  // Who played the seat, for spectators only; a seat's own view, or a replay without names, shows none.
  function policyOf(g, seat) {
    const policy = spectator() ? (g.policies || [])[seat] : null;
    return policy ? h("span", { class: "policy", "data-policy": policy }, `(${policy})`) : null;
  }

  function sideLabel(g, seat) {
    if (DATA.game === "battle") return `${["red (left)", "blue (right)"][seat]}, squads ${g.static.letters[seat]}1-${g.static.letters[seat]}9`;
    return seatName(g, seat);
  }

  function playerExtra(g, frame, seat) {
    if (DATA.game === "quoridor") return h("span", { "data-walls-left": frame.walls_left[seat] }, ` · walls left ${frame.walls_left[seat]}`);
    if (DATA.game === "battle") return ` · alive ${aliveAt(g, seat)}`;
    return null;
  }

  // The latest `say` of a seat at or before the shown ply; older than this ply shows faded.
  function lastSay(g, seat) {
    for (let p = view.ply; p >= 1; p--) {
      const d = g.plies[p - 1].decisions.find((x) => x.seat === seat);
      if (d && d.say) return { text: d.say, ply: p, stale: p !== view.ply };
    }
    return null;
  }

  function share(a, b) {
    if (a >= 0 && b >= 0 && a + b > 0) return a / (a + b);
    const scale = Math.max(Math.abs(a), Math.abs(b), 1);
    return 0.5 + 0.5 * Math.tanh((a - b) / scale);
  }

  function shownStandings(g) {
    // mid-turn (a battle tick, a checker step) the position is between two recorded standings
    const midTurn = DATA.game in SUBSTEPS && view.tick < ticksOf(view.ply) - 1 && view.ply > 0;
    const ply = midTurn ? view.ply - 1 : view.ply;
    return { ply, values: g.standings[ply] };
  }

  function renderEval(g) {
    const { ply, values } = shownStandings(g);
    const [a, b] = values;
    const height = 300, width = 26;
    const red = Math.round(share(a, b) * height);
    const bar = svgRoot(width, height, "eval bar");
    bar.append(
      s("rect", { x: 0, y: 0, width, height, fill: seatColour(1), "data-seat": 1 }),
      s("rect", { x: 0, y: height - red, width, height: red, fill: seatColour(0), "data-seat": 0, id: "eval-red" }),
      s("line", { x1: 0, x2: width, y1: height / 2, y2: height / 2, stroke: "#888", "stroke-dasharray": "3 3" }),
      s("rect", { x: 0.5, y: 0.5, width: width - 1, height: height - 1, fill: "none", stroke: "#0004" }));
    ui.eval.textContent = "";
    ui.eval.append(bar, h("figcaption", { id: "eval-caption" },
      h("b", {}, "HEURISTIC"), h("br"), "standing", h("br"),
      h("span", { "data-standing": 0 }, a), " : ", h("span", { "data-standing": 1 }, b), h("br"),
      `(${aliasOf(g, 0)} : ${aliasOf(g, 1)})`, h("br"),
      ply === 0 ? "start" : `after ply ${ply}`));
    ui.eval.title = "The game's own heuristic standing (docs/rules.md), not an engine evaluation.";
  }

  function renderGraph(g) {
    const width = 520, height = 54, n = g.standings.length - 1;
    const x = (p) => (n ? (p / n) * (width - 8) : 0) + 4;
    const y = (p) => 4 + (1 - share(g.standings[p][0], g.standings[p][1])) * (height - 8);
    const points = g.standings.map((_, p) => `${x(p).toFixed(1)},${y(p).toFixed(1)}`).join(" ");
    const graph = svgRoot(width, height, "standing over the game (HEURISTIC)");
    graph.append(
      s("rect", { x: 0, y: 0, width, height, fill: "#fff", stroke: "#d8d5cc" }),
      s("line", { x1: 0, x2: width, y1: height / 2, y2: height / 2, stroke: "#ddd" }),
      s("polyline", { points, fill: "none", stroke: "#444", "stroke-width": 1.5, class: "standing-line" }),
      s("line", { x1: x(view.ply), x2: x(view.ply), y1: 0, y2: height, stroke: "#c58b00", "stroke-width": 2 }));
    graph.addEventListener("click", (e) => {
      const box = graph.getBoundingClientRect();
      togglePlay(false);
      setPosition(view.game, Math.round(((e.clientX - box.left - 4) / (box.width - 8)) * n));
    });
    graph.style.cursor = "pointer";
    // the caption above the plot, not inside it: the line can reach any height of the plot
    const first = aliasOf(g, 0);
    ui.graph.textContent = "";
    ui.graph.append(h("figcaption", { class: "graph-caption", id: "graph-caption" },
      `HEURISTIC standing over the game: ${first}'s share (up = ${first})`), graph);
  }

  function renderControls() {
    if (!ui.where) return;
    const n = lastPly();
    ui.play.textContent = view.playing ? "❚❚" : "▶";
    ui.slider.max = String(n);
    ui.slider.value = String(view.ply);
    let where = `ply ${view.ply} / ${n}`;
    if (SUBSTEPS[DATA.game]) {
      ui.tickSlider.max = String(ticksOf(view.ply) - 1);
      ui.tickSlider.value = String(view.tick);
    }
    if (DATA.game === "backgammon") {
      const steps = current().frames[view.ply].steps.length;
      where = `ply ${view.ply} / ${n}${steps ? ` · step ${view.tick + 1} / ${steps}` : ""}`;
    }
    if (DATA.game === "battle") {
      const frame = current().frames[view.ply];
      const tick = frame.first_tick + view.tick;
      where = `turn ${view.ply} / ${n} · tick ${tick} / ${current().static.max_ticks}`;
      ui.tickSlider.max = String(ticksOf(view.ply) - 1);
      ui.tickSlider.value = String(view.tick);
      ui.where.dataset.tick = String(tick);
    }
    ui.where.textContent = where;
    ui.where.dataset.ply = String(view.ply);
  }

  function renderResult(g) {
    const r = g.result;
    if (!r) { ui.result.textContent = "unfinished game"; return; }
    let text;
    if (!r.scores) text = `no contest (${r.ending})`;
    else if (r.scores[0] === r.scores[1]) text = `draw (${r.ending})`;
    else {
      const w = r.scores[0] > r.scores[1] ? 0 : 1;
      const policy = spectator() ? (g.policies || [])[w] : null;
      text = `${aliasOf(g, w)}${policy ? ` (${policy})` : ""} wins (${r.ending})`;
    }
    ui.result.textContent = `Game ${g.index}: ${text} · scores ${r.scores ? r.scores.join(" : ") : "none"} · ${r.reason} · ${r.plies} plies${r.detail ? " · " + r.detail : ""}`;
  }

  // -- the move list -------------------------------------------------------------------

  let movesFor = null;

  function renderMoves(g) {
    const key = `${view.game}|${view.seatView}`;
    if (movesFor !== key) {
      movesFor = key;
      ui.moves.textContent = "";
      g.plies.forEach((p, i) => ui.moves.append(moveRow(g, p, i + 1)));
      ui.details.textContent = "";
      ui.details.append(h("span", { class: "meta" }, "Click a move for its attempts and raw replies."));
    }
    for (const li of ui.moves.children) li.classList.toggle("current", Number(li.dataset.ply) === view.ply);
    const row = ui.moves.querySelector(`li[data-ply="${view.ply}"]`);
    if (row) {
      const top = row.offsetTop - ui.moves.offsetTop;
      if (top < ui.moves.scrollTop || top > ui.moves.scrollTop + ui.moves.clientHeight - row.offsetHeight) {
        ui.moves.scrollTop = top - ui.moves.clientHeight / 3;
      }
    }
  }

  function hiddenFromViewer(d) {
    return !spectator() && d.seat !== view.seatView;
  }

  function moveText(d) {
    if (hiddenFromViewer(d) && DATA.game === "stratego" && d.move.length > 20) return `(setup hidden from ${["Red", "Blue"][view.seatView]})`;
    return d.move;
  }

  function lastReply(d) {
    for (let i = d.attempts.length - 1; i >= 0; i--) if (d.attempts[i].reply) return d.attempts[i].reply;
    return null;
  }

  function moveRow(g, p, ply) {
    const li = h("li", { "data-ply": ply, onclick: () => { togglePlay(false); setPosition(view.game, ply); showDetails(g, p); } },
      h("span", { class: "no" }, `${ply}.`));
    const cell = h("div", {});
    for (const d of p.decisions) {
      const reply = hiddenFromViewer(d) ? null : lastReply(d);
      const dec = h("div", { class: "dec", "data-seat": d.seat },
        h("span", { class: "dot", style: `background:${seatColour(d.seat)}` }),
        h("span", {}, d.alias),
        h("span", { class: "mv", title: moveText(d) }, moveText(d)),
        h("span", { class: `badge source-${d.source}`, "data-source": d.source }, d.source));
      if (d.fallback) {
        dec.append(h("button", {
          class: "badge fallback", "data-cause": d.fallback.cause,
          title: `fallback: ${d.fallback.cause}\n${d.fallback.last_error}${reply ? `\nraw reply: ${reply.slice(0, 600)}` : ""}`,
          onclick: (e) => { e.stopPropagation(); togglePlay(false); setPosition(view.game, ply); showDetails(g, p); },
        }, d.fallback.cause));
      }
      if (d.say && (spectator() || view.seatView === d.seat)) dec.append(h("span", { class: "quote" }, `“${d.say}”`));
      cell.append(dec);
    }
    li.append(cell);
    return li;
  }

  function showDetails(g, p) {
    ui.details.textContent = "";
    ui.details.append(h("h3", {}, `Ply ${p.ply}`));
    for (const d of p.decisions) {
      const hidden = hiddenFromViewer(d);
      const box = h("div", { class: "decision", "data-seat": d.seat },
        h("div", {}, h("span", { class: "dot", style: `background:${seatColour(d.seat)}` }), " ",
          h("b", {}, d.alias), ` · ${d.source} · ${(d.latency_s * 1000).toFixed(1)} ms`),
        h("pre", {}, moveText(d)));
      if (d.fallback) {
        box.append(h("div", { class: "fallback-cause" }, h("span", { class: "badge source-fallback", "data-cause": d.fallback.cause }, `fallback: ${d.fallback.cause}`), ` ${d.fallback.last_error}`));
      }
      if (hidden) box.append(h("div", { class: "meta" }, "replies hidden in this seat's view"));
      else {
        for (const a of d.attempts) box.append(attemptBox(a));
        if (!d.attempts.length) box.append(h("div", { class: "meta" }, "scripted seat: no text reply"));
      }
      if (d.say && !hidden) box.append(h("div", { class: "quote" }, `says: “${d.say}”`));
      ui.details.append(box);
    }
  }

  // One attempt: what was sent (the prompt, folded), how the model thought (folded), what it replied.
  // Prompt, reasoning and reply are untrusted text: h() sets them as text, never as HTML.
  function attemptBox(a) {
    const tokens = usageText(a.usage);
    return h("div", { class: "attempt", "data-attempt": a.n },
      h("div", { class: "meta" }, `attempt ${a.n}${a.cause ? ` · ${a.cause}` : ""}${a.status ? ` · HTTP ${a.status}` : ""} · ${(a.latency_s * 1000).toFixed(1)} ms`),
      tokens ? h("div", { class: "meta tokens" }, tokens) : null,
      a.error ? h("div", { class: "error" }, a.error) : null,
      promptBlock(a),
      a.reasoning ? h("details", { class: "reasoning-block" },
        h("summary", { class: "reasoning" }, `reasoning (${charCount(a.reasoning)} chars)`),
        h("pre", { class: "reasoning-text" }, a.reasoning)) : null,
      h("pre", { class: "raw-reply" }, a.reply === null || a.reply === undefined ? "(no reply)" : a.reply));
  }

  // "tokens: 812 in · 140 out (96 reasoning)": input counts the cached and cache-written tokens too,
  // output includes the reasoning share (providers/completion.py, Usage).
  function usageText(usage) {
    if (!usage) return null;
    const known = (k) => typeof usage[k] === "number";
    const inputs = ["input_uncached", "cache_read", "cache_write"].filter(known);
    if (!inputs.length && !known("output")) return null;
    const parts = [`${inputs.length ? inputs.reduce((sum, k) => sum + usage[k], 0) : "?"} in`];
    parts.push(`${known("output") ? usage.output : "?"} out${usage.reasoning ? ` (${usage.reasoning} reasoning)` : ""}`);
    return `tokens: ${parts.join(" · ")}`;
  }

  // The prompt as sent: in the chat layout its first system_chars characters were the system message.
  // Characters as Python counts them (code points), not JavaScript's UTF-16 units.
  function promptBlock(a) {
    if (typeof a.prompt !== "string") return null;
    const split = Number.isInteger(a.system_chars);
    const part = (role, text) => [
      h("div", { class: "prompt-role", "data-role": role }, `${role} (${charCount(text)} chars)`),
      h("pre", { class: `prompt-part prompt-${role}` }, text)];
    const points = Array.from(a.prompt);
    return h("details", { class: "prompt-block" },
      h("summary", {}, `prompt (${points.length} chars${split ? ", system + user" : ""})`),
      split ? [...part("system", points.slice(0, a.system_chars).join("")), ...part("user", points.slice(a.system_chars).join(""))]
        : h("pre", { class: "prompt-part" }, a.prompt));
  }

  function charCount(text) { return Array.from(text).length; }

  function renderToggle() {
    ui.viewToggle.textContent = "";
    if (DATA.game !== "stratego") return;
    const g = current();
    const choices = [[null, "Spectator (all-seeing)"], [0, `${g.aliases[0]}'s view`], [1, `${g.aliases[1]}'s view`]];
    for (const [seat, label] of choices) {
      ui.viewToggle.append(h("button", {
        class: view.seatView === seat ? "on" : "", "data-view": seat === null ? "spectator" : seat,
        onclick: () => { view.seatView = seat; render(); },
      }, label));
    }
  }

  // -- boards ---------------------------------------------------------------------------

  const CELL = 56, PAD = 28;

  function cellName(files, f, r) { return `${files[f]}${r + 1}`; }

  function edgeLabels(root, files, ranks, x, y) {
    for (let f = 0; f < files.length; f++) {
      root.append(s("text", { x: x(f), y: y(-1) + 4, "text-anchor": "middle", class: "coord", "font-size": 13, fill: "#555" }, files[f]));
    }
    for (let r = 0; r < ranks; r++) {
      root.append(s("text", { x: PAD / 2, y: y(r) + 4, "text-anchor": "middle", class: "coord", "font-size": 13, fill: "#555" }, r + 1));
    }
  }

  function pieceColour(code) { return code === "R" ? SEAT_COLOURS[0] : SEAT_COLOURS[1]; }

  // Dark enough that the red and the blue discs both stand out from it (contrast above 3:1).
  const CONNECT_FOUR_BOARD = "#141a29";

  function connectFour(st, frame) {
    const files = st.files, ranks = st.ranks;
    const w = PAD + files.length * CELL + 8, hgt = ranks * CELL + PAD + 8;
    const root = svgRoot(w, hgt, "connect-four board");
    const x = (f) => PAD + f * CELL + CELL / 2, y = (r) => 4 + (ranks - 1 - r) * CELL + CELL / 2;
    root.append(s("rect", { x: PAD, y: 4, width: files.length * CELL, height: ranks * CELL, rx: 10, fill: CONNECT_FOUR_BOARD, class: "board-frame" }));
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const name = cellName(files, f, r), code = frame.cells[r][f];
      root.append(s("circle", { cx: x(f), cy: y(r), r: CELL * 0.4, fill: "#f6f5f1", "data-cell": name }));
      if (code !== ".") {
        root.append(s("circle", { cx: x(f), cy: y(r), r: CELL * 0.4, fill: pieceColour(code), "data-cell": name, "data-piece": code,
          stroke: frame.changed.includes(name) ? "#ffd23f" : "#0003", "stroke-width": frame.changed.includes(name) ? 4 : 1 }));
      }
    }
    edgeLabels(root, files, ranks, x, (r) => (r < 0 ? ranks * CELL + 22 : y(r)));
    return root;
  }

  function breakthrough(st, frame) {
    const files = st.files, ranks = st.ranks;
    const w = PAD + files.length * CELL + 8, hgt = ranks * CELL + PAD + 8;
    const root = svgRoot(w, hgt, "breakthrough board");
    const left = (f) => PAD + f * CELL, top = (r) => 4 + (ranks - 1 - r) * CELL;
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const name = cellName(files, f, r);
      root.append(s("rect", { x: left(f), y: top(r), width: CELL, height: CELL, "data-cell": name,
        fill: frame.changed.includes(name) ? "#f5dc8a" : (f + r) % 2 ? "#efe3c8" : "#b99a6b" }));
      const code = frame.cells[r][f];
      if (code !== ".") {
        root.append(s("circle", { cx: left(f) + CELL / 2, cy: top(r) + CELL / 2, r: CELL * 0.34, fill: pieceColour(code),
          stroke: "#fff", "stroke-width": 2, "data-cell": name, "data-piece": code }));
      }
    }
    edgeLabels(root, files, ranks, (f) => left(f) + CELL / 2, (r) => (r < 0 ? ranks * CELL + 22 : top(r) + CELL / 2));
    return root;
  }

  function hex(st, frame) {
    const files = st.files, ranks = st.ranks, size = 26, wd = Math.sqrt(3) * size;
    const cx = (f, r) => 40 + (f + r * 0.5) * wd, cy = (r) => 48 + (ranks - 1 - r) * 1.5 * size;
    const w = cx(files.length - 1, ranks - 1) + wd / 2 + 30, hgt = cy(0) + size + 30;
    const root = svgRoot(Math.ceil(w), Math.ceil(hgt), "hex board");
    const corner = (x, y, i) => { const a = (Math.PI / 180) * (60 * i - 30); return [x + size * Math.cos(a), y + size * Math.sin(a)]; };
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const x = cx(f, r), y = cy(r), name = cellName(files, f, r), code = frame.cells[r][f];
      const pts = [0, 1, 2, 3, 4, 5].map((i) => corner(x, y, i).map((v) => v.toFixed(1)).join(",")).join(" ");
      root.append(s("polygon", { points: pts, fill: frame.changed.includes(name) ? "#f5dc8a" : "#efe9da", stroke: "#8a826f", "data-cell": name }));
      if (code !== ".") root.append(s("circle", { cx: x, cy: y, r: size * 0.62, fill: pieceColour(code), stroke: "#fff", "stroke-width": 2, "data-cell": name, "data-piece": code }));
    }
    hexGoalEdges(root, files, ranks, (f, r, i) => corner(cx(f, r), cy(r), i));
    for (let f = 0; f < files.length; f++) {
      root.append(s("text", { x: cx(f, 0), y: cy(0) + size + 16, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, files[f]));
      root.append(s("text", { x: cx(f, ranks - 1), y: cy(ranks - 1) - size - 9, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, files[f]));
    }
    for (let r = 0; r < ranks; r++) {
      root.append(s("text", { x: cx(0, r) - wd / 2 - 12, y: cy(r) + 4, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, r + 1));
    }
    return root;
  }

  // The four goal edges over the cells' outline: red joins file a to file g, blue rank 1 to rank 7.
  // corner(f, r, i) is corner i of a cell, clockwise from its upper right (i = 0) to its top (i = 5).
  function hexGoalEdges(root, files, ranks, corner) {
    const last = files.length - 1, top = ranks - 1;
    // a line of n cells' outer sides: the first cell's corner `start`, then corners `next` of each cell
    const outline = (n, cornerOf, start, next) => [cornerOf(0, start), ...[...Array(n).keys()].flatMap((k) => next.map((i) => cornerOf(k, i)))];
    const edges = [
      [`file-${files[0]}`, 0, outline(ranks, (r, i) => corner(0, r, i), 3, [4, 5])],
      [`file-${files[last]}`, 0, outline(ranks, (r, i) => corner(last, r, i), 2, [1, 0])],
      ["rank-1", 1, outline(files.length, (f, i) => corner(f, 0, i), 3, [2, 1])],
      [`rank-${ranks}`, 1, outline(files.length, (f, i) => corner(f, top, i), 4, [5, 0])],
    ];
    for (const [name, seat, pts] of edges) {
      root.append(s("polyline", { points: pts.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" "), fill: "none",
        stroke: SEAT_COLOURS[seat], "stroke-width": 6, "stroke-linecap": "round", "stroke-linejoin": "round",
        class: "goal-edge", "data-edge": name, "data-seat": seat }));
    }
  }

  function quoridor(st, frame) {
    const files = st.files, ranks = st.ranks, cs = 44, gap = 10, step = cs + gap;
    const w = PAD + files.length * step + 4, hgt = ranks * step + PAD + 4;
    const root = svgRoot(w, hgt, "quoridor board");
    const left = (f) => PAD + f * step, top = (r) => 6 + (ranks - 1 - r) * step;
    root.append(s("rect", { x: PAD - gap / 2, y: 6 - gap / 2, width: files.length * step, height: ranks * step, fill: "#6b4a2b", rx: 6 }));
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const name = cellName(files, f, r);
      const goal = r === ranks - 1 ? "#f4d5d5" : r === 0 ? "#d6e2f7" : "#e9dcc2";
      root.append(s("rect", { x: left(f), y: top(r), width: cs, height: cs, rx: 4, "data-cell": name,
        fill: frame.changed.includes(name) ? "#f5dc8a" : goal }));
      const code = frame.cells[r][f];
      if (code !== ".") root.append(s("circle", { cx: left(f) + cs / 2, cy: top(r) + cs / 2, r: cs * 0.34, fill: pieceColour(code), stroke: "#fff", "stroke-width": 2, "data-cell": name, "data-piece": code }));
    }
    for (const wall of frame.walls) {
      const f = files.indexOf(wall[0]), r = Number(wall.slice(1, -1)) - 1, fresh = frame.new_walls.includes(wall);
      const attrs = wall.endsWith("h")
        ? { x: left(f), y: top(r) - gap, width: 2 * cs + gap, height: gap }
        : { x: left(f) + cs, y: top(r + 1), width: gap, height: 2 * cs + gap };
      root.append(s("rect", { ...attrs, rx: 2, fill: fresh ? "#ffb300" : "#f2efe6", stroke: "#222", "stroke-width": 1, "data-wall": wall }));
    }
    edgeLabels(root, files, ranks, (f) => left(f) + cs / 2, (r) => (r < 0 ? ranks * step + 20 : top(r) + cs / 2));
    ui.caption.textContent = `walls placed ${frame.walls.length} · walls left: ${seatName(current(), 0)} ${frame.walls_left[0]}, ${seatName(current(), 1)} ${frame.walls_left[1]} · goal: red rank ${ranks}, blue rank 1`;
    return root;
  }

  // -- Stratego ------------------------------------------------------------------------

  const STRATEGO_NAMES = { F: "Flag", B: "Bomb", S: "Spy", 2: "Scout", 3: "Miner", 4: "Sergeant", 5: "Lieutenant", 6: "Captain", 7: "Major", 8: "Colonel", 9: "General", X: "Marshal", "?": "unknown" };

  function stratego(st, frame) {
    const cs = 46, files = st.files, ranks = st.ranks;
    const root = svgRoot(PAD + files.length * cs + 6, ranks * cs + PAD + 6, "Stratego board");
    const left = (f) => PAD + f * cs, top = (r) => 4 + (ranks - 1 - r) * cs;
    const seen = view.seatView === null ? frame.board : frame.seen[view.seatView];
    const [from, to] = frame.last_move ? frame.last_move.split(/[-x]/) : [null, null];
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const name = cellName(files, f, r), i = r * 10 + f;
      const lake = st.lakes.includes(name);
      root.append(s("rect", { x: left(f), y: top(r), width: cs, height: cs, "data-cell": name,
        fill: lake ? "#7fb3d5" : name === from || name === to ? "#f5dc8a" : "#cdb98f", stroke: "#8d7b55", "stroke-width": 0.6 }));
      const code = seen[i];
      if (code === ".") continue;
      const owner = Number(frame.owners[i]), flags = frame.flags[i];
      const g = s("g", { "data-cell": name, "data-piece": code, "data-seat": owner });
      g.append(s("title", {}, `${name}: ${["Red", "Blue"][owner]} ${STRATEGO_NAMES[code] || code}${flags === "r" || flags === "b" ? " (revealed)" : ""}${flags === "m" || flags === "b" ? " (has moved)" : ""}`));
      g.append(s("rect", { x: left(f) + 4, y: top(r) + 4, width: cs - 8, height: cs - 8, rx: 5, fill: SEAT_COLOURS[owner], stroke: "#0006" }));
      g.append(s("text", { x: left(f) + cs / 2, y: top(r) + cs / 2 + 6, "text-anchor": "middle", "font-size": 18, "font-weight": 700, fill: "#fff" }, code === "?" ? "" : code));
      if (view.seatView === null && (flags === "r" || flags === "b")) g.append(s("circle", { cx: left(f) + cs - 10, cy: top(r) + 10, r: 3.5, fill: "#ffd23f", class: "revealed" }));
      root.append(g);
    }
    edgeLabels(root, files, ranks, (f) => left(f) + cs / 2, (r) => (r < 0 ? ranks * cs + 20 : top(r) + cs / 2));
    let caption = frame.phase === "setup" ? "setup phase: both seats place 40 pieces at once" : frame.last_move ? `last move ${frame.last_move}` : "";
    if (frame.battle) caption += ` · battle: ${frame.battle.attacker} attacks ${frame.battle.defender}, ${frame.battle.result}`;
    caption += view.seatView === null ? " · spectator's all-seeing board (yellow dot: revealed)" : ` · ${["Red", "Blue"][view.seatView]}'s view: unknown enemy pieces blank`;
    ui.caption.textContent = caption;
    ui.extra.append(h("div", { class: "card legend" },
      ["X Marshal", "9 General", "8 Colonel", "7 Major", "6 Captain", "5 Lieutenant", "4 Sergeant", "3 Miner", "2 Scout", "S Spy", "B Bomb", "F Flag"].map((t) => h("span", {}, t)),
      h("span", {}, `captured: Red lost ${frame.captured[0].join(" ") || "none"}; Blue lost ${frame.captured[1].join(" ") || "none"}`)));
    return root;
  }

  // -- the battle ----------------------------------------------------------------------

  // One hue family per army (seat 0 red, seat 1 blue); a squad is a shade of its army's hue.
  const ARMY_HUES = [[352, 0, 8], [206, 214, 222]];
  const SQUAD_LIGHTNESS = [30, 42, 54, 34, 46, 58, 38, 50, 62];

  function squadColour(side, squad, hp) {
    const hue = ARMY_HUES[side][(squad - 1) % 3], light = SQUAD_LIGHTNESS[squad - 1];
    return `hsla(${hue}, 72%, ${light}%, ${(0.35 + 0.65 * hp / 100).toFixed(2)})`;
  }

  // Which army is which: the seat's alias, its colour, its flank and its squads' letter.
  function armyLegend(g) {
    const letters = g.static.letters;
    return h("div", { class: "legend army-legend", id: "army-legend" }, [0, 1].map((seat) =>
      h("span", { "data-side": seat },
        h("span", { class: "sq", style: `background:${squadColour(seat, 2, 100)}` }),
        `${aliasOf(g, seat)}: ${["red, left", "blue, right"][seat]}, squads ${letters[seat]}1-${letters[seat]}9`)));
  }

  function decodeTick(b64) {
    const raw = atob(b64), out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function aliveAt(g, seat) {
    const bytes = decodeTick(g.frames[view.ply].ticks[view.tick]);
    let n = 0;
    for (let u = 0; u < g.static.side.length; u++) if (g.static.side[u] === seat && bytes[u * 3 + 2] > 0) n++;
    return n;
  }

  function battle(st, frame, g) {
    const n = st.map_size, cs = n > 35 ? 13 : 18, off = 30;
    const root = svgRoot(off + n * cs + 6, n * cs + off + 6, "battle field");
    const left = (x) => off + x * cs, top = (y) => 4 + (n - 1 - y) * cs;
    root.append(s("rect", { x: off, y: 4, width: n * cs, height: n * cs, fill: "#eef0e6", stroke: "#999" }));
    for (let k = 0; k <= n; k += 5) {
      root.append(s("line", { x1: left(k), x2: left(k), y1: 4, y2: 4 + n * cs, stroke: "#dde0d2" }));
      root.append(s("line", { x1: off, x2: off + n * cs, y1: 4 + (n - k) * cs, y2: 4 + (n - k) * cs, stroke: "#dde0d2" }));
    }
    for (const k of [1, ...Array.from({ length: Math.floor(n / 5) }, (_, i) => (i + 1) * 5)]) {
      root.append(s("text", { x: left(k - 1) + cs / 2, y: n * cs + 20, "text-anchor": "middle", "font-size": 10, fill: "#555", class: "coord" }, k));
      root.append(s("text", { x: off - 6, y: top(k - 1) + cs / 2 + 3, "text-anchor": "end", "font-size": 10, fill: "#555", class: "coord" }, k));
    }
    const bytes = decodeTick(frame.ticks[view.tick]);
    const alive = [[], []];
    for (let u = 0; u < st.side.length; u++) {
      const x = bytes[u * 3], y = bytes[u * 3 + 1], hp = bytes[u * 3 + 2], side = st.side[u], squad = st.squad[u];
      if (hp <= 0) continue;
      alive[side].push(u);
      root.append(s("rect", { x: left(x) + 1, y: top(y) + 1, width: cs - 2, height: cs - 2, rx: 2,
        fill: squadColour(side, squad, hp), stroke: side === 0 ? "#7a1010" : "#0f2f6b", "stroke-width": 0.8,
        "data-unit": u, "data-side": side, "data-cell": `${x + 1},${y + 1}`, "data-piece": `${st.letters[side]}${squad}`, "data-hp": hp }));
    }
    // squad legend: colours, living soldiers and their hp, the order in force
    const table = h("table", { class: "squads" }, h("tr", {}, h("th", { class: "name" }, "squad"), h("th", {}, "alive"), h("th", {}, "hp"), h("th", { class: "name" }, "order")));
    for (const side of [0, 1]) for (let q = 1; q <= 9; q++) {
      const members = alive[side].filter((u) => st.squad[u] === q);
      const hp = members.reduce((sum, u) => sum + bytes[u * 3 + 2], 0);
      const order = frame.orders[side][q - 1];
      table.append(h("tr", { "data-squad": `${st.letters[side]}${q}` },
        h("td", { class: "name" }, h("span", { class: "sq", style: `display:inline-block;width:10px;height:10px;background:${squadColour(side, q, 100)}` }), ` ${st.letters[side]}${q}`),
        h("td", {}, members.length), h("td", {}, (hp / 10).toFixed(1)),
        h("td", { class: "name" }, order ? `${order.do}${order.enemy ? " " + order.enemy : ""}${order.to ? ` (${order.to[0]},${order.to[1]})` : ""}` : "")));
    }
    ui.extra.append(h("div", { class: "card" }, h("h3", {}, "Squads (orders in force this turn)"), table));
    const tick = frame.first_tick + view.tick;
    put(ui.caption, armyLegend(g),
      `tick ${tick} · red ${alive[0].length} alive, blue ${alive[1].length} alive · colour = army, shade = squad, opacity = hp · (1,1) bottom-left`);
    return root;
  }

  // -- backgammon ------------------------------------------------------------------------

  const CHECKER = { BLACK: "#26282c", WHITE: "#f4efe2" };

  function backgammon(st, frame, g) {
    const steps = frame.steps, k = Math.min(view.tick, Math.max(steps.length - 1, 0));
    const shown = steps.length ? steps[k] : frame;
    const pw = 40, bar = 44, tray = 50, x0 = 30, top = 26, height = 420, tri = 170, r = 17;
    const width = x0 + 12 * pw + bar + tray + 10;
    const root = svgRoot(width, top + height + 30, "backgammon board");
    const colX = (c) => x0 + c * pw + (c >= 6 ? bar : 0);
    // BLACK's view: 13-24 along the top left to right, 12-1 along the bottom, home (1-6) bottom right
    const place = (p) => (p >= 13 ? { c: p - 13, up: true } : { c: 12 - p, up: false });
    root.append(s("rect", { x: x0 - 6, y: top, width: 12 * pw + bar + 12, height, fill: "#2f5d3a", rx: 6 }));
    root.append(s("rect", { x: colX(6) - bar, y: top, width: bar, height, fill: "#4a3322" }));
    const trayX = colX(11) + pw + 14;
    root.append(s("rect", { x: trayX, y: top, width: tray - 8, height, fill: "#4a3322", rx: 4 }));
    const moved = steps.length ? steps[k] : null;
    for (let p = 1; p <= 24; p++) {
      const { c, up } = place(p), x = colX(c), count = shown.points[p - 1];
      const base = up ? top : top + height, tip = up ? top + tri : top + height - tri;
      const mark = moved && (moved.from === String(p) ? "from" : moved.to === String(p) ? "to" : null);
      root.append(s("polygon", { points: `${x},${base} ${x + pw},${base} ${x + pw / 2},${tip}`,
        fill: mark === "to" ? "#f2c14e" : mark === "from" ? "#b8d9c0" : c % 2 ? "#c9b07a" : "#8c2f24",
        "data-point": p, "data-count": Math.abs(count), "data-piece": count > 0 ? "B" : count < 0 ? "W" : null }));
      root.append(s("text", { x: x + pw / 2, y: up ? top - 8 : top + height + 18, "text-anchor": "middle", "font-size": 12, fill: "#555", class: "coord" }, p));
      const n = Math.abs(count), colour = count > 0 ? "BLACK" : "WHITE";
      for (let i = 0; i < Math.min(n, 5); i++) {
        const cy = up ? top + r + 1 + i * 2 * r : top + height - r - 1 - i * 2 * r;
        root.append(s("circle", { cx: x + pw / 2, cy, r: r - 1, fill: CHECKER[colour], stroke: colour === "BLACK" ? "#000" : "#9a927e", "data-checker": p }));
      }
      if (n > 5) root.append(s("text", { x: x + pw / 2, y: up ? top + 9 * r + 6 : top + height - 9 * r + 6, "text-anchor": "middle", "font-size": 15, "font-weight": 700, fill: colour === "BLACK" ? "#fff" : "#000" }, n));
    }
    // the bar (BLACK enters from the top half, WHITE's checkers wait at the bottom) and the trays
    const barX = colX(6) - bar / 2;
    [["BLACK", 0, top + height / 2 - 2 * r], ["WHITE", 1, top + height / 2 + 2 * r]].forEach(([colour, i, cy]) => {
      const n = shown.bar[i];
      const hl = moved && moved.from === "bar" && frame.mover === colour;
      const group = s("g", { "data-point": "bar", "data-piece": i ? "W" : "B", "data-count": n });
      if (n) {
        group.append(s("circle", { cx: barX, cy, r: r - 1, fill: CHECKER[colour], stroke: hl ? "#f2c14e" : "#777", "stroke-width": hl ? 4 : 1 }));
        group.append(s("text", { x: barX, y: cy + 5, "text-anchor": "middle", "font-size": 13, "font-weight": 700, fill: i ? "#000" : "#fff" }, n));
      }
      root.append(group);
    });
    [["WHITE", 1, top + 8], ["BLACK", 0, top + height - 8 - 15 * 7]].forEach(([colour, i, y]) => {
      const n = shown.off[i];
      const hl = moved && moved.to === "off" && frame.mover === colour;
      const group = s("g", { "data-point": "off", "data-piece": i ? "W" : "B", "data-count": n });
      for (let j = 0; j < n; j++) group.append(s("rect", { x: trayX + 5, y: y + j * 7, width: tray - 18, height: 6, rx: 2, fill: CHECKER[colour], stroke: hl && j === n - 1 ? "#f2c14e" : "#555" }));
      root.append(group);
    });
    root.append(s("text", { x: trayX + (tray - 8) / 2, y: top + height + 18, "text-anchor": "middle", "font-size": 11, fill: "#555" }, "off"));
    root.append(s("text", { x: barX, y: top + height + 18, "text-anchor": "middle", "font-size": 11, fill: "#555" }, "bar"));
    drawDice(root, frame, k, x0 + 3 * pw - 20, top + height / 2 - 16);
    const alias = (colour) => g.aliases[st.colours.indexOf(colour)];
    let caption;
    if (frame.opening) caption = `opening roll: BLACK ${frame.dice[0]}, WHITE ${frame.dice[1]}`;
    else {
      const play = g.plies[view.ply - 1].decisions[0].move;
      caption = `${alias(frame.mover)} plays ${play} (${frame.mover}'s own numbering) with ${frame.dice.join("-")}`;
      if (moved) caption += ` · step ${k + 1} of ${steps.length}: ${moved.from}/${moved.to}${moved.hit ? "*" : ""} with the ${moved.die}`;
      else caption += " · no checker can move";
    }
    ui.caption.textContent = `${caption} · pips BLACK ${frame.pips[0]}, WHITE ${frame.pips[1]} · points in BLACK's numbering`;
    return root;
  }

  // The dice of the ply: the one the shown step uses is outlined, those already used are dimmed.
  function drawDice(root, frame, k, x, y) {
    const dice = frame.dice.length === 2 && frame.dice[0] === frame.dice[1] && !frame.opening ? [...frame.dice, ...frame.dice] : frame.dice;
    const used = dice.map(() => false);
    let current = -1;
    frame.steps.forEach((st, i) => {
      const j = dice.findIndex((d, idx) => d === st.die && !used[idx]);
      if (j < 0 || i > k) return;
      used[j] = true;
      if (i === k) current = j;
    });
    const pips = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]], 4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]], 6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };
    dice.forEach((d, i) => {
      const dx = x + i * 38, colour = frame.opening ? (i === 0 ? "BLACK" : "WHITE") : frame.mover;
      const group = s("g", { class: "die", "data-die": d, "data-used": used[i] && i !== current ? "1" : "0", "data-current": i === current ? "1" : "0", opacity: used[i] && i !== current ? 0.4 : 1 });
      group.append(s("rect", { x: dx, y, width: 32, height: 32, rx: 6, fill: colour === "BLACK" ? "#26282c" : "#f4efe2", stroke: i === current ? "#f2c14e" : "#000", "stroke-width": i === current ? 4 : 1 }));
      for (const [px, py] of pips[d]) group.append(s("circle", { cx: dx + 16 + px * 8, cy: y + 16 + py * 8, r: 3, fill: colour === "BLACK" ? "#fff" : "#000" }));
      root.append(group);
    });
  }

  const RENDERERS = {
    "connect-four": connectFour,
    hex,
    breakthrough,
    quoridor,
    stratego,
    battle,
    backgammon,
  };

  build();
  const at = readHash();
  setPosition(at.game, at.ply, at.tick);
})();
