// Loads every *.html report in a folder from file:// in headless Chromium and checks that each
// drawn bar (an SVG element with data-key) is the JSON number it names and is drawn at that
// number's length on screen, to the pixel's rounding; takes a light and a dark screenshot of
// each. Prints "N passed, M failed" and exits 1 on any failure.
// Usage: node reports.mjs DIR   (CHROMIUM: the browser binary)
import { chromium } from "playwright-core";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dir = resolve(process.argv[2]);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; } else { failed++; console.log(`FAIL ${what}`); }
}

// Runs in the page: every bar against the embedded JSON, in CSS pixels as drawn.
function measure() {
  const json = JSON.parse(document.getElementById("vramfit-json").textContent);
  const resolveKey = (key) => key.split(".").reduce((v, k) => (v == null ? v : v[k]), json);
  const out = [];
  for (const svg of document.querySelectorAll("svg.chart[data-bytes-per-unit]")) {
    const perUnit = Number(svg.dataset.bytesPerUnit);
    const horizontal = svg.classList.contains("hbars");
    const box = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const scale = horizontal ? box.width / vb.width : box.height / vb.height;
    for (const el of svg.querySelectorAll("rect[data-key]")) {
      const value = resolveKey(el.dataset.key);
      const r = el.getBoundingClientRect();
      out.push({
        key: el.dataset.key, json: value, bytes: Number(el.dataset.bytes),
        drawn: horizontal ? r.width : r.height,
        expected: (Number(el.dataset.bytes) / perUnit) * scale,
      });
    }
  }
  const points = [];
  for (const svg of document.querySelectorAll("svg.fit-curve")) {
    const d = svg.dataset;
    const vb = svg.viewBox.baseVal, box = svg.getBoundingClientRect();
    const sx = box.width / vb.width, sy = box.height / vb.height;
    for (const c of svg.querySelectorAll("circle[data-key]")) {
      const o = resolveKey(c.dataset.key);
      const r = c.getBoundingClientRect();
      points.push({
        key: c.dataset.key,
        cx: r.x + r.width / 2 - box.x, cy: r.y + r.height / 2 - box.y,
        ex: (Number(d.x0) + (Math.log2(o.max_model_len) - Number(d.log2Min)) *
             Number(d.unitsPerLog2)) * sx,
        ey: (Number(d.y0) - o.max_concurrency / Number(d.concurrencyPerUnit)) * sy,
      });
    }
  }
  return { bars: out, points, title: document.title };
}

const files = readdirSync(dir).filter((f) => f.endsWith(".html")).sort();
check(files.length >= 6, `six report kinds written (found ${files.length})`);
for (const file of files) {
  for (const scheme of ["light", "dark"]) {
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    const requests = [];
    page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(pathToFileURL(join(dir, file)).href);
    const m = await page.evaluate(measure);
    check(requests.length === 0, `${file}: no network requests (${requests.join(" ")})`);
    check(errors.length === 0, `${file}: no script errors (${errors.join(" ")})`);
    check(m.bars.length > 0 || m.points.length > 0, `${file}: something drawn`);
    for (const b of m.bars) {
      check(typeof b.json === "number" && Math.floor(b.json) === b.bytes,
            `${file} ${b.key}: data-bytes ${b.bytes} is the JSON's ${b.json}`);
      check(Math.abs(b.drawn - b.expected) <= 1,
            `${file} ${b.key}: drawn ${b.drawn.toFixed(2)} px, JSON says ${b.expected.toFixed(2)}`);
    }
    for (const p of m.points) {
      check(Math.abs(p.cx - p.ex) <= 1 && Math.abs(p.cy - p.ey) <= 1,
            `${file} ${p.key}: point at (${p.cx.toFixed(1)}, ${p.cy.toFixed(1)}), JSON says ` +
            `(${p.ex.toFixed(1)}, ${p.ey.toFixed(1)})`);
    }
    await page.screenshot({ path: join(dir, file.replace(/\.html$/, `-${scheme}.png`)),
                            fullPage: false });
    await page.close();
  }
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
