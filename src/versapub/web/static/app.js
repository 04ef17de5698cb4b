// versapub serve: the page's behaviour. Every value from the data is shown as text
// (textContent), never as HTML; every change is a POST carrying the page's token.
"use strict";

const TOKEN = document.querySelector('meta[name="versapub-token"]').content;
const ROLES = ["", "identifying", "quasi_identifying", "key", "sensitive", "insensitive", "household"];
const ROLE_TEXT = { "": "— decide —", key: "key (quasi-identifying, counted by k)",
  household: "household id (removed; household figures)" };
const job = {
  input: "", delimiter: "", header: true, na_values: [], missing: "error", date_formats: {}, roles: {},
  rules: [], guarantee: "l-diversity:l=2", anonymizer: "", decomposition: "", hierarchies: {}, seed: "", treatments: [],
};
let profile = null;
let proxies = {}; // column -> warnings from the last rules check (associations with protected columns)
let listing = { data: [], configs: [], releases: [] };
let task = null;

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function showError(message) {
  const box = $("error");
  box.replaceChildren(el("span", {}, message || ""));
  const controls = wayOutControls(message || "");
  if (controls.length) box.append(el("div", { class: "row way-out" }, ...controls));
  box.hidden = !message;
}

// The ways out a refusal names, as the page's own controls (issue 66): allow the columns it
// names, apply a computed treatment, mark a named column identifying. Each changes the job
// as the CLI flag would; publish again to see the result.
function wayOutControls(message) {
  const out = [];
  const allow = message.match(/--allow-proxy ([^\s(]+)/);
  if (allow) {
    const cols = allow[1].split(",").filter(Boolean);
    out.push(el("button", { class: "way-out-allow", onclick: () => {
      job.carried = job.carried || {};
      const columns = job.carried.columns || {};
      columns.allow_proxy = [...new Set([...(columns.allow_proxy || []), ...cols])];
      job.carried.columns = columns;
      showError("");
    } }, `Allow ${cols.join(", ")} (recorded in the manifest)`));
  }
  for (const m of message.matchAll(/--treat '([^']+)'/g)) {
    out.push(el("button", { class: "way-out-treat", onclick: () => {
      job.treatments = [...(job.treatments || []), m[1]];
      $("treatments").value = job.treatments.join("\n");
      showError("");
    } }, `Apply ${m[1]}`));
  }
  for (const m of message.matchAll(/--identifying ([A-Za-z0-9_.-]+)\b/g)) {
    if (m[1] === "COLUMN" || !profile || !profile.columns.some((c) => c.name === m[1])) continue;
    out.push(el("button", { class: "way-out-identifying", onclick: () => {
      job.roles[m[1]] = "identifying";
      renderColumns();
      showError("");
    } }, `Mark ${m[1]} identifying (removed)`));
  }
  return out;
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json", "x-versapub-token": TOKEN },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, opts);
  const data = await response.json().catch(() => ({ error: `The server answered ${response.status}.` }));
  if (!response.ok || data.error) {
    showError(data.error || `The server answered ${response.status}.`);
    throw new Error(data.error);
  }
  showError("");
  return data;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const KIND = { profile: "Reading the data file", rules: "Checking feasibility", check: "Checking the release",
  evaluate: "Evaluating utility", risk: "Measuring risk", compare: "Comparing releases", publish: "Publishing" };

// A step's own share and time left (the workflow counts each step, not the whole run).
function stepShare(t) {
  const left = t.left_s != null && t.percent < 100 ? `, about ${Math.ceil(t.left_s)} s left in this step` : "";
  return t.percent != null ? ` (this step ${t.percent}%${left})` : "";
}

function busyLine(t) {
  const pct = stepShare(t);
  return `${KIND[t.kind] || t.kind}: ${t.step}${pct} · ${t.elapsed_s} s` + (t.status === "cancelling" ? " · cancelling…" : "");
}

// A computation the server runs in a worker: a busy line (spinner, step, elapsed time, Cancel)
// while it runs, the button that started it disabled; its result, or null when it failed
// (the error is shown) or was cancelled.
async function runTask(path, body, button) {
  let t = await api(path, body);
  const text = el("span", {}, busyLine(t));
  const stop = el("button", { class: "cancel-task", "aria-label": `Cancel ${(KIND[t.kind] || t.kind).toLowerCase()}`,
    onclick: () => api(`/api/tasks/${t.id}/cancel`, {}).catch(() => {}) }, `Cancel ${(KIND[t.kind] || t.kind).toLowerCase()}`);
  const row = el("div", { class: "busy-row", "data-kind": t.kind }, el("span", { class: "spinner", "aria-hidden": "true" }), text, stop);
  $("busy").append(row);
  // a disabled button drops the focus to the page: it goes to this task's Cancel, and comes back
  const focused = Boolean(button) && document.activeElement === button;
  if (button) button.disabled = true;
  if (focused) stop.focus();
  try {
    while (t.status === "running" || t.status === "cancelling") {
      await sleep(300);
      t = await api(`/api/tasks/${t.id}`);
      text.textContent = busyLine(t);
    }
  } finally {
    const back = focused && document.activeElement === stop;
    row.remove();
    if (button) button.disabled = false;
    if (back) button.focus();
  }
  if (t.status === "done") return t.result;
  if (t.status === "failed") showError(t.message);
  return null;
}

function svgNode(text) {
  // drawn by the server (values escaped, no scripts); parsed as HTML so the <svg> lands in the SVG namespace
  const doc = new DOMParser().parseFromString(text, "text/html");
  return document.importNode(doc.body.firstElementChild, true);
}

// A view from the server (versapub.web.views): figures with their sentence, tables, plots.
function renderView(blocks) {
  return blocks.map((b) => {
    if (b.kind === "facts") {
      return el("section", { class: "view" }, el("h3", {}, b.title), el("table", { class: "facts" },
        ...b.rows.map(([n, v, why]) => el("tr", {}, el("th", { scope: "row" }, n), el("td", { class: "value" }, v), el("td", { class: "muted" }, why)))));
    }
    if (b.kind === "table") {
      return el("section", { class: "view" }, el("h3", {}, b.title), el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": `${b.title} (scrolls sideways)` }, el("table", { id: b.id },
        el("thead", {}, el("tr", {}, ...b.head.map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, ...b.rows.map((r) => el("tr", {}, ...r.map((v) => el("td", {}, v))))))),
        el("p", { class: "muted" }, b.caption || ""));
    }
    return el("figure", { class: "view" }, svgNode(b.svg), el("figcaption", { class: "muted" }, `${b.title}: ${b.caption}`));
  });
}

function screen(name) {
  for (const s of document.querySelectorAll(".screen")) s.hidden = s.id !== `screen-${name}`;
  for (const b of document.querySelectorAll("nav button")) {
    b.classList.toggle("active", b.dataset.screen === name);
    if (b.dataset.screen === name) b.setAttribute("aria-current", "page"); else b.removeAttribute("aria-current");
  }
  if (name === "job") showToml();
  if (name === "use" || name === "data" || name === "hierarchies") refreshFiles();
}

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((v) => el("option", { value: v }, v)));
  if (chosen !== undefined && values.includes(chosen)) select.value = chosen;
}

async function refreshFiles() {
  listing = await api("/api/files");
  fillSelect($("file-list"), listing.data, job.input);
  fillSelect($("release-list"), listing.releases);
  fillSelect($("compare-list"), listing.releases);
  fillSelect($("job-list"), listing.configs);
  renderHierarchies();
}

// -- 1 data ------------------------------------------------------------------------------
function readOptions() {
  job.delimiter = $("delimiter").value.replace("\\t", "\t");
  job.na_values = $("na-values").value.split(",").map((s) => s.trim()).filter(Boolean);
  job.missing = $("missing").value;
  job.header = !$("no-header").checked;
}

async function openData(path) {
  job.input = path;
  readOptions();
  const got = await runTask("/api/profile", { job }, $("open-file"));
  if (!got) return;
  profile = got;
  const known = new Set(profile.columns.map((c) => c.name));
  for (const c of Object.keys(job.roles)) if (!known.has(c)) delete job.roles[c];
  renderData();
  renderColumns();
  renderHierarchies();
}

function renderData() {
  const p = profile;
  const shown = (d) => (d === "\t" ? "tab" : `'${d}'`);
  $("data-info").textContent = `${p.input}: ${p.records.toLocaleString()} records, ${p.columns.length} columns` +
    (p.sniffed ? `; the file seems to use ${shown(p.sniffed)} as delimiter` : "") +
    (p.dropped ? `; ${p.dropped} records dropped for missing cells` : "");
  $("data-notes").replaceChildren(...p.notes.map((n) => el("li", {}, n)));
  renderMissing($("data-missing"));
  const head = el("tr", {}, ...p.columns.map((c) => el("th", {}, c.name)));
  const stats = el("tr", { class: "stats" }, ...p.columns.map((c) =>
    el("td", {}, `${c.values} values · ${(100 * c.unique_share).toFixed(0)}% unique · `,
      el("span", { class: c.missing ? "missing" : "" }, `${c.missing} missing`))));
  const rows = p.rows.map((r) => el("tr", {}, ...r.map((v) => el("td", {}, v))));
  $("preview").replaceChildren(el("thead", {}, head, stats), el("tbody", {}, ...rows));
}

// Missing cells, said beside the columns on screens 1 and 2 with the page's own control.
const MISSING_TEXT = {
  error: "publishing refuses a file with missing cells",
  value: "a missing cell is published as a value of its own",
  drop: "records with a missing cell are left out (the release says how many)",
};

function renderMissing(target) {
  const cols = profile ? profile.columns.filter((c) => c.missing) : [];
  if (!cols.length) return target.replaceChildren();
  const select = el("select", { "aria-label": "What to do with missing cells", class: "missing-policy",
    onchange: (e) => { $("missing").value = e.target.value; openData(job.input); } },
  ...Object.keys(MISSING_TEXT).map((k) => el("option", { value: k }, k)));
  select.value = job.missing;
  target.replaceChildren(el("p", { class: job.missing === "error" ? "bad" : "info" },
    `${cols.length} of ${profile.columns.length} columns hold missing cells (${cols.map((c) => `${c.name}: ${c.missing}`).join(", ")}). Missing cells: `,
    select, ` — ${MISSING_TEXT[job.missing]}.`));
}

// -- 2 columns ---------------------------------------------------------------------------
function renderColumns() {
  if (!profile) return;
  renderMissing($("columns-missing"));
  const body = $("roles").querySelector("tbody");
  body.replaceChildren(...profile.columns.map((c) => {
    const select = el("select", { class: "role", "data-column": c.name, "aria-label": `Role of ${c.name}`,
      onchange: (e) => { job.roles[c.name] = e.target.value; } },
    ...ROLES.map((r) => el("option", { value: r }, ROLE_TEXT[r] || r.replace("_", "-"))));
    select.value = job.roles[c.name] || "";
    const fmt = el("input", { size: 10, placeholder: c.date ? "e.g. %d/%m/%Y" : "", "aria-label": `Date format of ${c.name}`,
      value: job.date_formats[c.name] || "", onchange: (e) => { job.date_formats[c.name] = e.target.value; } });
    const missing = c.missing ? [`${c.missing} missing cells: ${MISSING_TEXT[job.missing]}`] : [];
    const warn = el("ul", { class: "warnings" }, ...[...missing, ...c.warnings, ...(proxies[c.name] || [])].map((w) => el("li", {}, w)),
      ...(c.date ? [el("li", {}, "looks like a date: usually quasi-identifying; a date hierarchy generalizes it")] : []));
    return el("tr", {}, el("td", {}, c.name), el("td", {}, c.values), el("td", {}, `${(100 * c.unique_share).toFixed(0)}%`),
      el("td", {}, c.missing), el("td", {}, select), el("td", {}, fmt), el("td", {}, warn));
  }));
}

function applySuggestions() {
  for (const c of profile.columns) if (c.suggested && !job.roles[c.name]) job.roles[c.name] = c.suggested;
  renderColumns();
}

// -- 3 privacy ---------------------------------------------------------------------------
function renderRules() {
  const body = $("rules").querySelector("tbody");
  body.replaceChildren(...job.rules.map((r, i) => el("tr", {},
    el("td", {}, el("input", { class: "rule-text", size: 40, value: r.rule, placeholder: "age, sex -> disease", "aria-label": `Rule ${i + 1}`,
      onchange: (e) => { job.rules[i].rule = e.target.value; } })),
    el("td", {}, el("input", { class: "rule-guarantee", size: 24, value: r.guarantee || "", placeholder: "t-closeness:t=0.3", "aria-label": `Own guarantee of rule ${i + 1}`,
      onchange: (e) => { job.rules[i].guarantee = e.target.value; } })),
    el("td", {}, el("button", { "aria-label": `Remove rule ${i + 1}`, onclick: () => { job.rules.splice(i, 1); renderRules(); } }, "remove")))));
}

function readPrivacy() {
  job.guarantee = $("guarantee").value.trim();
  job.anonymizer = $("anonymizer").value;
  job.decomposition = $("decomposition").value;
  job.seed = $("seed").value.trim() === "" ? "" : Number($("seed").value);
  job.treatments = $("treatments").value.split("\n").map((x) => x.trim()).filter(Boolean);
  job.mechanism = $("dp-mechanism").value.trim();
  job.domains = Object.fromEntries($("dp-domains").value.split("\n").map((x) => x.trim()).filter(Boolean)
    .map((x) => [x.split("=")[0].trim(), x.slice(x.indexOf("=") + 1).trim()]));
  const sensitive = $("m-sensitive").value.trim();
  job.marginals = sensitive ? {
    sensitive, k: Number($("m-k").value || 2), diversity: $("m-diversity").value.trim(), base: $("m-base").value.trim(),
    marginals: $("m-marginals").value.split("\n").map((x) => x.trim()).filter(Boolean), inject: Number($("m-inject").value || 0),
  } : null;
}

function graph(edges) {
  const nodes = [...new Set(edges.flat())];
  const size = 260, r = 100, c = size / 2;
  const at = Object.fromEntries(nodes.map((n, i) => [n, [c + r * Math.cos((2 * Math.PI * i) / nodes.length),
    c + r * Math.sin((2 * Math.PI * i) / nodes.length)]]));
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("class", "graph");
  const marker = `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z"/></marker></defs>`;
  svg.innerHTML = marker; // constant markup, no data
  for (const [a, b] of edges) {
    const [x1, y1] = at[a], [x2, y2] = at[b];
    const k = 1 - 18 / Math.hypot(x2 - x1, y2 - y1);
    const line = document.createElementNS(ns, "line");
    Object.entries({ x1, y1, x2: x1 + (x2 - x1) * k, y2: y1 + (y2 - y1) * k, "marker-end": "url(#arrow)" })
      .forEach(([key, v]) => line.setAttribute(key, v));
    svg.append(line);
  }
  for (const n of nodes) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", at[n][0]);
    t.setAttribute("y", at[n][1]);
    t.setAttribute("text-anchor", "middle");
    t.textContent = n;
    svg.append(t);
  }
  return svg;
}

async function checkRules() {
  readPrivacy();
  const out = $("rules-result");
  out.replaceChildren();
  const rep = await runTask("/api/rules", { job }, $("check-rules"));
  if (!rep) return;
  if (rep.marginals) {
    const m = rep.marginals;
    out.replaceChildren(el("h3", { class: m.ok ? "ok" : "bad" }, m.ok ? "The collection passes every check" : "The collection fails"),
      el("pre", { id: "marginals-result" }, JSON.stringify(m, null, 2)));
    return;
  }
  if (rep.classic) {
    out.replaceChildren(el("h3", { class: rep.schema ? "ok" : "bad" }, rep.schema ? "Feasible" : "Not feasible"),
      el("p", { id: "classic" }, rep.classic));
    return;
  }
  const items = rep.feasibility.map((f) => el("li", { class: f.feasible ? "ok" : "bad" },
    f.message + (f.largest_l != null ? `; l up to ${f.largest_l} is feasible` : "")));
  const parts = [el("h3", {}, rep.feasible ? "Every rule is feasible" : "Not feasible"), el("ul", { id: "feasibility" }, ...items)];
  if (rep.dropped.length) parts.push(el("p", {}, `Implied rules dropped: ${rep.dropped.map((d) => d.reason).join("; ")}`));
  if (rep.edges.length) parts.push(el("h3", {}, "Rule graph"), graph(rep.edges));
  if (rep.schema) {
    parts.push(el("h3", {}, `Schema (${rep.schema.decomposition})`),
      el("ul", { id: "schema" }, ...rep.schema.tables.map((t) => el("li", {}, t))),
      el("h3", {}, "Why each rule holds"), el("ul", { id: "why" }, ...rep.schema.why.map((w) => el("li", {}, w))));
    proxies = {};
    for (const a of rep.schema.associations) (proxies[a.column] ||= []).push(`proxy of ${a.sensitive}: ${a.text}`);
    if (rep.schema.associations.length) {
      parts.push(el("h3", {}, "Unprotected columns associated with protected ones"),
        el("ul", { id: "associations" }, ...rep.schema.associations.map((a) => el("li", {}, a.text))));
    }
    renderColumns();
  }
  if (rep.refusal) {
    const controls = wayOutControls(rep.refusal);
    controls.forEach((c) => c.addEventListener("click", () => checkRules()));  // the way out taken, checked again
    parts.push(el("h3", { class: "bad" }, "Publishing would be refused"), el("p", { id: "refusal" }, rep.refusal));
    if (controls.length) parts.push(el("div", { class: "row way-out", id: "refusal-ways" }, ...controls));
  }
  out.replaceChildren(...parts);
}

function lineChart(series, xLabel, yLabel) {
  // series: [{name, points: [[x, y], ...]}]; a small SVG line chart with labelled axes
  const ns = "http://www.w3.org/2000/svg", w = 460, h = 260, pad = 44;
  const xs = series.flatMap((s) => s.points.map((p) => p[0])), ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const [x0, x1, y1] = [Math.min(...xs), Math.max(...xs), Math.max(1, ...ys)];
  const X = (x) => pad + ((x - x0) / Math.max(x1 - x0, 1)) * (w - 2 * pad), Y = (y) => h - pad - (y / y1) * (h - 2 * pad);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("class", "chart");
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    Object.entries(attrs).forEach(([k, v]) => n.setAttribute(k, v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
  };
  add("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, stroke: "#333" });
  add("line", { x1: pad, y1: pad, x2: pad, y2: h - pad, stroke: "#333" });
  add("text", { x: w / 2, y: h - 8, "text-anchor": "middle" }, xLabel);
  add("text", { x: 12, y: h / 2, transform: `rotate(-90 12 ${h / 2})`, "text-anchor": "middle" }, yLabel);
  for (const v of [0, y1 / 2, y1]) add("text", { x: pad - 4, y: Y(v) + 4, "text-anchor": "end" }, v.toFixed(2));
  for (const v of [...new Set(xs)]) add("text", { x: X(v), y: h - pad + 14, "text-anchor": "middle" }, v);
  const colours = ["#1f6f43", "#26446b", "#a5602a", "#7a3e9d", "#a52020"];
  series.forEach((s, i) => {
    add("polyline", { points: s.points.map(([x, y]) => `${X(x)},${Y(y)}`).join(" "), fill: "none",
      stroke: colours[i % colours.length], "stroke-width": 2 });
    add("text", { x: w - pad, y: pad + 14 * i, "text-anchor": "end", fill: colours[i % colours.length] }, s.name);
  });
  return svg;
}

async function showEligible() {
  const sensitive = $("e-sensitive").value;
  $("eligible-result").replaceChildren();
  const r = await api("/api/eligible", { data: job.input, sensitive, taxonomy: job.hierarchies[sensitive] || null,
    max_level: $("e-level").value, delimiter: job.delimiter });
  const series = r.ranges.map((g) => ({ name: g.level ? `values at level ${g.level}` : "values as they are",
    points: Object.entries(g.min_tau).map(([k, t]) => [Number(k), t]) }));
  const lines = r.ranges.map((g) => el("li", {}, `${g.level ? "level " + g.level : "as they are"}: ${g.m} values; ` +
    `simple l-diversity up to l = ${g.max_l}`));
  $("eligible-result").replaceChildren(el("p", {}, "A (tau, lambda) requirement is eligible when tau is at least the line at its lambda:"),
    lineChart(series, "lambda", "smallest eligible tau"), el("ul", { id: "eligible-lines" }, ...lines));
}

// -- 4 hierarchies -----------------------------------------------------------------------
function renderHierarchies() {
  const cols = profile ? profile.columns.map((c) => c.name) : [];
  fillSelect($("build-column"), cols, $("build-column").value); // the column chosen stays chosen
  fillSelect($("e-sensitive"), cols, $("e-sensitive").value);
  const files = ["", ...listing.data.filter((f) => f.endsWith(".csv") && f !== job.input)];
  const body = $("hierarchy-table").querySelector("tbody");
  body.replaceChildren(...cols.map((c) => {
    const select = el("select", { class: "hierarchy", "data-column": c, "aria-label": `Hierarchy of ${c}`, onchange: (e) => {
      if (e.target.value) job.hierarchies[c] = e.target.value; else delete job.hierarchies[c];
    } }, ...files.map((f) => el("option", { value: f }, f || "— none —")));
    select.value = job.hierarchies[c] || "";
    return el("tr", {}, el("td", {}, c), el("td", {}, select),
      el("td", {}, el("button", { class: "show-hierarchy", "data-column": c, onclick: () => showHierarchy(c) }, "show")));
  }));
}

function renderLevels(h) {
  const levels = h.levels.map((lv) => el("div", { class: "level" }, el("h4", {},
    `level ${lv.level}: ${lv.count} node${lv.count === 1 ? "" : "s"}` + (lv.nodes.length < lv.count ? ` (the first ${lv.nodes.length} shown)` : "")),
    el("ul", {}, ...lv.nodes.map((n) => el("li", {}, `${n.label} — ${n.values} value${n.values === 1 ? "" : "s"}, ${n.records} records`)))));
  const cover = h.n_uncovered ? el("p", { class: "bad" }, `${h.n_uncovered} values of the data are not leaves: ${h.uncovered.join(", ")}`)
    : el("p", { class: "ok" }, "Every value of the data is a leaf.");
  $("hierarchy-view").replaceChildren(el("h3", {}, h.path), cover, el("div", { class: "levels" }, ...levels));
}

async function showHierarchy(column) {
  if (!job.hierarchies[column]) return showError(`Choose a hierarchy file for ${column} first.`);
  renderLevels(await api("/api/hierarchy/show", { path: job.hierarchies[column], column, data: job.input,
    delimiter: job.delimiter }));
}

async function build() {
  const column = $("build-column").value;
  const h = await api("/api/hierarchy/build", { data: job.input, column, kind: $("build-kind").value,
    param: $("build-param").value, out: $("build-out").value, overwrite: $("build-overwrite").checked,
    delimiter: job.delimiter, date_format: job.date_formats[column] || null });
  job.hierarchies[column] = h.path;
  await refreshFiles();
  renderLevels(h);
}

// -- 5 publish ---------------------------------------------------------------------------
let publishFocused = false;

async function publish() {
  readPrivacy();
  $("release-view").replaceChildren();
  task = await api("/api/publish", { job, out: $("out").value, overwrite: $("overwrite").checked });
  // a disabled button drops the focus to the page: it goes to Cancel, and comes back at the end
  publishFocused = document.activeElement === $("publish");
  $("cancel").disabled = false;
  if (publishFocused) $("cancel").focus();
  $("publish").disabled = true;
  poll();
}

async function poll() {
  task = await api(`/api/tasks/${task.id}`);
  const pct = task.percent ?? 0;
  $("bar").style.width = `${task.status === "done" ? 100 : task.overall ?? pct}%`;  // the whole publish
  const share = stepShare(task);
  $("progress-text").textContent = task.status === "running" || task.status === "cancelling"
    ? `${task.step}${share}, ${task.elapsed_s} s${task.status === "cancelling" ? ", cancelling…" : ""}`
    : `${task.status}${task.message ? ": " + task.message : ""} (${task.elapsed_s} s)`;
  if (task.status === "running" || task.status === "cancelling") return setTimeout(poll, 400);
  const back = publishFocused && document.activeElement === $("cancel");
  $("cancel").disabled = true;
  $("publish").disabled = false;
  if (back) $("publish").focus();
  if (task.status === "done") showRelease(task.out, $("release-view"));
  if (task.status === "failed") showError(task.message);  // a refusal, with the page's controls for its ways out
}

async function cancel() {
  if (task) await api(`/api/tasks/${task.id}/cancel`, {});
}

async function showRelease(path, target) {
  const r = await api(`/api/release?path=${encodeURIComponent(path)}`);
  const verdict = r.check ? (r.check.ok ? "ALL CHECKS PASSED" : "CHECK FAILED") : "not checked";
  const files = r.files.map((f) => el("li", {}, el("a", { href: `/raw/${r.path}/${f}`, target: "_blank" }, f)));
  target.replaceChildren(
    el("h3", { id: "verdict", class: r.check && r.check.ok ? "ok" : "bad" }, `${r.path}: ${verdict}`),
    el("p", {}, r.tables.map((t) => `${t.name} (${t.kind}): ${t.attributes.join(", ")}`).join(" · ")),
    ...((r.facts || []).length ? [el("ul", { id: "release-facts" }, ...r.facts.map((f) => el("li", {}, f)))] : []),
    el("p", {}, el("a", { href: `/api/zip?path=${encodeURIComponent(r.path)}`, id: "download" }, "Download the release (zip)")),
    el("details", {}, el("summary", {}, `${r.files.length} files`), el("ul", {}, ...files)),
    ...(r.report ? [el("iframe", { src: `/raw/${r.path}/${r.report}`, class: "report", title: "report" })] : []));
}

// -- 6 use -------------------------------------------------------------------------------
async function openRelease() {
  const path = $("release-list").value;
  if (!path) return;
  $("use-result").replaceChildren();
  await showRelease(path, $("use-result"));
  const d = (await api(`/api/domains?path=${encodeURIComponent(path)}`)).domains;
  const options = [];
  for (const [a, values] of Object.entries(d)) {
    options.push(el("option", { value: a }));
    for (const v of values.slice(0, 60)) options.push(el("option", { value: `${a} = '${v.replaceAll("'", "''")}'` }));
  }
  $("query-completion").replaceChildren(...options);
  await riskChoices();
}

// The quasi-identifiers the risk is measured on: those the release declares, ticked; any other
// published non-sensitive column may be added. SUDA's cost is said before it runs.
async function riskChoices() {
  const path = $("release-list").value;
  if (!path) return;
  const c = await api(`/api/risk/choices?path=${encodeURIComponent(path)}`);
  const boxes = c.candidates.map((a) => el("label", {}, el("input", { type: "checkbox", class: "risk-qi", value: a,
    ...(c.declared.includes(a) ? { checked: "" } : {}), onchange: sudaCost }), ` ${a}`));
  $("risk-qi").replaceChildren(el("legend", {}, "Quasi-identifiers for the risk measures (those the release declares are ticked)"), ...boxes);
  $("suda-cost").textContent = c.suda;
}

function chosenQi() {
  return [...document.querySelectorAll("input.risk-qi:checked")].map((x) => x.value);
}

async function sudaCost() {
  const path = $("release-list").value, qi = chosenQi();
  const c = await api(`/api/risk/choices?path=${encodeURIComponent(path)}&qi=${encodeURIComponent(qi.join(","))}`);
  $("suda-cost").textContent = qi.length ? c.suda : "Choose at least one quasi-identifier.";
}

async function runQuery() {
  $("query-result").textContent = "";
  const r = await api("/api/query", { release: $("release-list").value, text: $("query").value });
  $("query-result").textContent = `estimate ${r.estimate.toFixed(1)}` +
    (r.range_text ? ` (${r.range_text})` : "") +
    (r.actual != null ? ` · actual ${r.actual} on the original · relative error ${r.relative_error == null ? "—" : r.relative_error.toFixed(3)}` : ` · ${r.original_note}`);
}

async function runCheck() {
  $("use-result").replaceChildren();
  const r = await runTask("/api/check", { release: $("release-list").value }, $("run-check"));
  if (!r) return;
  const lines = [...r.failures.map((f) => el("li", { class: "bad" }, f)), ...r.attention.map((a) => el("li", {}, a))];
  const attacks = r.attacks.length
    ? [el("h4", {}, "Attacks on everything published (against the original found under the folder)"),
       el("ul", { id: "check-attacks" }, ...r.attacks.map((a) => el("li", {}, a)))]
    : [el("p", { class: "muted" }, r.original ? "" : `${r.original_note} The attacks on everything published did not run.`)];
  $("use-result").replaceChildren(el("h3", { id: "check-verdict", class: r.verdict === "failed" ? "bad" : "ok" },
    `check: ${r.verdict}`), el("ul", {}, ...lines), ...attacks);
}

async function runEvaluate() {
  $("use-result").replaceChildren();
  const r = await runTask("/api/evaluate", { release: $("release-list").value }, $("run-evaluate"));
  if (!r) return;
  const { view, ...raw } = r;
  $("use-result").replaceChildren(el("h3", { id: "evaluate-title" }, `utility of ${$("release-list").value}`), ...renderView(view),
    el("details", {}, el("summary", {}, "every figure (JSON)"), el("pre", {}, JSON.stringify(raw, null, 2))));
}

function uniquesText(pu) {  // the estimate with its interval under the model, when it has one
  const iv = pu.interval;
  return iv ? `${pu.estimate.toFixed(1)} (95% ${iv[0].toFixed(1)}-${iv[1].toFixed(1)})` : pu.estimate.toFixed(1);
}

async function runRisk() {
  $("use-result").replaceChildren();
  const r = await runTask("/api/risk", { release: $("release-list").value, sampling_fraction: $("risk-fraction").value,
    qi: chosenQi(), suda: $("risk-suda").checked }, $("run-risk"));
  if (!r) return;
  const pct = (x) => `${(100 * x).toFixed(2)}%`;
  const head = ["table", "records", "sample uniques", "prosecutor highest", "prosecutor average", "records at risk",
    "journalist highest", "marketer", "population uniques", "model"];
  const rows = r.tables.map((t) => el("tr", {}, ...[t.table, t.records, t.sample_uniques,
    t.prosecutor.highest.toFixed(4), t.prosecutor.average.toFixed(4), pct(t.prosecutor.records_at_risk),
    t.journalist.highest.toFixed(4), t.marketer.average.toFixed(4), uniquesText(t.population_uniques),
    t.population_uniques.model].map((v) => el("td", {}, String(v)))));
  $("use-result").replaceChildren(el("h3", { id: "risk-title" }, `re-identification risk (sampling fraction ${r.sampling_fraction}) on ${r.qi.join(", ")}`),
    el("table", { id: "risk-table" }, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h))), ...rows), ...renderView(r.view));
}

async function runCompare() {
  $("use-result").replaceChildren();
  const releases = [...$("compare-list").selectedOptions].map((o) => o.value);
  const r = await runTask("/api/compare", { releases }, $("run-compare"));
  if (!r) return;
  $("use-result").replaceChildren(el("h3", { id: "compare-title" }, `${releases.length} releases of ${r.input} side by side`), ...renderView(r.view));
}

// -- job ---------------------------------------------------------------------------------
async function showToml() {
  readPrivacy();
  if (!job.input) return;
  try {
    $("toml").textContent = (await api("/api/job/toml", { job, path: $("job-path").value })).toml;
  } catch (e) { /* shown */ }
}

async function saveJob() {
  readPrivacy();
  $("job-saved").textContent = "";
  const r = await api("/api/job/save", { job, path: $("job-path").value, overwrite: $("job-overwrite").checked });
  $("toml").textContent = r.toml;
  $("job-saved").textContent = `saved as ${r.path}`;
  await refreshFiles();
}

async function loadJob() {
  const loaded = (await api("/api/job/load", { path: $("job-list").value })).job;
  Object.assign(job, loaded);
  job.carried = loaded.carried || {};
  job.na_values_set = loaded.na_values_set || false;
  const carried = Object.entries(job.carried).flatMap(([section, o]) =>
    Object.entries(o).map(([k, v]) => `[${section}] ${k} = ${JSON.stringify(v)}`));
  $("job-carried").textContent = carried.length
    ? `Kept from the job file (no field on this page; saved and published as written): ${carried.join("; ")}`
    : "";
  $("delimiter").value = job.delimiter === "\t" ? "\\t" : job.delimiter;
  $("na-values").value = job.na_values.join(",");
  $("missing").value = job.missing;
  $("no-header").checked = job.header === false;
  $("guarantee").value = job.guarantee || "l-diversity:l=2";
  $("anonymizer").value = job.anonymizer;
  $("decomposition").value = job.decomposition;
  $("seed").value = job.seed ?? "";
  $("treatments").value = (job.treatments || []).join("\n");
  $("dp-mechanism").value = job.mechanism || "";
  $("dp-domains").value = Object.entries(job.domains || {}).map(([c, v]) => `${c}=${v}`).join("\n");
  $("dp-box").open = Boolean(job.mechanism);
  const m = job.marginals || {};
  $("m-sensitive").value = m.sensitive || "";
  if (job.marginals) {
    $("m-k").value = m.k; $("m-diversity").value = m.diversity; $("m-base").value = m.base || "";
    $("m-marginals").value = (m.marginals || []).join("\n"); $("m-inject").value = m.inject || 0;
    $("marginals-box").open = true;
  }
  renderRules();
  await openData(job.input);
  showToml();
}

// -- wiring ------------------------------------------------------------------------------
// Every action's error is shown by api() / runTask(); nothing is left unhandled.
const safe = (fn) => (...args) => Promise.resolve(fn(...args)).catch(() => {});
for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => screen(b.dataset.screen));
$("open-file").addEventListener("click", safe(() => openData($("file-list").value)));
$("reread").addEventListener("click", safe(() => openData(job.input)));
$("upload").addEventListener("click", async () => {
  const file = $("upload-file").files[0];
  if (!file) return showError("Choose a file to upload.");
  const form = new FormData();
  form.append("file", file);
  form.append("folder", $("upload-folder").value);
  const response = await fetch("/api/upload", { method: "POST", body: form, headers: { "x-versapub-token": TOKEN } });
  const r = await response.json();
  if (r.error) return showError(r.error);
  await refreshFiles();
  if (!r.path.endsWith(".toml")) $("file-list").value = r.path;
});
$("apply-suggestions").addEventListener("click", safe(applySuggestions));
$("add-rule").addEventListener("click", () => { job.rules.push({ rule: "", guarantee: "" }); renderRules(); });
$("check-rules").addEventListener("click", safe(checkRules));
$("show-eligible").addEventListener("click", safe(showEligible));
$("build").addEventListener("click", safe(build));
$("build-column").addEventListener("change", (e) => { $("build-out").value = `hierarchies/${e.target.value}.csv`; });
$("release-list").addEventListener("change", safe(riskChoices));
$("publish").addEventListener("click", safe(publish));
$("cancel").addEventListener("click", safe(cancel));
$("open-release").addEventListener("click", safe(openRelease));
$("run-query").addEventListener("click", safe(runQuery));
$("run-check").addEventListener("click", safe(runCheck));
$("run-evaluate").addEventListener("click", safe(runEvaluate));
$("run-risk").addEventListener("click", safe(runRisk));
$("run-compare").addEventListener("click", safe(runCompare));
$("save-job").addEventListener("click", safe(saveJob));
$("load-job").addEventListener("click", safe(loadJob));
refreshFiles();
