// The post's canonical text with a map from every character back to the DOM.
// The text is built by the same rules as normalizeContent over the same text
// pieces the adapters extract (so claim text, which the server quotes from
// that canonical text, is found as is), but one code point at a time, which
// keeps for each output UTF-16 unit the text node and offsets it came from.

import { type TextFilter, textPieces } from "../../lib/dom-text";

export interface TextMap {
  /** The normalized text (equal to normalizeContent of the root's raw text in all but exotic NFC cases). */
  text: string;
  /** Text nodes, in document order. */
  nodes: Text[];
  /** Per output unit: index into nodes, or -1 for a space that stands for a block boundary only. */
  nodeIndex: Int32Array;
  /** Per output unit: offset of its first source unit in that node. */
  startOffset: Int32Array;
  /** Per output unit: offset just past its last source unit in that node. */
  endOffset: Int32Array;
}

const TYPOGRAPHIC: ReadonlyMap<number, string> = new Map([
  [0x201c, '"'],
  [0x201d, '"'],
  [0x2018, "'"],
  [0x2019, "'"],
  [0x2010, "-"],
  [0x2011, "-"],
  [0x2012, "-"],
  [0x2013, "-"],
  [0x2014, "-"],
  [0x2015, "-"],
  [0x2026, "..."],
]);

/** JavaScript's \s (the contract's whitespace set), as code units. */
function isWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Deleted before whitespace is collapsed (U+FEFF included, though \s matches it). */
function isZeroWidth(c: number): boolean {
  return (c >= 0x200b && c <= 0x200d) || c === 0xfeff;
}

const COMBINING_MARK = /^\p{M}$/u;

class Builder {
  private units: number[] = [];
  private index: number[] = [];
  private start: number[] = [];
  private end: number[] = [];
  private pendingSpace = false;
  private spaceNode = -1;
  private spaceOffset = 0;

  /** Whitespace or a block boundary: at most one space, emitted before the next visible character. */
  space(node: number, offset: number): void {
    if (this.pendingSpace && this.spaceNode >= 0) return; // keep the first real whitespace as the anchor
    this.pendingSpace = true;
    if (node >= 0 || this.spaceNode < 0) {
      this.spaceNode = node;
      this.spaceOffset = offset;
    }
  }

  private push(unit: number, node: number, from: number, to: number): void {
    this.units.push(unit);
    this.index.push(node);
    this.start.push(from);
    this.end.push(to);
  }

  visible(chars: string, node: number, from: number, to: number): void {
    if (this.pendingSpace) {
      // A leading space is trimmed.
      if (this.units.length > 0) {
        this.push(0x20, this.spaceNode, this.spaceOffset, this.spaceNode >= 0 ? this.spaceOffset + 1 : this.spaceOffset);
      }
      this.pendingSpace = false;
      this.spaceNode = -1;
    }
    for (let i = 0; i < chars.length; i += 1) this.push(chars.charCodeAt(i), node, from, to);
  }

  /** A combining mark: composed into the previous character when NFC composes them, else appended. */
  mark(chars: string, node: number, from: number, to: number): void {
    const last = this.units.length - 1;
    if (!this.pendingSpace && last >= 0 && this.index[last] === node) {
      // The previous character may be a surrogate pair.
      const pairStart = last > 0 && this.index[last - 1] === node && this.start[last - 1] === this.start[last] ? last - 1 : last;
      const previous = String.fromCharCode(...this.units.slice(pairStart));
      const composed = (previous + chars).normalize("NFC");
      if (composed.length <= previous.length) {
        const origin = this.start[pairStart] ?? from;
        this.units.length = pairStart;
        this.index.length = pairStart;
        this.start.length = pairStart;
        this.end.length = pairStart;
        for (let i = 0; i < composed.length; i += 1) this.push(composed.charCodeAt(i), node, origin, to);
        return;
      }
    }
    this.visible(chars, node, from, to);
  }

  finish(nodes: Text[]): TextMap {
    let text = "";
    const CHUNK = 8192;
    for (let i = 0; i < this.units.length; i += CHUNK) {
      text += String.fromCharCode(...this.units.slice(i, i + CHUNK));
    }
    return {
      text,
      nodes,
      nodeIndex: Int32Array.from(this.index),
      startOffset: Int32Array.from(this.start),
      endOffset: Int32Array.from(this.end),
    };
  }
}

/** Builds the text map of a content root (with the platform's filter, e.g. Wikipedia's pruning). */
export function buildTextMap(root: Node, filter?: TextFilter): TextMap {
  const builder = new Builder();
  const nodes: Text[] = [];
  for (const piece of textPieces(root, filter)) {
    if (piece === null) {
      builder.space(-1, 0);
      continue;
    }
    const nodeIdx = nodes.length;
    nodes.push(piece);
    const data = piece.data;
    let i = 0;
    while (i < data.length) {
      const c = data.charCodeAt(i);
      const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < data.length;
      const width = pair && (data.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      const next = i + width;
      if (c < 0x80) {
        if (isWhitespace(c)) builder.space(nodeIdx, i);
        else builder.visible(data.charAt(i), nodeIdx, i, next);
      } else if (isZeroWidth(c)) {
        // deleted
      } else if (isWhitespace(c)) {
        builder.space(nodeIdx, i);
      } else {
        const ch = data.slice(i, next);
        const replacement = TYPOGRAPHIC.get(c);
        if (replacement !== undefined) builder.visible(replacement, nodeIdx, i, next);
        else if (COMBINING_MARK.test(ch)) builder.mark(ch.normalize("NFC"), nodeIdx, i, next);
        else builder.visible(ch.normalize("NFC"), nodeIdx, i, next);
      }
      i = next;
    }
  }
  return builder.finish(nodes);
}

/** A DOM range for [start, end) of the map's text, or null when it covers no text node. */
export function rangeFor(map: TextMap, start: number, end: number, doc: Document): Range | null {
  let first = start;
  while (first < end && (map.nodeIndex[first] ?? -1) < 0) first += 1;
  let last = end - 1;
  while (last >= first && (map.nodeIndex[last] ?? -1) < 0) last -= 1;
  if (first > last) return null;
  const startNode = map.nodes[map.nodeIndex[first] ?? -1];
  const endNode = map.nodes[map.nodeIndex[last] ?? -1];
  if (startNode === undefined || endNode === undefined) return null;
  if (!startNode.isConnected || !endNode.isConnected) return null;
  const range = doc.createRange();
  try {
    range.setStart(startNode, Math.min(map.startOffset[first] ?? 0, startNode.length));
    range.setEnd(endNode, Math.min(map.endOffset[last] ?? 0, endNode.length));
  } catch {
    return null; // the nodes changed under us
  }
  return range.collapsed ? null : range;
}
