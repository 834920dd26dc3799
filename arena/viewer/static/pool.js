/* cog-arena pool page: a standing pool's leaderboard, rating history, head-to-head heat map
 * and entrant cards.
 *
 * A plain script (no modules, so the page opened from file:// loads it offline) that
 * defines one global, `CogPool`. `CogPool.sections(data)` returns the pool's sections of
 * the league page, drawn from `data.pool` (arena/viewer/pool.py), `data.h2h` and
 * `data.ratings`. The DOM helpers are CogBoards' (boards.js); every name and author is
 * set as text, never parsed as HTML. An entrant keeps one colour everywhere, by the order
 * the pool first stored it, so a newcomer never repaints the others.
 */
window.CogPool = (function () {
  "use strict";

  const { h, s } = CogBoards;
  // Tableau 10 with its grey left out: grey is a retired entrant's
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
    "#ff9da7", "#9c755f", "#17becf"];
  const RETIRED = "#a3a6ad";

  const whole = (x) => String(Math.round(x));
  const percent = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);
  const interval = (r) => `${whole(r.rating)} [${whole(r.low)}, ${whole(r.high)}]`;

  // About `count` round values between lo and hi.
  function ticks(lo, hi, count) {
    const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((v) => v >= raw);
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(t);
    return out;
  }

  // A range holding every value, padded a little, never empty.
  function domain(values) {
    let lo = Math.min(...values), hi = Math.max(...values);
    if (!(hi > lo)) { lo -= 50; hi += 50; }
    const pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
  }

  function colours(pool) {
    const index = new Map(pool.stored.map((name, i) => [name, i]));
    return (name) => PALETTE[(index.get(name) ?? 0) % PALETTE.length];
  }

  const swatch = (colour) => h("span", { class: "swatch", style: `background:${colour}` });
  const statusPill = (e) => h("span", { class: `pill status status-${e.status}` }, e.status);

  function retiredWhy(why) {
    if (why === "config" || why === "retired = true in the config") return "retired by its config (retired = true)";
    return `retired: ${why || "no reason recorded"}`;
  }

  // -- the leaderboard: rating and interval, each entrant's bar on one axis ---------------

  const BAR = { width: 220, height: 20, pad: 10 };

  function leaderboard(data, colour) {
    const pool = data.pool, elo = (data.ratings || {}).elo || {};
    const rated = pool.entrants.filter((e) => e.bt);
    const [lo, hi] = rated.length ? domain(rated.flatMap((e) => [e.bt.low, e.bt.high])) : [1400, 1600];
    const x = (v) => BAR.pad + ((v - lo) / (hi - lo)) * (BAR.width - 2 * BAR.pad);
    const marks = ticks(lo, hi, 4);
    const axis = s("svg", { width: BAR.width, height: 14, viewBox: `0 0 ${BAR.width} 14`, class: "pool-axis" });
    for (const t of marks) axis.append(s("text", { x: x(t), y: 11, "text-anchor": "middle" }, whole(t)));
    const onPrior = rated.some((e) => e.bt.on_prior);
    let rank = 0;
    const table = h("table", { id: "pool-leaderboard" },
      h("tr", {}, h("th", {}, "#"), h("th", { class: "name" }, "entrant"), h("th", { class: "name" }, "status"),
        h("th", {}, "BT [95%]"), h("th", { class: "bar" }, axis), h("th", { title: "K = 24, sequential" }, "Elo"), h("th", {}, "games")),
      pool.entrants.map((e) => h("tr", { "data-entrant": e.name, "data-status": e.status, class: `status-${e.status}` },
        h("td", {}, e.bt ? ++rank : "–"),
        h("td", { class: "name" }, swatch(colour(e.name)), e.name),
        h("td", { class: "name" }, statusPill(e)),
        h("td", {}, e.bt ? interval(e.bt) + (e.bt.on_prior ? "*" : "") : "no rated match"),
        h("td", { class: "bar" }, e.bt ? intervalBar(e, x, marks, colour(e.name)) : null),
        h("td", {}, elo[e.name] !== undefined ? whole(elo[e.name]) : "–"),
        h("td", {}, e.games))));
    const settings = pool.settings;
    return h("div", { class: "card fit" }, table,
      h("div", { class: "meta" }, "● Bradley-Terry rating with its 95% bootstrap interval, on the Elo scale; unrated entrants last"),
      onPrior ? h("div", { class: "meta", id: "pool-on-prior" }, "* won every rated game, lost every one or played none: the rating and its interval rest on the fit's prior") : null,
      settings ? h("div", { class: "meta", id: "pool-settings" },
        h("span", {}, "last session:"),
        settings.placement_matches !== undefined ? h("span", {}, `${settings.placement_matches} placement matches`) : null,
        h("span", {}, `ranking right with probability ${Number(settings.probability).toFixed(3)} before its last round (target ${settings.target})`),
        h("span", {}, `${settings.matches} matches scheduled in all`),
        (settings.retired_by_roster || []).length ? h("span", {}, `retired by the roster rule: ${settings.retired_by_roster.join(", ")}`) : null) : null);
  }

  function intervalBar(e, x, marks, colour) {
    const mid = BAR.height / 2, retired = e.status === "retired";
    const bar = s("svg", { width: BAR.width, height: BAR.height, viewBox: `0 0 ${BAR.width} ${BAR.height}`, class: "pool-bar", "data-entrant": e.name });
    for (const t of marks) bar.append(s("line", { x1: x(t), x2: x(t), y1: 0, y2: BAR.height, class: "grid" }));
    bar.append(s("line", { x1: x(e.bt.low), x2: x(e.bt.high), y1: mid, y2: mid, stroke: retired ? RETIRED : colour, "stroke-width": 5, "stroke-linecap": "round", class: "pool-interval" }));
    bar.append(s("circle", { cx: x(e.bt.rating), cy: mid, r: 4.5, fill: retired ? "#666b75" : "#1d1f24" }));
    bar.append(s("title", {}, `${e.name}: ${interval(e.bt)}`));
    return bar;
  }

  // -- the rating history: one line per entrant, x the session, y the rating ----------------

  const CHART = { width: 720, height: 300, left: 56, right: 16, top: 12, bottom: 42 };

  function historyChart(pool, colour) {
    const drawn = pool.entrants.filter((e) => (pool.lines[e.name] || []).length);
    const points = drawn.flatMap((e) => pool.lines[e.name]);
    if (!points.length) return h("div", { class: "card meta", id: "pool-history-empty" }, "no session has a rated match yet");
    const { width, height, left, right, top, bottom } = CHART;
    const [lo, hi] = domain(points.flatMap((p) => [p.low, p.high]));
    const column = new Map(pool.sessions.map((n, i) => [n, i]));
    const step = (width - left - right) / Math.max(pool.sessions.length, 1);
    const y = (v) => top + (1 - (v - lo) / (hi - lo)) * (height - top - bottom);
    // an entrant's interval whiskers stand a little apart from the others' at one session
    const dodge = Math.min(7, (step * 0.5) / Math.max(drawn.length, 1));
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "pool-chart", id: "pool-history", role: "img",
      "aria-label": "each entrant's Bradley-Terry rating after each session" });
    for (const t of ticks(lo, hi, 5)) {
      svg.append(s("line", { x1: left, x2: width - right, y1: y(t), y2: y(t), class: "grid" }));
      svg.append(s("text", { x: left - 6, y: y(t) + 4, "text-anchor": "end" }, whole(t)));
    }
    for (const n of pool.sessions) {
      svg.append(s("text", { x: left + step * (column.get(n) + 0.5), y: height - bottom + 16, "text-anchor": "middle" }, n));
    }
    svg.append(s("text", { x: left + (width - left - right) / 2, y: height - 6, "text-anchor": "middle", class: "axis-title" }, "session"));
    svg.append(s("text", { x: 12, y: top + (height - top - bottom) / 2, "text-anchor": "middle", class: "axis-title",
      transform: `rotate(-90 12 ${top + (height - top - bottom) / 2})` }, "Bradley-Terry rating"));
    drawn.forEach((e, i) => {
      const off = (i - (drawn.length - 1) / 2) * dodge;
      const x = (session) => left + step * (column.get(session) + 0.5) + off;
      const line = pool.lines[e.name], retired = e.status === "retired";
      const series = s("g", { class: `series${retired ? " retired" : ""}`, "data-entrant": e.name, stroke: colour(e.name), fill: colour(e.name) });
      for (const p of line) series.append(s("line", { x1: x(p.session), x2: x(p.session), y1: y(p.low), y2: y(p.high), class: "whisker" }));
      series.append(s("polyline", { points: line.map((p) => `${x(p.session)},${y(p.rating)}`).join(" "), fill: "none", class: "trend",
        "stroke-dasharray": retired ? "6 4" : null }));
      for (const p of line) {
        const dot = s("circle", { cx: x(p.session), cy: y(p.rating), r: 4, class: "point", "data-session": p.session });
        dot.append(s("title", {}, `${e.name} after session ${p.session}: ${interval(p)}`));
        series.append(dot);
      }
      svg.append(series);
    });
    const focus = (name) => {
      svg.classList.toggle("focus", name !== null);
      for (const g of svg.querySelectorAll("g.series")) g.classList.toggle("on", g.dataset.entrant === name);
    };
    const legend = h("div", { class: "legend pool-legend", id: "pool-legend" }, drawn.map((e) => h("span", {
      class: "legend-item", "data-entrant": e.name, tabindex: 0,
      onmouseenter: () => focus(e.name), onmouseleave: () => focus(null), onfocus: () => focus(e.name), onblur: () => focus(null),
    }, h("span", { class: `line-key${e.status === "retired" ? " retired" : ""}`, style: `border-color:${colour(e.name)}` }), e.name,
    e.status === "retired" ? h("span", { class: "meta" }, ` (retired after session ${e.last_session})`) : null)));
    return h("div", { class: "card fit" }, h("div", { class: "chart-wrap" }, svg), legend,
      h("div", { class: "meta" }, "Each entrant's rating over the games of sessions 1 to n, with its 95% interval, from the session it first played in; a retired entrant's (dashed) up to the last session it played in."));
  }

  // -- head to head: the row's score share against the column, coloured -----------------------

  // 0 red, ½ the page's paper, 1 blue: linear in between
  function heat(share) {
    const paper = [246, 245, 241], end = share < 0.5 ? [210, 60, 60] : [47, 111, 214];
    const t = Math.abs(share - 0.5) * 2;
    const rgb = paper.map((p, i) => Math.round(p + (end[i] - p) * t));
    return { background: `rgb(${rgb.join(",")})`, ink: t > 0.55 ? "#ffffff" : "#1d1f24" };
  }

  function heatCell(a, b, h2h) {
    if (a === b) return h("td", { class: "self" }, "·");
    const cell = h2h[`${a}|${b}`];
    if (!cell) return h("td", { class: "none", "data-pair": `${a}|${b}`, title: `${a} has not played ${b}` }, "–");
    const [w, d, l, nc] = cell, played = w + d + l;
    const share = played ? (w + d / 2) / played : null;
    const wdl = `${w}-${d}-${l}${nc ? ` (${nc})` : ""}`;
    const title = `${a} against ${b}: ${w} won, ${d} drawn, ${l} lost${nc ? `, ${nc} no contest` : ""}` +
      (share === null ? "" : `; score share ${percent(share)}`);
    const colour = share === null ? null : heat(share);
    return h("td", { class: "heat-cell", "data-pair": `${a}|${b}`, "data-share": share === null ? null : share.toFixed(4), title,
      style: colour ? `background:${colour.background};color:${colour.ink}` : null },
    h("div", { class: "share" }, share === null ? "NC" : `${Math.round(100 * share)}%`), h("div", { class: "wdl" }, wdl));
  }

  // Beyond HEAT_MAX entrants the map holds the first HEAT_MAX of the leaderboard (a map of
  // hundreds of columns is not read by anyone); the report has every pair.
  const HEAT_MAX = 24;
  function heatMap(data) {
    const all = data.pool.entrants.map((e) => e.name);
    const names = all.slice(0, HEAT_MAX);
    const retired = new Set(data.pool.entrants.filter((e) => e.status === "retired").map((e) => e.name));
    const h2h = data.h2h || {};
    const table = h("table", { id: "pool-h2h", class: "heat" },
      h("tr", {}, h("th", { class: "name" }, "row vs column"), names.map((b) => h("th", { class: retired.has(b) ? "retired" : null }, b))),
      names.map((a) => h("tr", { "data-entrant": a },
        h("th", { class: `name${retired.has(a) ? " retired" : ""}` }, a), names.map((b) => heatCell(a, b, h2h)))));
    return h("div", { class: "card fit" }, table,
      h("div", { class: "meta heat-key" }, h("span", { class: "heat-scale" }),
        h("span", {}, "the row's score share against the column (a draw counts half): 0% red, 50% plain, 100% blue; " +
          "W-D-L (no contests) under it; " +
          (data.h2h_source === "summary" ? "from summary.json" : "derived from the games list (same-author games included)") +
          (all.length > names.length ? `; the first ${names.length} of ${all.length} entrants on the leaderboard (\`arena report RUN --what h2h\` has every pair)` : ""))));
  }

  // -- the entrants' cards ----------------------------------------------------------------------

  function card(e, colour) {
    const rows = [
      ["fingerprint", e.fingerprint ? h("code", { class: "fingerprint", title: e.fingerprint }, e.fingerprint.slice(0, 12)) : "–"],
      ["author", e.author || "–"],
      ["first seen", e.first_session === null || e.first_session === undefined ? "–" : `session ${e.first_session}`],
      ["last played", e.last_session === null || e.last_session === undefined ? "not yet" : `session ${e.last_session}`],
      ["games", e.games],
      ["own play", percent(e.own_play)],
      ["Bradley-Terry", e.bt ? interval(e.bt) + (e.bt.on_prior ? "*" : "") : "no rated match"],
    ];
    return h("div", { class: `card entrant-card status-${e.status}`, "data-entrant": e.name, "data-status": e.status },
      h("h3", {}, swatch(colour), h("span", { class: "entrant-name" }, e.name), statusPill(e)),
      e.status === "retired" ? h("div", { class: "retired-why" }, retiredWhy(e.retired)) : null,
      e.status === "placement" ? h("div", { class: "meta" }, "still playing its placement matches") : null,
      h("dl", {}, rows.flatMap(([key, value]) => [h("dt", {}, key), h("dd", { "data-field": key }, value)])),
      e.source ? h("details", { class: "revealed-source" },
        h("summary", {}, "revealed source (the ledger's program_reveal)"),
        h("pre", {}, h("code", {}, e.source))) : null);
  }

  function sections(data) {
    const colour = colours(data.pool);
    const entrants = data.pool.entrants;
    return [
      h("h2", {}, "Leaderboard"),
      entrants.length ? leaderboard(data, colour) : h("p", { class: "meta" }, "no entrants yet"),
      h("h2", {}, "Rating history"), historyChart(data.pool, colour),
      h("h2", {}, "Head to head"), heatMap(data),
      h("h2", {}, "Entrants"), h("div", { class: "entrant-cards", id: "pool-cards" }, entrants.map((e) => card(e, colour(e.name)))),
    ];
  }

  return { sections, heat };
})();
