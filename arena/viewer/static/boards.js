/* cog-arena board drawing, shared by the replay page and the play page.
 *
 * A plain script (no modules, so a replay page opened from file:// loads it
 * offline) that defines one global, `CogBoards`. `CogBoards.draw(game,
 * static, frame, ctx)` returns the SVG of one position of `game`, drawn from
 * the drawer's JSON (arena/viewer/boards.py), and fills the caption and the
 * side card it is handed. Every drawn cell carries data-cell (a1
 * bottom-left, the battle's "x,y" 1-based) and every piece data-piece.
 * The last frame of a won connect-four or hex game names the winning cells
 * (frame.winning, worked out by the engine): their pieces carry data-winning
 * and stand out, the rest are dimmed.
 *
 * ctx, what a renderer may know beyond the position:
 *   seatView  null for the spectator's all-seeing board, or the seat whose view is drawn
 *   tick      the sub-position of the frame: the battle's tick, backgammon's checker step
 *   caption   an element for the line under the board (emptied by the caller)
 *   extra     an element for side cards such as the legend (emptied by the caller)
 *   alias(seat)  the seat's alias in the game
 *   side(seat)   the seat's side name (Red, Blue, BLACK, ...)
 *   play      backgammon: the play that led to the frame, as written; null for a frame of
 *             dice still to be played (the play page's own turn)
 */
window.CogBoards = (function () {
  "use strict";

  const NS = "http://www.w3.org/2000/svg";
  const SEAT_COLOURS = ["#d23c3c", "#2f6fd6"];

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

  // The winning cells of the frame (none before the end), and how a piece is drawn beside them.
  function winningOf(frame) { return new Set(frame.winning || []); }
  function winAttrs(won, name) {
    if (!won.size) return {};
    return won.has(name) ? { "data-winning": true, class: "winning" } : { opacity: 0.45 };
  }
  function winCaption(ctx, what, won) {
    if (won.size) ctx.caption.textContent = `${what}: ${[...won].join(" ")}`;
  }

  function connectFour(st, frame, ctx) {
    const files = st.files, ranks = st.ranks, won = winningOf(frame);
    const w = PAD + files.length * CELL + 8, hgt = ranks * CELL + PAD + 8;
    const root = svgRoot(w, hgt, "connect-four board");
    const x = (f) => PAD + f * CELL + CELL / 2, y = (r) => 4 + (ranks - 1 - r) * CELL + CELL / 2;
    root.append(s("rect", { x: PAD, y: 4, width: files.length * CELL, height: ranks * CELL, rx: 10, fill: CONNECT_FOUR_BOARD, class: "board-frame" }));
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const name = cellName(files, f, r), code = frame.cells[r][f];
      root.append(s("circle", { cx: x(f), cy: y(r), r: CELL * 0.4, fill: "#f6f5f1", "data-cell": name }));
      if (code !== ".") {
        const ring = won.has(name) ? ["#fff", 5] : frame.changed.includes(name) ? ["#ffd23f", 4] : ["#0003", 1];
        root.append(s("circle", { cx: x(f), cy: y(r), r: CELL * 0.4, fill: pieceColour(code), "data-cell": name, "data-piece": code,
          stroke: ring[0], "stroke-width": ring[1], ...winAttrs(won, name) }));
      }
    }
    edgeLabels(root, files, ranks, x, (r) => (r < 0 ? ranks * CELL + 22 : y(r)));
    winCaption(ctx, "four in a row", won);
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

  function hex(st, frame, ctx) {
    const files = st.files, ranks = st.ranks, size = 26, wd = Math.sqrt(3) * size, won = winningOf(frame);
    const cx = (f, r) => 40 + (f + r * 0.5) * wd, cy = (r) => 48 + (ranks - 1 - r) * 1.5 * size;
    const w = cx(files.length - 1, ranks - 1) + wd / 2 + 30, hgt = cy(0) + size + 30;
    const root = svgRoot(Math.ceil(w), Math.ceil(hgt), "hex board");
    const corner = (x, y, i) => { const a = (Math.PI / 180) * (60 * i - 30); return [x + size * Math.cos(a), y + size * Math.sin(a)]; };
    for (let r = 0; r < ranks; r++) for (let f = 0; f < files.length; f++) {
      const x = cx(f, r), y = cy(r), name = cellName(files, f, r), code = frame.cells[r][f];
      const pts = [0, 1, 2, 3, 4, 5].map((i) => corner(x, y, i).map((v) => v.toFixed(1)).join(",")).join(" ");
      root.append(s("polygon", { points: pts, fill: frame.changed.includes(name) ? "#f5dc8a" : "#efe9da", stroke: "#8a826f", "data-cell": name }));
      if (code !== ".") {
        root.append(s("circle", { cx: x, cy: y, r: size * 0.62, fill: pieceColour(code), "data-cell": name, "data-piece": code,
          stroke: won.has(name) ? "#ffd23f" : "#fff", "stroke-width": won.has(name) ? 4 : 2, ...winAttrs(won, name) }));
      }
    }
    if (won.size) {  // the chain in its order, first edge to second, through the stones' centres
      const at = (name) => [cx(files.indexOf(name[0]), Number(name.slice(1)) - 1), cy(Number(name.slice(1)) - 1)];
      root.append(s("polyline", { points: [...won].map((n) => at(n).map((v) => v.toFixed(1)).join(",")).join(" "), fill: "none",
        stroke: "#fff", "stroke-width": 4, "stroke-linecap": "round", "stroke-linejoin": "round", "pointer-events": "none",
        class: "winning-chain" }));
    }
    hexGoalEdges(root, files, ranks, (f, r, i) => corner(cx(f, r), cy(r), i));
    for (let f = 0; f < files.length; f++) {
      root.append(s("text", { x: cx(f, 0), y: cy(0) + size + 16, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, files[f]));
      root.append(s("text", { x: cx(f, ranks - 1), y: cy(ranks - 1) - size - 9, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, files[f]));
    }
    for (let r = 0; r < ranks; r++) {
      root.append(s("text", { x: cx(0, r) - wd / 2 - 12, y: cy(r) + 4, "text-anchor": "middle", "font-size": 13, fill: "#555", class: "coord" }, r + 1));
    }
    winCaption(ctx, "winning chain", won);
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

  function quoridor(st, frame, ctx) {
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
    ctx.caption.textContent = `walls placed ${frame.walls.length} · walls left: ${ctx.side(0)} ${frame.walls_left[0]}, ${ctx.side(1)} ${frame.walls_left[1]} · goal: red rank ${ranks}, blue rank 1`;
    return root;
  }

  // -- Stratego ------------------------------------------------------------------------

  const STRATEGO_NAMES = { F: "Flag", B: "Bomb", S: "Spy", 2: "Scout", 3: "Miner", 4: "Sergeant", 5: "Lieutenant", 6: "Captain", 7: "Major", 8: "Colonel", 9: "General", X: "Marshal", "?": "unknown" };

  function stratego(st, frame, ctx) {
    const cs = 46, files = st.files, ranks = st.ranks;
    const root = svgRoot(PAD + files.length * cs + 6, ranks * cs + PAD + 6, "Stratego board");
    const left = (f) => PAD + f * cs, top = (r) => 4 + (ranks - 1 - r) * cs;
    const seen = ctx.seatView === null ? frame.board : frame.seen[ctx.seatView];
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
      if (ctx.seatView === null && (flags === "r" || flags === "b")) g.append(s("circle", { cx: left(f) + cs - 10, cy: top(r) + 10, r: 3.5, fill: "#ffd23f", class: "revealed" }));
      root.append(g);
    }
    edgeLabels(root, files, ranks, (f) => left(f) + cs / 2, (r) => (r < 0 ? ranks * cs + 20 : top(r) + cs / 2));
    let caption = frame.phase === "setup" ? "setup phase: both seats place 40 pieces at once" : frame.last_move ? `last move ${frame.last_move}` : "";
    if (frame.battle) caption += ` · battle: ${frame.battle.attacker} attacks ${frame.battle.defender}, ${frame.battle.result}`;
    caption += ctx.seatView === null ? " · spectator's all-seeing board (yellow dot: revealed)" : ` · ${["Red", "Blue"][ctx.seatView]}'s view: unknown enemy pieces blank`;
    ctx.caption.textContent = caption;
    ctx.extra.append(h("div", { class: "card legend" },
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
  function armyLegend(st, ctx) {
    const letters = st.letters;
    return h("div", { class: "legend army-legend", id: "army-legend" }, [0, 1].map((seat) =>
      h("span", { "data-side": seat },
        h("span", { class: "sq", style: `background:${squadColour(seat, 2, 100)}` }),
        `${ctx.alias(seat)}: ${["red, left", "blue, right"][seat]}, squads ${letters[seat]}1-${letters[seat]}9`)));
  }

  function decodeTick(b64) {
    const raw = atob(b64), out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }


  // The field's geometry: cell size, the left margin, the map's size in cells.
  function battleGeometry(st) {
    const n = st.map_size;
    return { n, cs: n > 35 ? 13 : 18, off: 30 };
  }

  // The field's cell [x, y] (1-based, (1, 1) bottom-left) under a point of the SVG, or null.
  function battleCellAt(st, px, py) {
    const { n, cs, off } = battleGeometry(st);
    const x = Math.floor((px - off) / cs) + 1, y = n - Math.floor((py - 4) / cs);
    return x >= 1 && x <= n && y >= 1 && y <= n ? [x, y] : null;
  }

  function battle(st, frame, ctx) {
    const { n, cs, off } = battleGeometry(st);
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
    const bytes = decodeTick(frame.ticks[ctx.tick]);
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
    ctx.extra.append(h("div", { class: "card" }, h("h3", {}, "Squads (orders in force this turn)"), table));
    const tick = frame.first_tick + ctx.tick;
    put(ctx.caption, armyLegend(st, ctx),
      `tick ${tick} · red ${alive[0].length} alive, blue ${alive[1].length} alive · colour = army, shade = squad, opacity = hp · (1,1) bottom-left`);
    return root;
  }

  // -- backgammon ------------------------------------------------------------------------

  const CHECKER = { BLACK: "#26282c", WHITE: "#f4efe2" };

  function backgammon(st, frame, ctx) {
    const steps = frame.steps, k = Math.min(ctx.tick, Math.max(steps.length - 1, 0));
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
    const alias = (colour) => ctx.alias(st.colours.indexOf(colour));
    let caption;
    if (frame.opening) caption = `opening roll: BLACK ${frame.dice[0]}, WHITE ${frame.dice[1]}`;
    else if (ctx.play === null) caption = `${alias(frame.mover)} to play ${frame.dice.join("-")} (${frame.mover})`;
    else {
      const play = ctx.play;
      caption = `${alias(frame.mover)} plays ${play} (${frame.mover}'s own numbering) with ${frame.dice.join("-")}`;
      if (moved) caption += ` · step ${k + 1} of ${steps.length}: ${moved.from}/${moved.to}${moved.hit ? "*" : ""} with the ${moved.die}`;
      else caption += " · no checker can move";
    }
    ctx.caption.textContent = `${caption} · pips BLACK ${frame.pips[0]}, WHITE ${frame.pips[1]} · points in BLACK's numbering`;
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

  // The SVG of one position; ctx as described at the top of this file.
  function draw(game, st, frame, ctx) {
    const renderer = RENDERERS[game];
    if (!renderer) throw new Error(`no board drawing for ${game}`);
    return renderer(st, frame, ctx);
  }

  return { NS, SEAT_COLOURS, RENDERERS, STRATEGO_NAMES, draw, h, put, s, setAttrs, svgRoot, decodeTick, squadColour, battleCellAt };
})();
