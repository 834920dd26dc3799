/* cog-arena league page: standings, ratings, head to head, fallbacks and the games list.
 *
 * The data sits in <script id="page-data"> (written by arena.viewer.site). A standing
 * pool's page (data.pool) opens with the pool's leaderboard, rating history, heat map
 * and entrant cards instead (pool.js), then the standings, fallbacks and games. A league's
 * A/B pairs (policies differing in one condition) read as sentences, written in Python.
 * Served live (`arena view RUN --serve`), the page polls live.json on its own
 * origin and reloads when a new replay has been drawn.
 */
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("page-data").textContent);
  const NS = "http://www.w3.org/2000/svg";

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function s(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  const signed = (x) => (x > 0 ? "+" : "") + x.toFixed(3);

  function standingsTable(title, rows, id) {
    const p95 = rows.some((r) => r.latency_p95_ms !== undefined);
    const money = rows.some((r) => r.tokens_in || r.tokens_out || r.cost_usd);
    const head = ["games", "W", "D", "L", "NC", "mean", "fallbacks", p95 ? "latency p50" : "latency", p95 ? "p95" : null,
      money ? "tokens in / out" : null, money ? "cost" : null].filter(Boolean);
    const ms = (v) => (v === undefined ? "–" : `${Number(v).toFixed(0)} ms`);
    return h("div", { class: "card" }, h("h3", {}, title),
      h("table", { id, "data-table": title },
        h("tr", {}, h("th", { class: "name" }, "policy"), head.map((c) => h("th", {}, c))),
        rows.map((r) => h("tr", { "data-policy": r.policy },
          h("td", { class: "name" }, r.policy), h("td", {}, r.games), h("td", {}, r.wins), h("td", {}, r.draws),
          h("td", {}, r.losses), h("td", {}, r.no_contest), h("td", {}, signed(r.mean_score)),
          h("td", {}, `${Object.values(r.fallbacks || {}).reduce((a, b) => a + b, 0)} (${(100 * r.fallback_rate).toFixed(1)}%)`),
          h("td", {}, ms(r.latency_ms)), p95 ? h("td", {}, ms(r.latency_p95_ms)) : null,
          money ? h("td", {}, `${r.tokens_in || 0} / ${r.tokens_out || 0}`) : null,
          money ? h("td", {}, r.cost_usd == null ? "–" : `$${r.cost_usd.toFixed(4)}`) : null))));
  }

  // In the overall standings' order (by Bradley-Terry, policies without a rated match last),
  // then any other rated policy by its rating.
  function ratingsBlock(ratings, order) {
    const elo = ratings.elo || {}, bt = ratings.bt || {};
    const rated = Array.from(new Set([...Object.keys(elo), ...Object.keys(bt)]));
    rated.sort((a, b) => ((bt[b] || {}).rating ?? elo[b] ?? 0) - ((bt[a] || {}).rating ?? elo[a] ?? 0));
    const names = [...order.filter((p) => rated.includes(p)), ...rated.filter((p) => !order.includes(p))];
    const onPrior = names.some((p) => bt[p] && bt[p].on_prior);
    const table = h("table", { id: "ratings" },
      h("tr", {}, h("th", { class: "name" }, "policy"), h("th", {}, "Bradley-Terry"), h("th", {}, "95% interval"), h("th", {}, "Elo (K = 24, sequential)")),
      names.map((p) => h("tr", { "data-policy": p }, h("td", { class: "name" }, p),
        h("td", {}, bt[p] ? bt[p].rating.toFixed(1) + (bt[p].on_prior ? "*" : "") : "–"),
        h("td", {}, bt[p] ? `${bt[p].low.toFixed(1)} – ${bt[p].high.toFixed(1)}` : "–"),
        h("td", {}, elo[p] !== undefined ? elo[p].toFixed(1) : "–"))));
    const note = onPrior ? h("div", { class: "meta", id: "on-prior" }, "* won every rated game, lost every one or played none: the rating and its interval rest on the fit's prior") : null;
    return h("div", { class: "tables" }, h("div", { class: "card" }, table, note), h("div", { class: "card" }, intervalPlot(names, elo, bt)));
  }

  // Bradley-Terry intervals as horizontal bars on the Elo scale, Elo as a diamond beside them.
  function intervalPlot(names, elo, bt) {
    const width = 520, row = 24, left = 130, right = 20, top = 10;
    const height = top + names.length * row + 30;
    const values = names.flatMap((p) => [elo[p], bt[p] && bt[p].low, bt[p] && bt[p].high, bt[p] && bt[p].rating]).filter((v) => v !== undefined && v !== null);
    let lo = Math.min(...values), hi = Math.max(...values);
    if (!(hi > lo)) { lo -= 50; hi += 50; }
    const pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
    const x = (v) => left + ((v - lo) / (hi - lo)) * (width - left - right);
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "intervals", id: "rating-intervals", role: "img", "aria-label": "ratings with 95% intervals" });
    const raw = (hi - lo) / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
      svg.append(s("line", { x1: x(t), x2: x(t), y1: top, y2: height - 22, stroke: "#e3e0d6" }));
      svg.append(s("text", { x: x(t), y: height - 8, "text-anchor": "middle" }, Math.round(t)));
    }
    names.forEach((p, i) => {
      const y = top + i * row + row / 2;
      svg.append(s("text", { x: left - 8, y: y + 4, "text-anchor": "end" }, p));
      const b = bt[p];
      if (b) {
        svg.append(s("line", { x1: x(b.low), x2: x(b.high), y1: y, y2: y, stroke: "#2f6fd6", "stroke-width": 3, "data-policy": p, class: "bt-interval" }));
        svg.append(s("circle", { cx: x(b.rating), cy: y, r: 4.5, fill: "#1d1f24" }));
      }
      if (elo[p] !== undefined) {
        const ex = x(elo[p]);
        svg.append(s("path", { d: `M${ex},${y - 6} l5,6 l-5,6 l-5,-6 z`, fill: "#c58b00", class: "elo-mark" }));
      }
    });
    const wrap = h("div", {}, svg, h("div", { class: "meta" }, "● Bradley-Terry with its 95% bootstrap interval (blue) · ◆ Elo · both on the Elo scale"));
    return wrap;
  }

  function policiesOf(data) {
    const names = new Set((data.standings.overall || []).map((r) => r.policy));
    for (const key of Object.keys(data.h2h || {})) for (const p of key.split("|")) names.add(p);
    return [...names];
  }

  // Every pair as a matrix; with more policies than a screen holds, one policy's row at a
  // time (chosen from a list), as a table of its opponents.
  const MATRIX_MAX = 24;
  function h2hMatrix(data) {
    const names = policiesOf(data);
    const cellText = (a, b) => {
      const cell = a === b ? null : data.h2h[`${a}|${b}`];
      return cell ? `${cell[0]}-${cell[1]}-${cell[2]}${cell[3] ? ` (${cell[3]})` : ""}` : a === b ? "·" : "–";
    };
    const source = h("div", { class: "meta" }, data.h2h_source === "summary" ? "from summary.json" : "derived from the games list (same-author games included)");
    if (names.length > MATRIX_MAX) {
      const table = h("table", { id: "h2h" });
      const pick = h("select", { id: "h2h-policy", onchange: () => drawRow(pick.value) }, names.map((p) => h("option", { value: p }, p)));
      function drawRow(a) {
        const met = names.filter((b) => b !== a && data.h2h[`${a}|${b}`]);
        table.replaceChildren(h("tr", {}, h("th", { class: "name" }, `${a} against`), h("th", {}, "W-D-L (NC)")),
          ...met.map((b) => h("tr", { "data-policy": b }, h("td", { class: "name" }, b), h("td", { "data-pair": `${a}|${b}` }, cellText(a, b)))));
      }
      drawRow(names[0]);
      return h("div", { class: "card" }, h("div", { class: "filters" }, h("label", {}, "policy", pick),
        h("span", { class: "meta" }, `${names.length} policies: one at a time, against each it met`)), table, source);
    }
    const table = h("table", { id: "h2h" }, h("tr", {}, h("th", { class: "name" }, "row vs column: W-D-L (NC)"), names.map((p) => h("th", {}, p))));
    for (const a of names) {
      table.append(h("tr", { "data-policy": a }, h("td", { class: "name" }, a),
        names.map((b) => h("td", { "data-pair": `${a}|${b}` }, cellText(a, b)))));
    }
    return h("div", { class: "card" }, table, source);
  }

  function fallbackTable(fb) {
    return h("div", { class: "card" }, h("table", { id: "fallbacks" },
      h("tr", {}, h("th", { class: "name" }, "policy"), h("th", {}, "decisions"), h("th", {}, "rate"), fb.causes.map((c) => h("th", {}, c))),
      fb.rows.map((r) => h("tr", { "data-policy": r.policy }, h("td", { class: "name" }, r.policy), h("td", {}, r.decisions),
        h("td", {}, `${(100 * r.rate).toFixed(1)}%`), fb.causes.map((c) => h("td", { "data-cause": c }, r.by_cause[c] || 0))))),
      fb.causes.length ? null : h("div", { class: "meta" }, "no fallbacks in this run"));
  }

  // The games, a page at a time: the first page is inline (DATA.games), the others are
  // data/games-NNNN.js, loaded by a script tag when shown (file:// pages cannot fetch).
  // A filter loads every page once, then shows the matching games a page at a time.
  const GAMES = (function () {
    const paging = DATA.games_pages || { total: DATA.games.length, size: Math.max(DATA.games.length, 1), pages: 1 };
    const pages = [DATA.games], waiting = {};
    window.CogGames = {
      page(n, rows) {
        pages[n] = rows;
        for (const done of waiting[n] || []) done(rows);
        delete waiting[n];
      },
    };
    function load(n) {
      if (pages[n]) return Promise.resolve(pages[n]);
      return new Promise((resolve, reject) => {
        if (!waiting[n]) {
          waiting[n] = [];
          const tag = h("script", { src: `data/games-${String(n).padStart(4, "0")}.js` });
          tag.addEventListener("error", () => reject(new Error(`data/games-${n}.js did not load`)));
          document.body.append(tag);
        }
        waiting[n].push(resolve);
      });
    }
    async function all(progress) {
      for (let n = 0; n < paging.pages; n++) { progress(n); await load(n); }
      return pages.flat();
    }
    return { paging, load, all };
  })();

  function gamesBlock() {
    const paging = GAMES.paging, size = paging.size;
    const fromRows = (f) => Array.from(new Set(DATA.games.flatMap(f))).sort();
    const select = (id, label, values) => h("label", {}, label,
      h("select", { id, onchange: apply }, h("option", { value: "" }, "all"), values.map((v) => h("option", { value: v }, v))));
    const count = h("span", { class: "meta", id: "games-count" });
    const withFallbacks = h("input", { type: "checkbox", id: "filter-fallbacks", onchange: apply });
    const filters = h("div", { class: "filters" },
      select("filter-game", "game", paging.games || fromRows((g) => [g.game])),
      select("filter-policy", "policy", paging.policies || fromRows((g) => g.policies)),
      select("filter-ending", "ending", paging.endings || fromRows((g) => [g.ending])),
      h("label", {}, withFallbacks, "has fallbacks"), count);
    const sessions = Boolean(DATA.pool);  // a pool's games: the session that played each
    const previous = h("button", { type: "button", id: "games-prev", onclick: () => show(at - size) }, "‹ previous");
    const next = h("button", { type: "button", id: "games-next", onclick: () => show(at + size) }, "next ›");
    const where = h("span", { class: "meta", id: "games-page" });
    const pager = h("div", { class: "filters pager" }, previous, where, next);
    // the replay link first: on a narrow window it is on screen without scrolling the table
    const head = h("tr", {}, ["", sessions ? "session" : null, "match", "game", "#", "seat 0", "seat 1", "scores", "ending", "reason", "plies", "fallbacks", "seed"]
      .filter((c) => c !== null).map((c) => h("th", { class: c.startsWith("seat") || c === "" ? "name" : "" }, c)));
    const table = h("table", { id: "games" }, head);
    let matching = null, at = 0, shown = paging.total, asked = 0;
    function row(g) {
      return h("tr", {
        class: "game-row", "data-game": g.game, "data-policies": g.policies.join("|"), "data-ending": g.ending,
        "data-fallbacks": g.fallback_count, "data-episode": g.episode,
      },
        h("td", { class: "name" }, g.page ? h("a", { href: g.page, class: "replay-link" }, "replay") : h("span", { class: "meta" }, "no page")),
        sessions ? h("td", {}, g.session ?? "") : null,
        h("td", {}, g.match_index), h("td", {}, g.game), h("td", {}, g.game_index),
        h("td", { class: "name" }, g.policies[0]), h("td", { class: "name" }, g.policies[1]),
        h("td", {}, g.scores ? g.scores.join(" : ") : "NC"), h("td", {}, g.ending), h("td", {}, g.reason), h("td", {}, g.plies),
        h("td", { class: g.fallback_count ? "fb" : "" }, g.fallback_count), h("td", {}, g.seed ?? ""));
    }
    function draw(rows) {
      table.replaceChildren(head, ...rows.map(row));
      where.textContent = shown ? `games ${at + 1}–${at + rows.length} of ${shown}` : "no games";
      previous.disabled = at === 0;
      next.disabled = at + size >= shown;
      pager.hidden = shown <= size;
    }
    async function show(from) {
      const ask = ++asked;
      at = Math.max(0, Math.min(from, Math.max(0, shown - 1)));
      at -= at % size;
      const rows = matching ? matching.slice(at, at + size) : await GAMES.load(at / size);
      if (ask === asked) draw(rows);  // else a later filter or page is on its way
    }
    async function apply() {
      const game = document.getElementById("filter-game").value;
      const policy = document.getElementById("filter-policy").value;
      const ending = document.getElementById("filter-ending").value;
      const ask = ++asked;
      if (!game && !policy && !ending && !withFallbacks.checked) {
        matching = null;
      } else {
        const every = await GAMES.all((n) => { count.textContent = `loading games: page ${n + 1} of ${paging.pages}`; });
        if (ask !== asked) return;
        matching = every.filter((g) => (!game || g.game === game) &&
          (!policy || g.policies.includes(policy)) && (!ending || g.ending === ending) &&
          (!withFallbacks.checked || g.fallback_count > 0));
      }
      shown = matching ? matching.length : paging.total;
      count.textContent = `${shown} of ${paging.total} games`;
      count.dataset.shown = String(shown);
      await show(0);
    }
    count.textContent = `${shown} of ${paging.total} games`;
    count.dataset.shown = String(shown);
    draw(DATA.games);  // the first page is in the page: drawn at once
    return h("div", { class: "card" }, filters, table, pager);
  }

  function poolMeta(pool) {
    const active = pool.entrants.filter((e) => e.status !== "retired").length;
    return [h("span", {}, `${pool.sessions.length} session${pool.sessions.length === 1 ? "" : "s"}`),
      h("span", {}, `${pool.entrants.length} entrants (${active} active)`)];
  }

  // The episodes played, and the most the run plans when a rule (an SPRT, a budget) or a
  // stop has left some unplayed.
  function episodesText(played, planned) {
    const unit = (n) => `episode${n === 1 ? "" : "s"}`;
    if (planned === null || planned === undefined || played >= planned) return `${played} ${unit(played)} played`;
    return `${played} played of at most ${planned} ${unit(planned)}`;
  }

  function build() {
    const app = document.getElementById("app");
    const pool = DATA.pool;
    app.textContent = "";
    app.append(h("h1", {}, `${pool ? "Pool" : "League"} · ${DATA.run}`),
      h("div", { class: "meta" }, h("span", {}, `seed ${DATA.seed ?? "?"}`), pool ? poolMeta(pool) : null,
        h("span", { id: "episodes" }, episodesText(DATA.episodes_played, DATA.episodes_planned)),
        h("span", {}, `${GAMES.paging.total} game${GAMES.paging.total === 1 ? "" : "s"}`), DATA.in_progress ? h("span", {}, h("span", { class: "pill live", id: "in-progress" }, "in progress: standings from the replays so far")) : null));
    if (DATA.partial) app.append(h("p", { class: "meta partial", id: "partial" }, `A partial run: ${DATA.partial}.`));
    if (pool) {
      if (DATA.stopped_by) app.append(h("p", { class: "meta", id: "stopped-by" }, `No new match started: ${DATA.stopped_by}.`));
      app.append(...CogPool.sections(DATA));
    }
    const st = DATA.standings || {};
    app.append(h("h2", {}, "Standings"), h("div", { class: "tables" },
      st.overall ? standingsTable("overall (+1 / 0 / -1 per game)", st.overall, "standings-overall") : null,
      Object.entries(st).filter(([k]) => k !== "overall").map(([name, rows]) => standingsTable(`${name} (mean game score)`, rows, `standings-${name}`))));
    if (DATA.sprt) {  // console lines: each wraps to the card, its continuation indented
      app.append(h("h2", {}, "Sequential test"), h("pre", { class: "card sprt", id: "sprt" }, DATA.sprt.map((line) => h("span", { class: "line" }, line))));
    }
    if (!pool) {  // a pool's leaderboard and heat map have shown these
      if (DATA.stopped_by) app.append(h("p", { class: "meta", id: "stopped-by" }, `No new match started: ${DATA.stopped_by}.`));
      if ((DATA.ab || []).length) {  // the sentences arena run and arena report print
        app.append(h("h2", {}, "A/B pairs"), h("div", { class: "card fit", id: "ab" },
          DATA.ab.map((ab) => h("p", { class: "ab", "data-pair": ab.pair }, ab.sentence))));
      }
      if (DATA.ratings) app.append(h("h2", {}, "Ratings"), ratingsBlock(DATA.ratings, (st.overall || []).map((r) => r.policy)));
      app.append(h("h2", {}, "Head to head"), h2hMatrix(DATA));
    }
    app.append(h("h2", {}, "Fallbacks by cause and policy"), fallbackTable(DATA.fallbacks));
    const problems = Object.entries(DATA.problems || {});
    if (DATA.failed.length || problems.length) {
      app.append(h("h2", {}, "Problems"), h("ul", { class: "problems" },
        DATA.failed.map((f) => h("li", {}, `episode ${f.episode} failed: ${f.error}`)),
        problems.map(([stem, why]) => h("li", {}, `${stem}: ${why}`))));
    }
    app.append(h("h2", {}, "Games"), gamesBlock());
  }

  // A table wider than its card scrolls sideways inside it, and a shadow on each side that has
  // more to see says so (the wrapper's more-left / more-right), kept up to date as it scrolls
  // and as the window or the table (the games filters) changes size.
  function scrollCue(table) {
    const body = h("div", { class: "scroll-body" });
    const wrap = h("div", { class: "scroll-x" }, body);
    table.replaceWith(wrap);
    body.append(table);
    const update = () => {
      const rest = body.scrollWidth - body.clientWidth - body.scrollLeft;
      wrap.classList.toggle("more-left", body.scrollLeft > 1);
      wrap.classList.toggle("more-right", rest > 1);
    };
    body.addEventListener("scroll", update, { passive: true });
    const resized = new ResizeObserver(update);
    resized.observe(body);
    resized.observe(table);
    update();
  }

  function watch() {
    let stamp = null;
    setInterval(() => {
      fetch("live.json", { cache: "no-store" }).then((r) => r.json()).then((live) => {
        if (stamp !== null && live.stamp !== stamp) location.reload();
        stamp = live.stamp;
      }).catch(() => {});
    }, 2000);
  }

  build();
  for (const table of [...document.querySelectorAll("#app table")]) scrollCue(table);
  if (DATA.live && location.protocol.startsWith("http")) watch();
})();
