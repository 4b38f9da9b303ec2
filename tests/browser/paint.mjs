// Times how a page of the HTML report opens in headless Chromium from the file system:
// node paint.mjs FILE.html...  → one line per page: first contentful paint, DOMContentLoaded and
// load (ms, median of 3 cold loads, each in a fresh page), and the page's size. bench/html_report.sh runs it.
import { chromium } from "playwright-core";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const browser = await chromium.launch({
  executablePath: process.env.CORONER_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const file of process.argv.slice(2)) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: "load" });
    // A fast page may paint after its load event: wait for the paint entry.
    await page.waitForFunction(() => performance.getEntriesByType("paint").some((p) => p.name === "first-contentful-paint"), null, { timeout: 10000 }).catch(() => {});
    runs.push(await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      const fcp = performance.getEntriesByType("paint").find((p) => p.name === "first-contentful-paint");
      return { fcp: fcp ? fcp.startTime : NaN, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd };
    }));
    await page.close();
  }
  const m = (k) => median(runs.map((r) => r[k])).toFixed(0);
  console.log(`${file}\t${(statSync(file).size / 1e6).toFixed(2)} MB\tfirst paint ${m("fcp")} ms\tDOMContentLoaded ${m("dcl")} ms\tload ${m("load")} ms`);
}
await browser.close();
