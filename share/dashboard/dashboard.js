/* gpukit's dashboard: every GPU's live state, a chart of its recent
 * utilization, memory, power and temperature, and the process, lease and
 * waiting tables. Drawn from the `gpukit ls --json` document that `gpukit
 * serve` streams at /api/v1/events (and gpukit.monitor() passes in a
 * notebook). Plain DOM and SVG, no library; text from the machine (command
 * lines, names) only ever goes through textContent. */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var KEEP = 300; /* points per GPU chart */

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function known(value) { return value !== null && value !== undefined; }
  function shown(value, unit) { return known(value) ? value + (unit || "") : "N/A"; }

  function percent(part, whole) {
    return known(part) && known(whole) && whole > 0 ? Math.min(100, 100 * part / whole) : null;
  }

  /* A meter row: label, bar, value text. */
  function meter(label, kind, fraction, text) {
    var row = el("div", "meter");
    row.appendChild(el("span", "label", label));
    var bar = el("div", "bar");
    var fill = el("span", kind);
    fill.style.width = (known(fraction) ? fraction : 0).toFixed(1) + "%";
    bar.appendChild(fill);
    row.appendChild(bar);
    row.appendChild(el("span", "value", text));
    return row;
  }

  var SERIES = ["util", "memory", "power", "temperature"];

  /* An SVG chart of a GPU's history: each series as a polyline, 0..100 %
   * (temperature in degrees C on the same scale). */
  function chart(gpuIndex, points) {
    var width = 300, height = 70;
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "chart");
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("data-gpu", String(gpuIndex));
    svg.setAttribute("data-points", String(points.length));
    [25, 50, 75].forEach(function (level) {
      var line = document.createElementNS(SVG, "line");
      line.setAttribute("class", "grid");
      line.setAttribute("x1", "0");
      line.setAttribute("x2", String(width));
      line.setAttribute("y1", String(height - height * level / 100));
      line.setAttribute("y2", String(height - height * level / 100));
      svg.appendChild(line);
    });
    SERIES.forEach(function (name, s) {
      var coordinates = [];
      points.forEach(function (point, i) {
        var value = point[s];
        if (!known(value)) return;
        /* the newest point at the right edge, older ones scrolling left */
        var x = width - width * (points.length - 1 - i) / (KEEP - 1);
        var y = height - height * Math.max(0, Math.min(100, value)) / 100;
        coordinates.push(x.toFixed(1) + "," + y.toFixed(1));
      });
      if (!coordinates.length) return;
      var line = document.createElementNS(SVG, "polyline");
      line.setAttribute("class", name);
      line.setAttribute("points", coordinates.join(" "));
      svg.appendChild(line);
    });
    return svg;
  }

  function legend() {
    var box = el("div", "legend");
    [["util", "utilization"], ["memory", "memory"], ["power", "power"],
     ["temperature", "temperature \u00b0C"]].forEach(function (pair) {
      box.appendChild(el("i", pair[0]));
      box.appendChild(document.createTextNode(pair[1]));
    });
    return box;
  }

  /* One history point (all 0..100) from a GPU of the document. */
  function pointOf(gpu) {
    var mw = gpu["power.draw.mw"], limit = gpu["enforced.power.limit"];
    return [
      gpu["utilization.gpu"],
      percent(gpu["memory.used"], gpu["memory.total"]),
      known(mw) && known(limit) ? percent(mw / 1000, limit) : null,
      gpu["temperature.gpu"],
    ];
  }

  function gpuCard(gpu, points) {
    var faulty = gpu.state !== "ok";
    var card = el("section", "gpu" + (faulty ? " faulty" : ""));
    card.setAttribute("data-index", String(gpu.index));
    card.setAttribute("data-uuid", gpu.uuid || "");
    card.appendChild(el("div", "title", "GPU " + gpu.index + "  " + (gpu.name || "(unknown)")));
    card.appendChild(el("div", "sub", [gpu["pci.bus_id"], gpu.uuid].filter(known).join("  ")));
    if (faulty) {
      card.appendChild(el("div", "error", gpu.state + ": " + (gpu.error || "")));
      return card;
    }
    card.appendChild(meter("util", "util", gpu["utilization.gpu"],
                           shown(gpu["utilization.gpu"], " %")));
    card.appendChild(meter("memory", "memory", percent(gpu["memory.used"], gpu["memory.total"]),
                           shown(gpu["memory.used"]) + " / " + shown(gpu["memory.total"], " MiB")));
    var mw = gpu["power.draw.mw"];
    card.appendChild(meter("power", "power",
                           known(mw) ? percent(mw / 1000, gpu["enforced.power.limit"]) : null,
                           (known(mw) ? (mw / 1000).toFixed(0) : "N/A") + " / " +
                           shown(gpu["enforced.power.limit"], " W")));
    card.appendChild(meter("temp", "temperature", gpu["temperature.gpu"],
                           shown(gpu["temperature.gpu"], " \u00b0C") +
                           "  fan " + shown(gpu["fan.speed"], " %")));
    card.appendChild(el("div", "sub", "enc " + shown(gpu["utilization.enc"], " %") +
                        "  dec " + shown(gpu["utilization.dec"], " %") +
                        "  SM " + shown(gpu["clocks.sm"], " MHz")));
    (gpu.mig_devices || []).forEach(function (mig) {
      card.appendChild(meter("MIG " + mig.index, "memory",
                             percent(mig["memory.used"], mig["memory.total"]),
                             (mig.name || "") + " " + shown(mig["memory.used"]) + "/" +
                             shown(mig["memory.total"], " MiB")));
    });
    card.appendChild(chart(gpu.index, points));
    card.appendChild(legend());
    return card;
  }

  function table(className, headers, rows, emptyText) {
    if (!rows.length) return el("p", "empty " + className, emptyText);
    var t = el("table", className);
    var head = el("tr");
    headers.forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    rows.forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (cell) { tr.appendChild(el("td", cell[1] || null, cell[0])); });
      t.appendChild(tr);
    });
    return t;
  }

  function commandOf(process) {
    var args = process.full_command;
    return args && args.length ? args.join(" ") : (process.command || "?");
  }

  function processRows(doc) {
    var rows = [];
    (doc.gpus || []).forEach(function (gpu) {
      (gpu.processes || []).forEach(function (p) {
        var kernel = p.jupyter_kernel || p.jupyter_kernel_id || "";
        if (p.notebook) kernel += (kernel ? " " : "") + p.notebook;
        rows.push([[gpu.index, "num"], [p.pid, "num"], [p.username || "?"],
                   [shown(p.gpu_memory_usage, " MiB"), "num"],
                   [known(p.cpu_percent) ? p.cpu_percent.toFixed(1) + " %" : "N/A", "num"],
                   [p.lease || ""], [kernel], [commandOf(p), "command"]]);
      });
    });
    return rows;
  }

  function devicesOf(lease) {
    return (lease.devices || []).map(function (d) { return d.index; }).join(",");
  }

  function waitedFor(lease, now) {
    var seconds = Math.max(0, now - lease.since_epoch);
    if (seconds < 120) return seconds.toFixed(0) + " s";
    if (seconds < 7200) return (seconds / 60).toFixed(0) + " min";
    return (seconds / 3600).toFixed(1) + " h";
  }

  function Dashboard(root) {
    this.root = root;
    this.history = {}; /* uuid or index -> points */
    this.last = null;
  }

  Dashboard.prototype.key = function (gpu) { return gpu.uuid || "gpu" + gpu.index; };

  /* Fills the charts from /api/v1/history (points: [t, util, used, total,
   * power W, temp], memory in bytes) before the first document. */
  Dashboard.prototype.prefill = function (history, doc) {
    var self = this;
    (history.gpus || []).forEach(function (entry) {
      var gpu = (doc.gpus || []).filter(function (g) { return g.index === entry.index; })[0];
      if (!gpu) return;
      var limit = gpu["enforced.power.limit"];
      self.history[self.key(gpu)] = entry.points.slice(-KEEP).map(function (p) {
        return [p[1], percent(p[2], p[3]), known(p[4]) ? percent(p[4], limit) : null, p[5]];
      });
    });
  };

  Dashboard.prototype.update = function (doc, addPoint) {
    var self = this;
    this.last = doc;
    (doc.gpus || []).forEach(function (gpu) {
      var points = self.history[self.key(gpu)] || (self.history[self.key(gpu)] = []);
      if (addPoint !== false) points.push(pointOf(gpu));
      if (points.length > KEEP) points.splice(0, points.length - KEEP);
    });
    this.render(doc);
  };

  Dashboard.prototype.render = function (doc) {
    var self = this, root = this.root;
    while (root.firstChild) root.removeChild(root.firstChild);
    root.appendChild(el("h1", null, "gpukit \u2014 " + (doc.hostname || "")));
    var summary = (doc.gpus || []).length + " GPU(s), driver " + (doc.driver_version || "N/A") +
                  ", CUDA " + (doc.cuda_driver_version || "N/A") + ", read " +
                  (doc.query_time || "").replace("T", " ").replace(/\.\d+$/, "");
    root.appendChild(el("div", "summary", summary));
    if (doc.diagnosis) root.appendChild(el("div", "problem diagnosis", doc.diagnosis));
    if (this.problem) root.appendChild(el("div", "problem connection", this.problem));
    var grid = el("div", "gpus");
    (doc.gpus || []).forEach(function (gpu) {
      grid.appendChild(gpuCard(gpu, self.history[self.key(gpu)] || []));
    });
    root.appendChild(grid);

    root.appendChild(el("h2", null, "Processes"));
    root.appendChild(table("processes", ["GPU", "PID", "USER", "GPU MEMORY", "CPU", "LEASE",
                                         "JUPYTER", "COMMAND"],
                           processRows(doc), "No process uses a GPU."));

    var now = Date.now() / 1000;
    root.appendChild(el("h2", null, "Leases"));
    root.appendChild(table("leases", ["GPU", "PID", "USER", "SINCE", "MODE", "COMMAND"],
                           (doc.leases || []).map(function (l) {
                             return [[devicesOf(l)], [l.pid, "num"], [l.user], [l.since],
                                     [l.share ? "shared" : "exclusive"], [l.command, "command"]];
                           }), "No GPU is reserved."));
    root.appendChild(el("h2", null, "Waiting"));
    root.appendChild(table("waiting", ["#", "PID", "USER", "SINCE", "WAITED", "REQUEST", "COMMAND"],
                           (doc.waiting || []).map(function (l, i) {
                             return [[i + 1, "num"], [l.pid, "num"], [l.user], [l.since],
                                     [waitedFor(l, now), "num"], [l.request || ""],
                                     [l.command, "command"]];
                           }), "Nobody waits for a GPU."));
    if (doc.lease_problem) root.appendChild(el("div", "problem", doc.lease_problem));
    root.setAttribute("data-reading", String(doc.reading ? doc.reading.number : 0));
  };

  /* Live: the history, the document, then server-sent events; polling the
   * document when the event stream cannot be used. */
  Dashboard.prototype.connect = function (base) {
    var self = this, interval = 1000;
    function get(path) {
      return fetch(base + path, { cache: "no-store" }).then(function (r) {
        if (!r.ok) throw new Error(path + ": HTTP " + r.status);
        return r.json();
      });
    }
    function poll() {
      get("gpus").then(function (doc) { self.problem = null; self.update(doc); },
                       function (e) { self.problem = "cannot reach gpukit serve: " + e.message;
                                      if (self.last) self.render(self.last); })
        .then(function () { setTimeout(poll, interval); });
    }
    Promise.all([get("history"), get("gpus")]).then(function (both) {
      interval = Math.max(250, 1000 * (both[0].interval || 1));
      self.prefill(both[0], both[1]);
      self.update(both[1], false);
      if (!window.EventSource) return poll();
      var stream = new EventSource(base + "events"), failures = 0;
      stream.addEventListener("sample", function (event) {
        failures = 0;
        self.problem = null;
        self.update(JSON.parse(event.data));
      });
      stream.onerror = function () {
        /* EventSource reconnects by itself; after a few failures in a row
         * fall back to polling, which also shows the problem. */
        if (++failures >= 3) { stream.close(); poll(); }
      };
    }, function (e) {
      self.root.textContent = "cannot reach gpukit serve: " + e.message;
      setTimeout(function () { self.connect(base); }, interval);
    });
  };

  window.GpukitDashboard = Dashboard;

  var root = document.getElementById("gpukit-dashboard");
  if (root && root.getAttribute("data-live")) new Dashboard(root).connect(root.getAttribute("data-live"));
})();
