// Appeals of a published claim ("Dispute this claim", issue 18): the form's
// rules, the same as the server's (events.ValidateAppealReason and
// events.ValidateAppealURLs), checked before anything is sent; the shapes of
// appeal.file and appeal.get (Errata's own tRPC namespace appeal.*, never
// called by OpenErrata's extension) with strict validators; and the polling
// schedule of an open appeal. The server stays the authority: it also
// refuses names that resolve to private addresses, floods and retracted
// claims, and its words are shown as text.

import { type Validator, literal, nonEmptyString, nullable, object, boolean, string } from "./validate";

export const APPEAL_REASON_MIN = 10;
export const APPEAL_REASON_MAX = 2000;
export const APPEAL_MAX_URLS = 5;
export const APPEAL_URL_MAX_BYTES = 2048;

export type AppealRole = "READER" | "AUTHOR";
export type AppealStatus = "OPEN" | "UPHELD" | "RETRACTED";

export interface AppealInput {
  claimId: string;
  role: AppealRole;
  reason: string;
  urls: string[];
}

/** What the form holds: the author checkbox, the reason, the URL lines. */
export interface AppealForm {
  author: boolean;
  reason: string;
  urlLines: string;
}

export type AppealFormCheck =
  | { ok: true; role: AppealRole; reason: string; urls: string[] }
  | { ok: false; errors: string[] };

/** Characters as the server counts them (Unicode code points, Go's runes). */
export function reasonLength(reason: string): number {
  return Array.from(reason.trim()).length;
}

/** The reason's problem, or null when the server's rule accepts it. */
export function reasonProblem(reason: string): string | null {
  const trimmed = reason.trim();
  const n = Array.from(trimmed).length;
  if (n < APPEAL_REASON_MIN) return `The reason needs at least ${APPEAL_REASON_MIN} characters (${n} so far).`;
  if (n > APPEAL_REASON_MAX) return `The reason may have at most ${APPEAL_REASON_MAX} characters (${n} now).`;
  if (!isWellFormed(trimmed)) return "The reason contains characters that cannot be sent.";
  // Control characters other than line breaks and tabs (the server refuses them too).
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(trimmed)) return "The reason contains control characters.";
  return null;
}

function isWellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/** Non-empty lines, trimmed: one URL a line. */
export function urlLines(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

function ipv4Octets(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

/** Whether an IPv4 address is outside public unicast (loopback, private, link-local, shared, multicast, reserved). */
function ipv4NotPublic([a = 0, b = 0]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224
  );
}

/** The eight 16-bit groups of an IPv6 literal as the URL parser writes it (hex groups, no brackets), or null. */
function ipv6Groups(host: string): number[] | null {
  const halves = host.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === "") return [];
    const groups = s.split(":");
    if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if (head === null || rest === null) return null;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...rest];
}

function ipv6NotPublic(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0xffff) return ipv4NotPublic([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]); // IPv4-mapped
    if (g5 === 0 && g6 === 0 && (g7 === 0 || g7 === 1)) return true; // unspecified, loopback
  }
  return (
    (g0 & 0xfe00) === 0xfc00 || // unique local
    (g0 & 0xffc0) === 0xfe80 || // link-local
    (g0 & 0xff00) === 0xff00 // multicast
  );
}

/** The problem of one URL line (its position counted from 1), or null when the server's syntactic rule accepts it. */
export function urlProblem(raw: string, position: number): string | null {
  const which = `URL ${position}`;
  if (new TextEncoder().encode(raw).length > APPEAL_URL_MAX_BYTES || !isWellFormed(raw)) {
    return `${which} is longer than ${APPEAL_URL_MAX_BYTES} bytes.`;
  }
  // Absolute http(s) only, written out (no "http:host" shorthand the server would read as opaque).
  if (!/^https?:\/\//i.test(raw)) return `${which} must start with http:// or https://.`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${which} is not a valid address.`;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    return `${which} must start with http:// or https://.`;
  }
  if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) {
    return `${which} must not contain a user name or password.`;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return `${which} names this computer, not a public page.`;
  const v4 = ipv4Octets(host);
  if (v4 !== null && ipv4NotPublic(v4)) return `${which} names a private or local address.`;
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = ipv6Groups(host.slice(1, -1));
    if (v6 === null || ipv6NotPublic(v6)) return `${which} names a private or local address.`;
  }
  return null;
}

/** Checks the whole form by the server's rules; the values to send when it passes. */
export function checkAppealForm(form: AppealForm): AppealFormCheck {
  const errors: string[] = [];
  const reason = form.reason.trim();
  const reasonError = reasonProblem(reason);
  if (reasonError !== null) errors.push(reasonError);
  const urls = urlLines(form.urlLines);
  if (urls.length > APPEAL_MAX_URLS) errors.push(`At most ${APPEAL_MAX_URLS} URLs (${urls.length} given).`);
  const seen = new Set<string>();
  urls.slice(0, APPEAL_MAX_URLS + 1).forEach((raw, i) => {
    if (seen.has(raw)) {
      errors.push(`URL ${i + 1} repeats an earlier one.`);
      return;
    }
    seen.add(raw);
    const problem = urlProblem(raw, i + 1);
    if (problem !== null) errors.push(problem);
  });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, role: form.author ? "AUTHOR" : "READER", reason, urls };
}

/** Checks an appeal as the background receives it from a content script (never trusted blindly). */
export function checkAppealInput(input: unknown): AppealInput | null {
  if (typeof input !== "object" || input === null) return null;
  const m = input as Record<string, unknown>;
  const { claimId, role, reason, urls } = m;
  if (typeof claimId !== "string" || claimId.length === 0 || claimId.length > 128) return null;
  if (role !== "READER" && role !== "AUTHOR") return null;
  if (typeof reason !== "string" || !Array.isArray(urls) || !urls.every((u) => typeof u === "string")) return null;
  const check = checkAppealForm({ author: role === "AUTHOR", reason, urlLines: (urls as string[]).join("\n") });
  if (!check.ok || check.urls.length !== urls.length) return null;
  return { claimId, role, reason: check.reason, urls: check.urls };
}

export interface AppealFileOutput {
  appealId: string;
  status: AppealStatus;
  duplicate: boolean;
}

/** What appeal.get answers, and what the extension remembers per claim. */
export interface AppealRecord {
  appealId: string;
  claimId: string;
  status: AppealStatus;
  role: AppealRole;
  filedAt: string;
  decidedAt: string | null;
  decisionReason: string | null;
}

const appealStatus = literal("OPEN", "UPHELD", "RETRACTED");

export const appealFileOutput: Validator<AppealFileOutput> = object({
  appealId: nonEmptyString,
  status: appealStatus,
  duplicate: boolean,
});

export const appealRecord: Validator<AppealRecord> = object({
  appealId: nonEmptyString,
  claimId: nonEmptyString,
  status: appealStatus,
  role: literal("READER", "AUTHOR"),
  filedAt: nonEmptyString,
  decidedAt: nullable(nonEmptyString),
  decisionReason: nullable(string),
});

/** An open appeal is read again after these delays (then gives up until the card is opened again). */
export const APPEAL_POLL_DELAYS_MS = [2_000, 3_000, 5_000, 8_000, 13_000, 20_000, 30_000, 30_000, 60_000, 60_000] as const;

/** The delay before read number attempt (0-based), or null when polling should stop. */
export function appealPollDelay(attempt: number): number | null {
  return APPEAL_POLL_DELAYS_MS[attempt] ?? null;
}

/** A server string made fit to show as text: no control characters, bounded. */
export function displayText(text: string, max = 600): string {
  const flat = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim();
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}
