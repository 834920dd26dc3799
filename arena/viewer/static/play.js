/* cog-arena play page: a person's seats in the games of a run, drawn and played in the browser.
 *
 * The page long-polls `api/tables?since=V` for the desk (every game in which
 * the person holds a seat), draws the picked table's position with boards.js
 * as that seat may see it, counts its decision's deadline down, and posts a
 * move to `api/move` as {table, turn, move}. A 422 answer is the engine's
 * refusal (the deadline keeps running and the person may try again), a 409
 * a decision that closed first. Input maps clicks onto the turn's legal
 * moves where the game lists them (play-moves.js, CogMoves); a text box takes
 * any move in every game.
 * The countdown is the server's: each desk carries the time left of every open
 * decision, which the page counts down until the next one arrives (a game's
 * first decision shows its whole budget until its clock starts, which a
 * fetch naming its table as the one on screen does: `showing`). The page
 * follows the decisions waiting for the person, but a game that ends while
 * shown stays, with its result, until the person moves on (#result-next, or
 * the list). The moves say who played each.
 * Stable hooks for people and tests: #tables [data-table], #board
 * [data-cell], #countdown, #refusal, #move-text, #move-submit,
 * #move-buttons [data-move], #wall-select, #wall-place, #setup-text, #setup-submit,
 * #orders [data-order-do/-enemy/-x/-y], #orders-submit, #result [data-winner],
 * #result-next, #history li[data-by]; body[data-table], [data-pending].
 */
(function () {
  "use strict";

  const { h, put } = CogBoards;
  const APP = document.getElementById("app");
  const ROOT = APP.dataset.root || "./";
  const TITLE = document.title;
  const LOW_S = 10;
  const RETRY_MS = 2000;

  const state = {
    version: -1,
    run: "",
    tables: [],
    selected: null, // the id of the table shown
    chosen: false, // the person picked a table themselves (else the page follows the move)
    shown: null, // signature of what is drawn, to redraw only on change
    deadlines: {}, // table id -> { turn, at (performance.now() ms; null: not started), left, total }
    left: {}, // table id -> true once the person moved on from its result
    sent: {}, // table id -> the turn id whose move the server accepted
    pending: false, // a move is on its way
    notes: {}, // "table:turn" -> the page's own refusal or hint for that decision
    stopped: false,
    announced: null, // "table:turn" of the held decision last said to be on screen
  };

  // -- skeleton ------------------------------------------------------------------------

  const ui = {};

  function build() {
    APP.textContent = "";
    ui.heading = h("h1", { id: "play-heading" }, "cog-arena · your games");
    ui.connection = h("p", { class: "meta", id: "connection" }, "connecting…");
    ui.tables = h("div", { class: "tabs table-list", id: "tables", role: "list" });
    ui.status = h("p", { class: "turn-status", id: "turn-status" });
    ui.countdown = h("span", { class: "countdown", id: "countdown", "aria-live": "off" });
    ui.top = h("div", { class: "player", id: "player-opponent" });
    ui.bottom = h("div", { class: "player", id: "player-you" });
    ui.board = h("div", { class: "board play-board", id: "board" });
    ui.caption = h("div", { class: "caption", id: "board-caption" });
    ui.input = h("div", { class: "card play-input", id: "play-input" });
    ui.refusal = h("div", { class: "refusal", id: "refusal", role: "alert" });
    ui.result = h("p", { class: "result", id: "result" });
    ui.extra = h("div", { id: "extra" });
    ui.history = h("ol", { class: "moves history", id: "history" });
    ui.board.addEventListener("click", onBoardClick);
    APP.append(
      ui.heading, ui.connection, ui.tables,
      h("div", { class: "status-row" }, ui.status, ui.countdown),
      h("div", { class: "replay" },
        h("div", { class: "board-col" }, ui.top, h("div", { class: "stage" }, ui.board), ui.bottom, ui.caption, ui.refusal, ui.input),
        h("div", { class: "side-col" }, ui.result, ui.extra,
          h("div", { class: "card moves-card" }, h("h3", { class: "moves-heading" }, "Moves"), ui.history))));
  }

  // -- the desk, long-polled -------------------------------------------------------------

  async function poll() {
    while (!state.stopped) {
      try {
        const answer = await fetch(tablesUrl(state.version), { cache: "no-store" });
        if (answer.status === 403) { stop("this page's address is not valid any more (wrong or old token)", true); return; }
        if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
        const desk = await answer.json();
        arrive(desk);
        ui.connection.classList.remove("lost");
        if (desk.closed) { stop(`run ${state.run} is over: these are its last positions`); return; }
        ui.connection.textContent = `run ${state.run}`;
      } catch (err) {
        ui.connection.textContent = `connection lost (${err.message}); retrying…`;
        ui.connection.classList.add("lost");
        await new Promise((done) => setTimeout(done, RETRY_MS));
      }
    }
  }

  // The desk's address: `showing` names the table on screen, whose held first decision the
  // server starts the clock of (the others' wait until they are shown, or their bound).
  function tablesUrl(since) {
    return `${ROOT}api/tables?since=${since}&showing=${encodeURIComponent(state.selected || "")}`;
  }

  // The table on screen has a decision whose clock waits for the page: say so at once, not
  // at the next long poll's answer (up to its bound later).
  async function announce() {
    const t = table();
    const key = t && t.turn && t.turn.clock_started === false ? `${t.id}:${t.turn.id}` : null;
    if (!key || key === state.announced || state.stopped) return;
    state.announced = key;
    try {
      const answer = await fetch(tablesUrl(-1), { cache: "no-store" });
      if (answer.ok) arrive(await answer.json());
    } catch (err) {
      state.announced = null; // the long poll carries it when the connection is back
    }
  }

  // The page stops asking: the run is over (its desk says closed) or the token is refused.
  function stop(message, lost) {
    state.stopped = true;
    ui.connection.textContent = message;
    ui.connection.classList.toggle("lost", !!lost);
    document.body.dataset.stopped = "1";
  }

  function arrive(desk) {
    const now = performance.now();
    state.version = desk.version;
    state.run = desk.run || "";
    state.tables = desk.tables || [];
    for (const t of state.tables) {
      if (!t.turn) { delete state.deadlines[t.id]; continue; }
      const running = t.turn.clock_started !== false;
      state.deadlines[t.id] = { turn: t.turn.id, at: running ? now + t.turn.remaining_s * 1000 : null,
        left: t.turn.remaining_s, total: t.turn.decision_s };
    }
    chooseTable();
    render();
  }

  function chooseTable() {
    const ids = state.tables.map((t) => t.id);
    if (!ids.includes(state.selected)) { state.selected = null; state.chosen = false; }
    if (state.chosen && state.selected) return;
    const current = table();
    if (current && current.status === "your-move") return;
    if (current && current.status === "over" && !state.left[current.id]) return; // its result stays
    const mine = state.tables.find((t) => t.status === "your-move" && state.sent[t.id] !== t.turn.id);
    const next = mine || current || state.tables.find((t) => t.status !== "over") || state.tables[0];
    state.selected = next ? next.id : null;
  }

  function table() { return state.tables.find((t) => t.id === state.selected) || null; }

  // The person is done with the result shown: on to the next decision (now, or when it comes).
  function moveOn() {
    const t = table();
    if (t) state.left[t.id] = true;
    state.chosen = false;
    chooseTable();
    state.shown = null;
    render();
  }

  function turnKey(t) { return t && t.turn ? `${t.id}:${t.turn.id}` : null; }

  // Waiting on the person: a decision is open and its move has not been accepted yet.
  function open(t) { return t.status === "your-move" && t.turn && state.sent[t.id] !== t.turn.id; }

  // -- drawing --------------------------------------------------------------------------

  function render() {
    announce();
    renderList();
    const t = table();
    document.title = state.tables.some(open) ? `(your move) ${TITLE}` : TITLE;
    const others = t && t.status === "over" ? state.tables.map((o) => [o.id, o.status, open(o)]) : null; // the result's "next"
    const sig = t ? JSON.stringify([t.id, t.status, t.turn && t.turn.id, t.turn && t.turn.refused.length, t.history.length, t.result, open(t), state.pending, others]) : "none";
    if (sig === state.shown) { tickCountdown(); return; }
    state.shown = sig;
    renderTable(t);
    tickCountdown();
  }

  function renderList() {
    ui.tables.textContent = "";
    if (!state.tables.length) {
      ui.tables.append(h("span", { class: "meta" }, "no game of yours is in flight yet; this page follows the run"));
      return;
    }
    for (const t of state.tables) {
      const label = t.status === "over" ? `over${t.result ? ` · ${t.result.text}` : ""}` : open(t) ? "your move" : "waiting";
      ui.tables.append(h("button", {
        class: `table-pick${t.id === state.selected ? " on" : ""}${open(t) ? " your-move" : ""}`,
        "data-table": t.id, "data-status": t.status, role: "listitem",
        onclick: () => { const was = table(); if (was && was.status === "over") state.left[was.id] = true; state.selected = t.id; state.chosen = true; render(); },
      }, `${t.game} · game ${t.game_index} · ${t.alias} vs ${t.opponent} · `, h("span", { class: "state" }, label)));
    }
  }

  function renderTable(t) {
    for (const node of [ui.top, ui.bottom, ui.board, ui.caption, ui.extra, ui.input, ui.history, ui.result, ui.status]) node.textContent = "";
    renderRefusal(t);
    if (!t) { ui.status.textContent = "waiting for a game"; return; }
    document.body.dataset.game = t.game;
    document.body.dataset.table = t.id;
    renderPlayers(t);
    renderStatus(t);
    drawBoard(t);
    renderHistory(t);
    renderResult(t);
    renderInput(t);
  }

  function sideName(t, seat) {
    const st = t.static || {};
    if (st.colours) return st.colours[seat];
    if (st.sides) return st.sides[String(seat)];
    if (st.letters) return `squads ${st.letters[seat]}1-${st.letters[seat]}9`;
    return `seat ${seat}`;
  }

  function alias(t, seat) { return seat === t.seat ? t.alias : t.opponent; }

  function renderPlayers(t) {
    const toMove = t.frame ? t.frame.to_move : null;
    for (const [box, seat] of [[ui.bottom, t.seat], [ui.top, 1 - t.seat]]) {
      box.dataset.seat = String(seat);
      box.classList.toggle("to-move", toMove === seat || (toMove === undefined && open(t) && seat === t.seat));
      put(box,
        h("span", { class: "swatch", style: `background:${seatColour(t, seat)}` }),
        h("span", { class: "alias" }, alias(t, seat)),
        h("span", { class: "extra" }, `${seat === t.seat ? "you · " : ""}${sideName(t, seat)}`));
    }
  }

  function seatColour(t, seat) {
    const own = t.static && t.static.seat_colours;
    return own ? own[seat] : CogBoards.SEAT_COLOURS[seat];
  }

  function renderStatus(t) {
    let text;
    if (t.status === "over") text = `game over: ${t.result ? t.result.text : "finished"}`;
    else if (t.status === "starting") text = "the game is starting";
    else if (state.pending) text = "sending your move…";
    else if (open(t)) text = `your move, ${t.alias}`;
    else if (t.turn && state.sent[t.id] === t.turn.id) text = "move accepted: waiting for the next turn";
    else text = `waiting for ${t.opponent}`;
    ui.status.textContent = text;
    ui.status.dataset.status = t.status === "over" ? "over" : open(t) ? "your-move" : "waiting";
  }

  // The position as the seat sees it, with the input's highlights; a table the page cannot draw
  // says so and leaves the text box to play it.
  function drawBoard(t) {
    ui.board.textContent = "";
    ui.caption.textContent = "";
    ui.extra.textContent = "";
    const own = t.turn && open(t) ? moves.frame(t) : null;
    const frame = own ? own.frame : t.frame;
    if (t.status === "starting" && !frame) {
      ui.board.append(h("p", { class: "meta", id: "board-starting" }, "the game is about to start"));
      return;
    }
    try {
      if (!t.static || !frame) throw new Error("no position to draw");
      ui.board.append(CogBoards.draw(t.game, t.static, frame, boardContext(t, frame, own)));
    } catch (err) {
      ui.board.textContent = "";
      ui.board.append(h("p", { class: "card board-fallback", id: "board-fallback" },
        `This board cannot be drawn here (${err.message}); the moves and the text box below still work.`));
      return;
    }
    if (open(t) && !state.pending) moves.marks(t);
  }

  function boardContext(t, frame, own) {
    const steps = frame.ticks || frame.steps;
    return {
      seatView: t.seat, tick: steps && steps.length ? steps.length - 1 : 0,
      caption: ui.caption, extra: ui.extra,
      alias: (seat) => alias(t, seat), side: (seat) => sideName(t, seat),
      play: own || !t.history.length ? null : t.history[t.history.length - 1],
    };
  }

  // Highlights the shapes drawn for cells `names`: a piece's group outlines its shape, not its label.
  function mark(names, cls) {
    for (const name of names) {
      for (const el of ui.board.querySelectorAll(`[data-cell="${name}"]`)) {
        const shape = el.tagName === "g" ? el.querySelector("rect, circle, polygon") : el;
        if (shape) shape.classList.add(cls);
      }
    }
  }

  // Each ply with who played it: "you" for the person's seat, else the alias (both, at once).
  function renderHistory(t) {
    const plies = t.plies || t.history.map((move) => ({ move, by: "" }));
    plies.forEach((p, i) => ui.history.append(h("li", { "data-ply": i + 1, "data-by": p.by },
      h("span", { class: "no" }, `${i + 1}.`),
      h("span", { class: `by${p.by === "you" ? " you" : ""}` }, p.by),
      h("span", { class: "mv" }, p.move))));
    ui.history.scrollTop = ui.history.scrollHeight;
  }

  // Who won (by alias, "you" for the person), how, and the score; it stays until the person
  // moves on.
  function renderResult(t) {
    const r = t.result;
    delete ui.result.dataset.winner;
    ui.result.classList.toggle("over", t.status === "over");
    if (!r) { ui.result.textContent = t.status === "over" ? "game over" : ""; return; }
    const who = (a) => (a === t.alias ? `you (${a})` : a);
    const winner = r.winner ? `winner: ${who(r.winner)}` : r.scores ? "no winner: a draw" : "no winner";
    ui.result.dataset.winner = r.winner || "";
    const score = r.scores ? `score: ${who(t.alias)} ${r.scores[t.seat]} · ${t.opponent} ${r.scores[1 - t.seat]}` : "no score";
    const how = [r.ending, r.reason, r.detail].filter(Boolean).join(" · ");
    const next = state.tables.find((o) => o.id !== t.id && open(o)) || state.tables.find((o) => o.id !== t.id && o.status !== "over");
    put(ui.result,
      h("strong", { id: "result-text", class: "result-text" }, r.text || "game over"),
      h("span", { id: "result-winner" }, winner),
      h("span", { class: "meta", id: "result-how" }, how ? `ending: ${how}` : ""),
      h("span", { class: "meta", id: "result-score" }, score),
      h("button", { id: "result-next", type: "button", onclick: moveOn },
        next ? `next: ${next.game} · game ${next.game_index}${open(next) ? " (your move)" : ""} →` : "on to your next game →"));
  }

  function renderRefusal(t) {
    ui.refusal.textContent = "";
    const key = turnKey(t);
    const refused = t && t.turn ? t.turn.refused : [];
    const note = key ? state.notes[key] : null;
    if (!refused.length && !note) return;
    if (refused.length) {
      const last = refused[refused.length - 1];
      ui.refusal.append(h("div", { class: "refused", "data-refused": last.move }, h("b", {}, `refused: ${last.move}`), ` — ${last.error}`));
      if (refused.length > 1) ui.refusal.append(h("div", { class: "meta" }, `earlier tries: ${refused.slice(0, -1).map((r) => r.move).join(", ")}`));
    }
    if (note && !(refused.length && note.kind === "refused")) { // the desk's own list says it
      ui.refusal.append(h("div", { class: `note ${note.kind}`, "data-note": note.kind }, note.text));
    }
  }

  function setNote(t, kind, text) {
    const key = turnKey(t);
    if (key && text) state.notes[key] = { kind, text };
    else if (key) delete state.notes[key];
    renderRefusal(t);
  }

  // -- the countdown ---------------------------------------------------------------------

  function tickCountdown() {
    const t = table();
    const d = t ? state.deadlines[t.id] : null;
    if (!t || !d || !t.turn || t.status === "over") {
      ui.countdown.textContent = "";
      ui.countdown.className = "countdown";
      delete ui.countdown.dataset.remaining;
      return;
    }
    const left = d.at === null ? d.left : Math.max(0, (d.at - performance.now()) / 1000);
    ui.countdown.dataset.remaining = left.toFixed(1);
    ui.countdown.textContent = left > 0 ? `${left < LOW_S ? left.toFixed(1) : Math.ceil(left)} s left` : "time is up";
    ui.countdown.className = `countdown${left < LOW_S ? " low" : ""}${open(t) ? "" : " idle"}`;
    ui.countdown.title = `decision deadline: ${d.total} s`;
  }

  // -- sending a move ----------------------------------------------------------------------

  async function send(move) {
    const t = table();
    if (!t || !open(t) || state.pending) return;
    state.pending = true;
    document.body.dataset.pending = "1";
    moves.reset();
    render();
    let answer = null, body = {};
    try {
      answer = await fetch(`${ROOT}api/move`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ table: t.id, turn: t.turn.id, move }),
      });
      body = await answer.json().catch(() => ({}));
    } catch (err) {
      body = { error: `the move did not reach the arena (${err.message}); try again` };
    }
    state.pending = false;
    delete document.body.dataset.pending;
    state.shown = null;
    if (answer && answer.ok && body.ok) {
      state.sent[t.id] = t.turn.id;
      delete state.notes[turnKey(t)];
    } else if (answer && answer.status === 409) {
      state.sent[t.id] = t.turn.id;
      setNote(t, "closed", body.error || "this decision has closed (its deadline passed, or it was answered)");
    } else {
      setNote(t, "refused", `${typeof move === "string" ? move : "your orders"}: ${body.error || `HTTP ${answer ? answer.status : "?"}`}`);
    }
    render();
  }

  // -- input ------------------------------------------------------------------------------

  function onBoardClick(e) {
    const t = table();
    if (t && open(t) && !state.pending) moves.click(t, e);
  }

  function renderInput(t) {
    ui.input.textContent = "";
    delete ui.input.dataset.turn;
    if (!open(t) || state.pending) {
      ui.input.classList.add("idle");
      const idle = state.pending ? "sending your move…" : t.status === "over" ? "this game is over" : "no move of yours is asked for now";
      ui.input.append(h("span", { class: "meta" }, idle));
      return;
    }
    ui.input.classList.remove("idle");
    ui.input.dataset.turn = String(t.turn.id);
    const hint = moves.hint(t);
    if (hint) ui.input.append(h("p", { class: "meta", id: "input-hint" }, hint));
    const panel = moves.panel(t);
    if (panel) ui.input.append(panel);
    const buttons = moves.buttons(t);
    if (buttons.length) {
      ui.input.append(h("div", { class: "move-buttons", id: "move-buttons" },
        buttons.map((m) => h("button", { "data-move": m, onclick: () => send(m) }, m))));
    }
    ui.input.append(textForm(t));
  }

  // Any move as text: the fallback of every game (a battle's orders as their JSON list).
  function textForm(t) {
    const box = h("input", { type: "text", id: "move-text", autocomplete: "off", spellcheck: "false",
      placeholder: t.turn.legal.length ? `e.g. ${t.turn.legal[0]}` : "your move", "aria-label": "move" });
    const form = h("form", { class: "move-form", id: "move-form", onsubmit: (e) => {
      e.preventDefault();
      const text = box.value.trim();
      if (!text) return;
      let move = text;
      if (t.turn.key === "orders" && text.startsWith("[")) {
        try { move = JSON.parse(text); } catch (err) { setNote(t, "hint", `not a JSON list: ${err.message}`); return; }
      }
      send(move);
    } }, h("label", { for: "move-text" }, "or type it: "), box, h("button", { type: "submit", id: "move-submit" }, "send"));
    const details = [];
    if (t.turn.help) details.push(h("pre", { class: "move-help", id: "move-help" }, t.turn.help));
    if (t.turn.legal.length) details.push(h("div", { class: "meta legal", id: "legal" }, `legal: ${t.turn.legal.join(" ")}`));
    return h("div", {}, form, details.length ? h("details", { class: "help" }, h("summary", {}, "how to write a move"), details) : null);
  }

  // -- start ----------------------------------------------------------------------------------------

  build();
  const moves = CogMoves.create({
    send, mark, redraw: drawBoard, note: setNote, board: ui.board, turnKey, open, side: sideName,
    refresh: () => { state.shown = null; render(); },
  });
  setInterval(tickCountdown, 250);
  poll();
})();
