// coroner's HTML report. Loaded by every page as the only script (the pages' policy forbids any
// other). It never evaluates page data as code: the search index is parsed with JSON.parse and
// written with textContent; the only links it makes are the index's own page paths, checked.
"use strict";

(function () {
  function byId(id) { return document.getElementById(id); }

  // Trajectory pages: evidence filter, fold controls, jump to the next evidence step.
  var only = byId("only-evidence");
  if (only) {
    only.addEventListener("click", function () {
      var on = document.body.classList.toggle("only-evidence");
      only.textContent = on ? "all steps" : "evidence steps only";
    });
    byId("expand-all").addEventListener("click", function () {
      document.querySelectorAll("#steps details").forEach(function (d) { d.open = true; });
    });
    byId("collapse-all").addEventListener("click", function () {
      document.querySelectorAll("#steps details").forEach(function (d) { d.open = false; });
    });
    byId("next-evidence").addEventListener("click", function () {
      var steps = document.querySelectorAll("article.step.evidence");
      var current = location.hash ? document.querySelector(location.hash) : null;
      var next = null;
      for (var i = 0; i < steps.length; i++) {
        if (!current || (current.compareDocumentPosition(steps[i]) & Node.DOCUMENT_POSITION_FOLLOWING)) { next = steps[i]; break; }
      }
      if (!next && steps.length) { next = steps[0]; }
      if (next) { location.hash = "#" + next.id; }
    });
  }

  // The search page.
  var data = byId("search-index");
  var q = byId("q");
  if (data && q) {
    var index = JSON.parse(data.textContent);
    var tbody = document.querySelector("#results tbody");
    var count = byId("count");
    var safeHref = /^t\/[a-z0-9-]+\.html$/;
    var LIMIT = 500;
    var fields = { task: 1, arm: 2, "class": 4, flag: 5 };
    function matches(e, term) {
      var colon = term.indexOf(":");
      if (colon > 0 && fields[term.slice(0, colon)] !== undefined) {
        return String(e[fields[term.slice(0, colon)]]).toLowerCase().indexOf(term.slice(colon + 1)) >= 0;
      }
      if (String(e[1]).toLowerCase().indexOf(term) >= 0) { return true; }
      if (String(e[2]).toLowerCase().indexOf(term) >= 0) { return true; }
      if (String(e[4]).toLowerCase().indexOf(term) >= 0) { return true; }
      if (String(e[5]).toLowerCase().indexOf(term) >= 0) { return true; }
      return (" " + e[6]).indexOf(" " + term) >= 0;
    }
    function cell(tr, text, cls) {
      var td = document.createElement("td");
      td.textContent = text;
      if (cls) { td.className = cls; }
      tr.appendChild(td);
      return td;
    }
    function run() {
      var terms = q.value.toLowerCase().split(/\s+/).filter(function (t) { return t.length > 0; });
      tbody.textContent = "";
      if (!terms.length) { count.textContent = index.length + " trajectories indexed"; return; }
      var found = 0;
      var frag = document.createDocumentFragment();
      for (var i = 0; i < index.length; i++) {
        var e = index[i];
        if (!terms.every(function (t) { return matches(e, t); })) { continue; }
        found++;
        if (found > LIMIT) { continue; }
        var tr = document.createElement("tr");
        var td = cell(tr, "");
        if (safeHref.test(e[0])) {
          var a = document.createElement("a");
          a.setAttribute("href", e[0]);
          a.textContent = e[1];
          td.appendChild(a);
        } else {
          td.textContent = e[1];
        }
        cell(tr, e[2]);
        cell(tr, String(e[3]), "num");
        cell(tr, e[4]);
        cell(tr, e[5]);
        frag.appendChild(tr);
      }
      tbody.appendChild(frag);
      count.textContent = found + " found" + (found > LIMIT ? ", first " + LIMIT + " shown" : "");
    }
    q.addEventListener("input", run);
    var params = new URLSearchParams(location.search);
    if (params.get("q")) { q.value = params.get("q"); }
    run();
  }
})();
