// The real-stack e2e's provider script (test/e2e/fixtures/fake-script.json)
// scripts the verdict analyses of three saved posts: its match phrases and
// its claims quote the posts' text exactly as the adapters read it (and so
// as registerObservedVersion registers it).

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blueskyAdapter } from "../src/content/adapters/bluesky";
import type { FeedAdapter } from "../src/content/adapters/feed-model";
import { threadsAdapter } from "../src/content/adapters/threads";
import { normalizeContent } from "../src/lib/normalize";
import { domFor } from "./dom";
import { readLocalFixture } from "./fixtures";

interface Rule {
  name: string;
  match: string;
  verdict?: { claims: Array<{ text: string; context: string }> };
}

const script = JSON.parse(readFileSync(new URL("./e2e/fixtures/fake-script.json", import.meta.url), "utf8")) as { rules: Rule[] };

function texts(adapter: FeedAdapter, fixture: string, url: string): string[] {
  const document = domFor(readLocalFixture(fixture), url);
  return adapter.findPosts(document).map((post) => {
    const result = adapter.extract(post, document);
    return result.kind === "ready" ? result.content.contentText : "";
  });
}

describe("the e2e provider script's social rules", () => {
  const posts = [
    ...texts(blueskyAdapter, "social/bluesky-feed.html", "https://bsky.app/"),
    ...texts(threadsAdapter, "social/threads-feed.html", "https://www.threads.com/"),
  ];

  for (const name of ["bluesky-wall", "threads-lightning", "bluesky-opinion"]) {
    it(`${name}: matches exactly one saved post, and quotes it`, () => {
      const rule = script.rules.find((r) => r.name === name);
      if (rule?.verdict === undefined) throw new Error(`no verdict rule ${name}`);
      const matching = posts.filter((text) => text.includes(normalizeContent(rule.match)));
      expect(matching).toHaveLength(1);
      const text = matching[0] ?? "";
      for (const claim of rule.verdict.claims) {
        expect(text).toContain(normalizeContent(claim.text));
        expect(text).toContain(normalizeContent(claim.context));
      }
      // No earlier rule takes the post (the first matching rule answers).
      const first = script.rules.find((r) => text.includes(normalizeContent(r.match)));
      expect(first?.name).toBe(name);
    });
  }
});
