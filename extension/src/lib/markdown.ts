// A small Markdown renderer for claim reasoning, shown on arbitrary web pages
// and in the popup. It builds DOM nodes directly (createElement and text
// nodes only, never innerHTML), so raw HTML in the input stays visible text
// and no markup or script can be injected. Links are kept only when they are
// absolute http(s) URLs; everything else is shown as plain text.
//
// Supported: paragraphs, ATX headings, "-", "*", "+" and numbered lists,
// blockquotes, fenced code blocks, `code`, **strong**, *emphasis*,
// [text](url), <url> and bare http(s) URLs, backslash escapes.

/** Longer input is cut (reasoning is a few paragraphs; this only bounds the work). */
export const MAX_MARKDOWN_CHARS = 50_000;
const MAX_INLINE_DEPTH = 6;

/** The absolute http(s) URL a link may point to, or null. */
export function safeLinkUrl(raw: string): string | null {
  const trimmed = raw.trim();
  if (!/^https?:\/\//i.test(trimmed)) return null;
  try {
    const url = new URL(trimmed);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return null;
    return url.href;
  } catch {
    return null;
  }
}

function link(doc: Document, href: string): HTMLAnchorElement {
  const a = doc.createElement("a");
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer nofollow";
  return a;
}

const ESCAPABLE = /[\\`*_{}[\]()#+\-.!<>"'|~]/;
const BARE_URL = /^https?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)\]]/i;

class InlineRenderer {
  private text = "";

  constructor(
    private readonly doc: Document,
    private readonly parent: Node,
    private readonly depth: number,
    private readonly inLink: boolean,
  ) {}

  private flush(): void {
    if (this.text.length > 0) this.parent.appendChild(this.doc.createTextNode(this.text));
    this.text = "";
  }

  private nested(tag: "strong" | "em" | "a" | "code", content: string, href?: string): void {
    this.flush();
    const node = tag === "a" && href !== undefined ? link(this.doc, href) : this.doc.createElement(tag);
    if (tag === "code") node.textContent = content;
    else renderInline(this.doc, node, content, this.depth + 1, this.inLink || tag === "a");
    this.parent.appendChild(node);
  }

  render(src: string): void {
    let i = 0;
    while (i < src.length) {
      const ch = src.charAt(i);
      if (ch === "\\" && i + 1 < src.length && ESCAPABLE.test(src.charAt(i + 1))) {
        this.text += src.charAt(i + 1);
        i += 2;
        continue;
      }
      const consumed = this.special(src, i, ch);
      if (consumed > 0) {
        i += consumed;
        continue;
      }
      this.text += ch;
      i += 1;
    }
    this.flush();
  }

  /** Renders a construct starting at i and returns its length, or 0 when there is none. */
  private special(src: string, i: number, ch: string): number {
    if (this.depth >= MAX_INLINE_DEPTH) return 0;
    switch (ch) {
      case "`":
        return this.codeSpan(src, i);
      case "*":
      case "_":
        return this.emphasis(src, i, ch);
      case "[":
        return this.inLink ? 0 : this.bracketLink(src, i);
      case "<":
        return this.inLink ? 0 : this.autoLink(src, i);
      case "h":
      case "H":
        return this.inLink ? 0 : this.bareUrl(src, i);
      default:
        return 0;
    }
  }

  private codeSpan(src: string, i: number): number {
    let run = 0;
    while (src.charAt(i + run) === "`") run += 1;
    const fence = "`".repeat(run);
    const close = src.indexOf(fence, i + run);
    if (close < 0) {
      this.text += fence;
      return run;
    }
    this.nested("code", src.slice(i + run, close).replace(/^ (.*) $/s, "$1"));
    return close + run - i;
  }

  private emphasis(src: string, i: number, ch: string): number {
    const strong = src.charAt(i + 1) === ch;
    const marker = strong ? ch + ch : ch;
    const start = i + marker.length;
    const next = src.charAt(start);
    if (next === "" || /\s/.test(next)) return 0;
    // "_" inside a word (snake_case) is not emphasis.
    if (ch === "_" && i > 0 && /[\p{L}\p{N}]/u.test(src.charAt(i - 1))) return 0;
    let search = start + 1;
    while (search <= src.length) {
      const close = src.indexOf(marker, search);
      if (close < 0) return 0;
      const before = src.charAt(close - 1);
      const after = src.charAt(close + marker.length);
      const doubled = !strong && after === ch; // "*a**" : the single marker must not be half of a double one
      const intraWord = ch === "_" && /[\p{L}\p{N}]/u.test(after);
      if (!/\s/.test(before) && !doubled && !intraWord) {
        this.nested(strong ? "strong" : "em", src.slice(start, close));
        return close + marker.length - i;
      }
      search = close + marker.length;
    }
    return 0;
  }

  private bracketLink(src: string, i: number): number {
    let depth = 0;
    let closeBracket = -1;
    for (let j = i; j < src.length; j += 1) {
      const c = src.charAt(j);
      if (c === "\\") {
        j += 1;
        continue;
      }
      if (c === "[") depth += 1;
      else if (c === "]") {
        depth -= 1;
        if (depth === 0) {
          closeBracket = j;
          break;
        }
      }
    }
    if (closeBracket < 0 || src.charAt(closeBracket + 1) !== "(") return 0;
    let parens = 0;
    let closeParen = -1;
    for (let j = closeBracket + 1; j < src.length; j += 1) {
      const c = src.charAt(j);
      if (c === "(") parens += 1;
      else if (c === ")") {
        parens -= 1;
        if (parens === 0) {
          closeParen = j;
          break;
        }
      }
    }
    if (closeParen < 0) return 0;
    const label = src.slice(i + 1, closeBracket);
    // [text](url "title"): the title is dropped.
    const target = src.slice(closeBracket + 2, closeParen).trim().replace(/\s+(["'(]).*$/s, "").replace(/^<(.*)>$/s, "$1");
    const href = safeLinkUrl(target);
    if (href === null) {
      // Not a link we are willing to make: keep the words, drop the target.
      this.flush();
      renderInline(this.doc, this.parent, label, this.depth + 1, this.inLink);
    } else {
      this.nested("a", label.length > 0 ? label : href, href);
    }
    return closeParen + 1 - i;
  }

  private autoLink(src: string, i: number): number {
    const close = src.indexOf(">", i + 1);
    if (close < 0) return 0;
    const href = safeLinkUrl(src.slice(i + 1, close));
    if (href === null) return 0;
    this.nested("a", src.slice(i + 1, close), href);
    return close + 1 - i;
  }

  private bareUrl(src: string, i: number): number {
    if (i > 0 && /[\p{L}\p{N}]/u.test(src.charAt(i - 1))) return 0;
    const match = BARE_URL.exec(src.slice(i, i + 2048));
    if (match === null) return 0;
    const href = safeLinkUrl(match[0]);
    if (href === null) return 0;
    this.flush();
    const a = link(this.doc, href);
    a.textContent = match[0];
    this.parent.appendChild(a);
    return match[0].length;
  }
}

function renderInline(doc: Document, parent: Node, src: string, depth: number, inLink: boolean): void {
  new InlineRenderer(doc, parent, depth, inLink).render(src);
}

type Block =
  | { kind: "p"; lines: string[] }
  | { kind: "h"; level: number; text: string }
  | { kind: "ul" | "ol"; items: string[] }
  | { kind: "quote"; lines: string[] }
  | { kind: "code"; lines: string[] };

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const BULLET = /^ {0,6}[-*+][ \t]+(.*)$/;
const NUMBERED = /^ {0,6}\d{1,9}[.)][ \t]+(.*)$/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;

function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let current: Block | null = null;
  const close = (): void => {
    if (current !== null) blocks.push(current);
    current = null;
  };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence !== null) {
      close();
      const marker = fence[1] ?? "```";
      const code: string[] = [];
      i += 1;
      while (i < lines.length && !(lines[i] ?? "").trimStart().startsWith(marker)) {
        code.push(lines[i] ?? "");
        i += 1;
      }
      blocks.push({ kind: "code", lines: code });
      continue;
    }
    if (line.trim().length === 0) {
      close();
      continue;
    }
    if (RULE.test(line)) {
      close();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      close();
      blocks.push({ kind: "h", level: heading[1]?.length ?? 1, text: heading[2] ?? "" });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet === null ? NUMBERED.exec(line) : null;
    const item = bullet ?? numbered;
    if (item !== null) {
      const kind = bullet !== null ? "ul" : "ol";
      const open = current as Block | null;
      if (open === null || open.kind !== kind) {
        close();
        current = { kind, items: [] };
      }
      (current as unknown as { items: string[] }).items.push(item[1] ?? "");
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote !== null) {
      const open = current as Block | null;
      if (open === null || open.kind !== "quote") {
        close();
        current = { kind: "quote", lines: [] };
      }
      (current as unknown as { lines: string[] }).lines.push(quote[1] ?? "");
      continue;
    }
    const open = current as Block | null;
    if (open !== null && (open.kind === "ul" || open.kind === "ol") && /^\s+\S/.test(line)) {
      // A continuation line of the last list item.
      const items = open.items;
      items[items.length - 1] = `${items[items.length - 1] ?? ""} ${line.trim()}`;
      continue;
    }
    if (open === null || open.kind !== "p") {
      close();
      current = { kind: "p", lines: [] };
    }
    (current as unknown as { lines: string[] }).lines.push(line.trim());
  }
  close();
  return blocks;
}

/** Renders Markdown into a fragment of plain, inert elements. */
export function renderMarkdown(source: string, doc: Document): DocumentFragment {
  const fragment = doc.createDocumentFragment();
  const text = source.length > MAX_MARKDOWN_CHARS ? `${source.slice(0, MAX_MARKDOWN_CHARS)}…` : source;
  for (const block of parseBlocks(text)) {
    switch (block.kind) {
      case "p": {
        const p = doc.createElement("p");
        renderInline(doc, p, block.lines.join(" "), 0, false);
        fragment.appendChild(p);
        break;
      }
      case "h": {
        // Headings inside a tooltip-sized panel stay small.
        const h = doc.createElement(block.level <= 2 ? "h4" : block.level <= 4 ? "h5" : "h6");
        renderInline(doc, h, block.text, 0, false);
        fragment.appendChild(h);
        break;
      }
      case "ul":
      case "ol": {
        const list = doc.createElement(block.kind);
        for (const item of block.items) {
          const li = doc.createElement("li");
          renderInline(doc, li, item, 0, false);
          list.appendChild(li);
        }
        fragment.appendChild(list);
        break;
      }
      case "quote": {
        const quote = doc.createElement("blockquote");
        const inner = renderMarkdown(block.lines.join("\n"), doc);
        quote.appendChild(inner);
        fragment.appendChild(quote);
        break;
      }
      case "code": {
        const pre = doc.createElement("pre");
        const code = doc.createElement("code");
        code.textContent = block.lines.join("\n");
        pre.appendChild(code);
        fragment.appendChild(pre);
        break;
      }
    }
  }
  return fragment;
}
