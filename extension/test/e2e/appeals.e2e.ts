// "Dispute this claim" end to end in Chromium against the contract stub
// (issue 18): the claim panel's form, appeal.file and appeal.get through the
// background worker, the outcome as text, the highlight of a retracted
// claim removed, the server's refusals (400, 429 with Retry-After) shown,
// and the remembered outcome on the next visit. The real stack's appeals
// stage is not part of this suite (the stub's appeal.* follow the design's
// API: test/e2e/stub-server.ts).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EINSTEIN } from "./claims";
import { ChromiumExtension, highlightTexts, pointOnClaim, waitForHighlights } from "./chromium-extension";
import { type ApiUnderTest, artifact, clean, startApi } from "./harness";
import { PAGES } from "./pages";
import { APPEAL_HOSTILE_REASON, APPEAL_RETRACTED_REASON, APPEAL_RETRACT_MARKER, APPEAL_HOSTILE_MARKER } from "./stub-server";

const REAL = process.env["ERRATA_E2E_API_URL"] !== undefined && process.env["ERRATA_E2E_API_URL"] !== "";
const FUZZY_ON_PAGE = "Albert Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire, on 14 March 1879.";

let api: ApiUnderTest;
let ext: ChromiumExtension;

beforeAll(async () => {
  api = await startApi();
  ext = await ChromiumExtension.launch("errata-e2e-appeals-");
  await ext.setSettings({ apiBaseUrl: api.url, apiKey: api.apiKey, openaiApiKey: "", autoInvestigate: false, showHighlights: true });
});

afterAll(async () => {
  await ext?.close();
  await api?.close();
});

if (!REAL) describe("Chromium, Dispute this claim, against the contract stub", () => {
  it("retracted removes the highlight, upheld stays; 400 and 429 are shown; the outcome is remembered", async () => {
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    stub.reset();
    stub.appealReadsBeforeDecision = 1;
    const { page } = await ext.openPost(PAGES.einstein);
    await waitForHighlights(page, 3);
    const panel = page.locator("errata-annotations .panel");
    const section = panel.locator("section.dispute");

    const openCard = async (text: string): Promise<void> => {
      const point = await pointOnClaim(page, text);
      await page.mouse.click(point.x, point.y);
      await expect.poll(() => panel.isVisible()).toBe(true);
    };
    const openForm = async (): Promise<void> => {
      await section.locator("button.dispute-open").click();
      // Focus moves into the form (the author checkbox first).
      await expect.poll(() => page.evaluate(() => document.querySelector("errata-annotations")?.shadowRoot?.activeElement?.getAttribute("type") ?? "")).toBe("checkbox");
    };

    // 1. Retracted: the outcome, then the highlight goes.
    await openCard(EINSTEIN.exact.text);
    await openForm();
    await section.locator("textarea.reason").fill(`Swiss records show 1896, not 1895 ${APPEAL_RETRACT_MARKER}`);
    expect(await section.locator(".count").textContent()).toContain("/ 2000 characters");
    await section.locator("textarea.urls").fill("https://example.org/records\nhttps://example.org/archive");
    await page.screenshot({ path: artifact("chromium-appeal-form.png") });
    await section.locator("button[type=submit]").click();
    await expect.poll(() => section.locator(".state").textContent()).toBe("Appeal received: under review");
    await page.screenshot({ path: artifact("chromium-appeal-under-review.png") });
    await expect.poll(() => section.locator(".state").textContent(), { timeout: 30_000 }).toBe("Withdrawn after review");
    expect(await section.locator(".decision").textContent()).toBe(APPEAL_RETRACTED_REASON);
    await expect.poll(async () => (await highlightTexts(page)).length).toBe(2);
    expect((await highlightTexts(page)).map(clean)).not.toContain(EINSTEIN.exact.text);
    await page.screenshot({ path: artifact("chromium-appeal-retracted.png") });
    const filed = stub.calls("appeal.file");
    expect(filed).toHaveLength(1);
    expect(filed[0]?.input).toEqual({
      claimId: EINSTEIN.exact.id,
      role: "READER",
      reason: `Swiss records show 1896, not 1895 ${APPEAL_RETRACT_MARKER}`,
      urls: ["https://example.org/records", "https://example.org/archive"],
    });
    expect(stub.calls("appeal.get").length).toBeGreaterThanOrEqual(2);
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.isVisible()).toBe(false);

    // 2. Upheld, as the author; the decision's markup and bidi override stay text.
    await openCard(FUZZY_ON_PAGE);
    await openForm();
    await section.locator("input[type=checkbox]").check();
    await section.locator("textarea.reason").fill(`I wrote this; Ulm is right ${APPEAL_HOSTILE_MARKER}`);
    await section.locator("button[type=submit]").click();
    await expect.poll(() => section.locator(".state").textContent(), { timeout: 30_000 }).toBe("Reviewed: the correction stands");
    expect(await section.locator(".decision").textContent()).toBe(APPEAL_HOSTILE_REASON);
    expect(await panel.locator("img, b, script").count()).toBe(0);
    expect(stub.calls("appeal.file").at(-1)?.input).toMatchObject({ claimId: EINSTEIN.fuzzy.id, role: "AUTHOR" });
    expect(await highlightTexts(page)).toHaveLength(2);
    await page.screenshot({ path: artifact("chromium-appeal-upheld.png") });
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.isVisible()).toBe(false);

    // 3. Refusals: the client's own (nothing sent), the server's 400, its 429 with Retry-After.
    await openCard(EINSTEIN.repeated.text);
    await openForm();
    const sent = stub.calls("appeal.file").length;
    await section.locator("textarea.reason").fill("The prize year is stated correctly in the article.");
    await section.locator("textarea.urls").fill("http://127.0.0.1:8080/admin");
    await section.locator("button[type=submit]").click();
    await expect.poll(() => section.locator(".errors").textContent()).toContain("private or local address");
    expect(stub.calls("appeal.file")).toHaveLength(sent);

    await section.locator("textarea.urls").fill("https://docs.internal/page");
    await section.locator("button[type=submit]").click();
    await expect.poll(() => section.locator(".errors").textContent()).toBe("url 0: docs.internal resolves to a non-public address.");
    await page.screenshot({ path: artifact("chromium-appeal-400.png") });

    stub.appealFloodLimit = stub.calls("appeal.file").length;
    await section.locator("textarea.urls").fill("https://www.nobelprize.org/prizes/physics/1921/summary/");
    await section.locator("button[type=submit]").click();
    await expect.poll(() => section.locator(".errors").textContent()).toBe("too many appeals from this client; slow down. Try again in 30 seconds.");
    expect(await section.locator("button[type=submit]").isEnabled()).toBe(true);
    await page.screenshot({ path: artifact("chromium-appeal-429.png") });
    // Escape closes the form first (focus back on its button), then the panel.
    await page.keyboard.press("Escape");
    await expect.poll(() => section.locator("form").count()).toBe(0);
    expect(await page.evaluate(() => document.querySelector("errata-annotations")?.shadowRoot?.activeElement?.textContent ?? "")).toBe("Dispute this claim");
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.isVisible()).toBe(false);
    expect(stub.violations).toEqual([]);

    // 4. The next visit: the retracted claim is gone, the upheld one's card remembers its outcome.
    await page.reload();
    await waitForHighlights(page, 2);
    expect((await highlightTexts(page)).map(clean)).not.toContain(EINSTEIN.exact.text);
    await openCard(FUZZY_ON_PAGE);
    await expect.poll(() => section.locator(".state").textContent()).toBe("Reviewed: the correction stands");
    expect(await section.locator("button.dispute-open").count()).toBe(0);
    await page.screenshot({ path: artifact("chromium-appeal-remembered.png") });
    await page.close();
  });
});
