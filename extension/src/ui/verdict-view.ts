// A verdict analysis as DOM, shared by the progress card under Bluesky and
// Threads posts (inside a shadow root) and the popup: while it runs, each
// claim with its searches and their top results as they happen; then the
// coloured verdict pill and confidence, the summary, a collapsible
// "Claims (N)" list with each claim's assessment, the caveats, and the
// sources as domain chips with tier badges.
//
// Every string from the API is inserted as text (textContent), never as
// markup, and cut to a readable length; links are http(s) only.

import type { AnalysisClaim, PostVerdict, TriageKind, VerdictJob, VerdictLabel, VerdictSource } from "../lib/api-types";
import { safeLinkUrl } from "../lib/markdown";

export const LABEL_NAMES: Record<VerdictLabel, string> = {
  True: "True",
  MostlyTrue: "Mostly true",
  Mixed: "Mixed",
  Misleading: "Misleading",
  False: "False",
  Unverifiable: "Unverifiable",
  Opinion: "Opinion",
};

const TRIAGE_NAMES: Record<TriageKind, string> = {
  FACTUAL: "Factual claim",
  OPINION: "Opinion",
  PREDICTION: "Prediction",
  NOT_A_CLAIM: "Not a claim",
};

/** The source registry's tiers (consumers/evidence/sources). */
export const TIER_NAMES: Record<number, string> = {
  1: "official or primary",
  2: "quality media, reference or academic",
  3: "other",
  4: "user-generated or social",
  5: "known unreliable",
};

/** How much of the API's answer is shown: enough to read, bounded against hostile sizes. */
export const LIMITS = {
  text: 600,
  summary: 1_200,
  query: 200,
  title: 160,
  claims: 25,
  queriesPerClaim: 6,
  resultsPerQuery: 3,
  sources: 12,
  caveats: 6,
} as const;

/** The text cut to at most max characters (whole code points), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join("").trimEnd()}…`;
}

function el<K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A link when the URL is http(s), else plain text. */
function link(doc: Document, url: string, className: string, ...children: Array<Node | string>): HTMLElement {
  const href = safeLinkUrl(url);
  if (href === null) {
    const span = el(doc, "span", className);
    span.append(...children);
    return span;
  }
  const a = el(doc, "a", className);
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer nofollow";
  a.append(...children);
  return a;
}

/** The host of a URL without www., or "" when it has none. */
export function domainOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./i, "");
  } catch {
    return "";
  }
}

/** What the analysis is doing now, in a few words. */
export function phaseText(job: VerdictJob | null): string {
  if (job === null) return "Sending the post to Errata…";
  switch (job.status) {
    case "PENDING":
      return "Queued…";
    case "FAILED":
      return "The fact-check failed.";
    case "COMPLETE":
      return "Done.";
    case "RUNNING":
      break;
  }
  const claims = job.claims;
  if (claims.length === 0) return "Extracting claims…";
  if (claims.some((c) => c.verdict !== null) || claims.every((c) => c.triage !== null && (!c.triage.researched || c.sources.length > 0))) {
    return "Weighing the evidence…";
  }
  const queries = claims.reduce((n, c) => n + c.queries.length, 0);
  if (queries > 0) return `Searching: ${queries} ${queries === 1 ? "query" : "queries"} so far…`;
  return `Found ${claims.length} ${claims.length === 1 ? "claim" : "claims"}; sorting them…`;
}

function pill(doc: Document, label: VerdictLabel, small = false): HTMLElement {
  const span = el(doc, "span", `ev-pill ev-label-${label}${small ? " ev-pill-small" : ""}`, LABEL_NAMES[label]);
  span.dataset["label"] = label;
  return span;
}

function tierBadge(doc: Document, tier: number): HTMLElement {
  const badge = el(doc, "span", `ev-tier ev-tier-${tier}`, `T${tier}`);
  badge.title = `Tier ${tier}: ${TIER_NAMES[tier] ?? "unknown"}`;
  return badge;
}

/** One claim while it is being researched: its text, Gate 1's decision, and each search with its top results. */
function progressClaim(doc: Document, claim: AnalysisClaim): HTMLElement {
  const item = el(doc, "li", "ev-progress-claim");
  item.append(el(doc, "p", "ev-claim-text", `“${clip(claim.text, LIMITS.text)}”`));
  if (claim.triage !== null) {
    const kind = TRIAGE_NAMES[claim.triage.kind];
    item.append(el(doc, "p", "ev-triage", claim.triage.researched ? `${kind} · researching` : `${kind} · not researched`));
  }
  if (claim.queries.length > 0) {
    const queries = el(doc, "ul", "ev-queries");
    for (const query of claim.queries.slice(0, LIMITS.queriesPerClaim)) {
      const q = el(doc, "li", "ev-query");
      q.append(el(doc, "span", "ev-query-text", `Searched “${clip(query.query, LIMITS.query)}”`));
      if (query.error !== null) q.append(el(doc, "span", "ev-muted", " (search failed)"));
      else if (query.results.length === 0) q.append(el(doc, "span", "ev-muted", " (no results)"));
      else {
        const results = el(doc, "ol", "ev-results");
        for (const result of query.results.slice(0, LIMITS.resultsPerQuery)) {
          const r = el(doc, "li", "ev-result");
          const title = result.title.trim().length > 0 ? result.title : result.url;
          r.append(link(doc, result.url, "ev-result-title", clip(title, LIMITS.title)), el(doc, "span", "ev-result-domain", ` ${domainOf(result.url)}`));
          results.append(r);
        }
        q.append(results);
      }
      queries.append(q);
    }
    item.append(queries);
  }
  return item;
}

/** The progress of a running (or not yet started) analysis. */
export function renderProgress(doc: Document, job: VerdictJob | null): HTMLElement[] {
  const status = el(doc, "p", "ev-status");
  status.append(el(doc, "span", "ev-spinner"), phaseText(job));
  const out: HTMLElement[] = [status];
  const claims = job?.claims ?? [];
  if (claims.length > 0) {
    const list = el(doc, "ol", "ev-progress");
    for (const claim of claims.slice(0, LIMITS.claims)) list.append(progressClaim(doc, claim));
    out.push(list);
  }
  return out;
}

/** A claim's assessment: why it was not researched (Gate 1), else its verdict (label, confidence, summary). */
function claimAssessment(doc: Document, claim: AnalysisClaim): HTMLElement {
  const p = el(doc, "p", "ev-assessment");
  const triage = claim.triage;
  if (triage !== null && !triage.researched) {
    const kind = triage.kind === "OPINION" ? pill(doc, "Opinion", true) : el(doc, "span", "ev-kind", TRIAGE_NAMES[triage.kind]);
    p.append(kind, el(doc, "span", "ev-claim-summary", ` Not researched: ${clip(triage.reason, LIMITS.summary)}`));
    return p;
  }
  if (claim.verdict !== null) {
    p.append(pill(doc, claim.verdict.label, true), el(doc, "span", "ev-claim-confidence", ` ${claim.verdict.confidence}% `));
    if (claim.verdict.summary.trim().length > 0) p.append(el(doc, "span", "ev-claim-summary", clip(claim.verdict.summary, LIMITS.summary)));
    return p;
  }
  p.append(el(doc, "span", "ev-muted", "No assessment."));
  return p;
}

function claimsList(doc: Document, claims: readonly AnalysisClaim[], open: boolean): HTMLElement {
  const details = el(doc, "details", "ev-claims");
  details.open = open;
  details.append(el(doc, "summary", undefined, `Claims (${claims.length})`));
  const list = el(doc, "ol", "ev-claim-list");
  for (const claim of claims.slice(0, LIMITS.claims)) {
    const item = el(doc, "li", "ev-claim");
    item.dataset["claimId"] = claim.id;
    item.append(el(doc, "p", "ev-claim-text", `“${clip(claim.text, LIMITS.text)}”`), claimAssessment(doc, claim));
    list.append(item);
  }
  if (claims.length > LIMITS.claims) list.append(el(doc, "li", "ev-muted", `and ${claims.length - LIMITS.claims} more`));
  details.append(list);
  return details;
}

/** Distinct sources (by URL), at most LIMITS.sources. */
function distinctSources(sources: readonly VerdictSource[]): VerdictSource[] {
  const seen = new Set<string>();
  const out: VerdictSource[] = [];
  for (const source of sources) {
    if (seen.has(source.url)) continue;
    seen.add(source.url);
    out.push(source);
    if (out.length >= LIMITS.sources) break;
  }
  return out;
}

function sourceChips(doc: Document, sources: readonly VerdictSource[]): HTMLElement {
  const box = el(doc, "div", "ev-sources");
  for (const source of distinctSources(sources)) {
    const domain = source.domain.trim().length > 0 ? source.domain : domainOf(source.url);
    const chip = link(doc, source.url, "ev-chip", el(doc, "span", "ev-chip-domain", clip(domain.length > 0 ? domain : source.url, 60)), tierBadge(doc, source.tier));
    chip.title = clip(source.title.trim().length > 0 ? source.title : source.url, 300);
    chip.dataset["tier"] = String(source.tier);
    box.append(chip);
  }
  return box;
}

/** The verdict of a completed analysis. */
export function renderVerdict(doc: Document, job: VerdictJob, verdict: PostVerdict, options: { claimsOpen?: boolean } = {}): HTMLElement[] {
  const head = el(doc, "div", "ev-verdict");
  head.append(pill(doc, verdict.label), el(doc, "span", "ev-confidence", `${verdict.confidence}% confidence`));
  const band = el(doc, "span", "ev-band", `Truth ${verdict.truthPercent}% · ${verdict.band}`);
  band.title = "FactHarbor's truth scale";
  head.append(band);
  const out: HTMLElement[] = [head, el(doc, "p", "ev-summary", clip(verdict.summary, LIMITS.summary))];
  if (job.claims.length > 0) out.push(claimsList(doc, job.claims, options.claimsOpen === true));
  const caveats = verdict.caveats.filter((c) => c.trim().length > 0);
  if (caveats.length > 0) {
    const p = el(doc, "p", "ev-caveats");
    p.append(el(doc, "strong", undefined, "Caveats: "), caveats.slice(0, LIMITS.caveats).map((c) => clip(c, LIMITS.summary)).join(" "));
    out.push(p);
  }
  if (verdict.sources.length > 0) out.push(sourceChips(doc, verdict.sources));
  return out;
}

/** The state name of a job view (data-verdict / data-state): starting, pending, running, complete, failed. */
export function jobState(job: VerdictJob | null): string {
  if (job === null) return "starting";
  return job.status.toLowerCase();
}

/**
 * Styles of the view. Colours come from the theme class on the container
 * (ev-theme-light / ev-theme-dark); the pills keep their colour in both.
 */
export const VERDICT_STYLES = `
.ev-theme-light { --ev-bg: #ffffff; --ev-fg: #0f1419; --ev-muted: #5b6670; --ev-border: #d9dee3; --ev-soft: #f3f5f7; --ev-link: #1a57c9; --ev-chip: #eef1f4; }
.ev-theme-dark { --ev-bg: #16181c; --ev-fg: #e7e9ea; --ev-muted: #9aa4ad; --ev-border: #38444d; --ev-soft: #202327; --ev-link: #8ab4f8; --ev-chip: #262a30; }
.ev-box { background: var(--ev-bg); color: var(--ev-fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  text-align: left; letter-spacing: normal; overflow-wrap: anywhere; }
.ev-box p { margin: 0 0 8px; }
.ev-box a { color: var(--ev-link); text-decoration: none; }
.ev-box a:hover { text-decoration: underline; }
.ev-muted { color: var(--ev-muted); }
.ev-status { display: flex; align-items: center; gap: 8px; color: var(--ev-muted); font-weight: 600; }
.ev-spinner { flex: none; width: 12px; height: 12px; border: 2px solid var(--ev-muted); border-top-color: transparent; border-radius: 50%; animation: ev-spin 1s linear infinite; }
@keyframes ev-spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .ev-spinner { animation: none; } }
.ev-progress, .ev-claim-list { margin: 0; padding-left: 20px; }
.ev-progress-claim, .ev-claim { margin: 0 0 10px; }
.ev-claim-text { font-weight: 600; margin: 0 0 2px !important; }
.ev-triage { font-size: 12px; color: var(--ev-muted); margin: 0 0 4px !important; }
.ev-queries { list-style: none; margin: 0; padding: 0; }
.ev-query { font-size: 13px; margin: 0 0 6px; }
.ev-query-text { color: var(--ev-fg); }
.ev-results { margin: 2px 0 0; padding-left: 18px; font-size: 12px; }
.ev-result-domain { color: var(--ev-muted); }
.ev-verdict { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 10px; margin: 0 0 8px; }
.ev-pill { display: inline-block; padding: 2px 10px; border-radius: 999px; color: #fff; font-weight: 700; font-size: 13px; line-height: 20px; white-space: nowrap; }
.ev-pill-small { padding: 0 7px; font-size: 11px; line-height: 17px; vertical-align: 1px; }
.ev-label-True { background: #1e7b34; }
.ev-label-MostlyTrue { background: #4c8a2b; }
.ev-label-Mixed { background: #a86400; }
.ev-label-Misleading { background: #c4420f; }
.ev-label-False { background: #b3261e; }
.ev-label-Unverifiable { background: #5f6368; }
.ev-label-Opinion { background: #5b4db1; }
.ev-confidence { font-weight: 700; }
.ev-band { font-size: 12px; color: var(--ev-muted); }
.ev-summary { margin: 0 0 8px; }
.ev-claims { margin: 0 0 8px; }
.ev-claims > summary { cursor: pointer; font-weight: 600; color: var(--ev-link); margin: 0 0 6px; }
.ev-assessment { font-size: 13px; }
.ev-claim-confidence { font-weight: 600; }
.ev-kind { display: inline-block; padding: 0 7px; border: 1px solid var(--ev-border); border-radius: 999px; font-size: 11px; font-weight: 700; line-height: 15px; color: var(--ev-muted); vertical-align: 1px; }
.ev-caveats { font-size: 13px; color: var(--ev-muted); }
.ev-caveats strong { color: var(--ev-fg); }
.ev-sources { display: flex; flex-wrap: wrap; gap: 6px; }
.ev-chip { display: inline-flex; align-items: center; gap: 5px; padding: 2px 4px 2px 9px; border: 1px solid var(--ev-border); border-radius: 999px;
  background: var(--ev-chip); color: var(--ev-fg) !important; font-size: 12px; line-height: 18px; }
.ev-chip-domain { max-width: 220px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ev-tier { display: inline-block; min-width: 18px; padding: 0 4px; border-radius: 999px; font-size: 10px; font-weight: 700; line-height: 15px; text-align: center; color: #fff; }
.ev-tier-1 { background: #1e7b34; }
.ev-tier-2 { background: #2f6fbd; }
.ev-tier-3 { background: #6b7280; }
.ev-tier-4 { background: #a86400; }
.ev-tier-5 { background: #b3261e; }
.ev-error { color: #b3261e; font-weight: 600; }
.ev-theme-dark .ev-error { color: #f2b8b5; }
`;
