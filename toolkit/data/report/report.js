// Renders the embedded report: header, summary, breakdown chart and a sortable table with
// a bar per row. Everything comes from #report-data; nothing is fetched.
(function () {
  "use strict";
  var payload = JSON.parse(document.getElementById("report-data").textContent);
  var doc = payload.doc, view = payload.view;
  var rows = doc.rows.slice();
  var columns = view.columns || doc.columns;
  var palette = ["#4a7bd0", "#e07b39", "#3a9d5d", "#c94f6d", "#8a63c9", "#b59a2d",
                 "#2a9fb0", "#888888", "#d05ab0", "#6d8f2a"];

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") {
      if (Number.isInteger(v)) return String(v);
      return Math.abs(v) >= 1e6 ? v.toExponential(3) : String(Number(v.toPrecision(4)));
    }
    if (Array.isArray(v)) return v.map(fmt).join("; ");
    if (typeof v === "object") {
      return Object.keys(v).map(function (k) { return k + " " + fmt(v[k]); }).join(", ");
    }
    return String(v);
  }
  function keyValues(id, obj) {
    var table = document.getElementById(id);
    Object.keys(obj || {}).forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("td", {}, k));
      tr.appendChild(el("td", {}, fmt(obj[k])));
      table.appendChild(tr);
    });
  }
  keyValues("header", doc.header);
  keyValues("summary", doc.summary);

  // The end-to-end split (profiles): one stacked bar of its parts, the verdict, warnings.
  (function split() {
    var parts = (doc.summary || {}).split_us;
    if (!parts) return;
    document.getElementById("time").hidden = false;
    var sm = doc.summary;
    document.getElementById("verdict").textContent = "end to end " + fmt(sm.e2e_median_us) +
      " us (" + (sm.clock || "") + "): " + (sm.verdict || "");
    var names = Object.keys(parts);
    var total = names.reduce(function (s, n) { return s + Math.max(0, parts[n]); }, 0) || 1;
    var svg = document.getElementById("split"), legend = document.getElementById("split-legend");
    var x = 0, ns = "http://www.w3.org/2000/svg";
    names.forEach(function (n, i) {
      var w = Math.max(0, parts[n]) / total * 900, color = palette[i % palette.length];
      var rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", x.toFixed(2)); rect.setAttribute("y", "5");
      rect.setAttribute("width", w.toFixed(2)); rect.setAttribute("height", "36");
      rect.setAttribute("fill", color); rect.setAttribute("data-part", n);
      svg.appendChild(rect);
      x += w;
      var li = el("li", {"data-part": n});
      li.appendChild(el("span", {"class": "swatch", "style": "background:" + color}));
      li.appendChild(document.createTextNode(n + " " + fmt(parts[n]) + " us"));
      legend.appendChild(li);
    });
    (doc.summary.warnings || []).forEach(function (w) {
      document.getElementById("warnings").appendChild(el("li", {}, "warning: " + w));
    });
  })();

  // Breakdown: the bar column summed per group, as one stacked horizontal bar.
  (function breakdown() {
    var svg = document.getElementById("breakdown");
    var by = view.breakdown, value = view.bar;
    if (!by || !value) return;
    var sums = {}, order = [];
    rows.forEach(function (r) {
      var g = fmt(r[by]) || "(none)";
      if (!(g in sums)) { sums[g] = 0; order.push(g); }
      sums[g] += Math.max(0, Number(r[value]) || 0);
    });
    order.sort(function (a, b) { return sums[b] - sums[a]; });
    var total = order.reduce(function (s, g) { return s + sums[g]; }, 0) || 1;
    var x = 0, width = 900, ns = "http://www.w3.org/2000/svg";
    var legend = document.getElementById("legend");
    order.forEach(function (g, i) {
      var w = sums[g] / total * width, color = palette[i % palette.length];
      var rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", x.toFixed(2)); rect.setAttribute("y", "10");
      rect.setAttribute("width", w.toFixed(2)); rect.setAttribute("height", "36");
      rect.setAttribute("fill", color); rect.setAttribute("data-group", g);
      var tip = document.createElementNS(ns, "title");
      tip.textContent = g + ": " + (100 * sums[g] / total).toFixed(1) + "%";
      rect.appendChild(tip);
      svg.appendChild(rect);
      x += w;
      var li = el("li", {"data-group": g});
      li.appendChild(el("span", {"class": "swatch", "style": "background:" + color}));
      li.appendChild(document.createTextNode(g + " " + (100 * sums[g] / total).toFixed(1) + "%"));
      legend.appendChild(li);
    });
  })();

  var sortKey = view.sort || null, ascending = false;
  var table = document.getElementById("rows");
  function render() {
    if (sortKey) {
      rows.sort(function (a, b) {
        var x = a[sortKey], y = b[sortKey];
        var c = (typeof x === "number" && typeof y === "number") ? x - y
          : String(fmt(x)).localeCompare(String(fmt(y)));
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return ascending ? c : -c;
      });
    }
    var thead = table.tHead, tbody = table.tBodies[0];
    thead.innerHTML = ""; tbody.innerHTML = "";
    var hr = el("tr");
    // The bar goes right after view.barAfter (else last), where the eye is on the numbers.
    var at = view.bar ? (columns.indexOf(view.barAfter) + 1 || columns.length) : -1;
    var heads = columns.slice();
    if (at >= 0) heads.splice(at, 0, "bar");
    heads.forEach(function (c) {
      var th = el("th", {"data-column": c}, c);
      if (c === sortKey) th.className = "sorted" + (ascending ? " asc" : "");
      if (c !== "bar") th.addEventListener("click", function () {
        ascending = (sortKey === c) ? !ascending : false; sortKey = c; render();
      });
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    var max = 0;
    if (view.bar) rows.forEach(function (r) { max = Math.max(max, Number(r[view.bar]) || 0); });
    rows.forEach(function (r) {
      var tr = el("tr", {"data-name": fmt(r[view.label || columns[0]])});
      if (view.flag && r[view.flag]) tr.className = "flag";
      heads.forEach(function (c, i) {
        if (i !== at) {
          tr.appendChild(el("td", {"class": typeof r[c] === "number" ? "num" : ""}, fmt(r[c])));
          return;
        }
        var td = el("td", {"class": "barcell"});
        var pct = max > 0 ? 100 * (Number(r[view.bar]) || 0) / max : 0;
        var kind = view.barClass ? String(r[view.barClass]) : "";
        td.appendChild(el("div", {"class": "bar " + kind, "style": "width:" + pct.toFixed(2) + "%",
                                  "data-value": String(r[view.bar])}));
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    document.body.setAttribute("data-rendered", String(rows.length));
  }
  render();
})();
