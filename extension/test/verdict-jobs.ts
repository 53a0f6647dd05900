// Verdict analysis jobs (the job JSON of verdict.get) at each step of a
// run, for the unit tests and the contract stub: claims extracted, triaged,
// searched (queries with their top results), judged, then the verdict.
// The "hostile" job carries markup, script URLs and oversized strings where
// the API's strings go: they must stay text.

import type { AnalysisClaim, VerdictJob } from "../src/lib/api-types";

export const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';

const VERSIONS = {
  prompts: [{ name: "verdict-extract", version: "1", sha256: "ab".repeat(32) }],
  provider: "openai-responses",
  model: "gpt-test",
  registry: "registry-1",
  policy: "policy-1",
  rubric: "rubric-1",
};

function claim(index: number, text: string, overrides: Partial<AnalysisClaim> = {}): AnalysisClaim {
  return {
    id: `00000000-0000-4000-8000-00000000000${index}`,
    index,
    text,
    context: text,
    triage: null,
    queries: [],
    sources: [],
    verdict: null,
    ...overrides,
  };
}

const FACTUAL = {
  kind: "FACTUAL" as const,
  specificity: 0.9,
  timeSensitive: false,
  currentEvents: false,
  numeric: true,
  researched: true,
  reason: "A specific, checkable statement about history.",
};

export const WALL_CLAIMS = [
  "The Great Wall of China is visible from the Moon with the naked eye.",
  "The Great Wall was built by a single dynasty, the Ming, between 1368 and 1644.",
] as const;

/** What one scripted analysis finds: its two claims, the first one's search, their verdicts and the post's. */
interface Story {
  input: VerdictJob["input"];
  claims: readonly [string, string];
  firstQuery: AnalysisClaim["queries"][number];
  secondQuery: AnalysisClaim["queries"][number];
  firstSources: AnalysisClaim["sources"];
  firstVerdict: NonNullable<AnalysisClaim["verdict"]>;
  secondVerdict: NonNullable<AnalysisClaim["verdict"]>;
  verdict: NonNullable<VerdictJob["verdict"]>;
}

const WALL: Story = {
  input: { kind: "POST", url: "https://bsky.app/profile/marenholt.bsky.social/post/b4h4tghc6ol7k", title: null, platform: "BLUESKY", externalId: "at://x", textLength: 180 },
  claims: WALL_CLAIMS,
  firstQuery: {
    query: "Great Wall of China visible from the Moon naked eye",
    kind: "keyword",
    results: [
      { url: "https://www.nasa.gov/image-article/great-wall-of-china/", title: "Great Wall of China - NASA", snippet: "The wall is difficult or impossible to see from the Moon.", publishedAt: "2020-01-10T00:00:00Z" },
      { url: "https://www.scientificamerican.com/article/is-chinas-great-wall-visible-from-space/", title: "Is China's Great Wall Visible from Space?", snippet: "Not from the Moon.", publishedAt: null },
      { url: "https://en.wikipedia.org/wiki/Great_Wall_of_China", title: "Great Wall of China - Wikipedia", snippet: "Visibility from space is a myth.", publishedAt: null },
      { url: "https://example.org/fourth", title: "A fourth result the card does not list", snippet: "", publishedAt: null },
    ],
    error: null,
  },
  secondQuery: { query: "Great Wall construction dynasties before Ming", kind: "keyword", results: [], error: "search provider timed out" },
  firstSources: [
    { url: "https://www.nasa.gov/image-article/great-wall-of-china/", domain: "nasa.gov", tier: 1, rule: "*.gov", origin: "search", entail: 0.02, contradict: 0.93, neutral: 0.05 },
  ],
  firstVerdict: {
    engine: "REFUTED",
    score: -7,
    gate4: "PASS",
    truthPercent: 4,
    confidence: 88,
    label: "False",
    band: "FALSE",
    caps: [],
    summary: "NASA and astronauts say the wall cannot be seen from the Moon with the naked eye.",
  },
  secondVerdict: {
    engine: "NOT_ENOUGH",
    score: 0,
    gate4: "PASS",
    truthPercent: 30,
    confidence: 40,
    label: "Unverifiable",
    band: "LEANING-FALSE",
    caps: [{ rule: "no-search-time-sensitive", cap: 40, before: 62 }],
    summary: "The search failed; earlier dynasties built walls too, but no source was read.",
  },
  verdict: {
    label: "False",
    band: "MOSTLY-FALSE",
    truthPercent: 17,
    confidence: 82,
    caps: [],
    summary: "The post's main claim is a well-known myth: the wall is not visible from the Moon. Its dating to the Ming alone leaves out centuries of earlier walls.",
    caveats: ["Only one of the two claims could be researched.", "Search results were in English only."],
    sources: [
      { url: "https://www.nasa.gov/image-article/great-wall-of-china/", title: "Great Wall of China - NASA", domain: "nasa.gov", tier: 1, fromSearch: false },
      { url: "https://en.wikipedia.org/wiki/Great_Wall_of_China", title: "Great Wall of China - Wikipedia", domain: "wikipedia.org", tier: 2, fromSearch: true },
      { url: "https://en.wikipedia.org/wiki/Great_Wall_of_China", title: "duplicate URL", domain: "wikipedia.org", tier: 2, fromSearch: true },
      { url: "https://someblog.example/wall", title: "A blog", domain: "someblog.example", tier: 4, fromSearch: true },
    ],
  },
};

export const LIGHTNING_CLAIMS = [
  "Lightning never strikes the same place twice.",
  "The Empire State Building gets hit about 20 to 25 times a year.",
] as const;

const LIGHTNING: Story = {
  input: { kind: "POST", url: "https://www.threads.com/@kofi.mensah/post/DM7t8CdtApy", title: null, platform: "THREADS", externalId: "DM7t8CdtApy", textLength: 171 },
  claims: LIGHTNING_CLAIMS,
  firstQuery: {
    query: "does lightning strike the same place twice",
    kind: "keyword",
    results: [
      { url: "https://www.weather.gov/safety/lightning-myths", title: "Lightning Myths - National Weather Service", snippet: "Lightning often strikes the same place repeatedly.", publishedAt: "2023-06-01T00:00:00Z" },
      { url: "https://www.britannica.com/story/can-lightning-strike-the-same-place-twice", title: "Can Lightning Strike the Same Place Twice? | Britannica", snippet: "Yes, and tall structures are struck often.", publishedAt: null },
    ],
    error: null,
  },
  secondQuery: {
    query: "Empire State Building lightning strikes per year",
    kind: "keyword",
    results: [{ url: "https://www.esbnyc.com/about/facts-figures", title: "Facts & Figures | Empire State Building", snippet: "The building is struck by lightning about 20 to 25 times a year.", publishedAt: null }],
    error: null,
  },
  firstSources: [
    { url: "https://www.weather.gov/safety/lightning-myths", domain: "weather.gov", tier: 1, rule: "*.gov", origin: "search", entail: 0.01, contradict: 0.96, neutral: 0.03 },
  ],
  firstVerdict: {
    engine: "REFUTED",
    score: -8,
    gate4: "PASS",
    truthPercent: 3,
    confidence: 90,
    label: "False",
    band: "FALSE",
    caps: [],
    summary: "The National Weather Service lists this as a myth: tall objects are struck again and again.",
  },
  secondVerdict: {
    engine: "SUPPORTED",
    score: 6,
    gate4: "PASS",
    truthPercent: 92,
    confidence: 78,
    label: "True",
    band: "TRUE",
    caps: [],
    summary: "The building's own figures give about 20 to 25 strikes a year.",
  },
  verdict: {
    label: "Misleading",
    band: "MIXED",
    truthPercent: 48,
    confidence: 74,
    caps: [],
    summary: "The post opens with a myth its own second sentence refutes: lightning does strike the same place twice, and the Empire State Building is hit about 20 to 25 times a year.",
    caveats: ["Strike counts vary from year to year."],
    sources: [
      { url: "https://www.weather.gov/safety/lightning-myths", title: "Lightning Myths", domain: "weather.gov", tier: 1, fromSearch: false },
      { url: "https://www.esbnyc.com/about/facts-figures", title: "Facts & Figures", domain: "esbnyc.com", tier: 3, fromSearch: false },
      { url: "https://www.britannica.com/story/can-lightning-strike-the-same-place-twice", title: "Britannica", domain: "britannica.com", tier: 2, fromSearch: true },
    ],
  },
};

function storyJob(story: Story, step: number, id: string): VerdictJob {
  const base: VerdictJob = {
    id,
    status: step === 0 ? "PENDING" : step >= 5 ? "COMPLETE" : "RUNNING",
    input: story.input,
    versions: VERSIONS,
    claims: [],
    verdict: null,
    failure: null,
    createdAt: "2026-11-25T15:50:00.123Z",
    completedAt: step >= 5 ? "2026-11-25T15:50:09.456Z" : null,
  };
  if (step < 2) return base;
  const first = claim(0, story.claims[0], { triage: FACTUAL });
  const second = claim(1, story.claims[1], { triage: FACTUAL });
  if (step >= 3) {
    first.queries = [structuredClone(story.firstQuery)];
    second.queries = [structuredClone(story.secondQuery)];
  }
  if (step >= 4) {
    first.sources = structuredClone(story.firstSources);
    first.verdict = structuredClone(story.firstVerdict);
    second.verdict = structuredClone(story.secondVerdict);
  }
  base.claims = [first, second];
  if (step >= 5) base.verdict = structuredClone(story.verdict);
  return base;
}

/** The job of an analysis of the Great Wall post, at step 0 (queued) to 5 (complete). */
export function wallJob(step: number, id = "0b9d4f0e-6a43-5c1e-9d1a-3f7a2b6c8e11"): VerdictJob {
  return storyJob(WALL, step, id);
}

/** The job of an analysis of the lightning post (Threads), at step 0 to 5. */
export function lightningJob(step: number, id = "3e2a7b3b-9d76-5f4b-8a4d-6cad5e9f1b44"): VerdictJob {
  return storyJob(LIGHTNING, step, id);
}

/** A completed job whose every API string is hostile. */
export function hostileJob(id = "1c0e5f1f-7b54-5d2f-8e2b-4a8b3c7d9f22"): VerdictJob {
  const job = wallJob(5, id);
  const moon = job.claims[0];
  if (moon !== undefined) {
    moon.text = `${HOSTILE} claim`;
    const query = moon.queries[0];
    if (query !== undefined) {
      query.query = `${HOSTILE} query`;
      const result = query.results[0];
      if (result !== undefined) {
        result.title = `${HOSTILE} title`;
        result.url = "javascript:alert(document.domain)";
      }
    }
    if (moon.verdict !== null) moon.verdict.summary = `${HOSTILE} assessment`;
  }
  const ming = job.claims[1];
  if (ming !== undefined) {
    ming.triage = { ...FACTUAL, kind: "OPINION", researched: false, reason: `${HOSTILE} reason` };
    ming.queries = [];
    ming.verdict = null;
  }
  if (job.verdict !== null) {
    job.verdict.summary = `${HOSTILE} summary ${"long ".repeat(2_000)}`;
    job.verdict.caveats = [`${HOSTILE} caveat`];
    job.verdict.sources = [
      { url: "javascript:alert(1)", title: HOSTILE, domain: `${HOSTILE}.example`, tier: 5, fromSearch: false },
      { url: "https://data.example/x", title: HOSTILE, domain: "", tier: 3, fromSearch: true },
    ];
  }
  return job;
}

/** A job that failed. */
export function failedJob(id = "2d1f6a2a-8c65-5e3a-9f3c-5b9c4d8e0a33"): VerdictJob {
  return { ...wallJob(1, id), status: "FAILED", failure: "the provider refused the request" };
}
