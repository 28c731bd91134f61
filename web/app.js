// The script of vramfit's local page (index.html): fills the GPU and model lists from
// /api/gpus and /api/models, and on every change asks /api/<command>?format=html for the
// report, shown in the frame, with the verdict from the report's embedded JSON above it.
(function () {
  "use strict";
  const form = document.getElementById("form");
  const status = document.getElementById("status");
  const frame = document.getElementById("report");
  const command = document.getElementById("command");
  let timer = null;
  let generation = 0;

  function setStatus(text, state) {
    status.textContent = text;
    status.dataset.state = state;
    status.className = "verdict " + (state === "fits" ? "fits" : state === "idle" ? "" : "fails");
  }

  function params() {
    const p = new URLSearchParams();
    const cmd = command.value;
    const fields = ["model", "gpu"];
    if (cmd === "plan" || cmd === "fit") {
      fields.push("tensor-parallel-size", "max-model-len", "gpu-memory-utilization",
                  "kv-cache-dtype", "engine");
    }
    if (cmd === "inspect") fields.splice(1);
    for (const name of fields) {
      const el = form.elements[name];
      let v = el.value.trim();
      if (name === "tensor-parallel-size" && v === "1") v = "";
      if (name === "kv-cache-dtype" && v === "auto") v = "";
      if (name === "max-model-len" && v === "auto") v = "-1";
      if (v !== "") p.set(name, v);
    }
    if ((cmd === "plan" || cmd === "fit") && form.elements["enforce-eager"].checked) {
      p.set("enforce-eager", "1");
    }
    if (cmd === "fit") {
      const tp = form.elements["tensor-parallel-size"].value.trim();
      p.delete("tensor-parallel-size");
      p.delete("max-model-len");
      if (tp !== "" && tp !== "1") p.set("gpus", tp);
    }
    p.set("format", "html");
    return p;
  }

  function summary(json) {
    switch (json.schema) {
      case "vramfit.plan/1":
        return json.fits
            ? [`fits: ${json.kv_cache_tokens} tokens of KV cache, ` +
               `${json.max_concurrency.toFixed(2)} requests of ${json.max_model_len} at once`,
               "fits"]
            : [`fails at ${json.failure_stage}`, "fails"];
      case "vramfit.fit/1":
        return json.met ? [`best: ${json.best.command}`, "fits"] : [json.unmet, "fails"];
      case "vramfit.inspect/1":
        return [`${json.parameters} parameters, ${json.total_bytes} bytes`, "fits"];
      case "vramfit.doctor/1":
        if (json.found) return [`${json.cause} at ${json.stage}`, "fails"];
        return [json.engine ? `no failure recognised (${json.engine})` : "nothing recognised",
                "fails"];
    }
    return ["", "idle"];
  }

  async function update() {
    const mine = ++generation;
    const cmd = command.value;
    setStatus("…", "busy");
    let res;
    try {
      if (cmd === "doctor") {
        const file = document.getElementById("log").files[0];
        if (!file) { setStatus("choose a log file", "idle"); return; }
        const p = params();
        p.delete("tensor-parallel-size");
        res = await fetch("/api/doctor?" + p, { method: "POST", body: await file.text() });
      } else {
        res = await fetch(`/api/${cmd}?` + params());
      }
    } catch (e) {
      if (mine === generation) setStatus("the server did not answer: " + e, "error");
      return;
    }
    const text = await res.text();
    if (mine !== generation) return;  // a newer request is on its way
    const type = res.headers.get("Content-Type") || "";
    if (!type.startsWith("text/html")) {
      let message = text;
      try { message = JSON.parse(text).error; } catch (e) { /* the text as it came */ }
      setStatus(message, "error");
      return;
    }
    frame.srcdoc = text;
    const doc = new DOMParser().parseFromString(text, "text/html");
    const data = doc.getElementById("vramfit-json");
    const [line, state] = data ? summary(JSON.parse(data.textContent)) : ["", "idle"];
    setStatus(line, state);
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(update, 250);
  }

  form.addEventListener("input", later);
  form.addEventListener("change", later);
  form.addEventListener("submit", (e) => { e.preventDefault(); update(); });

  async function lists() {
    try {
      const gpus = await (await fetch("/api/gpus")).json();
      const select = document.getElementById("gpu");
      select.textContent = "";
      for (const g of gpus.gpus) {
        const o = document.createElement("option");
        o.value = g.id;
        o.textContent = g.name;
        if (g.id === "rtx-4090") o.selected = true;
        select.appendChild(o);
      }
      const models = await (await fetch("/api/models")).json();
      const list = document.getElementById("models");
      for (const m of models.models) {
        const o = document.createElement("option");
        o.value = m.id;
        list.appendChild(o);
      }
    } catch (e) { /* the lists are a convenience: typing still works */ }
  }
  lists().then(update);
})();
