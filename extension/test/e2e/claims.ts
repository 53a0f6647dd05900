// Canned investigation results for the end-to-end stub. They are test data,
// not fact-checks: each claim's text is a verbatim quote (or, for the fuzzy
// and the unplaceable cases, a deliberately altered one) of the fixture pages.

import type { Claim, ClaimPayload } from "../../src/lib/api-types";

function claim(id: string, text: string, context: string, summary: string, reasoning: string, source: string): Claim {
  return {
    id,
    text,
    context,
    summary,
    reasoning,
    sources: [{ url: source, title: `Source for ${id}`, snippet: `A passage of the source for ${id}.` }],
  };
}

export function payload(c: Claim): ClaimPayload {
  const { id: _id, ...rest } = c;
  return rest;
}

export const EINSTEIN = {
  exact: claim(
    "einstein-exact",
    "Einstein moved to Switzerland in 1895, forsaking his German citizenship the following year.",
    'especially for his discovery of the law of the photoelectric effect". Born in the German Empire, Einstein moved to Switzerland in 1895, forsaking his German citizenship the following year. In 1897, at the age of seventeen, he enrolled',
    "Test claim: the stub flags this sentence so the page shows an exact match.",
    "This is **canned test data** for the end-to-end run.\n\n- It checks that *Markdown* renders\n- and that [links](https://en.wikipedia.org/wiki/Albert_Einstein) open safely.\n\n<script>alert('raw HTML must stay text')</script>",
    "https://en.wikipedia.org/wiki/Albert_Einstein",
  ),
  repeated: claim(
    "einstein-context",
    "1921 Nobel Prize in Physics",
    "a Foreign Member of the Royal Society in 1921. In 1922, he was awarded the 1921 Nobel Prize in Physics \"for his services",
    "Test claim: the phrase occurs twice; the context picks the second.",
    "Canned test data: the same words appear twice in the article; the context decides.",
    "https://www.nobelprize.org/prizes/physics/1921/einstein/facts/",
  ),
  fuzzy: claim(
    "einstein-fuzzy",
    "Albert Einstein was born in Ulm, in the Kingdom of Wurttemberg in the German Empire, on 14 March 1879.",
    "Einstein in 1882, age 3 Albert Einstein was born in Ulm, in the Kingdom of Wurttemberg in the German Empire, on 14 March 1879. His parents",
    "Test claim: quoted without the umlaut, so only the fuzzy tier places it.",
    "Canned test data: the quote differs from the page by one letter.",
    "https://en.wikipedia.org/wiki/Ulm",
  ),
  missing: claim(
    "einstein-missing",
    "Einstein was awarded a second Nobel Prize in 1935 for his work on Brownian motion.",
    "nowhere in the article",
    "Test claim that is not in the article; it must be listed in the popup only.",
    "Canned test data: no tier can place this sentence.",
    "https://example.org/not-in-the-page",
  ),
};

export const LESSWRONG = {
  confirmed: claim(
    "lw-fifty",
    "considering (if not following through on) alignment faking in over 50% of cases",
    "Indeed, it often reasons about this explicitly, considering (if not following through on) alignment faking in over 50% of cases. Follow-up research",
    "Test claim: confirmed while the investigation still runs.",
    "Canned test data for the Investigate Now flow.",
    "https://arxiv.org/abs/2412.14093",
  ),
  second: claim(
    "lw-unique",
    "Follow-up research would go on to demonstrate that this was a unique property of Opus 3 in particular.",
    "alignment faking in over 50% of cases. Follow-up research would go on to demonstrate that this was a unique property of Opus 3 in particular. No other model",
    "Test claim: still pending on the first poll, confirmed on the second.",
    "Canned test data for the Investigate Now flow.",
    "https://example.org/follow-up",
  ),
};

export const CLIMATE = {
  deserts: claim(
    "climate-deserts",
    "Deserts are expanding, while heat waves and wildfires are becoming more common.",
    "Climate change has an increasingly large impact on the environment. Deserts are expanding, while heat waves and wildfires are becoming more common. Amplified warming",
    "Test claim for the failed-then-retried investigation.",
    "Canned test data.",
    "https://example.org/deserts",
  ),
};

export const X_POST = {
  cable: claim(
    "x-cable",
    "The first transatlantic telegraph cable was laid in 1958",
    "The first transatlantic telegraph cable was laid in 1958, and it carried messages for nearly three years",
    "Test claim: the first transatlantic cable was laid in 1858.",
    "Canned test data for auto-investigate on X (dark theme).",
    "https://en.wikipedia.org/wiki/Transatlantic_telegraph_cable",
  ),
};
