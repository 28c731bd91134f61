// The page of `vramfit serve` in headless Chromium: starts the server on a free port, loads the
// page, types a context length into it and checks that the plan changes (262144 tokens fail at
// the KV cache on a 4090, 32768 fit), and that the report in the page draws the bars of the
// JSON it embeds. Prints "N passed, M failed"; exits 1 on any failure.
// Usage: node page.mjs VRAMFIT OUT_DIR   (CHROMIUM: the browser binary)
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";
import { join } from "node:path";

const [vramfit, out] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; } else { failed++; console.log(`FAIL ${what}`); }
}

const server = spawn(vramfit, ["serve", "--port", "0"], { stdio: ["ignore", "ignore", "pipe"] });
const url = await new Promise((resolve, reject) => {
  let text = "";
  server.stderr.on("data", (d) => {
    text += d;
    const m = text.match(/(http:\/\/127\.0\.0\.1:\d+\/)/);
    if (m) resolve(m[1]);
  });
  server.on("exit", (code) => reject(new Error(`vramfit serve exited ${code}: ${text}`)));
  setTimeout(() => reject(new Error("vramfit serve printed no address in 20 s")), 20000);
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.locator("#model").fill("qwen3-4b-instruct-2507-awq");
  await page.locator("#max-model-len").fill("262144");
  await page.waitForFunction(() => /fails at kv_cache/.test(
      document.getElementById("status").textContent), null, { timeout: 30000 });
  check(true, "262144 tokens: fails at kv_cache");
  await page.locator("#max-model-len").fill("32768");
  // The status line read in the same evaluation as its state, and for 32768 itself: a request
  // for an earlier value, or the next one starting ("…"), is not the answer checked (a loaded
  // machine showed both).
  const fits = await (await page.waitForFunction(() => {
    const s = document.getElementById("status");
    return s.dataset.state === "fits" && / of 32768 at once/.test(s.textContent)
        ? s.textContent : false;
  }, null, { timeout: 30000 }).catch(() => null))?.jsonValue();
  check(typeof fits === "string" && /^fits/.test(fits), "32768 tokens: fits");
  // The report frame loads after the status line: wait for its first bar (30 s at most).
  const frame = page.frameLocator("#report");
  await frame.locator("svg.chart rect[data-key]").first()
      .waitFor({ timeout: 30000 }).catch(() => {});
  const drawn = await frame.locator("svg.chart rect[data-key]").count();
  check(drawn > 0, `the report in the page draws bars (${drawn})`);
  // The frame may still be replaced by the report of the last value typed (a loaded machine
  // answers the requests late): an evaluation the navigation cut is read again on the new page.
  const evaluateSettled = async (fn) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await frame.locator("svg.chart rect[data-key]").first().waitFor({ timeout: 30000 });
        return await frame.locator("body").evaluate(fn);
      } catch (e) {
        if (attempt >= 2 || !/context was destroyed|navigat/.test(String(e))) throw e;
      }
    }
  };
  const agree = await evaluateSettled(() => {
    const json = JSON.parse(document.getElementById("vramfit-json").textContent);
    let bad = 0;
    for (const svg of document.querySelectorAll("svg.chart[data-bytes-per-unit]")) {
      const k = svg.getBoundingClientRect().height / svg.viewBox.baseVal.height;
      for (const el of svg.querySelectorAll("rect[data-key]")) {
        const v = el.dataset.key.split(".").reduce((o, p) => o[p], json);
        const h = el.getBoundingClientRect().height;
        if (Math.floor(v) !== Number(el.dataset.bytes) ||
            Math.abs(h - (v / Number(svg.dataset.bytesPerUnit)) * k) > 1) bad++;
      }
    }
    return bad;
  });
  check(agree === 0, `the page's bars agree with its JSON (${agree} disagree)`);
  await page.screenshot({ path: join(out, "serve-page.png") });
  await page.locator("#command").selectOption("inspect");
  await page.waitForFunction(() => /parameters/.test(
      document.getElementById("status").textContent), null, { timeout: 30000 });
  check(true, "inspect from the page");
  check(errors.length === 0, `no script errors (${errors.join(" ")})`);
} catch (e) {
  check(false, String(e));
} finally {
  await browser.close();
  server.kill();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
