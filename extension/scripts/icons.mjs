// Draws the extension's icons as PNG files at build time (no binary files in
// the repository): a dark rounded square with three lines of "text", the
// middle one underlined in red. 4x4 supersampling for smooth edges.
// Usage: node scripts/icons.mjs OUTDIR   (or import { writeIcons })

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

export const ICON_SIZES = [16, 32, 48, 128];

/** @typedef {[number, number, number]} Rgb */

/** @type {Rgb} */
const BACKGROUND = [31, 41, 55];
/** @type {Rgb} */
const TEXT = [243, 244, 246];
/** @type {Rgb} */
const RED = [239, 68, 68];

/** @type {Array<[number, number, number, number, Rgb]>} left, top, right, bottom, colour */
const BARS = [
  [0.22, 0.24, 0.78, 0.33, TEXT],
  [0.22, 0.43, 0.7, 0.52, TEXT],
  [0.22, 0.58, 0.7, 0.64, RED],
  [0.22, 0.72, 0.58, 0.81, TEXT],
];

/**
 * Whether a point lies in a rounded rectangle (unit coordinates).
 * @param {number} x @param {number} y @param {number} left @param {number} top
 * @param {number} right @param {number} bottom @param {number} radius
 */
function inRoundedRect(x, y, left, top, right, bottom, radius) {
  if (x < left || x > right || y < top || y > bottom) return false;
  const cx = Math.min(Math.max(x, left + radius), right - radius);
  const cy = Math.min(Math.max(y, top + radius), bottom - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

/**
 * The colour at a point, or null for transparent.
 * @param {number} x @param {number} y
 * @returns {Rgb | null}
 */
function colourAt(x, y) {
  if (!inRoundedRect(x, y, 0.03, 0.03, 0.97, 0.97, 0.2)) return null;
  for (const [l, t, r, b, colour] of BARS) {
    if (inRoundedRect(x, y, l, t, r, b, (b - t) / 2)) return colour;
  }
  return BACKGROUND;
}

/** @param {Uint8Array} bytes */
function crc32(bytes) {
  let c;
  let crc = 0xffffffff;
  for (const byte of bytes) {
    c = (crc ^ byte) & 0xff;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** @param {string} type @param {Buffer} data */
function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * An RGBA PNG of the icon at one size.
 * @param {number} size
 */
export function drawIcon(size) {
  const samples = 4;
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let py = 0; py < size; py += 1) {
    raw[py * (size * 4 + 1)] = 0; // filter: none
    for (let px = 0; px < size; px += 1) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < samples; sy += 1) {
        for (let sx = 0; sx < samples; sx += 1) {
          const colour = colourAt((px + (sx + 0.5) / samples) / size, (py + (sy + 0.5) / samples) / size);
          if (colour === null) continue;
          r += colour[0];
          g += colour[1];
          b += colour[2];
          a += 1;
        }
      }
      const offset = py * (size * 4 + 1) + 1 + px * 4;
      if (a > 0) {
        raw[offset] = Math.round(r / a);
        raw[offset + 1] = Math.round(g / a);
        raw[offset + 2] = Math.round(b / a);
      }
      raw[offset + 3] = Math.round((255 * a) / (samples * samples));
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(raw, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * Writes icons/icon-{size}.png under outdir; returns the manifest's icons map.
 * @param {string} outdir
 */
export function writeIcons(outdir) {
  mkdirSync(join(outdir, "icons"), { recursive: true });
  /** @type {Record<string, string>} */
  const icons = {};
  for (const size of ICON_SIZES) {
    const file = `icons/icon-${size}.png`;
    writeFileSync(join(outdir, file), drawIcon(size));
    icons[String(size)] = file;
  }
  return icons;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const outdir = process.argv[2];
  if (outdir === undefined) {
    console.error("usage: node scripts/icons.mjs OUTDIR");
    process.exit(2);
  }
  writeIcons(outdir);
}
