// The submission workbench (/app, served by `errata serve`) in Chromium
// against a REAL Errata stack whose provider is the scripted fake
// (scripts/e2e-stack.mjs; npm run e2e runs this file in the real-stack
// suite). It submits the text of the script's "workbench" rule, watches the
// live event stream fill the page, reads the verdict, opens the permalink
// and the downloaded HTML report, and checks the refusals the form shows.
// Every claim, reason and caveat of the rule carries markup: it must show
// as text, and no script of it may run. Screenshots go to test-artifacts/.

import { readFileSync } from "node:fs";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH, artifact, requireFile } from "./harness";
import { IS_REAL, REAL_API_URL } from "./real-stack";

/** The verdict part of a script rule (internal/testkit/fakeopenai.ScriptVerdict). */
interface ScriptVerdict {
  claims: { text: string; kind: string; specificity: number; reason: string; sources?: { url: string }[] }[];
  summary: string;
  caveats?: string[];
  label: string;
}

interface ScriptRuleWithVerdict {
  name: string;
  match: string;
  verdict?: ScriptVerdict;
}

const scriptPath = process.env["ERRATA_E2E_SCRIPT"] ?? "";
const WORKBENCH = IS_REAL
  ? ((JSON.parse(readFileSync(scriptPath, "utf8")) as { rules: ScriptRuleWithVerdict[] }).rules.find((r) => r.name === "workbench") ?? null)
  : null;

/** What is submitted: the rule's phrase in a text with an opinion and markup. */
const SUBMITTED =
  "Workbench check: The Great Wall of China is visible from the Moon with the naked eye. It was built in a single decade. " +
  "Honestly, <script>alert('xss')</script> it is the most beautiful wonder of the world.";

let browser: Browser;
let context: BrowserContext;
const dialogs: string[] = [];
const problems: string[] = [];

async function openPage(): Promise<Page> {
  const page = await context.newPage();
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // A refused submission is an expected 4xx; anything else is a fault of the page.
    if (m.type() === "error" && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return page;
}

/** The form's error after a submission of body: its title and message. */
async function refusal(page: Page, tab: "text" | "url", value: string): Promise<{ code: string; title: string; message: string }> {
  await page.locator(tab === "text" ? "#tab-text" : "#tab-url").click();
  await page.locator(tab === "text" ? "#text" : "#url").fill(value);
  await page.locator("#submit-button").click();
  await page.locator("#form-error").waitFor({ state: "visible" });
  return {
    code: (await page.locator("#form-error").getAttribute("data-code")) ?? "",
    title: (await page.locator("#form-error-title").textContent()) ?? "",
    message: (await page.locator("#form-error-message").textContent()) ?? "",
  };
}

interface Job {
  id: string;
  status: string;
  claims: { text: string; triage: { kind: string; researched: boolean } | null; verdict: { label: string } | null }[];
  verdict: { label: string; band: string; truthPercent: number; confidence: number; summary: string; caveats: string[] } | null;
}

beforeAll(async () => {
  if (!IS_REAL) return;
  requireFile(CHROMIUM_PATH, "Chromium");
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ["--no-sandbox", "--no-first-run"] });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  // Nothing leaves the machine: only the stack itself is reachable.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1|localhost)/, (route) => route.abort());
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
});

(IS_REAL ? describe : describe.skip)("the workbench in Chromium, against a real Errata stack with a scripted provider", () => {
  it("refuses bad input with a clear message and stays on the form", async () => {
    const page = await openPage();
    await page.goto(`${REAL_API_URL}/app`);
    expect(await page.locator("#submit-view h1").textContent()).toBe("Check a text or a web page");
    await page.screenshot({ path: artifact("workbench-submit.png"), fullPage: true });

    expect(await refusal(page, "text", "   ")).toEqual({
      code: "TEXT_EMPTY",
      title: "There is nothing to check",
      message: "text: is empty; paste the text to check (1 to 32,000 characters)",
    });
    await page.screenshot({ path: artifact("workbench-error-empty.png"), fullPage: true });
    const long = await refusal(page, "text", "a".repeat(32_001));
    expect(long.code).toBe("TEXT_TOO_LONG");
    expect(long.message).toContain("32,001 characters");
    expect(await page.locator("#text-count").textContent()).toBe("32,001");

    expect(await refusal(page, "url", "http://93.184.216.34:8080/admin")).toMatchObject({ code: "URL_PORT", title: "That port is not fetched" });
    expect(await refusal(page, "url", "http://127.0.0.1:8080/admin")).toMatchObject({ code: "URL_PRIVATE_ADDRESS" });
    expect(await refusal(page, "url", "http://10.0.0.1/")).toEqual({
      code: "URL_PRIVATE_ADDRESS",
      title: "That address is not on the public internet",
      message: "url: the address is not on the public internet (a private, local or reserved network) and is never fetched",
    });
    await page.screenshot({ path: artifact("workbench-error-private-url.png"), fullPage: true });
    expect(await refusal(page, "url", "javascript:alert(1)")).toMatchObject({ code: "URL_SCHEME", title: "Only http and https pages can be checked" });
    expect(await refusal(page, "url", "not a url")).toMatchObject({ code: "URL_INVALID", title: "That is not a valid web address" });
    expect(new URL(page.url()).pathname).toBe("/app");
    await page.close();
  });

  it("submit a text -> the live stream fills the job page -> the verdict, claims, gates and versions -> the permalink -> the report", async () => {
    if (WORKBENCH === null || WORKBENCH.verdict === undefined) throw new Error("the fake provider's script has no workbench rule with a verdict");
    const scripted = WORKBENCH.verdict;
    const page = await openPage();
    await page.goto(`${REAL_API_URL}/app`);
    await page.locator("#text").fill(SUBMITTED);
    await page.locator("#submit-button").click();
    await page.waitForURL(/\/app\/analyses\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split("/").pop() ?? "";

    // The stream: each step as it happens, then the end.
    await page.locator("#job-status.status-complete").waitFor({ timeout: 90_000 });
    await page.locator("#live-state", { hasText: "finished" }).or(page.locator("#live-state", { hasText: "replayed" })).waitFor();
    const types = await page.locator("#timeline li").evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset["type"] ?? ""));
    const count = (t: string): number => types.filter((x) => x === `analysis.${t}.v1`).length;
    expect(types[0]).toBe("analysis.requested.v1");
    expect(types[types.length - 1]).toBe("analysis.completed.v1");
    expect(count("attempt_started")).toBe(1);
    expect(count("claim_extracted")).toBe(scripted.claims.length);
    expect(count("claim_triaged")).toBe(scripted.claims.length);
    expect(count("claim_verdict")).toBe(scripted.claims.length);
    expect(count("post_verdict")).toBe(1);
    // The stack searches through the script's SearXNG stand-in: each factual
    // claim's searches find its scripted sources, and each is assessed.
    const factual = scripted.claims.filter((c) => c.kind === "FACTUAL");
    expect(count("query_issued")).toBeGreaterThanOrEqual(factual.length);
    expect(count("source_assessed")).toBe(factual.reduce((n, c) => n + new Set((c.sources ?? []).map((x) => x.url)).size, 0));
    expect(types.indexOf("analysis.query_issued.v1")).toBeLessThan(types.indexOf("analysis.source_assessed.v1"));
    expect(types.lastIndexOf("analysis.source_assessed.v1")).toBeLessThan(types.indexOf("analysis.post_verdict.v1"));
    expect(types.indexOf("analysis.claim_extracted.v1")).toBeLessThan(types.indexOf("analysis.claim_triaged.v1"));
    expect(types.indexOf("analysis.claim_verdict.v1")).toBeLessThan(types.indexOf("analysis.post_verdict.v1"));
    await page.screenshot({ path: artifact("workbench-job.png"), fullPage: true });

    // The page shows what the API's job says.
    const job = (await (await page.request.get(`${REAL_API_URL}/api/v1/analyses/${id}`)).json()) as Job;
    expect(job.status).toBe("COMPLETE");
    expect(job.claims.map((c) => c.text)).toEqual(scripted.claims.map((c) => c.text));
    expect(job.claims.map((c) => c.triage?.kind)).toEqual(scripted.claims.map((c) => c.kind));
    if (job.verdict === null) throw new Error("the complete job has no verdict");
    const labels: Record<string, string> = { MostlyTrue: "Mostly true" };
    expect(await page.locator("#verdict-body .pill.big").textContent()).toBe(labels[job.verdict.label] ?? job.verdict.label);
    expect(await page.locator("#verdict-body .pill.band").textContent()).toBe(job.verdict.band);
    expect(await page.locator("#verdict-body .figure .value").allTextContents()).toEqual([`${job.verdict.truthPercent}%`, `${job.verdict.confidence}/100`]);
    expect(await page.locator("#verdict-body .summary").textContent()).toBe(job.verdict.summary);
    expect(await page.locator("#verdict-body .caveats li").allTextContents()).toEqual(job.verdict.caveats);
    expect(job.verdict.caveats).toContain("<img src=x onerror=alert('caveat')>");

    // Claims, as text: the markup of the opinion is shown, never run.
    expect(await page.locator("#claims-heading").textContent()).toBe(`Claims (${scripted.claims.length})`);
    expect(await page.locator("#claims-body blockquote").allTextContents()).toEqual(scripted.claims.map((c) => c.text));
    expect(await page.locator("#claims-body .gate .badge").allTextContents()).toEqual(
      expect.arrayContaining(scripted.claims.map((c) => c.kind)),
    );
    expect(await page.locator("#gates-body tbody tr").count()).toBe(scripted.claims.length);
    const gate1 = await page.locator("#gates-body tbody tr td:nth-child(2)").allTextContents();
    scripted.claims.forEach((c, i) => {
      expect(gate1[i]).toContain(`${c.kind}, specificity ${c.specificity.toFixed(2)}`);
      expect(gate1[i]).toContain(c.kind === "FACTUAL" ? "pass" : "excluded");
    });
    const versions = (await page.locator("#versions-body").textContent()) ?? "";
    expect(versions).toMatch(/Prompt verdict-extract.*sha256 [0-9a-f]{64}/);
    expect(versions).toContain("Confidence rubric");
    expect(await page.locator("script").count()).toBe(1); // app.js, and nothing of the job
    expect(await page.locator("img").count()).toBe(0);

    // The permalink: a fresh page replays the job.
    expect(await page.locator("#permalink").inputValue()).toBe(`${REAL_API_URL}/app/analyses/${id}`);
    const again = await openPage();
    await again.goto(`${REAL_API_URL}/app/analyses/${id}`);
    await again.locator("#job-status.status-complete").waitFor();
    await again.locator("#live-state", { hasText: "replayed" }).waitFor();
    expect(await again.locator("#timeline li").count()).toBe(types.length);
    expect(await again.locator("#claims-body blockquote").allTextContents()).toEqual(scripted.claims.map((c) => c.text));
    await again.close();

    // The same text again: the same job.
    const form = await openPage();
    await form.goto(`${REAL_API_URL}/app`);
    await form.locator("#text").fill(`  ${SUBMITTED.replace(/ /g, "  ")}\n`);
    await form.locator("#submit-button").click();
    await form.waitForURL(`${REAL_API_URL}/app/analyses/${id}`);
    await form.close();

    // The report: a self-contained download that shows the same job.
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#report-link").click()]);
    expect(download.suggestedFilename()).toBe(`errata-analysis-${id}.html`);
    const reportPath = artifact("workbench-report.html");
    await download.saveAs(reportPath);
    const html = readFileSync(reportPath, "utf8");
    expect(html).not.toMatch(/<script|<img|src="http|href="\/\//i);
    const report = await openPage();
    await report.goto(`file://${reportPath}`);
    expect(await report.locator("#claims blockquote").allTextContents()).toEqual(scripted.claims.map((c) => c.text));
    expect(await report.locator("#verdict .summary").textContent()).toBe(job.verdict.summary);
    await report.screenshot({ path: artifact("workbench-report.png"), fullPage: true });
    await report.close();
    await page.close();

    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
  });
});
