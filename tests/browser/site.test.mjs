// Drives coroner's HTML report in a real headless Chromium, from the file system as a user opens
// it: node site.test.mjs SAMPLE_SITE HOSTILE_SITE SCREENSHOT_DIR (tests/html_report.rs runs it).
// Exits 1 with the failed check on the first failure.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [sampleDir, hostileDir, shots] = process.argv.slice(2).map((p) => resolve(p));
mkdirSync(shots, { recursive: true });
const url = (dir, rel) => pathToFileURL(resolve(dir, rel)).href;

const browser = await chromium.launch({
  executablePath: process.env.CORONER_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

// Every console error and page error, per page: a CSP violation, a script error or a failed
// load shows up here.
async function open(target, viewport = { width: 1400, height: 1000 }) {
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(target);
  return { page, problems };
}

async function inViewport(page, selector) {
  return page.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight;
  });
}

let checks = 0;
function ok(cond, what) { assert.ok(cond, what); checks++; }

// 1. The overview opens, with its sections and no error.
{
  const { page, problems } = await open(url(sampleDir, "index.html"));
  ok((await page.title()).includes("Sample study"), "the overview has the study's title");
  for (const id of ["arms", "failure-modes", "mechanics", "charts", "tasks"]) ok(await page.$(`#${id}`), `the overview has #${id}`);
  ok((await page.$$("#charts svg")).length === 4, "four charts inline");
  await page.screenshot({ path: `${shots}/overview.png` });

  // 2. A failure-mode count opens the list of exactly the runs it counted (worked-then-wrong:
  // its evidence points at steps, where infrastructure's may point at the run's end).
  const link = page.locator("#failure-modes tr", { hasText: "worked then wrong" }).locator("a.count").first();
  const n = parseInt(await link.textContent(), 10);
  await Promise.all([page.waitForNavigation(), link.click()]);
  ok(page.url().includes("/l/"), `a count opens a list (${page.url()})`);
  const rows = await page.$$("table.list tbody tr");
  ok(rows.length === n, `the list holds the ${n} runs its count counted (it holds ${rows.length})`);
  await page.screenshot({ path: `${shots}/list.png` });

  // 3. A run of the list opens its trajectory page; its first evidence item jumps to the step,
  // which is marked as evidence, is the target, and is on screen.
  await Promise.all([page.waitForNavigation(), page.locator("table.list tbody tr a").first().click()]);
  ok(page.url().includes("/t/"), "a run opens its trajectory page");
  const ev = page.locator("ol.evidence-list a").first();
  const href = await ev.getAttribute("href");
  ok(/^#s-\d+$/.test(href), `evidence links to a step (${href})`);
  await ev.click();
  await page.waitForFunction((h) => location.hash === h, href);
  const target = `article${href}`;
  ok(await page.$eval(target, (el) => el.classList.contains("evidence") && el.matches(":target")), "the evidence step is marked and targeted");
  ok(await inViewport(page, target), "the evidence step is scrolled into view");
  await page.screenshot({ path: `${shots}/trajectory.png` });

  // The step filter hides all but the evidence steps.
  await page.click("#only-evidence");
  const visible = await page.$$eval("article.step", (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.classList.contains("evidence")));
  ok(visible.length > 0 && visible.every(Boolean), "'evidence steps only' shows only evidence steps");
  ok(problems.length === 0, `no console errors on the way: ${problems.join("; ")}`);
  await page.close();
}

// 4. A task page shows both arms side by side, each step a link into its trajectory.
{
  const { page, problems } = await open(url(sampleDir, "index.html"));
  const arms = await page.$$eval("#arms tbody tr td:first-child a", (as) => as.map((a) => a.textContent));
  ok(arms.length === 2, "the sample study has two arms");
  await Promise.all([page.waitForNavigation(), page.locator("#tasks tbody tr td:first-child a").first().click()]);
  ok(page.url().includes("/task/"), "a task opens its page");
  const heads = await page.$$eval("table.side th.run", (ths) => ths.map((t) => t.textContent));
  for (const arm of arms) ok(heads.some((h) => h.includes(arm)), `the task page shows arm ${arm}`);
  ok((await page.$$("table.side tbody tr")).length > 0, "the task page has step rows");
  await page.screenshot({ path: `${shots}/task.png` });
  ok(problems.length === 0, `no console errors: ${problems.join("; ")}`);
  await page.close();
}

// 5. Search finds a task by id, runs by class, and a word from inside the steps.
{
  const { page, problems } = await open(url(sampleDir, "search.html"));
  await page.fill("#q", "csv-to-parquet");
  const found = await page.$$eval("#results tbody tr td:first-child", (tds) => tds.map((t) => t.textContent));
  ok(found.length > 0 && found.every((t) => t.includes("csv-to-parquet")), `search finds the task (${found})`);
  await page.fill("#q", "class:worked_then_wrong");
  const classes = await page.$$eval("#results tbody tr td:nth-child(4)", (tds) => tds.map((t) => t.textContent));
  ok(classes.length > 0 && classes.every((c) => c === "worked_then_wrong"), "search narrows to a class");
  await page.fill("#q", "todo");
  ok((await page.$$("#results tbody tr")).length > 0, "search finds a word inside the steps");
  await Promise.all([page.waitForNavigation(), page.locator("#results tbody tr a").first().click()]);
  ok(page.url().includes("/t/"), "a search result opens its trajectory");
  await page.goto(url(sampleDir, "search.html") + "?q=csv-to-parquet");
  await page.screenshot({ path: `${shots}/search.png` });
  ok(problems.length === 0, `no console errors: ${problems.join("; ")}`);
  await page.close();
}

// 6. A hostile transcript renders as text: no script of it runs, no handler or javascript: link
// exists, and its markup is visible as characters.
{
  for (const rel of ["index.html", "search.html?q=pwned", ...(await listPages(hostileDir))]) {
    const { page, problems } = await open(pathToFileURL(hostileDir).href + "/" + rel);
    // Hover and click everything a reader might, to give any handler its chance.
    for (const a of await page.$$("a[href^='#']")) await a.click().catch(() => {});
    for (const d of await page.$$("details")) await d.evaluate((el) => { el.open = true; });
    ok((await page.evaluate(() => window.__pwned)) === undefined, `no hostile script ran on ${rel}`);
    const handlers = await page.evaluate(() => [...document.querySelectorAll("*")].flatMap((el) => [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName} ${a.name}`)));
    ok(handlers.length === 0, `no event handler attributes on ${rel}: ${handlers}`);
    ok((await page.$$("a[href^='javascript:' i], [src^='javascript:' i]")).length === 0, `no javascript: URL on ${rel}`);
    const scripts = await page.$$eval("script", (ss) => ss.map((s) => s.getAttribute("src") || s.type));
    ok(scripts.every((s) => s.endsWith("assets/site.js") || s === "application/json"), `only the site's own scripts on ${rel}: ${scripts}`);
    ok(problems.length === 0, `no console errors (no CSP violation) on ${rel}: ${problems.join("; ")}`);
    if (rel.startsWith("t/")) {
      const text = await page.evaluate(() => document.body.innerText);
      ok(text.includes('<script>window.__pwned="script"</script>'), "the hostile markup is shown as text");
      ok(!text.includes("\u001b"), "terminal escapes are neutralized");
      await page.screenshot({ path: `${shots}/hostile-trajectory.png`, fullPage: true });
    }
    await page.close();
  }
}

async function listPages(dir) {
  const { readdirSync } = await import("node:fs");
  return ["t", "task"].flatMap((d) => readdirSync(resolve(dir, d)).map((f) => `${d}/${f}`));
}

await browser.close();
console.log(`browser checks passed: ${checks}`);
