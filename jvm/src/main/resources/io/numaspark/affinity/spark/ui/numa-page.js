// numaspark's NUMA page: draws json (beside it) as a table; text only, never markup
(function () {
  var base = location.pathname.replace(/\/?$/, "/");
  var status = document.getElementById("status");
  document.getElementById("json").href = base + "json";
  document.getElementById("back").href = base + "../";

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "?" : String(text);
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  function python(r) {
    if (!r.python_processes) return "–";
    var daemon = r.python_processes > r.python_workers ? " + daemon" : "";
    return r.python_workers + daemon + ", " + r.python_cpu_s.toFixed(1) + " CPU s";
  }
  function row(r, devices) {
    var tr = document.createElement("tr");
    var share = r.local_share;
    cell(tr, r.executor);
    cell(tr, r.host);
    cell(tr, r.nodes);
    cell(tr, r.cpus + " (" + r.cpu_count + ")");
    cell(tr, r.policy);
    cell(tr, share == null ? null : (100 * share).toFixed(1) + " %", share < 0.9 ? "n low" : "n");
    cell(tr, (r.remote_bytes / 1048576).toFixed(1), "n");
    cell(tr, r.pinned_tasks, "n");
    cell(tr, r.task_migrations, "n");
    cell(tr, python(r), "n");
    if (devices) cell(tr, r.devices.join(", ") || "–");
    return tr;
  }
  function draw(doc) {
    var rows = doc.executors || [];
    var devices = rows.some(function (r) { return r.devices && r.devices.length; });
    var body = document.querySelector("#executors tbody");
    document.getElementById("app").textContent = doc.application ? "· " + doc.application : "";
    body.textContent = "";
    rows.forEach(function (r) { body.appendChild(row(r, devices)); });
    document.querySelectorAll(".dev").forEach(function (th) {
      th.style.display = devices ? "" : "none";
    });
    var where = doc.source === "live" ? "live, read every 5 s" : "from the event log";
    status.textContent = rows.length
      ? rows.length + " JVM(s), " + where + ", as of " + new Date(doc.time_ms).toLocaleTimeString()
      : "no placement report yet (" + where + ")";
  }
  function load() {
    fetch(base + "json", { cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(function (doc) {
        draw(doc);
        if (doc.source === "live") setTimeout(load, 5000);
      })
      .catch(function (e) {
        status.textContent = "cannot read " + base + "json: " + e.message;
        setTimeout(load, 10000);
      });
  }
  load();
})();
