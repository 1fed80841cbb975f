// The benchmark pages' script. It renders and formats; every decision and every interpolated
// value comes from servebench's Go code, compiled to WebAssembly (servebench.wasm), or from the
// runs' own files. It loads nothing from any other host.
(function () {
  "use strict";
  var body = document.body;
  var pageName = body.getAttribute("data-page");
  var root = body.getAttribute("data-root") || "";

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function num(v, digits) {
    if (v === null || v === undefined || isNaN(v)) return "—";
    return Number(v).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function seconds(v) {
    if (v === null || v === undefined) return "—";
    return v < 1 ? num(v * 1000, 0) + " ms" : num(v, 2) + " s";
  }
  function pct(v) { return num(100 * v, 1) + "%"; }
  // runName is how the pages name a run: its label (run.json's metadata.label) where it has one,
  // else its id.
  function runName(run) { return run.label || run.id; }

  // runID is the pattern of a run id, as the server checks it (page's safeID; a test holds the
  // two equal): an id from the URL that does not match is refused, never made into a path, so
  // "../../evil" cannot load a script from elsewhere on the site.
  var runID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
  // runIDs splits the ids of a URL's runs=a,b into those that are run ids and those refused
  // (kept as written when a %-escape does not decode).
  function runIDs(list) {
    var ok = [], bad = [];
    list.split(",").filter(Boolean).forEach(function (raw) {
      var id;
      try { id = decodeURIComponent(raw); } catch (e) { id = null; }
      if (id !== null && runID.test(id)) ok.push(id); else bad.push(id === null ? raw : id);
    });
    return { ok: ok, bad: bad };
  }

  // ---- the list of runs ----------------------------------------------------------------
  function initIndex() {
    var table = $("runs");
    var tbody = table.querySelector("tbody");
    var rows = Array.prototype.slice.call(tbody.querySelectorAll("tr[data-id]"));
    var filter = $("filter"), compare = $("compare"), shown = $("shown");
    function applyFilter() {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean), n = 0;
      rows.forEach(function (r) {
        var text = r.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        r.hidden = !ok;
        if (ok) n++;
      });
      shown.textContent = words.length ? n + " of " + rows.length + " shown" : "";
    }
    filter.addEventListener("input", applyFilter);
    Array.prototype.forEach.call(table.querySelectorAll("th.sortable"), function (th) {
      th.addEventListener("click", function () {
        var key = th.getAttribute("data-key"), isNum = th.getAttribute("data-type") === "num";
        var asc = !th.classList.contains("sorted-asc");
        Array.prototype.forEach.call(table.querySelectorAll("th.sortable"), function (o) { o.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        rows.sort(function (a, b) {
          var x = a.getAttribute("data-" + key), y = b.getAttribute("data-" + key);
          var c = isNum ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
    function picked() {
      return Array.prototype.filter.call(tbody.querySelectorAll("input.pick"), function (c) { return c.checked; })
        .map(function (c) { return c.value; });
    }
    tbody.addEventListener("change", function () {
      var n = picked().length;
      compare.disabled = n < 2;
      compare.textContent = n >= 2 ? "Compare " + n + " runs" : "Compare selected";
    });
    compare.addEventListener("click", function () {
      location.href = "compare.html#runs=" + picked().map(encodeURIComponent).join(",");
    });
  }

  // ---- WebAssembly -----------------------------------------------------------------------
  function loadWasm(done) {
    var box = $("wasm-error");
    function fail(msg) { if (box) { box.hidden = false; box.textContent = "The calculator could not start: " + msg; } }
    if (!window.servebenchWasm || !window.Go) { fail("its script did not load"); return; }
    var bin = atob(window.servebenchWasm), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var go = new window.Go();
    window.servebenchReady = done;
    WebAssembly.instantiate(bytes, go.importObject).then(function (r) { go.run(r.instance); })
      .catch(function (e) { fail(String(e)); });
  }
  function callGo(fn, arg) {
    var out = JSON.parse(window.servebench[fn](JSON.stringify(arg)));
    return out;
  }

  // ---- a run ------------------------------------------------------------------------------
  // vocab holds capacity's vocabulary (servebench.vocabulary: the words of each limit kind,
  // each metric's name and unit, the thresholds a use case can set), once the wasm is loaded.
  var vocab = null;
  var edited = false;
  var outcomes = {}; // use case → the capacity result shown now (the run's, or the what-if's)
  var usersOutcomes = {}; // use case → the users' limit shown now (the run's, or the what-if's)
  var onOutcome = function () {};

  // drawStrip shows each measured level of a capacity result as a box: green passes, red
  // fails (its title names the failing thresholds), the limit outlined.
  function drawStrip(strip, r) {
    strip.textContent = "";
    (r.points || []).forEach(function (p) {
      var box = el("span", { "class": "lvl " + (p.pass ? "pass" : "fail") }, String(p.concurrency));
      if (r.limit !== null && r.limit !== undefined && p.concurrency === r.limit) box.classList.add("limit-at");
      box.title = p.concurrency + " concurrent: " + (p.pass ? "passes" : "fails on " + (p.failing || []).map(function (m) { return vocab.metrics[m] || m; }).join(", "));
      strip.appendChild(box);
    });
  }

  // drawChart plots the deciding metric (the limiting one, else the first threshold) at each
  // measured level, green where the level passes and red where it fails, and its threshold
  // as a dashed line.
  // A point's tooltip names its context as the report does (8K), its value with its 95%
  // interval, its verdict and its cell's validity with the reasons.
  function drawChart(inst, r, cells, ctx) {
    if (!inst) return;
    var byId = {};
    (cells || []).forEach(function (c) {
      // CellKey.ID's form: scenario/load_mode/ctx=N/out=N/c=N[/rate=R][/turn=T]
      var id = c.scenario + "/" + c.load_mode + "/ctx=" + c.context_tokens + "/out=" + c.output_tokens + "/c=" + c.concurrency;
      if (c.rate_per_second > 0) id += "/rate=" + c.rate_per_second;
      if (c.turn > 0) id += "/turn=" + c.turn;
      byId[id] = c;
    });
    var th = r.thresholds || {}, m = r.limiting_metric && vocab.units[r.limiting_metric] ? r.limiting_metric : "", limit = null;
    vocab.fields.forEach(function (f) {
      if (th[f.key] === undefined || th[f.key] === null) return;
      if (!m) m = f.metric;
      if (f.metric === m) limit = th[f.key];
    });
    if (!m) { inst.clear(); return; }
    var data = (r.points || []).filter(function (p) { return p.values && p.values[m] !== undefined; }).map(function (p) {
      return { value: [p.concurrency, p.values[m]], pt: p, itemStyle: { color: p.pass ? "#1a7f37" : "#b42318" } };
    });
    var unit = vocab.units[m], digits = unit === "s" ? 3 : 1;
    function tip(p) {
      var pt = p.data.pt || {}, c = byId[pt.cell_id], iv = pt.ci95 && pt.ci95[m];
      var s = (ctx ? tokensLabel(ctx) + " context, " : "") + pt.concurrency + " concurrent: " + num(p.value[1], digits) + " " + unit;
      s += iv && iv[0] !== null && iv[1] !== null ? " (95% interval " + num(iv[0], digits) + "–" + num(iv[1], digits) + ")" : " (no 95% interval)";
      s += "\n" + (pt.pass ? "passes" : "fails on " + (pt.failing || []).map(function (f) { return vocab.metrics[f] || f; }).join(", ")) + (pt.settled ? ", settled at 95%" : "");
      if (c && c.validity && c.validity.verdict) s += "\ncell " + c.validity.verdict + ((c.validity.reasons || []).length ? ": " + c.validity.reasons.join(", ") : "");
      return s.split("\n").map(function (line) { var d = document.createElement("div"); d.textContent = line; return d.outerHTML; }).join("");
    }
    var name = (vocab.metrics[m] || m) + " (" + unit + ", " + (r.statistic || "mean") + ")";
    inst.setOption({ animation: false, grid: { left: 48, right: 12, top: 28, bottom: 28 },
      tooltip: { trigger: "item", formatter: tip },
      title: { text: name, textStyle: { fontSize: 12, fontWeight: "normal", color: "#5b6475" }, left: 0, top: 0 },
      xAxis: { type: "value", minInterval: 1, name: "concurrency", nameLocation: "middle", nameGap: 20, nameTextStyle: { fontSize: 11 } },
      yAxis: { type: "value", scale: true },
      series: [{ type: "line", data: data, symbolSize: 8, lineStyle: { color: "#8d96a7" },
        markLine: limit === null ? undefined : { symbol: "none", silent: true, lineStyle: { type: "dashed", color: "#b42318" },
          label: { position: "insideEndTop", formatter: "threshold " + limit, fontSize: 10 }, data: [{ yAxis: limit }] } }] }, true);
  }

  function setupWhatIf(doc) {
    doc.results.capacity.forEach(function (cap) {
      var card = document.querySelector('.card[data-usecase="' + CSS.escape(cap.use_case) + '"]');
      if (!card || cap.skipped) return;
      var fields = el("div", { "class": "fields" });
      var stat = el("select", { "class": "stat", "aria-label": cap.title + " statistic" });
      ["mean", "p50", "p90", "p95", "p99"].forEach(function (s) {
        var o = el("option", { value: s }, s);
        if (s === (cap.statistic || "mean")) o.selected = true;
        stat.appendChild(o);
      });
      fields.appendChild(el("label", {}, "Statistic"));
      fields.appendChild(stat);
      var inputs = {};
      vocab.fields.forEach(function (f) {
        var id = "t-" + cap.use_case + "-" + f.key;
        var inp = el("input", { type: "number", step: "any", min: "0", id: id, "class": "threshold", "data-metric": f.key, placeholder: "off", title: "empty: not checked" });
        var v = cap.thresholds[f.key];
        if (v !== undefined && v !== null) inp.value = v;
        inputs[f.key] = inp;
        fields.appendChild(el("label", { "for": id }, f.caption));
        fields.appendChild(inp);
      });
      card.insertBefore(fields, card.querySelector(".limit"));
      var strip = el("div", { "class": "strip", "aria-label": "measured levels: pass or fail" });
      card.insertBefore(strip, card.querySelector(".verdict"));
      drawStrip(strip, cap);
      var chartDiv = el("div", { "class": "chart small-chart" });
      card.insertBefore(chartDiv, card.querySelector(".verdict"));
      var chart = window.echarts ? echarts.init(chartDiv, null, { renderer: "svg" }) : null;
      drawChart(chart, cap, doc.results.cells, cap.context_tokens);
      var reset = el("button", { "class": "plain reset", type: "button" }, "Back to the run's thresholds");
      reset.hidden = true;
      card.appendChild(reset);
      var limit = card.querySelector(".limit"), kind = card.querySelector(".kind"), verdict = card.querySelector(".verdict"), was = card.querySelector(".was");
      var measured = { label: limit.textContent, kind: kind.textContent, verdict: verdict.textContent };
      outcomes[cap.use_case] = cap;
      // the use case's users' limit (a population of users, with the prompt cache), decided
      // again from the measured populations by capacity.ReconsiderUsers
      var users = (doc.results.users || []).filter(function (u) { return u.use_case === cap.use_case; })[0];
      var ub = card.querySelector(".users"), ubox = {};
      if (users && ub) {
        ubox = { limit: ub.querySelector(".users-limit"), kind: ub.querySelector(".users-kind"), verdict: ub.querySelector(".users-verdict"), was: ub.querySelector(".users-was") };
        ubox.measured = { label: ubox.limit.textContent, kind: ubox.kind.textContent, verdict: ubox.verdict.textContent };
        usersOutcomes[cap.use_case] = users;
      }
      function usersRecompute(uc) {
        if (!users || !ub || users.interrupted || users.skipped) return;
        var o = callGo("reconsider_users", { use_case: uc, ceiling: users.ceiling, cells: doc.results.cells });
        if (o.error) { ubox.verdict.textContent = o.error; return; }
        o.profile = users.profile;
        ubox.limit.textContent = o.label;
        ubox.limit.setAttribute("data-limit", o.limit === null || o.limit === undefined ? "" : o.limit);
        ubox.limit.classList.add("changed");
        ubox.kind.textContent = o.kind_words;
        ubox.verdict.textContent = o.verdict;
        ubox.was.textContent = "As the run decided it: " + ubox.measured.label + " users";
        usersOutcomes[cap.use_case] = o;
      }
      function usersReset() {
        if (!users || !ub) return;
        ubox.limit.textContent = ubox.measured.label; ubox.kind.textContent = ubox.measured.kind; ubox.verdict.textContent = ubox.measured.verdict;
        ubox.limit.classList.remove("changed"); ubox.limit.removeAttribute("data-limit");
        ubox.was.textContent = "";
        usersOutcomes[cap.use_case] = users;
      }
      function recompute() {
        edited = true;
        var th = {};
        vocab.fields.forEach(function (f) {
          var v = inputs[f.key].value;
          if (v !== "" && !isNaN(parseFloat(v))) th[f.key] = parseFloat(v);
        });
        var uc = { name: cap.use_case, title: cap.title, context_tokens: cap.context_tokens, output_tokens: cap.output_tokens,
          statistic: stat.value, thresholds: th };
        usersRecompute(uc);
        var out = callGo("reconsider", { use_case: uc, ceiling: cap.ceiling, cells: doc.results.cells, resolution: cap.resolution || 0 });
        if (out.error) { verdict.textContent = out.error; onOutcome(); return; }
        limit.textContent = out.label;
        limit.setAttribute("data-limit", out.limit === null || out.limit === undefined ? "" : out.limit);
        limit.classList.add("changed");
        kind.textContent = out.kind_words;
        verdict.textContent = out.verdict;
        was.textContent = "As the run decided it: " + measured.label;
        reset.hidden = false;
        drawStrip(strip, out);
        drawChart(chart, out, doc.results.cells, cap.context_tokens);
        outcomes[cap.use_case] = out;
        onOutcome();
      }
      reset.addEventListener("click", function () {
        stat.value = cap.statistic || "mean";
        vocab.fields.forEach(function (f) {
          var v = cap.thresholds[f.key];
          inputs[f.key].value = v === undefined || v === null ? "" : v;
        });
        limit.textContent = measured.label; kind.textContent = measured.kind; verdict.textContent = measured.verdict;
        limit.classList.remove("changed"); limit.removeAttribute("data-limit");
        was.textContent = ""; reset.hidden = true;
        drawStrip(strip, cap);
        drawChart(chart, cap, doc.results.cells, cap.context_tokens);
        outcomes[cap.use_case] = cap;
        usersReset();
        onOutcome();
      });
      stat.addEventListener("change", recompute);
      Object.keys(inputs).forEach(function (k) { inputs[k].addEventListener("input", recompute); });
      card.setAttribute("data-ready", "true");
    });
  }

  // show writes a read value and its 95% interval ([low, high], null for an unbounded end).
  function show(id, v, fmt) {
    var box = $(id);
    box.textContent = v ? fmt(v.value) : "—";
    if (v && v.ci95_withheld) {
      box.appendChild(el("div", { "class": "muted small ci" }, "95% interval n<min"));
    } else if (v && v.ci95) {
      var lo = v.ci95[0] === null ? "…" : fmt(v.ci95[0]), hi = v.ci95[1] === null ? "…" : fmt(v.ci95[1]);
      box.appendChild(el("div", { "class": "muted small ci" }, "95% interval " + lo + " – " + hi));
    }
  }

  // steadyLevel: a concurrency level measured in steady state (servebench.CellKey.SteadyLevel):
  // a level of the sweep's grid or of a capacity search, under sustained load, run. The
  // interpolated reading and the comparison's charts across concurrency read these cells.
  function steadyLevel(c) {
    return (c.kind === "sweep" || c.kind === "capacity") && c.load_mode === "sustained" && !c.skipped;
  }

  function setupReader(doc) {
    var cells = doc.results.cells.filter(function (c) { return steadyLevel(c) && c.requests_succeeded > 0; });
    var outSel = $("ip-out"), ctx = $("ip-ctx"), n = $("ip-n"), stat = $("ip-stat"), src = $("ip-source");
    if (!cells.length) { src.textContent = "No sustained cell has been measured yet."; return; }
    var outs = [];
    cells.forEach(function (c) { if (outs.indexOf(c.output_tokens) < 0) outs.push(c.output_tokens); });
    outs.sort(function (a, b) { return a - b; });
    outs.forEach(function (o) { outSel.appendChild(el("option", { value: o }, o)); });
    function ranges() {
      var o = parseInt(outSel.value, 10), cs = cells.filter(function (c) { return c.output_tokens === o; });
      var ctxs = cs.map(function (c) { return c.context_tokens; }), ns = cs.map(function (c) { return c.concurrency; });
      $("ip-ctx-range").textContent = "measured " + Math.min.apply(null, ctxs) + "–" + Math.max.apply(null, ctxs);
      $("ip-n-range").textContent = "measured " + Math.min.apply(null, ns) + "–" + Math.max.apply(null, ns);
      if (!ctx.value) ctx.value = Math.min.apply(null, ctxs);
      if (!n.value) n.value = Math.min.apply(null, ns);
    }
    function read() {
      var out = callGo("interpolate", { cells: doc.results.cells, context_tokens: parseInt(ctx.value, 10), output_tokens: parseInt(outSel.value, 10),
        concurrency: parseInt(n.value, 10), statistic: stat.value });
      var ids = ["ip-ttft", "ip-speed", "ip-tps"];
      if (out.error) {
        ids.forEach(function (i) { $(i).textContent = "—"; });
        src.className = "small error"; src.textContent = out.error;
        return;
      }
      show("ip-ttft", out.ttft_seconds, seconds);
      show("ip-speed", out.generation_speed_tps, function (v) { return num(v, 1) + " tok/s"; });
      show("ip-tps", out.system_output_throughput_tps, function (v) { return num(v, 1) + " tok/s"; });
      src.className = "small";
      src.textContent = "";
      var tag = el("span", { "class": "tag " + (out.measured ? "measured" : "interpolated") }, out.measured ? "measured" : "interpolated");
      src.appendChild(tag);
      src.appendChild(document.createTextNode(out.measured ? " cell " + out.from[0] :
        " between " + out.from.length + " measured cells: " + out.from.join(", ") +
        ". The intervals shown interpolate the neighbours' 95% intervals: an indication, not an interval measured at this point."));
    }
    outSel.addEventListener("change", function () { ctx.value = ""; n.value = ""; ranges(); read(); });
    [ctx, n].forEach(function (i) { i.addEventListener("input", read); });
    stat.addEventListener("change", read);
    ranges();
    read();
  }

  function money(v) { return v === null || v === undefined ? "—" : "$" + num(v, v < 10 ? 2 : 0); }

  // forSizing is the capacity result the planner sizes: the what-if's own, except where its
  // measured levels do not decide the limit but one of them passes (a limit between two levels,
  // "3–5"): the level that passes is then a lower bound, sized as one ("at least"), not left
  // unsized.
  function forSizing(o) {
    if (o.decided !== false || !(o.lo > 0)) return o;
    var c = JSON.parse(JSON.stringify(o));
    c.limit = o.lo; c.limit_kind = "lower_bound"; c.note = "";
    c.bracket = o.hi ? "limit between " + o.lo + " and " + (o.hi - 1) + ": sized at " + o.lo + ", the highest level measured to pass" : "";
    return c;
  }

  function setupPlanner(doc) {
    var box = $("pl-out");
    if (!box) return;
    var caps = doc.results.capacity;
    // a use case searched only in users (no cold-prompt search) is sized too (capacity.Sizable)
    if (!caps.length && !(doc.results.users || []).length) { box.textContent = "No use case was searched, so there is nothing to size."; return; }
    // the run's sizing; results written before they carried one are sized now by the same Go
    // code with the plan's defaults (users per slot, target users: capacity.Size's, not here)
    var s = doc.results.sizing || callGo("size", { capacity: caps, users: doc.results.users || [], plan: {}, declared_gpu: doc.metadata.gpu || "", cells: doc.results.cells });
    var users = $("pl-users"), targets = $("pl-targets"), gpus = $("pl-gpus"), price = $("pl-price");
    users.value = s.users_per_slot;
    targets.value = s.target_users.join(", ");
    if (s.gpus_per_replica_source === "plan") gpus.value = s.gpus_per_replica;
    gpus.placeholder = "auto";
    gpus.title = "empty: from the run's plan or declared GPU (" + (s.gpus_per_replica_source || "default 1") + ")";
    if (s.gpu_usd_per_hour) price.value = s.gpu_usd_per_hour;
    function render() {
      var plan = {
        users_per_slot: parseFloat(users.value) || 0,
        target_users: targets.value.split(/[ ,;]+/).map(function (x) { return parseInt(x, 10); }).filter(function (x) { return x > 0; }),
        gpus_per_replica: parseInt(gpus.value, 10) || 0,
        gpu_usd_per_hour: parseFloat(price.value) || 0
      };
      var list = caps.map(function (c) { return forSizing(outcomes[c.use_case] || c); });
      // the users' limits shown now (the run's, or the what-if's): capacity.Size sizes a use
      // case from its users' limit where one is decided
      var ulist = (doc.results.users || []).map(function (u) { return usersOutcomes[u.use_case] || u; });
      var out = callGo("size", { capacity: list, users: ulist, plan: plan, declared_gpu: doc.metadata.gpu || "", cells: doc.results.cells });
      box.textContent = "";
      if (out.error) { box.appendChild(el("p", { "class": "error" }, out.error)); return; }
      var byUsers = out.use_cases.some(function (u) { return !!u.basis; });
      var t = el("table", { id: "pl-table" }), head = el("tr");
      (byUsers ? ["Use case", "Slots per replica", "Sized from", "Users per replica"] : ["Use case", "Slots per replica", "Users per replica"]).forEach(function (h) { head.appendChild(el("th", {}, h)); });
      out.target_users.forEach(function (u) { head.appendChild(el("th", { "class": "num" }, num(u, 0) + " users")); });
      head.appendChild(el("th", { "class": "num" }, "$ per 1M output tokens"));
      var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
      var tb = el("tbody");
      out.use_cases.forEach(function (u, i) {
        var tr = el("tr", { "data-usecase": u.use_case });
        var name = el("td", {}, u.title);
        if (list[i] && list[i].bracket) name.appendChild(el("div", { "class": "muted small" }, list[i].bracket));
        tr.appendChild(name);
        var from = "";
        if (u.basis === "users") from = "users' limit (" + (u.users_profile ? u.users_profile + " users, " : "") + "prompt cache)";
        else if (u.basis) from = "cold-prompt limit" + (u.users_per_replica === null || u.users_per_replica === undefined ? "" : " × " + num(out.users_per_slot, out.users_per_slot % 1 === 0 ? 0 : 1)) + (u.basis_note ? " (" + u.basis_note + ")" : "");
        if (u.users_per_replica === null || u.users_per_replica === undefined) {
          if (byUsers) {
            tr.appendChild(el("td", { "class": "num" }, u.slots_per_replica === null || u.slots_per_replica === undefined ? "—" : String(u.slots_per_replica)));
            tr.appendChild(el("td", { "class": "from" }, from));
          }
          tr.appendChild(el("td", { colspan: String((byUsers ? 2 : 3) + out.target_users.length), "class": "muted" }, u.note || "Not sized."));
          tb.appendChild(tr);
          return;
        }
        // in the report's words: a lower bound stays one ("8+", "32+ users", "at most 4
        // replicas"), an interpolated limit is approximate ("~")
        var before = u.approximate ? "~" : "", after = u.at_most ? "+" : "";
        if (u.basis === "users") {
          // the cold-prompt limit beside it, marked as its own kind (the run's, or the what-if's)
          var co = list[i] || {}, mark = co.limit_kind === "interpolated" ? ["~", ""] : co.limit_kind === "lower_bound" ? ["", "+"] : ["", ""];
          tr.appendChild(el("td", { "class": "num" }, u.slots_per_replica === null || u.slots_per_replica === undefined ? "—" : mark[0] + u.slots_per_replica + mark[1]));
        } else {
          tr.appendChild(el("td", { "class": "num" }, before + u.slots_per_replica + after));
        }
        if (byUsers) tr.appendChild(el("td", { "class": "from" }, from));
        tr.appendChild(el("td", { "class": "num users-per-replica" }, before + num(u.users_per_replica, 0) + after));
        (u.targets || []).forEach(function (g) {
          var txt = num(g.replicas, 0) + " replica" + (g.replicas > 1 ? "s" : "") + " · " + num(g.gpus, 0) + " GPU" + (g.gpus > 1 ? "s" : "");
          if (g.monthly_usd !== null && g.monthly_usd !== undefined) txt += " · " + money(g.monthly_usd) + "/month";
          tr.appendChild(el("td", { "class": "num" }, (u.at_most ? "at most " : before) + txt));
        });
        tr.appendChild(el("td", { "class": "num" }, money(u.total_usd_per_million_output_tokens)));
        // the limit as its card shows it now (the run's, or the what-if's), in capacity's words
        var card = document.querySelector('.card[data-usecase="' + CSS.escape(u.use_case) + '"]');
        if (card) tr.title = "limit " + card.querySelector(".limit").textContent + " (" + card.querySelector(".kind").textContent + ")";
        tb.appendChild(tr);
      });
      t.appendChild(tb);
      box.appendChild(t);
      box.appendChild(el("p", { "class": "muted small" }, out.gpus_per_replica + " GPU" + (out.gpus_per_replica > 1 ? "s" : "") + " per replica (" +
        out.gpus_per_replica_source + "); " + num(out.users_per_slot, 1) + " users per slot; " + num(out.hours_per_month, 0) + " hours a month." +
        (out.gpu_usd_per_hour ? "" : " Enter a GPU price for costs.")));
    }
    [users, targets, gpus, price].forEach(function (i) { i.addEventListener("input", render); });
    onOutcome = render;
    render();
  }

  // ---- the frontier calculator ------------------------------------------------------------
  // frontierOf asks servebench.frontier (package frontier in WebAssembly) for a run's frontier
  // and its answers at a target speed; gpus and price override the run's own when positive.
  function frontierOf(doc, speed, users, gpus, price) {
    var plan = JSON.parse(JSON.stringify(doc.sizing || {}));
    if (gpus > 0) plan.gpus_per_replica = gpus;
    if (price > 0) plan.gpu_usd_per_hour = price;
    return callGo("frontier", { cells: doc.results.cells, capacity: doc.results.capacity, plan: plan, declared_gpu: doc.metadata.gpu || "",
      target_per_user_tps: speed, users: users });
  }
  // a curve's key and name: its workload, or a use case's population of users
  function curveKey(a) { return a.context_tokens + "/" + a.output_tokens + (a.population ? "/" + a.population : ""); }
  function workloadName(a) {
    if (a.population) return "users of " + a.population + " (" + tokensLabel(a.context_tokens) + " window)";
    return tokensLabel(a.context_tokens) + " in / " + tokensLabel(a.output_tokens) + " out";
  }
  function tokensLabel(n) { return n % 1024 === 0 ? (n / 1024) + "K" : String(n); }
  // how: "measured (32 requests)", "interpolated between 16 and 32 requests", "not reached"
  function howRead(r, pop) {
    var s, unit = pop ? " user" : " request";
    if (r.kind === "measured") s = "measured (" + r.measured.concurrency + unit + (r.measured.concurrency === 1 ? "" : "s") + ")";
    else if (r.kind === "interpolated") s = "interpolated between " + r.above.concurrency + " and " + r.below.concurrency + unit + "s";
    else return "not reached: " + (r.note || "");
    if (r.verdict && r.verdict !== "valid") s += ", " + r.verdict;
    return s;
  }
  function tilde(r, s) { return r.kind === "interpolated" && s !== "—" ? "~" + s : s; }
  // plusMinusOf writes a 95% interval around v as the reports do (report.PlusMinusOrWithheld):
  // " (n<min)" when the Go side withheld it (too few requests behind it: withheld is the
  // document's *_ci95_withheld flag), " ±4%", " (no spread)" for a zero width, " ±<1%" below
  // half a percent, "" when there is none.
  function plusMinusOf(iv, v, withheld) {
    if (withheld) return " (n<min)";
    if (!(iv && v > 0 && iv[0] != null && iv[1] != null)) return "";
    var rel = (iv[1] - iv[0]) / 2 / v;
    if (rel === 0) return " (no spread)";
    if (rel < 0.005) return " ±<1%";
    return " ±" + Math.round(rel * 100) + "%";
  }
  // answerCells are one answer's cells, in the order of answerHeads; each td carries the raw
  // value it shows (data-value) so a reader (or a test) can check it against the report's.
  var answerHeads = ["Output tok/s per GPU", "How", "$ per 1M output", "Output tokens per $", "Tok/s per MW", "GPUs", "$ per month"];
  function answerCells(tr, a) {
    var r = a.reading, out = r.kind !== "out_of_range", cost = (r.economics.costs || [])[0];
    function td(text, raw, cls) {
      var t = el("td", { "class": cls || "num" }, text);
      if (raw !== undefined && raw !== null) t.setAttribute("data-value", String(raw));
      tr.appendChild(t);
    }
    td(out ? tilde(r, num(r.output_tps_per_gpu, 1) + " tok/s" + plusMinusOf(r.output_tps_per_gpu_ci95, r.output_tps_per_gpu, r.output_tps_per_gpu_ci95_withheld)) : "—", out ? r.output_tps_per_gpu : null);
    td(howRead(r, a.population), r.kind, "how");
    td(out && cost ? tilde(r, "$" + num(cost.usd_per_million_output_tokens, 2)) : "—", out && cost ? cost.usd_per_million_output_tokens : null);
    td(out && cost ? tilde(r, num(cost.output_tokens_per_usd, 0)) : "—", out && cost ? cost.output_tokens_per_usd : null);
    td(out && r.economics.output_tps_per_mw ? tilde(r, num(r.economics.output_tps_per_mw, 0)) : "—", out ? r.economics.output_tps_per_mw || null : null);
    var f = a.fleet;
    td(f ? tilde(r, num(f.gpus, 0)) : "—", f ? f.gpus : null);
    td(f && f.monthly_usd ? tilde(r, "$" + num(f.monthly_usd, 0)) : "—", f ? f.monthly_usd || null : null);
  }
  function setupFrontier(doc) {
    var box = $("fr-out");
    if (!box) return;
    var speed = $("fr-speed"), users = $("fr-users"), gpus = $("fr-gpus"), price = $("fr-price");
    function render() {
      var out = frontierOf(doc, parseFloat(speed.value) || 0, parseInt(users.value, 10) || 0, parseInt(gpus.value, 10) || 0, parseFloat(price.value) || 0);
      box.textContent = "";
      if (out.error) { box.appendChild(el("p", { "class": "error" }, out.error)); return; }
      if (!(out.answers || []).length) { box.appendChild(el("p", { "class": "muted" }, "No concurrency level was measured in closed loop, so there is no frontier.")); return; }
      var t = el("table", { id: "fr-table" }), head = el("tr");
      head.appendChild(el("th", {}, "Workload"));
      answerHeads.forEach(function (h) { head.appendChild(el("th", { "class": "num" }, h)); });
      var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
      var tb = el("tbody");
      out.answers.forEach(function (a) {
        var tr = el("tr", { "data-workload": curveKey(a) });
        tr.appendChild(el("td", {}, workloadName(a)));
        answerCells(tr, a);
        tb.appendChild(tr);
      });
      t.appendChild(tb);
      box.appendChild(t);
      $("fr-inputs").textContent = out.inputs;
    }
    [speed, users, gpus, price].forEach(function (i) { i.addEventListener("input", render); });
    render();
  }

  // follow a run in progress: reload its data file, and the page when a cell finished
  function follow(id, doc) {
    if (doc.run.status !== "running" || location.protocol.indexOf("http") !== 0 || !runID.test(id)) return;
    var cells = doc.run.cells;
    window.servebenchLoaded = function (got) {
      var d = window.servebenchRuns[got];
      if (d.run.cells === cells && d.run.status === "running") return;
      if (!edited) { location.reload(); return; }
      var live = $("live");
      if (live) live.textContent = "New results: " + d.run.cells + " cells, status " + d.run.status + ". Reload the page to see them (your edits will be reset).";
    };
    setInterval(function () {
      var s = el("script", { src: root + "data/runs/" + encodeURIComponent(id) + ".js?t=" + Date.now() });
      s.onload = s.onerror = function () { s.remove(); };
      document.body.appendChild(s);
    }, 3000);
  }

  function initRun() {
    var id = body.getAttribute("data-run");
    var doc = window.servebenchRuns && window.servebenchRuns[id];
    if (!doc) { $("wasm-error").hidden = false; $("wasm-error").textContent = "The run's data file did not load."; return; }
    follow(id, doc);
    loadWasm(function () {
      vocab = callGo("vocabulary", {});
      setupWhatIf(doc);
      setupPlanner(doc);
      setupReader(doc);
      setupFrontier(doc);
      body.setAttribute("data-ready", "true");
    });
  }

  // ---- comparison -----------------------------------------------------------------------
  function initCompare() {
    var m = /runs=([^&]*)/.exec(location.hash);
    var got = runIDs(m ? m[1] : ""), ids = got.ok;
    var out = $("cmp");
    if (got.bad.length) {
      out.appendChild(el("p", { "class": "error" }, "Not a run id (a run id is letters, digits, '.', '_' and '-', starting with a letter or digit): " +
        got.bad.join(", ") + ". Pick runs on the list of runs instead."));
    }
    if (!ids.length) return;
    $("cmp-help").textContent = "Comparing " + ids.length + " run" + (ids.length > 1 ? "s" : "") + ".";
    var pending = ids.length, failed = [];
    window.servebenchLoaded = function () {};
    ids.forEach(function (id) {
      var s = el("script", { src: root + "data/runs/" + encodeURIComponent(id) + ".js" });
      s.onload = function () { if (--pending === 0) render(); };
      s.onerror = function () { failed.push(id); if (--pending === 0) render(); };
      document.body.appendChild(s);
    });
    function render() {
      if (failed.length) out.appendChild(el("p", { "class": "error" }, "Not found: " + failed.join(", ")));
      var docs = ids.filter(function (id) { return failed.indexOf(id) < 0; }).map(function (id) { return window.servebenchRuns[id]; });
      if (!docs.length) return;
      var t = el("table", { id: "cmp-table" }), head = el("tr");
      head.appendChild(el("th"));
      docs.forEach(function (d) {
        var th = el("th");
        var a = el("a", { href: root + "runs/" + encodeURIComponent(d.run.id) + "/index.html" }, runName(d.run));
        th.appendChild(a);
        if (d.run.label) th.appendChild(el("div", { "class": "runid" }, d.run.id));
        if (d.run.simulated) { th.appendChild(document.createTextNode(" ")); th.appendChild(el("span", { "class": "badge sim" }, "SIMULATED")); }
        head.appendChild(th);
      });
      var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
      var tb = el("tbody");
      function row(label, f) {
        var tr = el("tr"); tr.appendChild(el("th", {}, label));
        docs.forEach(function (d) { tr.appendChild(el("td", {}, f(d))); });
        tb.appendChild(tr);
      }
      row("Model", function (d) { return d.run.model; });
      row("Hardware", function (d) { return d.run.hardware || "—"; });
      row("Engine", function (d) { return d.run.engine; });
      row("Target", function (d) { return d.run.target; });
      row("Status", function (d) { return d.run.status; });
      row("Started (UTC)", function (d) { return d.run.started_at.replace("T", " ").slice(0, 16); });
      row("Cells", function (d) { return d.run.cells; });
      row("Peak throughput", function (d) {
        var v = d.run.peak_throughput_tps, iv = d.run.peak_throughput_tps_ci95;
        // ± the peak cell's 95% interval, relative, as the reports write it
        return num(v, 1) + " tok/s" + plusMinusOf(iv, v, d.run.peak_throughput_tps_ci95_withheld);
      });
      row("Success rate", function (d) { return pct(d.run.success_rate); });
      var ucs = [];
      docs.forEach(function (d) { d.run.capacity.forEach(function (c) { if (!ucs.some(function (u) { return u.use_case === c.use_case; })) ucs.push(c); }); });
      ucs.forEach(function (u) {
        row("Capacity: " + u.title, function (d) {
          var c = d.run.capacity.filter(function (x) { return x.use_case === u.use_case; })[0];
          if (!c) return "not searched";
          // the levels this run's data cannot tell apart from its limit at 95%, when more than one
          var rg = c.limit_range;
          return c.label + (rg && rg[0] !== rg[1] ? " (" + rg[0] + "–" + rg[1] + " at 95%)" : "");
        });
      });
      t.appendChild(tb);
      var wrap = el("div", { "class": "wide" }); wrap.appendChild(t); out.appendChild(wrap);
      var ready = function () { charts(docs); body.setAttribute("data-ready", "true"); };
      if (!window.servebenchWasm || !window.Go) { ready(); return; } // no calculator: the rest still shows
      loadWasm(function () { frontiers(docs); ready(); });
    }
    // the runs' frontiers overlaid for the workload they share most, and each run's answer at a
    // target speed, from servebench.frontier
    function frontiers(docs) {
      out.appendChild(el("h2", { id: "cmp-frontier" }, "Tokens per GPU at a speed per user"));
      out.appendChild(el("p", { "class": "muted small" }, "Each run's frontier (the measured levels no other level of the run beats on both speed per user and tokens per GPU), and at the speed typed here each run's throughput per GPU, cost and GPUs for that many concurrent users, read by servebench's own code. Between two measured levels a value is interpolated and says so; past the fastest level there is none."));
      var bar = el("div", { "class": "toolbar small" });
      bar.appendChild(el("label", { "for": "cf-speed" }, "Tok/s per user"));
      var speed = el("input", { type: "number", id: "cf-speed", min: "0.1", step: "any", value: "50" }); bar.appendChild(speed);
      bar.appendChild(el("label", { "for": "cf-users" }, "Users"));
      var users = el("input", { type: "number", id: "cf-users", min: "1", step: "1", value: "1000" }); bar.appendChild(users);
      bar.appendChild(el("label", { "for": "cf-workload" }, "Workload"));
      var wsel = el("select", { id: "cf-workload" }); bar.appendChild(wsel);
      out.appendChild(bar);
      var div = el("div", { "class": "chart", id: "cmp-frontier-chart" }); out.appendChild(div);
      var inst = window.echarts ? echarts.init(div, null, { renderer: "svg" }) : null;
      var tbox = el("div", { "class": "wide" }); out.appendChild(tbox);
      var note = el("p", { "class": "muted small", id: "cf-inputs" }); out.appendChild(note);
      var first = docs.map(function (d) { return frontierOf(d, 50, 1000, 0, 0); });
      var counts = {};
      var names = {};
      first.forEach(function (f) { ((f.analysis || {}).workloads || []).forEach(function (w) { var k = curveKey(w); names[k] = workloadName(w); counts[k] = (counts[k] || 0) + 1; }); });
      var keys = Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] || (a.split("/").length - b.split("/").length) || parseInt(a, 10) - parseInt(b, 10); });
      if (!keys.length) { tbox.appendChild(el("p", { "class": "muted" }, "No run measured a concurrency level in closed loop: there is no frontier to compare.")); return; }
      keys.forEach(function (k) { wsel.appendChild(el("option", { value: k }, names[k] + " (" + counts[k] + " of " + docs.length + " runs)")); });
      function render() {
        var sp = parseFloat(speed.value) || 0, n = parseInt(users.value, 10) || 0, k = wsel.value;
        var res = docs.map(function (d) { return frontierOf(d, sp, n, 0, 0); });
        tbox.textContent = "";
        var bad = res.filter(function (r) { return r.error; })[0];
        if (bad) { tbox.appendChild(el("p", { "class": "error" }, bad.error)); return; }
        var t = el("table", { id: "cf-table" }), head = el("tr");
        head.appendChild(el("th", {}, "Run"));
        answerHeads.forEach(function (h) { head.appendChild(el("th", { "class": "num" }, h)); });
        var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
        var tb = el("tbody"), series = [], inputs = [];
        res.forEach(function (r, i) {
          var d = docs[i], label = (d.metadata.label || d.run.hardware || d.run.id);
          var a = (r.answers || []).filter(function (x) { return curveKey(x) === k; })[0];
          var tr = el("tr", { "data-run": d.run.id });
          tr.appendChild(el("td", {}, label));
          if (!a) { tr.appendChild(el("td", { colspan: String(answerHeads.length), "class": "muted" }, "not measured at this workload")); tb.appendChild(tr); return; }
          answerCells(tr, a);
          tb.appendChild(tr);
          inputs.push(label + ": " + r.inputs);
          var w = r.analysis.workloads.filter(function (x) { return curveKey(x) === k; })[0];
          series.push({ name: label, type: "line", symbolSize: 7,
            data: w.points.filter(function (p) { return p.pareto; }).map(function (p) { return [p.per_user_tps, p.output_tps_per_gpu]; }) });
        });
        t.appendChild(tb); tbox.appendChild(t);
        note.textContent = inputs.join(" ");
        if (inst) inst.setOption({ animation: false, tooltip: { trigger: "item" }, legend: { top: 0 },
          grid: { left: 60, right: 20, top: 40, bottom: 40 },
          xAxis: { type: "value", name: "tok/s per user", nameLocation: "middle", nameGap: 26 },
          yAxis: { type: "value", name: "output tok/s per GPU" },
          series: series.concat(sp > 0 ? [{ name: "target", type: "line", data: [], markLine: { silent: true, symbol: "none", data: [{ xAxis: sp }], lineStyle: { type: "dashed", color: "#b42318" }, label: { formatter: sp + " tok/s" } } }] : []) }, true);
      }
      [speed, users].forEach(function (i) { i.addEventListener("input", render); });
      wsel.addEventListener("change", render);
      render();
    }
    function charts(docs) {
      if (!window.echarts) return;
      var keys = [];
      docs.forEach(function (d) {
        d.results.cells.forEach(function (c) {
          if (!steadyLevel(c)) return;
          var k = c.context_tokens + "/" + c.output_tokens;
          if (keys.indexOf(k) < 0) keys.push(k);
        });
      });
      if (!keys.length) return;
      keys.sort(function (a, b) { return parseInt(a, 10) - parseInt(b, 10); });
      // start on the shape most of the runs measured
      var shared = keys.map(function (k) {
        return docs.filter(function (d) {
          return d.results.cells.some(function (c) { return steadyLevel(c) && c.context_tokens + "/" + c.output_tokens === k; });
        }).length;
      });
      var best = keys[shared.indexOf(Math.max.apply(null, shared))];
      out.appendChild(el("h2", {}, "Across concurrency"));
      var bar = el("div", { "class": "toolbar" });
      bar.appendChild(el("label", { "for": "cmp-ctx" }, "Context / output tokens"));
      var sel = el("select", { id: "cmp-ctx" });
      keys.forEach(function (k) { var o = el("option", { value: k }, k); if (k === best) o.selected = true; sel.appendChild(o); });
      bar.appendChild(sel); out.appendChild(bar);
      var specs = [["system_output_throughput_tps", "System output throughput (tok/s)", function (c) { return c.system_output_throughput_tps; }],
        ["ttft", "Mean TTFT (s)", function (c) { return c.ttft_seconds.count ? c.ttft_seconds.mean : null; }],
        ["speed", "Mean per-user speed (tok/s)", function (c) { return c.generation_speed_tps.count ? c.generation_speed_tps.mean : null; }]];
      var insts = specs.map(function (s) {
        out.appendChild(el("h3", {}, s[1]));
        var div = el("div", { "class": "chart", id: "cmp-" + s[0] });
        out.appendChild(div);
        return echarts.init(div, null, { renderer: "svg" });
      });
      function draw() {
        var k = sel.value.split("/"), ctx = parseInt(k[0], 10), o = parseInt(k[1], 10);
        specs.forEach(function (s, i) {
          var series = docs.map(function (d) {
            var pts = d.results.cells.filter(function (c) { return steadyLevel(c) && c.context_tokens === ctx && c.output_tokens === o; })
              .sort(function (a, b) { return a.concurrency - b.concurrency; })
              .map(function (c) { return [c.concurrency, s[2](c)]; });
            return { name: runName(d.run), type: "line", data: pts, symbolSize: 7 };
          });
          insts[i].setOption({ animation: false, tooltip: { trigger: "axis" }, legend: { top: 0 },
            grid: { left: 60, right: 20, top: 40, bottom: 40 },
            xAxis: { type: "value", name: "concurrency", nameLocation: "middle", nameGap: 26 },
            yAxis: { type: "value", scale: true }, series: series }, true);
        });
      }
      sel.addEventListener("change", draw);
      draw();
    }
  }

  if (pageName === "index") initIndex();
  if (pageName === "run") initRun();
  if (pageName === "compare") initCompare();
})();
