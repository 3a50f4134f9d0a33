"""``DIR/index.html``: the pipeline as one self-contained page (no network, no server).

The index goes in as JSON and the function texts as the store's pack (gzipped JSON) in
base64, which the browser inflates with ``DecompressionStream``; diffs are computed in the
page (Myers, unified with context), so writing the page costs no compression of its own and
no diff per change.
``#pass=N`` (or ``#pass=input``) and ``&func=NAME`` in the URL select a pass and filter.
"""

from __future__ import annotations

import base64

from toolkit.dumpir.index import DumpIndex
from toolkit.outputs import fill, html_text, script_json


def render(dump_index: DumpIndex, pack: bytes) -> str:
    """The page, given the index and the store's pack (gzipped JSON of the texts)."""
    title = f"tk dump-ir: {dump_index.summary.get('workload')} for {dump_index.summary.get('target')}"
    return fill(PAGE, {
        "__TITLE__": html_text(title),
        "__INDEX__": script_json(dump_index.to_json()),
        "__STORE__": base64.b64encode(pack).decode(),
    })


PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>__TITLE__</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;display:flex;flex-direction:column;height:100vh}
header{padding:8px 12px;border-bottom:1px solid #ccc;background:#f6f6f6}
header h1{font-size:15px;margin:0 0 4px}
#summary span{margin-right:14px}
main{display:flex;flex:1;min-height:0}
#side{width:430px;display:flex;flex-direction:column;border-right:1px solid #ccc}
#filter{margin:6px;padding:4px}
#passes{list-style:none;margin:0;padding:0;overflow:auto;flex:1}
#passes li{display:flex;align-items:center;padding:1px 6px;cursor:pointer;white-space:nowrap}
#passes li:hover{background:#eef}
#passes li.selected{background:#cde}
#passes li .seq{width:34px;color:#888;text-align:right;margin-right:6px}
#passes li .name{flex:1;overflow:hidden;text-overflow:ellipsis}
#passes li.wrapper .name{color:#777;font-style:italic}
#passes li.changed .name{font-weight:bold}
#passes li.changed .mark{background:#e8a33d}
#passes li.prints-identically .mark{background:#b9a0e0}
#passes li.renamed-only .mark{background:#8cc}
#passes li.failed{background:#fdd}
#passes li.failed .mark{background:#d33}
#passes li.hidden{display:none}
#passes li.own .name,#passes li.codegen .name{color:#555}
.lane{width:46px;font-size:11px;text-align:center;border-radius:3px;margin-right:5px;color:#333}
.lane-main{background:#eee}.lane-host{background:#d8e8d0}.lane-device{background:#f3dcc2}
.mark{display:inline-block;width:8px;height:8px;border-radius:4px;margin-right:5px;background:#ddd}
.bar{height:6px;background:#7a9cc6;margin-left:6px;min-width:1px}
.barbox{width:90px;display:flex;justify-content:flex-start}
#detail{flex:1;overflow:auto;padding:8px 14px}
#detail h2{font-size:14px;margin:4px 0}
#detail h3{font-size:13px;margin:14px 0 4px;font-family:monospace}
pre{font:12px/1.35 ui-monospace,monospace;background:#fafafa;border:1px solid #ddd;padding:6px;overflow:auto}
pre .add{background:#dfd;display:block}
pre .del{background:#fdd;display:block}
pre .hunk{color:#66a;display:block}
.note{color:#666}
.error{color:#a00;white-space:pre-wrap}
</style></head>
<body>
<header><h1>__TITLE__</h1><div id="summary"></div>
<div id="legend" class="note">lanes: <span class="lane lane-main">main</span>until the
 host/device split, then <span class="lane lane-host">host</span><span class="lane lane-device">device</span>;
 <span class="mark" style="background:#e8a33d"></span>changed
 <span class="mark" style="background:#b9a0e0"></span>structure changed, text identical
 <span class="mark" style="background:#8cc"></span>renamed only
 <span class="mark" style="background:#d33"></span>failed
 <span class="mark"></span>unchanged; <i>italic</i>: wrapper pass; bar: time</div></header>
<main>
<div id="side">
<input id="filter" placeholder="function name: substring, or =name for exactly that one">
<ul id="passes"></ul>
</div>
<div id="detail"><p class="note">Select a pass to see what it changed.</p></div>
</main>
<script type="application/json" id="tk-index">__INDEX__</script>
<script type="application/octet-stream" id="tk-store">__STORE__</script>
<script>
"use strict";
const INDEX = JSON.parse(document.getElementById("tk-index").textContent);
const PASSES = INDEX.passes;
let TEXTS = null;
let SELECTED = null;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

async function loadTexts() {
  const b64 = document.getElementById("tk-store").textContent.trim();
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function touched(p) {
  return [...Object.keys(p.added || {}), ...Object.keys(p.removed || {}),
          ...(p.changed || []).map(c => c.name), ...(p.renamed || []).flatMap(r => [r.old, r.new])];
}

// A wrapper's own work and codegen records say what they are; the rest are pass names.
function label(p) {
  if (p.kind === "own") return p.name + " (own work)";
  if (p.kind === "codegen") return "codegen " + p.name;
  return p.name;
}

function renderSummary() {
  const s = INDEX.summary;
  const box = document.getElementById("summary");
  const items = [["status", s.status], ["passes", s.passes], ["changed", s.changed_passes],
    ["compile", s.compile_seconds + " s"], ["TVM", s.tvm_version],
    ["functions stored", s.functions_stored]];
  for (const [k, v] of items) box.append(el("span", {}, k + ": ", el("b", {}, String(v))));
}

function renderPasses() {
  const list = document.getElementById("passes");
  const leafMax = Math.max(1e-9, ...PASSES.filter(p => p.kind !== "wrapper").map(p => p.seconds));
  const input = el("li", {"data-seq": "input", class: "input"},
    el("span", {class: "seq"}, ""), el("span", {class: "lane"}), el("span", {class: "mark"}),
    el("span", {class: "name"}, "input module"));
  list.append(input);
  for (const p of PASSES) {
    const cls = [p.kind, p.change || "", p.status === "failed" ? "failed" : ""].join(" ");
    const width = Math.max(1, Math.round(80 * Math.min(1, p.seconds / leafMax)));
    const shown = label(p);
    const name = el("span", {class: "name", title: shown + " (" + p.seconds.toFixed(4) + " s)"}, shown);
    name.style.paddingLeft = (p.depth * 12) + "px";
    const lane = el("span", {class: "lane" + (p.lane ? " lane-" + p.lane : ""),
                             title: p.lane_target || ""}, p.lane || "");
    const bar = el("div", {class: "bar"});
    bar.style.width = width + "px";
    const li = el("li", {"data-seq": String(p.seq), class: cls},
      el("span", {class: "seq"}, String(p.seq)), lane, el("span", {class: "mark"}), name,
      el("span", {class: "barbox"}, bar));
    li.dataset.funcs = touched(p).join(" ");
    list.append(li);
  }
  list.addEventListener("click", ev => {
    const li = ev.target.closest("li");
    if (li) select(li.dataset.seq, true);
  });
}

// "=name" follows exactly one function (matmul, not matmul1); anything else is a substring.
function matcher(text) {
  const q = text.trim();
  if (!q) return null;
  if (q.startsWith("=")) return name => name === q.slice(1);
  const lower = q.toLowerCase();
  return name => name.toLowerCase().includes(lower);
}

function applyFilter(text) {
  const match = matcher(text);
  for (const li of document.querySelectorAll("#passes li")) {
    if (!match || li.dataset.seq === "input") { li.classList.remove("hidden"); continue; }
    const hit = (li.dataset.funcs || "").split(" ").some(match);
    li.classList.toggle("hidden", !hit);
  }
}

// Myers' O(ND) line diff; returns [[op, line], ...] with op in " ", "-", "+".
function diffLines(a, b) {
  const n = a.length, m = b.length, max = n + m, off = max + 1;
  if (max === 0) return [];
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d++) {
    if (d > 4000) return [...a.map(l => ["-", l]), ...b.map(l => ["+", l])];
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]);
      let x = down ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, off);
    }
  }
  return [];
}

function backtrack(trace, a, b, off) {
  let x = a.length, y = b.length;
  const ops = [];
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d], k = x - y;
    const prevK = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) ? k + 1 : k - 1;
    const prevX = v[off + prevK], prevY = prevX - prevK;
    while (x > prevX && y > prevY) { ops.push([" ", a[x - 1]]); x--; y--; }
    if (d > 0) {
      if (x === prevX) { ops.push(["+", b[y - 1]]); y--; } else { ops.push(["-", a[x - 1]]); x--; }
    }
  }
  return ops.reverse();
}

function unified(before, after, name, context) {
  const ops = diffLines(before.split("\n"), after.split("\n"));
  const pre = el("pre", {class: "diff"});
  pre.append(el("span", {class: "hunk"}, "--- " + name + " (before)\n+++ " + name + " (after)"));
  let i = 0;
  while (i < ops.length) {
    if (ops[i][0] === " ") { i++; continue; }
    let start = Math.max(0, i - context), end = i;
    while (end < ops.length) {
      if (ops[end][0] !== " ") { end++; continue; }
      let run = 0;
      while (end + run < ops.length && ops[end + run][0] === " ") run++;
      if (end + run >= ops.length || run > 2 * context) { end = Math.min(ops.length, end + context); break; }
      end += run;
    }
    let aLine = 1, bLine = 1;
    for (let j = 0; j < start; j++) { if (ops[j][0] !== "+") aLine++; if (ops[j][0] !== "-") bLine++; }
    pre.append(el("span", {class: "hunk"}, "@@ -" + aLine + " +" + bLine + " @@"));
    for (let j = start; j < end; j++) {
      const [op, line] = ops[j];
      pre.append(el("span", {class: op === "+" ? "add" : op === "-" ? "del" : "ctx"}, op + line + "\n"));
    }
    i = end;
  }
  return pre;
}

function text(key) {
  if (key === null || key === undefined) return null;
  return TEXTS ? TEXTS[key] : null;
}

function codeBlock(key) {
  const t = text(key);
  return el("pre", {class: "code"}, t === null ? "(not stored)" : t);
}

function select(seq, updateHash) {
  SELECTED = seq;
  for (const li of document.querySelectorAll("#passes li.selected")) li.classList.remove("selected");
  const li = document.querySelector('#passes li[data-seq="' + seq + '"]');
  if (li) { li.classList.add("selected"); li.scrollIntoView({block: "nearest"}); }
  if (updateHash) {
    const f = document.getElementById("filter").value.trim();
    history.replaceState(null, "", "#pass=" + seq + (f ? "&func=" + encodeURIComponent(f) : ""));
  }
  renderDetail();
}

function renderDetail() {
  const box = document.getElementById("detail");
  box.replaceChildren();
  const seq = SELECTED;
  if (seq === null) return;
  const match = matcher(document.getElementById("filter").value);
  const wanted = name => !match || match(name);
  if (!TEXTS) box.append(el("p", {class: "note"}, "loading function texts..."));
  if (seq === "input") {
    box.append(el("h2", {}, "input module"));
    for (const [name, key] of Object.entries(INDEX.input)) {
      if (!wanted(name)) continue;
      box.append(el("h3", {}, name), codeBlock(key));
    }
    return;
  }
  const p = PASSES[Number(seq)];
  if (!p) { box.append(el("p", {class: "note"}, "no pass #" + seq)); return; }
  const facts = [p.kind, p.seconds.toFixed(4) + " s", p.change,
    p.lane && (p.lane + " module" + (p.lane_target ? " (" + p.lane_target + ")" : "")),
    p.stored ? null : "not stored (--passes)"].filter(Boolean);
  box.append(el("h2", {}, "#" + p.seq + " " + label(p)),
    el("p", {class: "note"}, facts.join(", ")));
  if (p.status === "failed") {
    const cause = p.seq === INDEX.summary.failed_pass && INDEX.summary.first_cause;
    box.append(el("p", {class: "error"}, "FAILED" + (cause ? ": " + cause : "")));
  }
  if (p.error) box.append(el("pre", {class: "error"}, p.error));
  if (p.verify) {
    box.append(el("p", {class: p.verify.ok === false ? "error" : "note"},
      "verify: " + p.verify.tool + ": " + (p.verify.ok ? "ok" : p.verify.error)));
  }
  if (p.kind === "codegen") {
    for (const [name, key] of Object.entries(p.sources || {})) {
      if (wanted(name)) box.append(el("h3", {}, name), codeBlock(key));
    }
    return;
  }
  if (p.kind === "wrapper") {
    const kids = PASSES.filter(c => c.parent === p.seq).map(c => "#" + c.seq + " " + c.name);
    box.append(el("p", {}, "runs: " + kids.join(", ")));
    return;
  }
  for (const c of p.changed) {
    if (!wanted(c.name)) continue;
    const h = el("h3", {class: "changed-func"}, c.name);
    const rule = (p.schedule_rules || {})[c.name];
    if (rule) h.append(el("span", {class: "note"}, "  scheduled by dlight rule " + rule));
    if (c.prints_identically) h.append(el("span", {class: "note"}, "  (structure changed, text identical)"));
    box.append(h);
    const a = text(c.before), b = text(c.after);
    if (a !== null && b !== null) box.append(unified(a, b, c.name, 3));
    else if (TEXTS) box.append(el("p", {class: "note"}, "(not stored)"));
  }
  for (const [name, key] of Object.entries(p.added)) {
    if (wanted(name)) box.append(el("h3", {class: "added-func"}, "+ " + name), codeBlock(key));
  }
  for (const name of Object.keys(p.removed)) {
    if (wanted(name)) box.append(el("h3", {class: "removed-func"}, "- " + name));
  }
  for (const r of p.renamed) {
    if (wanted(r.old) || wanted(r.new)) box.append(el("h3", {class: "renamed-func"}, r.old + " -> " + r.new));
  }
  if (!touched(p).length) {
    box.append(el("p", {class: "note"}, "no function changed"));
  }
}

function fromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("func")) {
    document.getElementById("filter").value = params.get("func");
    applyFilter(params.get("func"));
  }
  if (params.has("pass")) select(params.get("pass"), false);
  else if (SELECTED === null) {
    // No pass asked for: open on the failure, else on the first pass that changed something.
    const failed = INDEX.summary.failed_pass;
    const first = failed !== null && failed !== undefined ? PASSES[failed]
      : PASSES.find(p => p.kind !== "wrapper" && p.change && p.change !== "unchanged");
    if (first) select(String(first.seq), false);
  }
}

renderSummary();
renderPasses();
document.getElementById("filter").addEventListener("input", ev => {
  applyFilter(ev.target.value);
  renderDetail();
});
window.addEventListener("hashchange", fromHash);
fromHash();
loadTexts().then(t => {
  TEXTS = t;
  renderDetail();
  document.body.dataset.ready = "1";
}).catch(e => {
  document.getElementById("detail").append(el("p", {class: "error"}, "could not load texts: " + e));
});
</script>
</body></html>
"""
