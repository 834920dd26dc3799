/* cog-arena replay page: draws the frames that build_site re-derived with the engine.
 *
 * The page's data sits in <script id="page-data">. The position shown is
 * (game, ply, tick): ply 0 is the start, ply N the position after the N-th
 * recorded ply; the battle also steps through the ticks of a command turn.
 * The URL hash (#game=1&ply=17, battle also &tick=35) opens a position and
 * follows every step. The boards themselves are drawn by boards.js
 * (CogBoards), which the play page shares.
 */
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("page-data").textContent);
  const { SEAT_COLOURS, h, put, s, svgRoot } = CogBoards;
  const PLAY_MS = { battle: 90, backgammon: 550, default: 700 };
  // games whose plies have sub-positions: the battle's ticks, backgammon's checker steps
  const SUBSTEPS = { battle: "tick", backgammon: "step" };

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
    ui.board.textContent = "";
    ui.caption.textContent = "";
    ui.extra.textContent = "";
    ui.board.append(CogBoards.draw(DATA.game, g.static, frame, boardContext(g)));
    renderPlayers(g, frame);
    renderEval(g);
    renderControls();
    renderGraph(g);
    renderMoves(g);
    renderResult(g);
  }

  // What the board drawing may know beyond the frame (boards.js describes ctx).
  function boardContext(g) {
    return {
      seatView: view.seatView, tick: view.tick, caption: ui.caption, extra: ui.extra,
      alias: (seat) => aliasOf(g, seat), side: (seat) => seatName(g, seat),
      play: view.ply > 0 ? g.plies[view.ply - 1].decisions[0].move : null,
    };
  }

  function aliveAt(g, seat) {
    const bytes = CogBoards.decodeTick(g.frames[view.ply].ticks[view.tick]);
    let n = 0;
    for (let u = 0; u < g.static.side.length; u++) if (g.static.side[u] === seat && bytes[u * 3 + 2] > 0) n++;
    return n;
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
    // each seat's share of the bar, as a person reads it; the game's own figures on hover
    const pct = Math.round(share(a, b) * 100);
    ui.eval.append(bar, h("figcaption", { id: "eval-caption" },
      h("b", {}, "HEURISTIC"), h("br"), "standing", h("br"),
      `${aliasOf(g, 0)} `, h("span", { "data-standing": 0, "data-value": a }, `${pct}%`), h("br"),
      `${aliasOf(g, 1)} `, h("span", { "data-standing": 1, "data-value": b }, `${100 - pct}%`), h("br"),
      ply === 0 ? "start" : `after ply ${ply}`));
    ui.eval.title = `The game's own heuristic standing (docs/rules.md), not an engine evaluation: ${a} to ${b}.`;
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


  build();
  const at = readHash();
  setPosition(at.game, at.ply, at.tick);
})();
