// The Blocks dashboard page: lists runs, overlays their channels in
// uPlot charts, and follows the server's events (/api/events) to fetch new
// rows as runs train. No build step, no dependency besides uPlot.
"use strict";

(function () {
  const PALETTE = ["#1f77b4", "#e8590c", "#2f9e44", "#d6336c", "#7048e8", "#0c8599", "#a0522d", "#e64980", "#5c940d", "#868e96"];
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  if (params.get("token")) sessionStorage.setItem("blocks-token", params.get("token"));
  const token = () => sessionStorage.getItem("blocks-token") || "";

  const state = {
    runs: [],            // from /api/runs
    colors: new Map(),   // run id -> color
    selected: new Set(),
    known: new Set(),    // run ids seen
    userTouched: false,  // the user changed the selection
    data: new Map(),     // run id -> {channels: Map(name -> Map(it -> v)), epochEnds, times: Map(it -> t), next}
    details: new Map(),  // run id -> detail
    charts: new Map(),   // channel -> {u, runs, zoomed, fig}
    started: null,
    xaxis: localStorage.getItem("blocks-xaxis") || "iterations",
    smoothing: 0,
    filter: "",
    theme: localStorage.getItem("blocks-theme") || "system",
  };

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of kids) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  async function api(path, opts) {
    const headers = { "X-Blocks-Token": token() };
    // A request never hangs the page: the next event retries.
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 15000);
    let r;
    try {
      r = await fetch(path, Object.assign({ headers, cache: "no-store", signal: ctl.signal }, opts || {}));
    } finally {
      clearTimeout(timer);
    }
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    if (!r.ok) throw new Error((body && body.error) || (r.status + " " + r.statusText));
    return body;
  }

  function showMessage(text) {
    const m = $("message");
    m.textContent = text || "";
    m.hidden = !text;
  }

  // ---- theme ---------------------------------------------------------
  function applyTheme() {
    const root = document.documentElement;
    if (state.theme === "system") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", state.theme);
    const b = $("theme");
    b.textContent = "theme: " + state.theme;
    b.setAttribute("aria-pressed", state.theme === "system" ? "false" : "true");
  }
  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  // ---- runs ----------------------------------------------------------
  function colorOf(id) {
    if (!state.colors.has(id)) state.colors.set(id, PALETTE[state.colors.size % PALETTE.length]);
    return state.colors.get(id);
  }

  async function loadRuns() {
    const body = await api("/api/runs");
    if (state.started && body.started !== state.started) {
      // A new server: read everything again.
      state.data.clear();
    }
    state.started = body.started;
    state.runs = body.runs || [];
    const ids = new Set(state.runs.map((r) => r.id));
    for (const id of [...state.selected]) if (!ids.has(id)) state.selected.delete(id);
    for (const r of state.runs) {
      const isNew = !state.known.has(r.id);
      state.known.add(r.id);
      if (!isNew) continue;
      const parent = r.chain && r.chain.length > 1 ? r.chain[1] : null;
      if (parent && state.selected.has(parent)) {
        // A run resumed from a shown one takes its place (its curves
        // continue the parent's).
        state.selected.delete(parent);
        state.selected.add(r.id);
      } else if (!state.userTouched && !(r.continued_by && r.continued_by.length)) {
        // By default: every run no other run continues (chain heads).
        state.selected.add(r.id);
      }
    }
    for (const r of state.runs) colorOf(r.id);
    renderRuns();
  }

  function statusClass(s) { return "status " + s.replace(/\s+/g, "-"); }

  // renderRuns updates the run list in place (a re-render would lose the
  // keyboard focus and the screen reader's position).
  const runItems = new Map(); // run id -> {li, cb, name, status, meta, source}
  function renderRuns() {
    const ul = $("runs");
    const empty = ul.querySelector(".empty");
    if (!state.runs.length) {
      if (!empty) ul.replaceChildren(el("li", { class: "empty", text: "No runs yet: waiting for a log to appear." }));
      runItems.clear();
      return;
    }
    if (empty) empty.remove();
    const ids = new Set(state.runs.map((r) => r.id));
    for (const [id, it] of runItems) if (!ids.has(id)) { it.li.remove(); runItems.delete(id); }
    for (const r of state.runs) {
      let it = runItems.get(r.id);
      if (!it) {
        const id = "run-" + r.id;
        const cb = el("input", { type: "checkbox", id, "data-run": r.id });
        cb.addEventListener("change", () => {
          state.userTouched = true;
          if (cb.checked) state.selected.add(r.id); else state.selected.delete(r.id);
          refreshData().then(renderAll);
        });
        const sw = el("span", { class: "swatch", "aria-hidden": "true" });
        sw.style.background = colorOf(r.id);
        const status = el("span");
        const meta = el("span", { class: "meta" });
        const source = el("span", { class: "meta", text: r.source });
        const label = el("label", { for: id }, el("span", { class: "name" }, sw, r.name, status), meta, source);
        it = { li: el("li", {}, cb, label), cb, status, meta };
        runItems.set(r.id, it);
        ul.append(it.li);
      }
      it.cb.checked = state.selected.has(r.id);
      it.status.className = statusClass(r.status);
      it.status.textContent = r.status;
      const meta = [r.iterations + " iterations", r.epochs + " epochs"];
      if (r.chain && r.chain.length > 1) meta.push("resumed from " + r.chain[1].slice(0, 8));
      if (r.continued_by && r.continued_by.length) meta.push("continued by " + r.continued_by.map((c) => c.slice(0, 8)).join(", "));
      if (r.chain_error) meta.push(r.chain_error);
      it.meta.textContent = meta.join(" · ");
      it.li.className = r.continued_by && r.continued_by.length ? "ancestor" : "";
    }
  }

  // ---- data ----------------------------------------------------------
  async function loadData(id) {
    let d = state.data.get(id);
    if (!d) {
      d = { channels: new Map(), epochEnds: [], times: new Map(), next: 0 };
      state.data.set(id, d);
    }
    // The server answers at most so many rows at a time: body.next says
    // where to go on.
    for (;;) {
      const since = d.next;
      const body = await api("/api/runs/" + encodeURIComponent(id) + "/data?since=" + since);
      for (const [name, pts] of Object.entries(body.channels || {})) {
        let m = d.channels.get(name);
        if (!m) { m = new Map(); d.channels.set(name, m); }
        for (const [it, v] of pts) m.set(it, v);
      }
      d.epochEnds = body.epoch_ends || [];
      for (const [it, t] of body.times || []) d.times.set(it, t);
      if (body.next && body.next > since) { d.next = body.next; continue; }
      let maxIt = since;
      for (const m of d.channels.values()) for (const it of m.keys()) if (it > maxIt) maxIt = it;
      // The last row may still change: ask for it again next time.
      d.next = maxIt;
      return;
    }
  }

  async function loadDetail(id) {
    state.details.set(id, await api("/api/runs/" + encodeURIComponent(id)));
  }

  async function refreshData() {
    const ids = [...state.selected];
    await Promise.all(ids.map((id) => Promise.all([loadData(id), loadDetail(id)]).catch((e) => showMessage("run " + id + ": " + e.message))));
  }

  // ---- x axes and smoothing -------------------------------------------
  function epochOf(it, ends) {
    let start = 0;
    for (let k = 0; k < ends.length; k++) {
      const e = ends[k];
      if (it <= e) return e === start ? k + 1 : k + (it - start) / (e - start);
      start = e;
    }
    const n = ends.length;
    const prev = n > 1 ? ends[n - 2] : 0;
    const len = n > 0 ? Math.max(ends[n - 1] - prev, 1) : 1;
    return n + (it - start) / len;
  }

  // timeOf interpolates the recorded (iteration, time) pairs.
  function timeAxis(d) {
    const pts = [...d.times.entries()].sort((a, b) => a[0] - b[0]);
    return (it) => {
      if (!pts.length) return null;
      let lo = 0, hi = pts.length - 1;
      if (it <= pts[0][0]) return it === pts[0][0] ? pts[0][1] : null;
      if (it >= pts[hi][0]) return it === pts[hi][0] ? pts[hi][1] : null;
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (pts[mid][0] <= it) lo = mid; else hi = mid; }
      const [i0, t0] = pts[lo], [i1, t1] = pts[hi];
      return t0 + (t1 - t0) * (it - i0) / (i1 - i0);
    };
  }

  function xMapper(d) {
    switch (state.xaxis) {
      case "epochs": return (it) => epochOf(it, d.epochEnds);
      case "wall": return timeAxis(d);
      case "elapsed": {
        const t = timeAxis(d);
        const first = Math.min(...d.times.values());
        return (it) => { const v = t(it); return v === null ? null : v - first; };
      }
      default: return (it) => it;
    }
  }

  // smooth is TensorBoard's debiased exponential moving average.
  function smooth(ys, w) {
    if (!w) return ys;
    let last = 0, n = 0;
    return ys.map((y) => {
      last = last * w + (1 - w) * y;
      n++;
      return last / (1 - Math.pow(w, n));
    });
  }

  function series(id, channel) {
    const d = state.data.get(id);
    const m = d && d.channels.get(channel);
    if (!m || !m.size) return null;
    const its = [...m.keys()].sort((a, b) => a - b);
    const fx = xMapper(d);
    const xs = [], ys = [];
    let prev = -Infinity;
    for (const it of its) {
      const x = fx(it);
      if (x === null || !isFinite(x) || x <= prev) continue;
      xs.push(x); ys.push(m.get(it)); prev = x;
    }
    if (!xs.length) return null;
    return [xs, smooth(ys, state.smoothing)];
  }

  // ---- charts --------------------------------------------------------
  function channelsOf(ids) {
    const names = new Set();
    for (const id of ids) {
      const d = state.data.get(id);
      if (d) for (const [n, m] of d.channels) if (m.size) names.add(n);
    }
    const f = state.filter.toLowerCase();
    return [...names].filter((n) => !f || n.toLowerCase().includes(f)).sort();
  }

  function runById(id) { return state.runs.find((r) => r.id === id); }

  function axisLabel() {
    return { iterations: "iterations", epochs: "epochs", elapsed: "seconds since the start", wall: "wall-clock time" }[state.xaxis];
  }

  function chartWidth(fig) { return Math.max(300, fig.clientWidth - 18); }

  function makeChart(fig, holder, channel, ids, data) {
    const entry = () => state.charts.get(channel);
    const fg = cssVar("--fg"), grid = cssVar("--grid");
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts = {
      width: chartWidth(fig), height: 240,
      scales: { x: { time: state.xaxis === "wall" } },
      axes: [Object.assign({ label: axisLabel() }, axis), Object.assign({ label: channel, size: 60 }, axis)],
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      series: [{ label: axisLabel() }].concat(ids.map((id) => {
        const r = runById(id);
        return { label: r ? r.name : id, stroke: colorOf(id), width: 1.6, spanGaps: true, points: { show: false } };
      })),
      hooks: {
        setSelect: [(u) => { const e = entry(); if (e && u.select.width > 0) e.zoomed = true; }],
        // The x range shown, for tools and tests.
        setScale: [(u, key) => { if (key === "x") { fig.dataset.xmin = u.scales.x.min; fig.dataset.xmax = u.scales.x.max; } }],
      },
    };
    const u = new uPlot(opts, data, holder);
    u.over.addEventListener("dblclick", () => { const e = entry(); if (e) e.zoomed = false; });
    return u;
  }

  function zoom(channel, factor, shift) {
    const e = state.charts.get(channel);
    if (!e) return;
    const u = e.u, xs = u.data[0];
    if (!xs.length) return;
    if (factor === 0) { e.zoomed = false; u.setScale("x", { min: xs[0], max: xs[xs.length - 1] }); return; }
    const { min, max } = u.scales.x;
    const span = max - min, mid = (min + max) / 2 + shift * span;
    e.zoomed = true;
    u.setScale("x", { min: mid - span * factor / 2, max: mid + span * factor / 2 });
  }

  // describe is the chart's text alternative: per run, the points drawn
  // and the last value.
  function describe(channel, ids, drawnOf) {
    const parts = [];
    for (const id of ids) {
      const s = state.data.get(id) && state.data.get(id).channels.get(channel);
      const drawn = drawnOf.get(id);
      if (!s || !s.size || !drawn) continue;
      const its = [...s.keys()].sort((a, b) => a - b);
      const last = its[its.length - 1];
      const r = runById(id);
      let text = (r ? r.name : id) + ": " + drawn[0].length + " points, last " + fmt(s.get(last)) + " at iteration " + last;
      if (state.smoothing > 0) text += " (smoothed " + fmt(drawn[1][drawn[1].length - 1]) + ")";
      parts.push(text);
    }
    return "Chart of " + channel + " against " + axisLabel() + ". " + parts.join("; ");
  }

  function fmt(v) { return Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : String(+v.toPrecision(5)); }

  function renderCharts() {
    const ids = [...state.selected].filter((id) => state.data.has(id));
    const wanted = channelsOf(ids);
    const box = $("charts");
    for (const [ch, e] of state.charts) {
      if (!wanted.includes(ch)) { e.u.destroy(); e.fig.remove(); state.charts.delete(ch); }
    }
    if (!wanted.length) {
      if (!box.querySelector(".empty")) box.replaceChildren(el("p", { class: "empty", text: ids.length ? "No numeric channels yet." : "Select a run to see its curves." }));
      return;
    }
    const empty = box.querySelector(".empty");
    if (empty) empty.remove();
    const key = ids.join(",") + "|" + state.xaxis + "|" + state.theme;
    for (const ch of wanted) {
      const tables = [];
      const present = [];
      const drawnOf = new Map();
      for (const id of ids) {
        const s = series(id, ch);
        if (s) { tables.push(s); present.push(id); drawnOf.set(id, s); }
      }
      let e = state.charts.get(ch);
      const data = tables.length ? uPlot.join(tables) : [[]];
      const ekey = key + "|" + present.join(",");
      if (e && e.key !== ekey) { e.u.destroy(); e.fig.remove(); state.charts.delete(ch); e = null; }
      if (!tables.length) continue;
      if (!e) {
        const holder = el("div", { class: "chart", tabindex: "0", role: "img" });
        const btn = (label, text, f) => el("button", { type: "button", "aria-label": label + " (" + ch + ")", title: label, text, onclick: f });
        const fig = el("figure", { "data-channel": ch },
          el("figcaption", {}, el("span", { class: "title", text: ch }),
            btn("Zoom in", "+", () => zoom(ch, 0.5, 0)), btn("Zoom out", "−", () => zoom(ch, 2, 0)), btn("Reset zoom", "reset", () => zoom(ch, 0, 0))),
          holder);
        holder.addEventListener("keydown", (ev) => {
          const k = { "+": [0.5, 0], "=": [0.5, 0], "-": [2, 0], "ArrowLeft": [1, -0.2], "ArrowRight": [1, 0.2], "0": [0, 0] }[ev.key];
          if (k) { ev.preventDefault(); zoom(ch, k[0], k[1]); }
        });
        insertSorted(box, fig, ch);
        const u = makeChart(fig, holder, ch, present, data);
        e = { u, fig, holder, key: ekey, zoomed: false };
        state.charts.set(ch, e);
      } else {
        e.u.setData(data, !e.zoomed);
      }
      e.holder.setAttribute("aria-label", describe(ch, present, drawnOf));
    }
  }

  function insertSorted(box, fig, ch) {
    for (const f of box.querySelectorAll("figure")) {
      if (f.dataset.channel > ch) { box.insertBefore(fig, f); return; }
    }
    box.append(fig);
  }

  // ---- details -------------------------------------------------------
  async function stopRun(id, button) {
    button.disabled = true;
    button.textContent = "Stopping…";
    try {
      await api("/api/runs/" + encodeURIComponent(id) + "/stop", { method: "POST" });
      showMessage("");
    } catch (e) {
      button.disabled = false;
      button.textContent = "Stop run";
      showMessage("The stop request was refused: " + e.message);
    }
  }

  // renderDetails keeps one article per selected run; its header (name,
  // status, stop button) is updated in place and its body rebuilt only
  // when the run's details change.
  const articles = new Map(); // run id -> {art, title, status, progress, stop, body, key}
  function renderDetails() {
    const box = $("details");
    const ids = [...state.selected].filter((id) => runById(id));
    for (const [id, a] of articles) if (!ids.includes(id)) { a.art.remove(); articles.delete(id); }
    const none = box.querySelector(".empty");
    if (!ids.length) { if (!none) box.replaceChildren(el("p", { class: "empty", text: "No run selected." })); return; }
    if (none) none.remove();
    for (const id of ids) {
      const r = runById(id);
      const d = state.details.get(id);
      let a = articles.get(id);
      if (!a) {
        const sw = el("span", { class: "swatch", "aria-hidden": "true" });
        sw.style.background = colorOf(id);
        const status = el("span");
        const stop = el("button", { type: "button", class: "stop", "data-stop": id, hidden: true,
          "aria-label": "Stop run " + r.name + " after its current batch (it saves its checkpoint and exits)", text: "Stop run" });
        stop.addEventListener("click", () => stopRun(id, stop));
        const progress = el("p", { class: "hint" });
        const body = el("div");
        const statusList = el("dl", { class: "facts" });
        const statusBox = el("details", {}, el("summary", { text: "Log status" }), statusList);
        const art = el("article", { class: "run", "aria-label": "Run " + r.name },
          el("header", {}, el("h3", {}, sw, r.name, status), stop), progress, body, statusBox);
        a = { art, status, stop, progress, body, statusList, key: null };
        articles.set(id, a);
        box.append(art);
      }
      a.status.className = statusClass(r.status);
      a.status.textContent = r.status;
      a.stop.hidden = !r.live;
      if (r.stop_requested) { a.stop.disabled = true; a.stop.textContent = "Stopping…"; }
      let progress = r.iterations + " iterations · " + r.epochs + " epochs";
      if (r.heartbeat) progress += " · last heartbeat " + new Date(r.heartbeat * 1000).toLocaleTimeString();
      a.progress.textContent = progress;
      if (d) {
        const dl = [];
        for (const [k, v] of Object.entries(d.status_values || {}).sort()) dl.push(el("dt", { text: k }), el("dd", { text: v }));
        a.statusList.replaceChildren(...dl);
      }
      const key = JSON.stringify([d && Object.assign({}, d, { iterations: 0, epochs: 0, heartbeat: 0, status: "", live: false, stop_requested: false,
        status_values: null }), r.chain, r.chain_error, r.source, r.pid]);
      if (key === a.key) continue;
      a.key = key;
      a.body.replaceChildren(...detailBody(id, r, d));
    }
  }

  function detailBody(id, r, d) {
    const out = [];
    const facts = el("dl", { class: "facts" });
    const fact = (k, v) => { if (v !== undefined && v !== null && v !== "") facts.append(el("dt", { text: k }), el("dd", { text: String(v) })); };
    fact("run (log UUID)", id);
    fact("log", r.source);
    if (r.chain && r.chain.length > 1) fact("resumed from", r.chain.slice(1).join(" ← "));
    fact("chain", r.chain_error);
    if (r.pid) fact("process", r.pid + " on " + r.host);
    out.push(facts);
    if (!d) return out;
    if (d.command && d.command.length) fact("command", d.command.join(" "));
    if ((d.config || []).length) {
      const tb = el("tbody");
      for (const c of d.config) tb.append(el("tr", {}, el("td", {}, el("code", { text: c.name })), el("td", {}, el("code", { text: c.value })),
        el("td", { class: "override", text: c.override ? "--set " + c.name + "=" + c.override : "" })));
      out.push(el("table", {}, el("caption", { class: "hint", text: "Config: tunables; --set overrides are marked" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "name" }), el("th", { scope: "col", text: "value" }), el("th", { scope: "col", text: "command line" }))), tb));
    }
    if (d.config_record && !(d.config || []).length) out.push(el("p", {}, "config record: ", el("code", { text: d.config_record })));
    if (!(d.config || []).length && !d.config_record) out.push(el("p", { class: "hint", text: "No tunables recorded." }));
    out.push(el("h3", { text: "Checkpoints" }));
    if (d.checkpoints && d.checkpoints.length) {
      const cks = el("ul", { "aria-label": "Checkpoints" });
      for (const c of d.checkpoints) {
        cks.append(el("li", {}, el("code", { text: c.path }), c.iterations ? " (iteration " + c.iterations + ")" : "",
          c.exists ? "" : el("span", { class: "missing", text: " (missing)" })));
      }
      out.push(cks);
    } else out.push(el("p", { class: "hint", text: "None recorded." }));
    if (d.script_text) {
      out.push(el("details", {}, el("summary", {}, "Script ", el("code", { text: d.script_path || "" }),
        " · sha256 ", el("code", { text: (d.script_sha256 || "").slice(0, 16) + "…", title: d.script_sha256 })), el("pre", {}, el("code", { text: d.script_text }))));
    }
    return out;
  }

  function renderAll() {
    renderCharts();
    renderDetails();
  }

  // ---- live updates ----------------------------------------------------
  let busy = false, again = false;
  async function update() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      await loadRuns();
      await refreshData();
      renderAll();
    } catch (e) {
      showMessage("Could not read from the dashboard server: " + e.message);
    } finally {
      busy = false;
      if (again) { again = false; update(); }
    }
  }

  function connect() {
    const es = new EventSource("/api/events" + (token() ? "?token=" + encodeURIComponent(token()) : ""));
    const conn = $("conn");
    es.addEventListener("hello", () => {
      conn.textContent = "live"; conn.className = "pill live";
      showMessage("");
      update();
    });
    es.addEventListener("update", update);
    es.onerror = () => {
      conn.textContent = "reconnecting…"; conn.className = "pill down";
      // EventSource retries by itself (the server asks for 1 s); a
      // closed stream (a refused token) is retried by hand.
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
    };
  }

  function init() {
    applyTheme();
    const xa = $("xaxis");
    xa.value = state.xaxis;
    xa.addEventListener("change", () => { state.xaxis = xa.value; localStorage.setItem("blocks-xaxis", xa.value); renderCharts(); });
    const sm = $("smoothing");
    sm.addEventListener("input", () => { state.smoothing = +sm.value; $("smoothing-value").value = (+sm.value).toFixed(2); renderCharts(); });
    $("filter").addEventListener("input", (ev) => { state.filter = ev.target.value; renderCharts(); });
    $("theme").addEventListener("click", () => {
      state.theme = { system: "light", light: "dark", dark: "system" }[state.theme];
      localStorage.setItem("blocks-theme", state.theme);
      applyTheme();
      for (const e of state.charts.values()) { e.u.destroy(); e.fig.remove(); }
      state.charts.clear();
      renderCharts();
    });
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      for (const e of state.charts.values()) { e.u.destroy(); e.fig.remove(); }
      state.charts.clear();
      renderCharts();
    });
    new ResizeObserver(() => {
      for (const e of state.charts.values()) e.u.setSize({ width: chartWidth(e.fig), height: 240 });
    }).observe($("charts"));
    connect();
  }

  if (typeof uPlot === "undefined") {
    document.addEventListener("DOMContentLoaded", () => showMessage("The charting library did not load."));
  } else {
    init();
  }
})();
