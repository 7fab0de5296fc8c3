/*
 * The page of `timerlog report` (tools/report.c writes the data).
 *
 * The data, in <script id="report-data">:
 *   files, base        the stream files of the run, and of the base run
 *   threads[]          per file, the names of its threads by id
 *   budget_ns          the budget (--hitch), 0 when none
 *   groups[]           frames of one thread name and root title:
 *     thread, root, frames, serial[], file[], hitches[] (frame positions)
 *     rows[]           [parent (-1 for the root), name, kind "C"|"E",
 *                      flags (tlog_node_flags), device or null,
 *                      launcher row or -1, queue: the device queue of
 *                      every frame that has the row, [q, ...] when its
 *                      intervals ran on several, 0 for none, -1 when
 *                      frames differ, -2 when it ran on several
 *                      devices], parents before children
 *     totals[], counts[]  per row, base64 of one LEB128 varint per frame:
 *                      the row's total (ns) and instances; 0 and 0 when
 *                      the frame lacks it
 *     orders           base64 of varints: for each frame whose rows come
 *                      in another order than the group's (children by
 *                      first appearance), its position, its row count and
 *                      its rows in dump order
 *   whole[]            frames kept whole: g, i (frame position), serial,
 *                      n: rows in dump order [row, total, count, start,
 *                      min, max, thread, launcher node or -1, flags, queue,
 *                      device], x: instances [node, thread, start,
 *                      duration, launcher node or -1, queue, device: where
 *                      a device interval ran, as a row's intervals may run
 *                      on several queues; 0 and null for others],
 *                      t: thread names,
 *                      drop, rep, unres: the dump's footnotes
 *   stats              `timerlog stats --json` of the same frames
 *   diff               `timerlog diff --json BASE --vs FILES`, or null
 *
 * Plain JavaScript, no library; nothing is fetched.
 */
"use strict";
(function () {
  const DEVICE = 2, UNRESOLVED = 4, PAST_FRAME = 16;
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "class") e.className = attrs[k];
      else if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const kid of kids) e.append(kid);
    return e;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  };

  /* ---------------------------------------------------------------- */
  /* Numbers                                                          */
  /* ---------------------------------------------------------------- */

  const pad = (v, n) => String(v).padStart(n, "0");

  /* A title in a row's path, as the CSV exports and `timerlog diff` write
   * it: "(E) " before work done elsewhere, so that a host row and a device
   * row of one title keep paths of their own. */
  const pathTitle = (kind, name) => (kind === "E" ? "(E) " : "") + name;

  /* As tlog_dump: seconds with microsecond digits, rounded half up. */
  function dumpSeconds(ns) {
    const us = Math.floor(ns / 1000) + (ns % 1000 >= 500 ? 1 : 0);
    return Math.floor(us / 1e6) + "." + pad(us % 1e6, 6) + "s";
  }

  /* As tlog_dump: the share of the parent, from the same double
   * arithmetic (100 * total / parent), two decimals rounded half up. */
  function percentOf(total, parent) {
    return parent ? 100 * total / parent : 0;
  }
  function dumpPercent(total, parent, isRoot) {
    if (isRoot) return "100.00%";
    const p = percentOf(total, parent);
    if (p > 9999.99 || (parent === 0 && total > 0)) return ">9999.99%";
    if (!(p >= 0)) return "0%";
    const units = Math.floor(p * 100 + 0.5);
    return Math.floor(units / 100) + "." + pad(units % 100, 2) + "%";
  }

  /* Times in a unit that suits them, three decimals, rounded half up:
   * 850 ns, 12.345 µs, 4.554 ms, 1.250 s. */
  function fmtTime(ns) {
    const n = Math.floor(ns + 0.5);
    if (n < 1000) return n + " ns";
    if (n < 1e6) return Math.floor(n / 1000) + "." + pad(n % 1000, 3) + " µs";
    const us = Math.floor((n + 500) / 1000);
    if (us < 1e6)   /* 999,999,500 ns and up round to 1.000 s, not 1000.000 ms */
      return Math.floor(us / 1000) + "." + pad(us % 1000, 3) + " ms";
    const ms = Math.floor((n + 500000) / 1e6);
    return Math.floor(ms / 1000) + "." + pad(ms % 1000, 3) + " s";
  }

  /* LEB128 varints of a base64 string: n values. */
  function varints(b64, n) {
    const s = atob(b64), out = new Float64Array(n);
    let k = 0, v = 0, mul = 1;
    for (let i = 0; i < s.length && k < n; i++) {
      const c = s.charCodeAt(i);
      v += (c & 127) * mul;
      if (c & 128) mul *= 128;
      else { out[k++] = v; v = 0; mul = 1; }
    }
    return out;
  }

  /* ---------------------------------------------------------------- */
  /* The model                                                        */
  /* ---------------------------------------------------------------- */

  const groups = D.groups.map((g, gi) => {
    const rows = g.rows.map((r, k) => ({
      index: k, parent: r[0], name: r[1], kind: r[2], flags: r[3], device: r[4],
      launcher: r[5], queue: r[6], children: [], depth: 0, path: "",
    }));
    for (const r of rows) {
      if (r.parent >= 0) {
        const p = rows[r.parent];
        p.children.push(r);
        r.depth = p.depth + 1;
        r.path = p.path + " / " + pathTitle(r.kind, r.name);
      } else {
        r.path = pathTitle(r.kind, r.name);
      }
      r.key = (r.parent >= 0 ? rows[r.parent].key + "\u0000" : "") + r.kind + r.name;
    }
    const byKey = new Map(rows.map((r) => [r.key, r]));
    return {
      index: gi, thread: g.thread, root: g.root, frames: g.frames, serial: g.serial,
      file: g.file, hitches: new Set(g.hitches), unresolved: unresolvedOf(g.unresolved), rows,
      byKey, b64t: g.totals, b64c: g.counts,
      b64o: g.orders, orders: null,
      tot: [], cnt: [], whole: new Map(),
    };
  });
  for (const w of D.whole) groups[w.g].whole.set(w.i, w);

  /* (frame, row) pairs -> frame -> its rows unresolved in it. */
  function unresolvedOf(pairs) {
    const m = new Map();
    for (let k = 0; k + 1 < (pairs || []).length; k += 2) {
      if (!m.has(pairs[k])) m.set(pairs[k], new Set());
      m.get(pairs[k]).add(pairs[k + 1]);
    }
    return m;
  }
  function totals(g, r) {
    return g.tot[r] || (g.tot[r] = varints(g.b64t[r], g.frames));
  }
  function counts(g, r) {
    return g.cnt[r] || (g.cnt[r] = varints(g.b64c[r], g.frames));
  }
  /* Frame position -> its rows in dump order, where that is not the
   * group's order. */
  function orderOf(g, i) {
    if (!g.orders) {
      g.orders = new Map();
      const s = atob(g.b64o), vals = [];
      let v = 0, mul = 1;
      for (let k = 0; k < s.length; k++) {
        const c = s.charCodeAt(k);
        v += (c & 127) * mul;
        if (c & 128) mul *= 128;
        else { vals.push(v); v = 0; mul = 1; }
      }
      for (let k = 0; k + 1 < vals.length; k += 2 + vals[k + 1])
        g.orders.set(vals[k], vals.slice(k + 2, k + 2 + vals[k + 1]));
    }
    return g.orders.get(i);
  }
  function frameName(g, i) {
    const file = D.files.length > 1 ? D.files[g.file[i]] + ": " : "";
    return file + "frame " + g.serial[i];
  }

  const state = { group: 0, frame: 0, budget: D.budget_ns };

  /* ---------------------------------------------------------------- */
  /* The chart                                                        */
  /* ---------------------------------------------------------------- */

  const chart = $("chart");
  const PAD = { left: 74, right: 12, top: 12, bottom: 24 };
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  function drawChart() {
    const g = groups[state.group], vals = totals(g, 0), n = g.frames;
    const dpr = window.devicePixelRatio || 1;
    const w = chart.clientWidth, h = chart.clientHeight;
    chart.width = Math.round(w * dpr);
    chart.height = Math.round(h * dpr);
    const ctx = chart.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const pw = w - PAD.left - PAD.right, ph = h - PAD.top - PAD.bottom;
    let max = state.budget || 0;
    for (let i = 0; i < n; i++) if (vals[i] > max) max = vals[i];
    max = max * 1.05 || 1;
    const y = (v) => PAD.top + ph - (v / max) * ph;
    chart.dataset.frames = n;
    chart.dataset.plotLeft = PAD.left;
    chart.dataset.plotWidth = pw;
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = css("--muted");
    ctx.strokeStyle = css("--line");
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let k = 0; k <= 4; k++) {
      const v = (max / 4) * k, yy = Math.round(y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(PAD.left, yy); ctx.lineTo(PAD.left + pw, yy); ctx.stroke();
      ctx.fillText(fmtTime(v), PAD.left - 6, yy);
    }
    /* One column per pixel at most: a column shows its slowest frame. */
    const cols = Math.min(n, Math.floor(pw)), bw = pw / cols;
    const colors = { bar: css("--bar"), hitch: css("--hitch"), over: css("--over") };
    for (let c = 0; c < cols; c++) {
      const a = Math.floor((c * n) / cols), b = Math.max(a + 1, Math.floor(((c + 1) * n) / cols));
      let top = 0, hitch = false;
      for (let i = a; i < b; i++) {
        if (vals[i] > top) top = vals[i];
        hitch = hitch || g.hitches.has(i);
      }
      ctx.fillStyle = hitch ? colors.hitch
        : state.budget && top > state.budget ? colors.over : colors.bar;
      const x = PAD.left + c * bw;
      ctx.fillRect(x, y(top), Math.max(1, bw - (bw > 3 ? 1 : 0)), PAD.top + ph - y(top));
    }
    if (state.budget) {
      const yy = Math.round(y(state.budget)) + 0.5;
      ctx.strokeStyle = colors.hitch;
      ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(PAD.left, yy); ctx.lineTo(PAD.left + pw, yy); ctx.stroke();
      ctx.setLineDash([]);
      /* Its label at the right, on the panel's colour, over any bar. */
      const label = "budget " + fmtTime(state.budget), lw = ctx.measureText(label).width;
      ctx.fillStyle = css("--panel");
      ctx.fillRect(PAD.left + pw - lw - 8, yy - 15, lw + 6, 13);
      ctx.fillStyle = colors.hitch;
      ctx.textAlign = "right";
      ctx.textBaseline = "bottom";
      ctx.fillText(label, PAD.left + pw - 4, yy - 2);
    }
    const px = PAD.left + ((state.frame + 0.5) * pw) / n;
    ctx.strokeStyle = css("--pick");
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(px, PAD.top); ctx.lineTo(px, PAD.top + ph); ctx.stroke();
    ctx.lineWidth = 1;
    ctx.fillStyle = css("--muted");
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(frameName(g, 0), PAD.left, PAD.top + ph + 6);
    ctx.textAlign = "right";
    ctx.fillText(frameName(g, n - 1), PAD.left + pw, PAD.top + ph + 6);
    const over = state.budget ? Array.prototype.filter.call(vals, (v) => v > state.budget).length : 0;
    $("chart-caption").textContent = n + (n === 1 ? " frame" : " frames") + " · " +
      g.hitches.size + (g.hitches.size === 1 ? " hitch" : " hitches") +
      (state.budget ? " · " + over + " over the budget" : "") +
      " · picked: " + frameName(g, state.frame) + ", " + fmtTime(vals[state.frame]);
    chart.setAttribute("aria-valuemax", n);
    chart.setAttribute("aria-valuenow", state.frame + 1);
    chart.setAttribute("aria-valuetext", frameName(g, state.frame) + ", " + fmtTime(vals[state.frame]));
  }

  function pickFrame(i) {
    const g = groups[state.group];
    state.frame = Math.max(0, Math.min(g.frames - 1, i));
    drawChart();
    showFrame();
  }

  chart.addEventListener("click", (ev) => {
    const r = chart.getBoundingClientRect(), g = groups[state.group];
    const pw = r.width - PAD.left - PAD.right, x = ev.clientX - r.left - PAD.left;
    if (x < 0 || x > pw) return;
    const cols = Math.min(g.frames, Math.floor(pw)), c = Math.min(cols - 1, Math.floor((x / pw) * cols));
    /* A column of several frames picks its slowest, the one drawn. */
    const a = Math.floor((c * g.frames) / cols), b = Math.max(a + 1, Math.floor(((c + 1) * g.frames) / cols));
    const vals = totals(g, 0);
    let best = a;
    for (let i = a; i < b; i++) if (vals[i] > vals[best]) best = i;
    chart.focus();
    pickFrame(best);
  });
  chart.addEventListener("keydown", (ev) => {
    const g = groups[state.group], page = Math.max(1, Math.round(g.frames / 20));
    const to = { ArrowLeft: state.frame - 1, ArrowRight: state.frame + 1, ArrowDown: state.frame - 1,
      ArrowUp: state.frame + 1, PageDown: state.frame - page, PageUp: state.frame + page,
      Home: 0, End: g.frames - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    pickFrame(to);
  });

  /* ---------------------------------------------------------------- */
  /* The tree                                                         */
  /* ---------------------------------------------------------------- */

  /* The rows of frame i: {row, total, count, parent, depth, launcher,
   * flags, device, queue, children}, in dump order. From the whole frame
   * where it was kept, else from the rows' totals and counts. */
  function frameNodes(g, i) {
    const w = g.whole.get(i), nodes = [];
    if (w) {
      const stack = [];
      for (const n of w.n) {
        const row = g.rows[n[0]];
        stack.length = row.depth;
        const node = { row, total: n[1], count: n[2], start: n[3], thread: n[6], launcher: n[7],
          flags: n[8], queue: n[9], device: n[10], parent: row.depth ? stack[row.depth - 1] : null,
          children: [] };
        if (node.parent) node.parent.children.push(node);
        stack.push(node);
        nodes.push(node);
      }
      /* Every queue a device row's intervals ran on, as the JSON export's
       * "queues" lists them. */
      for (const x of w.x) {
        const node = nodes[x[0]];
        if (!node || !(node.flags & DEVICE) || !x[6] || !x[5]) continue;
        node.queues = node.queues || new Map();
        if (!node.queues.has(x[6])) node.queues.set(x[6], new Set());
        node.queues.get(x[6]).add(x[5]);
      }
      return nodes;
    }
    const make = (row, parent) => {
      /* A row's flags are those of any frame; unresolved, this frame's. */
      const unresolved = (g.unresolved.get(i) || new Set()).has(row.index) ? UNRESOLVED : 0;
      const node = { row, total: totals(g, row.index)[i], count: counts(g, row.index)[i], launcher: -1,
        flags: (row.flags & ~UNRESOLVED) | unresolved, device: row.device, queue: row.queue, parent,
        children: [] };
      if (parent) parent.children.push(node);
      nodes.push(node);
      return node;
    };
    const order = orderOf(g, i);
    if (order) {
      const made = new Map();
      for (const r of order) {
        const row = g.rows[r];
        if (!made.has(r)) made.set(r, make(row, row.parent >= 0 ? made.get(row.parent) : null));
      }
      return nodes;
    }
    const walk = (row, parent) => {
      if (!counts(g, row.index)[i]) return;
      const node = make(row, parent);
      for (const kid of row.children) walk(kid, node);
    };
    walk(g.rows[0], null);
    return nodes;
  }

  /* "device D queue 1", "device D queues 1, 3", devices by name joined by
   * "; ": where a row's intervals ran, in a frame kept whole. */
  function queuesBadge(queues) {
    const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
    return [...queues.keys()].sort(byName).map((device) => {
      const q = [...queues.get(device)].sort((a, b) => a - b);
      return "device " + device + (q.length > 1 ? " queues " : " queue ") + q.join(", ");
    }).join("; ");
  }

  function selfTime(node) {
    let self = node.total;
    for (const c of node.children)
      if (c.row.kind === "C" && !(c.flags & PAST_FRAME)) self -= c.total;
    return Math.max(0, self);
  }

  function prefixOf(node) {
    const d = node.row.depth;
    if (d === 0) return "> ";
    return ". ".repeat(d - 1) + (node.row.kind === "E" ? "==> " : "|-> ");
  }

  const tree = $("tree");
  let treeItems = [];

  function renderTree(nodes, whole) {
    tree.textContent = "";
    treeItems = [];
    const lists = new Map([[null, tree]]);
    nodes.forEach((node, k) => {
      const p = node.parent;
      const pct = dumpPercent(node.total, p ? p.total : 0, !p);
      const share = Math.max(0, Math.min(100, p ? percentOf(node.total, p.total) : 100));
      const name = "(" + node.row.kind + ") " + node.row.name +
        (node.count > 1 ? " [x" + node.count + "]" : "") +
        (node.flags & UNRESOLVED ? " [unresolved]" : "");
      const nameCell = el("span", { class: "name" },
        el("span", { class: "prefix", text: prefixOf(node) }),
        el("span", { class: "toggle", text: node.children.length ? "▾" : "" }),
        el("span", { class: "label", text: name }));
      if (node.flags & DEVICE || node.row.flags & DEVICE) {
        const queues = node.queues ||
          (Array.isArray(node.queue) ? new Map([[node.device, new Set(node.queue)]]) : null);
        nameCell.append(el("span", { class: "badge", text: queues ? queuesBadge(queues)
          : "device" + (node.device ? " " + node.device : "") +
            (node.queue > 0 ? " queue " + node.queue : node.queue === -1 ? " (queues differ by frame)"
              : node.queue === -2 ? " and others" : "") }));
        let launcher = whole ? node.launcher : -1;
        if (!whole && node.row.launcher >= 0)
          launcher = nodes.findIndex((n) => n.row.index === node.row.launcher);
        if (launcher >= 0) {
          const a = el("a", { href: "#", class: "launch", text: "launched by " + nodes[launcher].row.name });
          a.addEventListener("click", (ev) => { ev.preventDefault(); focusItem(treeItems[launcher]); });
          nameCell.append(a);
        }
      }
      const row = el("div", { class: "tree-row" },
        el("span", { class: "pct", text: pct }),
        el("span", { class: "time", text: dumpSeconds(node.total) }),
        el("span", { class: "share", title: pct + " of " + (p ? p.row.name : "the frame") },
          el("span", { style: "width:" + share.toFixed(2) + "%" })),
        el("span", { class: "self", text: fmtTime(selfTime(node)), title: "self time" }),
        nameCell);
      const li = el("li", { role: "treeitem", "aria-level": node.row.depth + 1, tabindex: k ? "-1" : "0",
        class: node.flags & DEVICE ? "device" : "" }, row);
      li.dataset.index = k;
      li.dataset.path = node.row.path;
      if (node.children.length) {
        li.setAttribute("aria-expanded", "true");
        const ul = el("ul", { role: "group" });
        li.append(ul);
        lists.set(node, ul);
        row.querySelector(".toggle").addEventListener("click", () => toggle(li));
      }
      lists.get(p).append(li);
      treeItems.push(li);
    });
  }

  function visibleItems() {
    return treeItems.filter((li) => li.offsetParent !== null);
  }
  function focusItem(li) {
    if (!li) return;
    let up = li.parentElement.closest("li");
    for (; up; up = up.parentElement.closest("li")) setExpanded(up, true);
    for (const t of treeItems) t.tabIndex = -1;
    li.tabIndex = 0;
    li.focus();
    for (const t of tree.querySelectorAll(".picked")) t.classList.remove("picked");
    li.classList.add("picked");
  }
  function setExpanded(li, open) {
    if (!li.hasAttribute("aria-expanded")) return;
    li.setAttribute("aria-expanded", open ? "true" : "false");
    li.querySelector(":scope > ul").hidden = !open;
    li.querySelector(":scope > .tree-row .toggle").textContent = open ? "▾" : "▸";
  }
  function toggle(li) {
    setExpanded(li, li.getAttribute("aria-expanded") !== "true");
  }
  tree.addEventListener("click", (ev) => {
    const li = ev.target.closest("li");
    if (li && !ev.target.closest("a")) focusItem(li);
  });
  tree.addEventListener("keydown", (ev) => {
    const li = ev.target.closest("li");
    if (!li) return;
    const vis = visibleItems(), at = vis.indexOf(li), open = li.getAttribute("aria-expanded");
    let next = null;
    switch (ev.key) {
      case "ArrowDown": next = vis[at + 1]; break;
      case "ArrowUp": next = vis[at - 1]; break;
      case "Home": next = vis[0]; break;
      case "End": next = vis[vis.length - 1]; break;
      case "ArrowRight":
        if (open === "false") setExpanded(li, true);
        else if (open === "true") next = li.querySelector(":scope > ul > li");
        break;
      case "ArrowLeft":
        if (open === "true") setExpanded(li, false);
        else next = li.parentElement.closest("li");
        break;
      case "Enter": case " ": {
        const a = li.querySelector(":scope > .tree-row a.launch");
        if (a) a.click(); else toggle(li);
        break;
      }
      default: return;
    }
    ev.preventDefault();
    if (next) focusItem(next);
  });

  /* ---------------------------------------------------------------- */
  /* The timeline                                                     */
  /* ---------------------------------------------------------------- */

  const timeline = $("timeline");

  /* Lanes: one per host thread, then one per device queue; in each, the
   * instances nested by time. */
  function renderTimeline(g, w, nodes) {
    timeline.textContent = "";
    if (!w) {
      timeline.setAttribute("width", 0);
      timeline.setAttribute("height", 0);
      return;
    }
    const lanes = new Map();
    let end = nodes[0].total;
    w.x.forEach((x, k) => {
      const node = nodes[x[0]];
      if (!node) return;
      const dev = node.flags & DEVICE;
      /* Threads by name: a pool's threads made afresh for each pass keep
       * one lane. */
      const names = D.threads[g.file[w.i]] || {};
      const thread = w.t[x[1]] || names[x[1]] || w.t[node.thread] || names[node.thread] ||
        "thread " + x[1];   /* the name in this frame first: a thread may rename itself */
      /* A device interval on the queue it ran on; a host entry of a device
       * row on the row's. */
      const queue = dev && x[6] ? x[5] : node.queue, device = dev && x[6] ? x[6] : node.device;
      const key = dev ? "device:" + (device || "?") + ":" + queue : "thread:" + thread;
      if (!lanes.has(key))
        lanes.set(key, { key, device: !!dev, name: dev ? (device || "device") + " queue " + queue
          : thread, items: [] });
      lanes.get(key).items.push({ k, node, start: x[2], dur: x[3], launcher: x[4] });
      end = Math.max(end, x[2] + x[3]);
    });
    const ordered = [...lanes.values()].sort((a, b) => a.device - b.device);
    const width = Math.max(900, $("timeline-box").clientWidth - 2), left = 150, right = 10;
    const scale = (width - left - right) / (end || 1), RH = 15;
    let top = 20;
    const placed = new Map();
    const axis = svg("g", {});
    timeline.append(axis);
    for (let t = 0; t <= 4; t++) {
      const x = left + ((width - left - right) * t) / 4;
      axis.append(svg("line", { class: "axis", x1: x, x2: x, y1: 14, y2: 10000 }));
      const label = svg("text", { x: x + 2, y: 11 });
      label.textContent = fmtTime((end * t) / 4);
      axis.append(label);
    }
    for (const lane of ordered) {
      lane.items.sort((a, b) => a.start - b.start || b.dur - a.dur);
      const stack = [];
      let depth = 0;
      for (const it of lane.items) {
        while (stack.length && stack[stack.length - 1] <= it.start) stack.pop();
        it.depth = stack.length;
        stack.push(it.start + it.dur);
        depth = Math.max(depth, it.depth + 1);
      }
      const gEl = svg("g", { class: "lane", "data-lane": lane.key, "data-name": lane.name,
        "data-kind": lane.device ? "device" : "thread" });
      const h = depth * RH + 8;
      gEl.append(svg("rect", { class: "lane-bg", x: 0, y: top, width, height: h }));
      const label = svg("text", { x: 6, y: top + 13, class: "lane-name" });
      label.textContent = lane.name;
      gEl.append(label);
      for (const it of lane.items) {
        const x = left + it.start * scale, y = top + 4 + it.depth * RH;
        const r = svg("rect", { class: lane.device ? "dev" : "host", x, y,
          width: Math.max(1, it.dur * scale), height: RH - 2, rx: 2 });
        const tip = svg("title", {});
        tip.textContent = it.node.row.name + ": " + fmtTime(it.dur);
        r.append(tip);
        gEl.append(r);
        if (it.dur * scale > 40) {
          const t = svg("text", { x: x + 3, y: y + 10, "clip-path": "none" });
          t.textContent = it.node.row.name.slice(0, Math.floor((it.dur * scale) / 6.5));
          t.style.fill = "#fff";
          gEl.append(t);
        }
        placed.set(it.k, { x, y, it });
      }
      timeline.append(gEl);
      top += h + 4;
    }
    /* Launch to device interval: from the launching scope's instance that
     * began last before the interval, to the interval. */
    const byNode = new Map();
    for (const p of placed.values()) {
      const list = byNode.get(p.it.node) || [];
      list.push(p);
      byNode.set(p.it.node, list);
    }
    for (const p of placed.values()) {
      if (p.it.launcher < 0) continue;
      const from = (byNode.get(nodes[p.it.launcher]) || []).filter((q) => q.it.start <= p.it.start)
        .sort((a, b) => b.it.start - a.it.start)[0];
      if (!from) continue;
      const x1 = from.x, y1 = from.y + RH - 2, x2 = p.x, y2 = p.y;
      timeline.append(svg("path", { class: "link", d: `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}` }));
    }
    timeline.setAttribute("width", width);
    timeline.setAttribute("height", top);
    for (const line of axis.querySelectorAll("line")) line.setAttribute("y2", top);
  }

  /* ---------------------------------------------------------------- */
  /* The picked frame                                                 */
  /* ---------------------------------------------------------------- */

  function nearestWhole(g, i) {
    const kept = [...g.whole.keys()].sort((a, b) => a - b);
    const before = kept.filter((k) => k < i).pop(), after = kept.find((k) => k > i);
    return [before, after].filter((k) => k !== undefined);
  }

  function showFrame() {
    const g = groups[state.group], i = state.frame, w = g.whole.get(i);
    const nodes = frameNodes(g, i);
    $("frame-heading").textContent = frameName(g, i) + " — " + fmtTime(nodes[0].total) +
      (g.hitches.has(i) ? " (hitch)" : "");
    const note = $("frame-note");
    note.textContent = "";
    if (w) {
      note.textContent = "Every row as `timerlog dump --frame " + g.serial[i] + "` prints it; rows collapse " +
        "with the arrow keys or a click on ▾.";
    } else {
      note.append("Rows' totals and counts (this frame was not kept whole: rows in the order the run first " +
        "had them; no timeline). Frames kept whole nearby: ");
      for (const k of nearestWhole(g, i)) {
        const b = el("button", { type: "button", text: frameName(g, k) });
        b.addEventListener("click", () => pickFrame(k));
        note.append(b, " ");
      }
    }
    renderTree(nodes, !!w);
    const foot = [];
    if (w && w.drop) foot.push(w.drop + " scopes dropped (thread budget, max_depth or memory ran out)");
    if (w && w.rep) foot.push(w.rep + " scopes closed by a repair rule");
    if (w && w.unres) foot.push(w.unres + " device intervals unresolved (forced sync timed out or device error)");
    $("tree-footer").textContent = foot.join("; ");
    $("timeline-note").textContent = w ? "A lane per thread and per device queue; lines join a launch to " +
      "its device interval." : "Not kept for this frame: pick a frame kept whole for its timeline.";
    renderTimeline(g, w, nodes);
  }

  /* ---------------------------------------------------------------- */
  /* Statistics                                                       */
  /* ---------------------------------------------------------------- */

  const STAT_COLS = [
    { key: "path", label: "Row", num: false },
    { key: "frames", label: "Frames", num: true },
    { key: "median", label: "Median", num: true },
    { key: "p90", label: "p90", num: true },
    { key: "p99", label: "p99", num: true },
    { key: "max", label: "Max", num: true },
    { key: "self", label: "Self median", num: true },
    { key: "spark", label: "Frame by frame", num: false },
  ];
  const statSort = { key: null, dir: 1 };

  function statRows(gi) {
    const sg = D.stats.groups[gi], out = [];
    const walk = (r, path, parentKey) => {
      const kind = r.kind === "execution" ? "E" : "C";
      const key = (parentKey === null ? "" : parentKey + "\u0000") + kind + r.name;
      const title = pathTitle(kind, r.name);
      const me = { r, path: path ? path + " / " + title : title, kind, key, order: out.length,
        frames: r.frames, median: r.total_ns.median, p90: r.total_ns.p90, p99: r.total_ns.p99,
        max: r.total_ns.max, self: r.self_ns.median, depth: r.depth };
      out.push(me);
      for (const c of r.children) walk(c, me.path, key);
    };
    if (sg) walk(sg.tree, "", null);
    return out;
  }

  function sparkline(g, row) {
    const c = el("canvas", { width: 140, height: 20, "aria-hidden": "true" });
    if (!row) return c;
    const vals = totals(g, row.index), n = vals.length, ctx = c.getContext("2d");
    let max = 0;
    for (const v of vals) if (v > max) max = v;
    const cols = Math.min(140, n);
    ctx.fillStyle = css("--bar");
    for (let k = 0; k < cols; k++) {
      let top = 0;
      for (let i = Math.floor((k * n) / cols); i < Math.floor(((k + 1) * n) / cols); i++)
        if (vals[i] > top) top = vals[i];
      const hgt = max ? (top / max) * 19 : 0;
      ctx.fillRect((k * 140) / cols, 20 - hgt, Math.max(1, 140 / cols - 0.3), hgt);
    }
    return c;
  }

  function renderStats() {
    const gi = state.group, g = groups[gi], sg = D.stats.groups[gi];
    const head = $("stats").tHead.rows[0], body = $("stats").tBodies[0];
    head.textContent = "";
    for (const col of STAT_COLS) {
      const th = el("th", { class: col.num ? "num" : "", scope: "col" });
      if (col.key === "spark") th.textContent = col.label;
      else {
        const b = el("button", { type: "button", text: col.label });
        b.addEventListener("click", () => {
          statSort.dir = statSort.key === col.key ? -statSort.dir : (col.num ? -1 : 1);
          statSort.key = col.key;
          renderStats();
        });
        th.append(b);
        if (statSort.key === col.key)
          th.setAttribute("aria-sort", statSort.dir > 0 ? "ascending" : "descending");
      }
      head.append(th);
    }
    const rows = statRows(gi);
    if (statSort.key)
      rows.sort((a, b) => (a[statSort.key] < b[statSort.key] ? -1 : a[statSort.key] > b[statSort.key] ? 1
        : a.order - b.order) * statSort.dir);
    body.textContent = "";
    for (const s of rows) {
      const tr = el("tr", {},
        el("td", { class: "path", title: s.path, text: s.path }),
        el("td", { class: "num frames", text: s.frames + "/" + sg.frames }),
        el("td", { class: "num median", text: fmtTime(s.median) }),
        el("td", { class: "num p90", text: fmtTime(s.p90) }),
        el("td", { class: "num p99", text: fmtTime(s.p99) }),
        el("td", { class: "num max", text: fmtTime(s.max) }),
        el("td", { class: "num self", text: fmtTime(s.self) }),
        el("td", { class: "spark" }, sparkline(g, g.byKey.get(s.key))));
      tr.dataset.kind = s.kind;
      body.append(tr);
    }
    $("stats-note").textContent = sg ? "Thread \"" + sg.thread + "\", root \"" + sg.root + "\": " + sg.frames +
      " frames; each row's total per frame over the frames that had it (quantiles within " +
      (100 * D.stats.relative_error).toFixed(2) + "%), as `timerlog stats` computes them. " +
      "Click a column's title to sort." : "";
  }

  /* ---------------------------------------------------------------- */
  /* Compared with the base run                                       */
  /* ---------------------------------------------------------------- */

  function renderDiff() {
    const d = D.diff, head = $("diff").tHead.rows[0], body = $("diff").tBodies[0];
    head.textContent = "";
    for (const t of ["Root", "Row", "Base median", "New median", "Change", "Interval", "p (adjusted)", "Verdict"])
      head.append(el("th", { scope: "col", class: /median|Change|p \(/.test(t) ? "num" : "", text: t }));
    body.textContent = "";
    const signed = (v) => (v >= 0 ? "+" : "−") + fmtTime(Math.abs(v));
    for (const root of d.roots) {
      for (const r of root.rows) {
        const iv = r.median_change_interval_ns;
        const tr = el("tr", { class: r.verdict },
          el("td", { text: root.root }),
          el("td", { class: "path", title: r.path, text: r.path }),
          el("td", { class: "num", text: fmtTime(r.base_median_ns) }),
          el("td", { class: "num", text: fmtTime(r.new_median_ns) }),
          el("td", { class: "num", text: signed(r.median_change_ns) + " (" +
            (r.change_percent === null ? "-" : (r.change_percent >= 0 ? "+" : "") + r.change_percent.toFixed(1) + "%") + ")" }),
          el("td", { class: "num", text: iv ? "[" + signed(iv[0]) + ", " + signed(iv[1]) + "]" : "-" }),
          el("td", { class: "num", text: r.p_adjusted === null ? "-" : r.p_adjusted.toPrecision(3) }),
          el("td", { class: "verdict", text: r.verdict }));
        body.append(tr);
      }
      for (const [list, where] of [[root.only_in_base, "only in base"], [root.only_in_new, "only in new"]])
        for (const r of list)
          body.append(el("tr", { class: "only" }, el("td", { text: root.root }),
            el("td", { class: "path", text: r.path }),
            el("td", { class: "num", text: where === "only in base" ? fmtTime(r.median_ns) : "" }),
            el("td", { class: "num", text: where === "only in new" ? fmtTime(r.median_ns) : "" }),
            el("td", {}), el("td", {}), el("td", {}), el("td", { class: "verdict", text: where })));
    }
    $("diff-note").textContent = "Base: " + d.base.files.join(", ") + " (" + d.base.frames + " frames); new: " +
      d.new.files.join(", ") + " (" + d.new.frames + " frames). Rows by impact, as `timerlog diff` lists them; " +
      "slower: p below " + d.alpha + " and a median grown by more than " + d.threshold_percent + "%. " +
      d.slower + (d.slower === 1 ? " row" : " rows") + " slower.";
  }

  /* ---------------------------------------------------------------- */
  /* Tabs, groups, budget; the first paint                            */
  /* ---------------------------------------------------------------- */

  const tabs = ["frames", "stats", "diff"].filter((t) => t !== "diff" || D.diff);
  const rendered = new Set();
  function showTab(name) {
    for (const t of tabs) {
      const b = $("tab-" + t), on = t === name;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
      $("view-" + t).hidden = !on;
    }
    if (name === "stats" && !rendered.has("stats")) { renderStats(); rendered.add("stats"); }
    if (name === "diff" && !rendered.has("diff")) { renderDiff(); rendered.add("diff"); }
    if (name === "frames") drawChart();
  }
  for (const t of tabs) {
    const b = $("tab-" + t);
    b.hidden = false;
    b.addEventListener("click", () => showTab(t));
    b.addEventListener("keydown", (ev) => {
      const at = tabs.indexOf(t), to = ev.key === "ArrowRight" ? at + 1 : ev.key === "ArrowLeft" ? at - 1 : -2;
      if (to === -2) return;
      const next = tabs[(to + tabs.length) % tabs.length];
      showTab(next);
      $("tab-" + next).focus();
    });
  }

  if (groups.length > 1) {
    const sel = $("group");
    groups.forEach((g, k) => sel.append(el("option", { value: k,
      text: "thread \"" + g.thread + "\", root \"" + g.root + "\" (" + g.frames + " frames)" })));
    $("group-label").hidden = false;
    sel.addEventListener("change", () => {
      state.group = Number(sel.value);
      state.frame = groups[state.group].frames - 1;
      rendered.delete("stats");
      drawChart();
      showFrame();
    });
  }
  const budget = $("budget");
  if (state.budget) budget.value = +(state.budget / 1e6).toFixed(3);
  budget.addEventListener("change", () => {
    const v = Number(budget.value);
    state.budget = v > 0 ? Math.round(v * 1e6) : 0;
    drawChart();
  });
  window.addEventListener("resize", () => { if (!$("view-frames").hidden) drawChart(); });

  const nframes = groups.reduce((s, g) => s + g.frames, 0);
  $("subtitle").textContent = D.files.join(", ") + " — " + nframes + " frames" +
    (!D.base.length ? "" : D.diff ? "; compared with " + D.base.join(", ")
      : "; the comparison with " + D.base.join(", ") + " failed (see the command's errors)") +
    " · " + D.generator;
  state.frame = groups[0].frames - 1;
  drawChart();
  showFrame();
  /* Once the chart and the latest frame's tree are on the screen. */
  requestAnimationFrame(() => setTimeout(() => {
    performance.mark("report-painted");
    document.body.dataset.ready = "1";
  }, 0));
})();
