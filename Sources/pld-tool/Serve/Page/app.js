"use strict";
(function () {
  const writes = document.documentElement.dataset.writes === "1";
  const tbody = document.getElementById("keys");
  const pane = document.getElementById("keys-pane");
  const filterBox = document.getElementById("filter");
  const countLabel = document.getElementById("count");
  const statusLabel = document.getElementById("status");
  const notice = document.getElementById("notice");
  const timeline = document.getElementById("timeline");
  const encoder = new TextEncoder();
  const rows = new Map();    // key -> tr
  const summaries = new Map();  // key -> summary
  const groups = new Map();  // "prefix/" -> { header, count, collapsed }: the keys under a "/" prefix
  let order = [];            // keys, in UTF-8 byte order
  let selected = null;       // the key whose row is selected
  let opened = null;         // the key whose timeline is shown
  let filterText = "";
  let historyTimer = null;

  if (location.search) history.replaceState(null, "", location.pathname);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function compareKeys(a, b) {
    const x = encoder.encode(a), y = encoder.encode(b);
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  function pad(n, w) { return String(n).padStart(w || 2, "0"); }
  function localTime(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return iso;
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" +
      pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + "." + pad(d.getMilliseconds(), 3);
  }
  function retentionText(r) {
    if (r === null || r === undefined) return "\u2013";
    return r === "all" ? "all" : "last " + r;
  }
  function orDash(v) { return v === null || v === undefined || v === "" ? "\u2013" : v; }
  function matches(key) { return !filterText || key.toLowerCase().includes(filterText); }
  // The group of a key: its part up to the first "/" (a collection's members: "todo/1" is in "todo/").
  function groupOf(key) { const i = key.indexOf("/"); return i > 0 && i < key.length - 1 ? key.slice(0, i + 1) : null; }
  // Shown: it matches the filter, and its group is open (a filter shows matches of closed groups too).
  function isShown(key) {
    if (!matches(key)) return false;
    const g = groups.get(groupOf(key));
    return !(g && g.collapsed && !filterText);
  }

  // MARK: the keys table

  function fillRow(tr, s) {
    tr.dataset.key = s.key;
    tr.dataset.version = String(s.version);
    const cells = tr.children;
    cells[0].textContent = s.key;
    cells[0].title = s.key;
    cells[1].textContent = String(s.version);
    cells[2].textContent = localTime(s.writtenAt).slice(0, 19);
    cells[2].title = localTime(s.writtenAt) + " (" + s.writtenAt + ")";
    cells[3].textContent = orDash(s.schemaVersion);
    cells[4].textContent = retentionText(s.retention);
    const who = [s.author, s.reason].filter((part) => part !== null && part !== undefined && part !== "");
    cells[5].textContent = who.length ? who.join(" \u2014 ") : "\u2013";
    cells[5].title = cells[5].textContent;
  }
  function makeRow(s) {
    const tr = el("div", "row");
    tr.setAttribute("role", "row");
    for (const name of ["cell key", "cell num", "cell", "cell num", "cell", "cell muted"]) {
      const cell = el("div", name);
      cell.setAttribute("role", "cell");
      tr.append(cell);
    }
    fillRow(tr, s);
    if (!isShown(s.key)) tr.hidden = true;
    if (s.key === selected) tr.classList.add("selected");
    return tr;
  }
  // MARK: groups of keys under a "/" prefix, each with its count, closed and opened by a click

  function makeGroup(prefix) {
    const header = el("div", "group");
    header.setAttribute("role", "row");
    header.dataset.group = prefix;
    header.append(el("span", "twisty"), el("span", "cell key", prefix), el("span", "muted count"));
    const g = { header: header, count: 0, collapsed: false };
    groups.set(prefix, g);
    return g;
  }
  function updateGroup(g) {
    g.header.children[0].textContent = g.collapsed ? "\u25B8" : "\u25BE";
    g.header.children[2].textContent = g.count + (g.count === 1 ? " key" : " keys");
    g.header.setAttribute("aria-expanded", String(!g.collapsed));
  }
  function toggleGroup(prefix) {
    const g = groups.get(prefix);
    if (!g) return;
    g.collapsed = !g.collapsed;
    updateGroup(g);
    for (const [key, tr] of rows) if (groupOf(key) === prefix) tr.hidden = !isShown(key);
    if (selected !== null && groupOf(selected) === prefix && g.collapsed) select(null, false);
  }
  function updateCount() {
    const shown = filterText ? order.filter(matches).length : order.length;
    countLabel.textContent = filterText ? shown + " of " + order.length + " keys" : order.length + " keys";
  }
  // Renders `list` (sorted summaries) as the whole table: the first screenful at once, the rest in chunks.
  function renderAll(list) {
    const closed = new Set(Array.from(groups.values()).filter((g) => g.collapsed).map((g) => g.header.dataset.group));
    rows.clear(); summaries.clear(); groups.clear();
    order = list.map((s) => s.key);
    tbody.textContent = "";
    let index = 0;
    function chunk(size) {
      const fragment = document.createDocumentFragment();
      const end = Math.min(list.length, index + size);
      for (; index < end; index++) {
        const s = summaries.get(list[index].key) || list[index];
        const prefix = groupOf(s.key);
        if (prefix) {
          // Keys are in byte order: a group's keys are one run, its header goes before the first.
          let g = groups.get(prefix);
          if (!g) { g = makeGroup(prefix); g.collapsed = closed.has(prefix); fragment.append(g.header); }
          g.count++;
          updateGroup(g);
        }
        const tr = makeRow(s);
        rows.set(s.key, tr);
        fragment.append(tr);
      }
      tbody.append(fragment);
      if (index < list.length) setTimeout(() => chunk(2000), 0);
    }
    for (const s of list) summaries.set(s.key, s);
    chunk(150);
    updateCount();
  }
  // Inserts or updates one key; returns whether anything changed.
  function upsert(s) {
    const old = summaries.get(s.key);
    if (old && old.version >= s.version) return false;
    summaries.set(s.key, s);
    let tr = rows.get(s.key);
    if (tr) {
      fillRow(tr, s);
    } else if (!old) {
      let lo = 0, hi = order.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (compareKeys(order[mid], s.key) < 0) lo = mid + 1; else hi = mid; }
      order.splice(lo, 0, s.key);
      const prefix = groupOf(s.key);
      let g = prefix ? groups.get(prefix) : null;
      const created = prefix !== null && !g;
      if (created) g = makeGroup(prefix);
      if (g) { g.count++; updateGroup(g); }
      tr = makeRow(s);
      rows.set(s.key, tr);
      let next = null, nextKey = null;
      for (let i = lo + 1; i < order.length && !next; i++) { next = rows.get(order[i]) || null; nextKey = order[i]; }
      // The first key of another group follows its group's header.
      if (next && groupOf(nextKey) !== prefix && groups.has(groupOf(nextKey))) next = groups.get(groupOf(nextKey)).header;
      tbody.insertBefore(tr, next);
      if (created) tbody.insertBefore(g.header, tr);
      updateCount();
    }
    if (tr) {
      // Two names of one animation: switching restarts it without forcing a layout.
      const cell = tr.children[1];
      const next = cell.classList.contains("flash-a") ? "flash-b" : "flash-a";
      cell.classList.remove("flash-a", "flash-b");
      cell.classList.add(next);
    }
    return true;
  }
  function removeKey(key) {
    if (!summaries.has(key)) return;
    summaries.delete(key);
    const tr = rows.get(key);
    if (tr) tr.remove();
    rows.delete(key);
    const g = groups.get(groupOf(key));
    if (g && --g.count === 0) { g.header.remove(); groups.delete(groupOf(key)); } else if (g) updateGroup(g);
    order = order.filter((k) => k !== key);
    updateCount();
  }
  function applyFilter() {
    filterText = filterBox.value.trim().toLowerCase();
    const matching = new Map();
    for (const [key, tr] of rows) {
      tr.hidden = !isShown(key);
      if (matches(key)) { const prefix = groupOf(key); if (prefix) matching.set(prefix, true); }
    }
    for (const [prefix, g] of groups) g.header.hidden = !matching.has(prefix);
    updateCount();
  }

  // MARK: selection and keyboard

  function visibleKeys() { return order.filter((k) => { const tr = rows.get(k); return tr && !tr.hidden; }); }
  function select(key, scroll) {
    if (selected !== null) { const old = rows.get(selected); if (old) old.classList.remove("selected"); }
    selected = key;
    const tr = key === null ? null : rows.get(key);
    if (tr) { tr.classList.add("selected"); if (scroll) tr.scrollIntoView({ block: "nearest" }); }
  }
  function move(step) {
    const keys = visibleKeys();
    if (!keys.length) return;
    const at = keys.indexOf(selected);
    const next = at < 0 ? (step > 0 ? 0 : keys.length - 1) : Math.max(0, Math.min(keys.length - 1, at + step));
    select(keys[next], true);
  }
  tbody.addEventListener("click", (event) => {
    const header = event.target.closest(".group");
    if (header) { toggleGroup(header.dataset.group); return; }
    const tr = event.target.closest(".row");
    if (!tr) return;
    select(tr.dataset.key, false);
    openTimeline(tr.dataset.key);
  });
  document.addEventListener("keydown", (event) => {
    const inFilter = event.target === filterBox;
    if (event.key === "/" && !inFilter) { event.preventDefault(); filterBox.focus(); filterBox.select(); return; }
    if (event.key === "Escape") {
      if (inFilter) { filterBox.value = ""; applyFilter(); filterBox.blur(); } else closeTimeline();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "ArrowDown" || (!inFilter && event.key === "j")) { event.preventDefault(); if (inFilter) filterBox.blur(); move(1); }
    else if (event.key === "ArrowUp" || (!inFilter && event.key === "k")) { event.preventDefault(); move(-1); }
    else if (event.key === "Enter") {
      if (inFilter && selected === null) move(1);
      if (selected !== null) { event.preventDefault(); openTimeline(selected); }
    }
  });
  filterBox.addEventListener("input", applyFilter);
  document.getElementById("theme").addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme === "dark";
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    try { localStorage.setItem("pld-theme", document.documentElement.dataset.theme); } catch (e) {}
  });
  try { const t = localStorage.getItem("pld-theme"); if (t) document.documentElement.dataset.theme = t; } catch (e) {}

  // MARK: the timeline

  function closeTimeline() {
    opened = null;
    timeline.textContent = "";
    timeline.append(el("p", "empty", "Select a key to see its versions."));
  }
  function openTimeline(key) {
    opened = key;
    loadHistory(key);
  }
  function loadHistory(key) {
    fetch("/api/keys/" + encodeURIComponent(key) + "/history?limit=50", { cache: "no-store" })
      .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
      .then(({ ok, body }) => {
        if (opened !== key) return;
        if (!ok) { renderTimelineError(key, body.error || "The history could not be read."); return; }
        renderTimeline(key, body);
      })
      .catch(() => {});
  }
  function renderTimelineError(key, message) {
    timeline.textContent = "";
    timeline.append(el("h2", null, key), el("p", "empty", message));
  }
  function diffView(entry) {
    const box = el("div", "diff");
    if (entry.diffFrom === null || entry.diffFrom === undefined) {
      box.append(el("div", "note", "The oldest version shown: nothing to compare it with."));
    } else if (!entry.diff) {
      box.append(el("div", "note", "Compared with version " + entry.diffFrom + ": one of them is not valid JSON."));
    } else if (!entry.diff.length) {
      box.append(el("div", "note", "No differences from version " + entry.diffFrom + "."));
    } else {
      box.append(el("div", "note", "Changes from version " + entry.diffFrom + ":"));
      for (const change of entry.diff) box.append(el("div", change.change, change.line));
    }
    return box;
  }
  function renderTimeline(key, entries) {
    const scroll = timeline.scrollTop;
    timeline.textContent = "";
    const title = el("h2", null, key);
    title.dataset.key = key;
    timeline.append(title);
    const latest = entries.length ? entries[0].version : 0;
    for (const entry of entries) {
      const card = el("article");
      card.dataset.key = key;
      card.dataset.version = String(entry.version);
      const meta = el("div", "meta");
      meta.append(el("span", "version", "version " + entry.version), el("span", null, localTime(entry.writtenAt)),
        el("span", "muted", "schema " + orDash(entry.schemaVersion)),
        el("span", "who", "author " + orDash(entry.author)), el("span", "who", "reason " + orDash(entry.reason)));
      if (writes && entry.version !== latest) {
        const button = el("button", "rollback", "Roll back to this version");
        button.type = "button";
        button.addEventListener("click", () => rollback(key, entry.version, latest, button));
        meta.append(button);
      }
      card.append(meta);
      const value = entry.value === null && entry.rawPayload !== undefined ? entry.rawPayload : entry.valueText;
      card.append(el("pre", "value", value));
      card.append(diffView(entry));
      timeline.append(card);
    }
    timeline.scrollTop = scroll;
  }
  function rollback(key, version, shown, button) {
    if (button.dataset.armed !== "1") {
      button.dataset.armed = "1";
      button.textContent = "Confirm: roll back to version " + version;
      return;
    }
    button.disabled = true;
    fetch("/api/keys/" + encodeURIComponent(key) + "/rollback", {
      // The version this page shows: a key that moved on meanwhile is refused (412), not rolled back.
      method: "POST", headers: { "Content-Type": "application/json", "If-Match": '"' + shown + '"' },
      body: JSON.stringify({ version }),
    }).then((r) => r.json().then((body) => {
      if (r.status === 412) {
        // The timeline is re-rendered with the newer version: the notice stays.
        const text = "Not rolled back: " + key + " is now at version " + body.version + " (this page showed "
          + shown + "). Look at the newer version first.";
        button.textContent = text;
        notice.textContent = text;
        notice.hidden = false;
      } else {
        button.textContent = r.ok ? "Rolled back: version " + body.version : (body.error || "Failed");
      }
    })).catch(() => { button.textContent = "Failed"; });
  }
  function refreshTimeline(key) {
    if (opened !== key) return;
    clearTimeout(historyTimer);
    historyTimer = setTimeout(() => loadHistory(key), 30);
  }

  // MARK: live updates

  function onVersion(data) {
    const s = data.summary || Object.assign({}, summaries.get(data.key) || { key: data.key, schemaVersion: null,
      retention: null, author: null, reason: null }, { version: data.version, writtenAt: data.writtenAt });
    upsert(s);
    refreshTimeline(data.key);
  }
  function onSnapshot(list) {
    const keep = new Set(list.map((s) => s.key));
    for (const key of Array.from(summaries.keys())) if (!keep.has(key)) removeKey(key);
    for (const s of list) if (upsert(s)) refreshTimeline(s.key);
  }
  function connect(after) {
    const source = new EventSource("/api/events?after=" + after);
    source.onopen = () => { statusLabel.textContent = "live"; statusLabel.className = "live"; };
    source.onerror = () => {
      // A refused stream (the server restarted with another token) is not retried by the browser.
      statusLabel.textContent = source.readyState === EventSource.CLOSED ? "disconnected: open the new address"
        : "reconnecting";
      statusLabel.className = "down";
    };
    source.addEventListener("version", (e) => onVersion(JSON.parse(e.data)));
    source.addEventListener("snapshot", (e) => onSnapshot(JSON.parse(e.data)));
    source.addEventListener("removed", (e) => { const key = JSON.parse(e.data).key; removeKey(key); refreshTimeline(key); });
  }

  // A shared store's replicas (none for a file), every 10 s: a warning names those a migration strands.
  const replicasLine = document.getElementById("replicas");
  function showReplicas(list) {
    const stranded = list.filter((r) => r.strandedBy.length > 0);
    const name = (r) => r.host + ":" + r.pid + " (" + r.library + ", schema " + r.schema + (r.readOnly ? ", read-only" : "") + ")";
    replicasLine.hidden = list.length === 0;
    replicasLine.classList.toggle("warning", stranded.length > 0);
    replicasLine.textContent = stranded.length > 0
      ? stranded.length + " of " + list.length + " replicas stranded: " + stranded.map((r) => name(r) + " by " + r.strandedBy.join(", ")).join("; ")
      : list.length + (list.length === 1 ? " replica: " : " replicas: ") + list.map(name).join(", ");
  }
  function loadReplicas() { fetch("/api/replicas", { cache: "no-store" }).then((r) => r.json()).then(showReplicas).catch(() => {}); }
  loadReplicas();
  setInterval(loadReplicas, 10000);

  // The first screenful at once, then every key; events resume from the first answer's id.
  const firstPage = 200;
  fetch("/api/keys?limit=" + firstPage, { cache: "no-store" }).then((r) => {
    const after = r.headers.get("PLD-Event-Id") || "0";
    return r.json().then((first) => {
      renderAll(first);
      if (first.length < firstPage) return connect(after);
      return fetch("/api/keys", { cache: "no-store" }).then((r) => r.json()).then((all) => {
        renderAll(all);
        connect(after);
      });
    });
  }).catch(() => { statusLabel.textContent = "could not load the keys"; });
})();
