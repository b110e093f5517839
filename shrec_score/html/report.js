(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("shrec-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  function fmt(n) { return n === null || n === undefined ? "" : (n / D.scale).toFixed(4); }
  function el(tag, txt, cls) { var e = document.createElement(tag); if (txt !== undefined) e.textContent = txt; if (cls) e.className = cls; return e; }
  function cmp(a, b, asc, num) {
    var ea = a === null || a === "" || a === undefined, eb = b === null || b === "" || b === undefined;
    if (ea || eb) return ea === eb ? 0 : ea ? 1 : -1;  /* empty cells last, both ways */
    var r = num ? a - b : (a < b ? -1 : a > b ? 1 : 0);
    return asc ? r : -r;
  }
  function nextAsc(th) {
    var cur = th.getAttribute("aria-sort");
    return cur === "ascending" ? false : cur === "descending" ? true : th.getAttribute("data-first") === "asc";
  }
  function mark(ths, th, asc) {
    for (var i = 0; i < ths.length; i++) ths[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  /* static tables: every header with a button sorts its column */
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      var b = th.querySelector("button");
      if (!b) return;
      b.addEventListener("click", function () {
        var asc = nextAsc(th), num = th.getAttribute("data-kind") === "num", body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (tr, i) {
          var c = tr.cells[col], v = num ? c.getAttribute("data-v") : c.textContent;
          return { tr: tr, i: i, v: num ? (v === "" || v === null ? null : parseFloat(v)) : v };
        });
        rows.sort(function (x, y) { return cmp(x.v, y.v, asc, num) || x.i - y.i; });
        rows.forEach(function (r) { body.appendChild(r.tr); });
        mark(ths, th, asc);
      });
    });
  });
  /* printing: the print sizes (class "printing", as @media print), then every table wider than
     the A4 text width (186 mm = 703 CSS px) shrunk to fit, so that none is cut */
  var A4 = 703;
  function fit() {
    document.documentElement.classList.add("printing");
    Array.prototype.forEach.call(document.querySelectorAll(".scroll > table"), function (t) {
      t.style.zoom = "";
      var need = t.scrollWidth;
      if (need > A4) t.style.zoom = String(Math.floor(A4 / need * 1000) / 1000);
    });
  }
  function unfit() {
    document.documentElement.classList.remove("printing");
    Array.prototype.forEach.call(document.querySelectorAll(".scroll > table"), function (t) { t.style.zoom = ""; });
  }
  window.addEventListener("beforeprint", fit);
  window.addEventListener("afterprint", unfit);
  window.shrecFitTables = fit;
  window.shrecUnfitTables = unfit;
  /* per-query explorer */
  var runSel = $("pq-run"), mSel = $("pq-measure"), cSel = $("pq-class"), qIn = $("pq-filter");
  if (!runSel) return;
  D.runs.forEach(function (r, i) { var o = el("option", r); o.value = i; runSel.appendChild(o); });
  D.measures.forEach(function (m, i) { var o = el("option", D.labels[i]); o.value = i; mSel.appendChild(o); if (m === D.sort) mSel.value = i; });
  if (cSel && D.classes) {
    var seen = {};
    D.classes.forEach(function (c) { if (!seen.hasOwnProperty(c)) { seen[c] = 1; var o = el("option", c); o.value = c; cSel.appendChild(o); } });
  }
  var table = $("pq-table"), ths = table.tHead.rows[0].cells, state = { key: null, asc: true }, selected = null;
  function render() {
    var run = +runSel.value, mi = +mSel.value, vals = D.values[D.measures[mi]][run];
    var cls = cSel ? cSel.value : "", q = qIn.value.toLowerCase(), idx = [];
    for (var i = 0; i < D.queries.length; i++) {
      if (cls && D.classes[i] !== cls) continue;
      if (q && D.queries[i].toLowerCase().indexOf(q) < 0) continue;
      idx.push(i);
    }
    if (state.key) {
      var key = state.key;
      idx.sort(function (a, b) {
        var x = key === "value" ? vals[a] : key === "class" ? D.classes[a] : D.queries[a];
        var y = key === "value" ? vals[b] : key === "class" ? D.classes[b] : D.queries[b];
        return cmp(x, y, state.asc, key === "value") || a - b;
      });
    }
    var body = document.createElement("tbody"), sum = 0, n = 0;
    idx.forEach(function (i) {
      var tr = document.createElement("tr"), td = el("td", undefined, "q"), b = el("button", D.queries[i]);
      b.type = "button"; b.setAttribute("data-q", i); td.appendChild(b); tr.appendChild(td);
      if (D.classes) tr.appendChild(el("td", D.classes[i]));
      tr.appendChild(el("td", fmt(vals[i]), "num"));
      if (i === selected) tr.className = "sel";
      body.appendChild(tr);
      if (vals[i] !== null) { sum += vals[i]; n++; }
    });
    table.replaceChild(body, table.tBodies[0]);
    $("pq-status").textContent = idx.length + " of " + D.queries.length + " queries shown; mean " + D.labels[mi] +
      " of the shown values: " + (n ? (sum / n / D.scale).toFixed(4) : "undefined") + " (" + n + " defined)";
  }
  Array.prototype.forEach.call(ths, function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.getAttribute("data-key"), first = true;
      if (key === "value") { var h = D.higher[+mSel.value]; first = h === false; }
      var asc = state.key === key ? !state.asc : first;
      state = { key: key, asc: asc };
      mark(ths, th, asc);
      render();
    });
  });
  function detail(i) {
    selected = i;
    var box = $("pq-detail"), t = $("pq-detail-table");
    $("pq-detail-h").textContent = "Query " + D.queries[i] + (D.classes ? " (class " + D.classes[i] + ")" : "") + ": every run";
    var head = document.createElement("thead"), hr = document.createElement("tr");
    hr.appendChild(el("th", "run")); hr.cells[0].scope = "col";
    D.labels.forEach(function (l) { var th = el("th", l); th.scope = "col"; hr.appendChild(th); });
    head.appendChild(hr);
    var best = D.measures.map(function (m, mi) {
      var h = D.higher[mi], b = null;
      if (h === null) return null;
      D.runs.forEach(function (r, ri) { var v = D.values[m][ri][i]; if (v !== null && (b === null || (h ? v > b : v < b))) b = v; });
      return b;
    });
    var body = document.createElement("tbody");
    D.runs.forEach(function (r, ri) {
      var tr = document.createElement("tr"), th = el("th", r, "run"); th.scope = "row"; tr.appendChild(th);
      D.measures.forEach(function (m, mi) {
        var v = D.values[m][ri][i], td = el("td", undefined, "num");
        if (v !== null && v === best[mi]) { td.appendChild(el("strong", fmt(v))); td.appendChild(document.createTextNode(" \u2605")); td.className = "num best"; }
        else td.textContent = fmt(v);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.replaceChild(head, t.tHead); t.replaceChild(body, t.tBodies[0]);
    box.hidden = false;
    render();
    box.focus();
  }
  table.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button[data-q]") : null;
    if (b) detail(+b.getAttribute("data-q"));
  });
  [runSel, mSel, cSel].forEach(function (s) { if (s) s.addEventListener("change", render); });
  qIn.addEventListener("input", render);
  render();
})();
