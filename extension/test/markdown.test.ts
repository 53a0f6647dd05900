// The reasoning Markdown renderer: useful formatting, and nothing a hostile
// claim could use (no raw HTML, no script URLs, no attributes but href).

import { describe, expect, it } from "vitest";
import { renderMarkdown, safeLinkUrl } from "../src/lib/markdown";
import { blankDocument } from "./dom";

function html(markdown: string): string {
  const doc = blankDocument();
  const div = doc.createElement("div");
  div.append(renderMarkdown(markdown, doc));
  return div.innerHTML;
}

const A = 'target="_blank" rel="noopener noreferrer nofollow"';

describe("renderMarkdown", () => {
  it("paragraphs, emphasis, code, headings, lists and quotes", () => {
    expect(html("Some **bold** and *italic* and `x < y`.\n\nSecond\nline.")).toBe(
      "<p>Some <strong>bold</strong> and <em>italic</em> and <code>x &lt; y</code>.</p><p>Second line.</p>",
    );
    expect(html("## Evidence\n- one\n- two **2**\n\n1. first\n2) second")).toBe(
      "<h4>Evidence</h4><ul><li>one</li><li>two <strong>2</strong></li></ul><ol><li>first</li><li>second</li></ol>",
    );
    expect(html("> quoted *text*\n> more")).toBe("<blockquote><p>quoted <em>text</em> more</p></blockquote>");
    expect(html("```\n<b>raw</b>\n```")).toBe("<pre><code>&lt;b&gt;raw&lt;/b&gt;</code></pre>");
    expect(html("snake_case_name and 2 * 3 * 4")).toBe("<p>snake_case_name and 2 * 3 * 4</p>");
  });

  it("links: http(s) only, opened safely", () => {
    expect(html("See [the paper](https://example.org/a?b=1 \"title\").")).toBe(
      `<p>See <a href="https://example.org/a?b=1" ${A}>the paper</a>.</p>`,
    );
    expect(html("At <https://example.org/x> or https://example.org/y.")).toBe(
      `<p>At <a href="https://example.org/x" ${A}>https://example.org/x</a> or <a href="https://example.org/y" ${A}>https://example.org/y</a>.</p>`,
    );
    expect(html("[click](javascript:alert(1)) [rel](/relative) [data](data:text/html,hi)")).toBe("<p>click rel data</p>");
  });

  it("raw HTML stays text", () => {
    const out = html('<script>alert(1)</script><img src=x onerror="alert(2)"> <a href="javascript:x">y</a>');
    expect(out).not.toMatch(/<script|<img|<a /);
    expect(out).toContain("&lt;script&gt;");
    const doc = blankDocument();
    const div = doc.createElement("div");
    div.append(renderMarkdown("**<b onclick=1>x</b>** [<i>y</i>](https://e.org)", doc));
    expect(div.querySelectorAll("b, i, [onclick]")).toHaveLength(0);
    expect(div.querySelector("a")?.textContent).toBe("<i>y</i>");
  });

  it("bounds nesting and length", () => {
    expect(() => html("*".repeat(10_000))).not.toThrow();
    expect(() => html("[".repeat(5_000) + "](https://e.org)")).not.toThrow();
    expect(html("x".repeat(60_000)).length).toBeLessThan(52_000);
  });

  it("safeLinkUrl", () => {
    expect(safeLinkUrl(" https://e.org/p ")).toBe("https://e.org/p");
    expect(safeLinkUrl("HTTP://E.ORG")).toBe("http://e.org/");
    expect(safeLinkUrl("javascript:alert(1)")).toBeNull();
    expect(safeLinkUrl("//e.org")).toBeNull();
    expect(safeLinkUrl("ftp://e.org")).toBeNull();
  });
});
