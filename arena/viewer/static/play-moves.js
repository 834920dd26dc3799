/* cog-arena play page: how each game takes a move from a person, mapped onto the legal list.
 *
 * One global, `CogMoves`. `CogMoves.create(page)` returns the inputs of the
 * play page (play.js), which hands in what they need of it:
 *   send(move)           post a move for the table shown
 *   mark(cells, class)   highlight the drawn cells
 *   redraw(t)            draw table t's board again (its highlights with it)
 *   note(t, kind, text)  a hint under the board ("" clears it)
 *   refresh()            draw the whole table again
 *   board                the element the board is drawn in
 *   turnKey(t), open(t), side(t, seat)
 * A game's input is a board click (a column, a cell, a from-to move, a pawn
 * step), a panel (quoridor's wall picker, backgammon's dice, Stratego's setup
 * editor, the battle's orders form) and buttons of legal moves. Every input
 * carries a stable id or data attribute for people and tests.
 */
window.CogMoves = (function () {
  "use strict";

  const { h, s } = CogBoards;
  const SQUARE = /[a-z]\d+/gi; // a square's name inside a written move: "a4-a5", "a4xa5"

  function create(page) {
    const picked = { key: null, square: null }; // the from-square of a from-to move, per decision
    const setups = {}; // "table:turn" -> { codes: [40], picked }
    const forms = {}; // "table:turn" -> the battle's orders form (kept across redraws)
    const view = {}; // elements of the panel shown

    const INPUTS = {
      "connect-four": { cell: (t, name) => page.send(fileOf(name)) },
      hex: { cell: (t, name) => page.send(name), buttons: (t) => t.turn.legal.filter((m) => !isCell(t, m)) },
      breakthrough: { cell: fromTo, marks: markFromTo },
      stratego: { cell: fromTo, marks: markFromTo },
      quoridor: { cell: (t, name) => page.send(name), marks: (t) => page.mark(pawnMoves(t), "target"), panel: wallPicker },
      backgammon: { buttons: (t) => t.turn.legal, panel: diceLine },
      battle: { panel: ordersForm },
    };

    function fileOf(name) { return name.replace(/\d+$/, ""); }

    function isCell(t, move) {
      const files = (t.static && t.static.files) || "";
      const m = /^([a-z])(\d+)$/.exec(move);
      return !!m && files.includes(m[1]) && Number(m[2]) >= 1 && Number(m[2]) <= t.static.ranks;
    }

    function squares(move) { return String(move).match(SQUARE) || []; }

    function movesFrom(t, from) { return t.turn.legal.filter((m) => { const sq = squares(m); return sq.length === 2 && sq[0] === from; }); }

    function fromTo(t, name) {
      if (picked.square) {
        const move = movesFrom(t, picked.square).find((m) => squares(m)[1] === name);
        if (move) { page.send(move); return; }
        if (name === picked.square) { picked.square = null; page.redraw(t); return; }
      }
      if (movesFrom(t, name).length) { picked.square = name; page.note(t, "hint", ""); page.redraw(t); return; }
      const text = picked.square ? `${name} is not a target of ${picked.square}: pick a highlighted square` : `no legal move starts on ${name}`;
      picked.square = null;
      page.redraw(t);
      page.note(t, "hint", text);
    }

    function markFromTo(t) {
      const from = new Set(t.turn.legal.map((m) => squares(m)[0]).filter(Boolean));
      page.mark(from, "movable");
      if (picked.square) {
        page.mark([picked.square], "picked");
        page.mark(movesFrom(t, picked.square).map((m) => squares(m)[1]), "target");
      }
    }

    function pawnMoves(t) { return t.turn.legal.filter((m) => isCell(t, m)); }

    function inputHint(t) {
      if (setupOf(t)) return "Your setup: click two of your squares to swap their pieces, then send it.";
      return {
        "connect-four": "Click a column to drop your disc.",
        hex: "Click an empty cell to place your stone.",
        breakthrough: "Click one of your pieces, then a highlighted square.",
        stratego: "Click one of your pieces, then a highlighted square.",
        quoridor: "Click a highlighted square to move your pawn, or pick a wall and place it.",
        backgammon: "Pick one of the legal plays.",
        battle: "Give orders to the squads you want to re-task; the others keep theirs. For a move, click the field to set its target.",
      }[t.game] || "Type your move.";
    }

    // Backgammon, the person to play: the board with the person's own dice, not the last play's.
    function toPlay(t) {
      return t.game === "backgammon" && page.open(t) && t.frame && !t.frame.opening && t.turn.view && Array.isArray(t.turn.view.dice);
    }

    function diceFrame(t) {
      return { ...t.frame, dice: t.turn.view.dice, steps: [], opening: false, mover: t.turn.view.colour || page.side(t, t.seat) };
    }

    // -- quoridor's walls ----------------------------------------------------------------------

    function wallPicker(t) {
      const walls = t.turn.legal.filter((m) => /^[a-z]\d+[hv]$/.test(m));
      if (!walls.length) return h("p", { class: "meta" }, "no wall can be placed");
      const select = h("select", { id: "wall-select", "aria-label": "wall", onchange: () => previewWall(t, select.value) },
        h("option", { value: "" }, `pick a wall (${walls.length})`),
        walls.map((w) => h("option", { value: w }, wallLabel(w))));
      return h("div", { class: "wall-picker" }, select,
        h("button", { id: "wall-place", onclick: () => { if (select.value) page.send(select.value); } }, "place wall"),
        h("span", { class: "meta" }, " h: along the top of the square and the one right of it; v: along the right side of the square and the one above it"));
    }

    // "e3h" -> "e3h horizontal: blocks e3-e4, f3-f4" (docs/rules.md, quoridor's notation).
    function wallLabel(wall) {
      const f = wall[0], r = Number(wall.slice(1, -1));
      const g = String.fromCharCode(f.charCodeAt(0) + 1);
      return wall.endsWith("h")
        ? `${wall} horizontal: blocks ${f}${r}-${f}${r + 1}, ${g}${r}-${g}${r + 1}`
        : `${wall} vertical: blocks ${f}${r}-${g}${r}, ${f}${r + 1}-${g}${r + 1}`;
    }

    // The wall drawn dashed where it would stand, from the geometry of the squares it touches.
    function previewWall(t, wall) {
      for (const old of page.board.querySelectorAll("[data-wall-preview]")) old.remove();
      const svg = page.board.querySelector("svg");
      const cell = page.board.querySelector(`rect[data-cell="${wall.slice(0, -1)}"]`);
      if (!wall || !svg || !cell) return;
      const x = Number(cell.getAttribute("x")), y = Number(cell.getAttribute("y")), cs = Number(cell.getAttribute("width"));
      const gap = 10;
      const attrs = wall.endsWith("h")
        ? { x, y: y - gap, width: 2 * cs + gap, height: gap }
        : { x: x + cs, y: y - cs - gap, width: gap, height: 2 * cs + gap };
      svg.append(s("rect", { ...attrs, rx: 2, fill: "#ffb30088", stroke: "#8a5a00", "stroke-dasharray": "4 3", "stroke-width": 2, "data-wall-preview": wall }));
    }

    // -- backgammon's dice -------------------------------------------------------------------

    function diceLine(t) {
      const v = t.turn.view || {};
      const dice = v.dice || [];
      return h("p", { class: "dice", id: "dice", "data-dice": dice.join("-") },
        `your dice: ${dice.join(" and ") || "?"}${v.four_moves ? " (doubles: four moves)" : ""}${v.colour ? ` · you play ${v.colour}, in your own numbering` : ""}`);
    }

    // -- Stratego's setup editor -------------------------------------------------------------------

    function setupOf(t) {
      if (!t || t.game !== "stratego" || !t.turn || t.turn.key !== "setup" || !page.open(t)) return null;
      const key = page.turnKey(t);
      if (!setups[key]) setups[key] = { codes: Array.from(t.turn.suggestion || defaultSetup(t.turn.view)), picked: null };
      return setups[key];
    }

    // The pieces in the order of setup_counts, when the arena suggests none.
    function defaultSetup(view) {
      const counts = (view && view.setup_counts) || {};
      return Object.entries(counts).map(([code, n]) => code.repeat(n)).join("");
    }

    // The squares a setup fills, in its order: the seat's own back rank first, each rank from a to j.
    function setupCells(t) {
      const ranks = [...((t.turn.view && t.turn.view.home_ranks) || (t.seat === 0 ? [1, 2, 3, 4] : [7, 8, 9, 10]))];
      ranks.sort((a, b) => (t.seat === 0 ? a - b : b - a));
      const files = (t.static && t.static.files) || "abcdefghij";
      return ranks.flatMap((r) => Array.from(files, (f) => `${f}${r}`));
    }

    function setupFrame(t, setup) {
      const cells = setupCells(t), board = (t.frame && t.frame.seen ? t.frame.seen[t.seat] : ".".repeat(100)).split("");
      const owners = (t.frame && t.frame.owners ? t.frame.owners : ".".repeat(100)).split("");
      cells.forEach((name, k) => {
        const i = (Number(name.slice(1)) - 1) * 10 + "abcdefghij".indexOf(name[0]);
        board[i] = setup.codes[k];
        owners[i] = String(t.seat);
      });
      const seen = board.join("");
      return { ...(t.frame || {}), board: seen, seen: [seen, seen], owners: owners.join(""), flags: ".".repeat(100),
        phase: "setup", last_move: null, battle: null, captured: (t.frame && t.frame.captured) || [[], []] };
    }

    function setupClick(t, setup, name) {
      const k = setupCells(t).indexOf(name);
      if (k < 0) { page.note(t, "hint", `${name} is not one of your home squares`); return; }
      if (setup.picked === null) setup.picked = k;
      else {
        const j = setup.picked;
        [setup.codes[j], setup.codes[k]] = [setup.codes[k], setup.codes[j]];
        setup.picked = null;
      }
      page.redraw(t);
      view.setupText.value = setupText(setup);
    }

    function setupText(setup) {
      const codes = setup.codes.join("");
      return [0, 10, 20, 30].map((i) => codes.slice(i, i + 10)).join(" / ");
    }

    function setupPanel(t) {
      const setup = setupOf(t);
      view.setupText = h("input", { type: "text", id: "setup-text", readonly: true, value: setupText(setup), "aria-label": "setup, back rank first", size: 50 });
      return h("div", { class: "setup-panel" }, view.setupText,
        h("button", { id: "setup-reset", onclick: () => { delete setups[page.turnKey(t)]; page.refresh(); } }, "start again"),
        h("button", { id: "setup-submit", class: "primary", onclick: () => page.send(setupOf(t).codes.join("")) }, "send this setup"),
        h("p", { class: "meta" }, "Back rank first, each rank from file a to j."));
    }

    // -- the battle's orders -------------------------------------------------------------------------

    const ORDERS = ["keep", "advance", "attack", "move", "hold", "retreat"];

    function ordersForm(t) {
      const key = page.turnKey(t);
      if (forms[key]) return forms[key];
      const v = t.turn.view || {};
      const own = v.own_squads || [];
      const enemies = (v.enemy_squads || []).filter((q) => q.alive === undefined || q.alive > 0).map((q) => q.name);
      const size = v.map_size || (t.static && t.static.map_size) || 45;
      const rows = own.map((q) => orderRow(q, enemies, size));
      const form = h("form", { class: "orders", id: "orders", onsubmit: (e) => { e.preventDefault(); page.send(readOrders(form)); } },
        h("table", { class: "squads" },
          h("tr", {}, h("th", { class: "name" }, "squad"), h("th", {}, "alive"), h("th", { class: "name" }, "order in force"), h("th", { class: "name" }, "new order")),
          rows),
        h("button", { type: "submit", id: "orders-submit", class: "primary" }, "send orders"),
        h("span", { class: "meta aim-hint", id: "aim-hint" }));
      forms[key] = form;
      return form;
    }

    function orderRow(q, enemies, size) {
      const now = q.order ? `${q.order.do}${q.order.enemy ? " " + q.order.enemy : ""}${q.order.to ? ` (${q.order.to.join(",")})` : ""}` : "";
      const enemy = h("select", { "data-order-enemy": q.name, "aria-label": `${q.name} target`, hidden: true }, enemies.map((n) => h("option", { value: n }, n)));
      const centre = q.centroid || [Math.ceil(size / 2), Math.ceil(size / 2)];
      const x = h("input", { type: "number", min: 1, max: size, value: centre[0], "data-order-x": q.name, "aria-label": `${q.name} x`, hidden: true });
      const y = h("input", { type: "number", min: 1, max: size, value: centre[1], "data-order-y": q.name, "aria-label": `${q.name} y`, hidden: true });
      const choice = h("select", { "data-order-do": q.name, "aria-label": `${q.name} order`, onchange: () => {
        enemy.hidden = choice.value !== "attack";
        x.hidden = y.hidden = choice.value !== "move";
        const form = choice.closest("form");
        if (choice.value === "move") form.dataset.aim = q.name;
        else if (form.dataset.aim === q.name) delete form.dataset.aim;
        form.querySelector(".aim-hint").textContent = form.dataset.aim ? `click the field to set ${form.dataset.aim}'s target` : "";
      } }, ORDERS.map((o) => h("option", { value: o, disabled: o === "attack" && !enemies.length }, o === "move" ? "move to (x, y)" : o === "attack" ? "attack squad" : o)));
      return h("tr", { "data-squad": q.name },
        h("td", { class: "name" }, q.name), h("td", {}, q.alive === undefined ? "" : q.alive), h("td", { class: "name" }, now),
        h("td", { class: "name" }, choice, " ", enemy, x, y));
    }

    // A click on the field sets the target of the squad last told to move there.
    function aimAt(t, e) {
      const form = forms[page.turnKey(t)], svg = page.board.querySelector("svg");
      if (!form || !svg || !form.dataset.aim) return;
      const point = new DOMPoint(e.clientX, e.clientY).matrixTransform(svg.getScreenCTM().inverse());
      const cell = CogBoards.battleCellAt(t.static, point.x, point.y);
      if (!cell) return;
      const squad = form.dataset.aim;
      form.querySelector(`[data-order-x="${squad}"]`).value = String(cell[0]);
      form.querySelector(`[data-order-y="${squad}"]`).value = String(cell[1]);
    }

    function readOrders(form) {
      const orders = [];
      for (const choice of form.querySelectorAll("[data-order-do]")) {
        const squad = choice.dataset.orderDo, order = { squad, do: choice.value };
        if (order.do === "keep") continue;
        if (order.do === "attack") order.enemy = form.querySelector(`[data-order-enemy="${squad}"]`).value;
        if (order.do === "move") {
          order.to = [Number(form.querySelector(`[data-order-x="${squad}"]`).value), Number(form.querySelector(`[data-order-y="${squad}"]`).value)];
        }
        orders.push(order);
      }
      return orders;
    }

    // -- what play.js calls ----------------------------------------------------------------------

    // The frame to draw instead of the desk's: Stratego's setup being edited, or backgammon with
    // the person's own dice; null for the desk's own. `play` is backgammon's caption.
    function frame(t) {
      const setup = setupOf(t);
      if (setup) return { frame: setupFrame(t, setup), play: null };
      if (toPlay(t)) return { frame: diceFrame(t), play: null };
      return null;
    }

    function marks(t) {
      forgetOld(t);
      const setup = setupOf(t);
      if (setup) { if (setup.picked !== null) page.mark([setupCells(t)[setup.picked]], "picked"); return; }
      const input = INPUTS[t.game];
      if (input && input.marks) input.marks(t);
    }

    function click(t, e) {
      forgetOld(t);
      if (t.game === "battle") { aimAt(t, e); return; }
      const el = e.target.closest("[data-cell]");
      if (!el) return;
      const setup = setupOf(t);
      if (setup) { setupClick(t, setup, el.dataset.cell); return; }
      const input = INPUTS[t.game];
      if (input && input.cell) input.cell(t, el.dataset.cell);
    }

    function panel(t) {
      if (setupOf(t)) return setupPanel(t);
      const input = INPUTS[t.game];
      return input && input.panel ? input.panel(t) : null;
    }

    function buttons(t) {
      const input = INPUTS[t.game];
      return input && input.buttons ? input.buttons(t) : [];
    }

    // A picked piece belongs to one decision; `reset` drops it (a move was sent).
    function forgetOld(t) {
      const key = page.turnKey(t);
      if (picked.key !== key) { picked.key = key; picked.square = null; }
    }

    function reset() { picked.square = null; }

    return { frame, marks, click, panel, buttons, hint: inputHint, reset };
  }

  return { create };
})();
