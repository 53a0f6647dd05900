// Appeals of published claims through the API (issue 18): file one
// (appeal.file), read one (appeal.get), and remember each claim's appeal in
// storage.local so that its card shows the state on the next visit. Answers
// are worded for the user and never throw: they go back to the content
// script. What a content script sends is checked again here.

import { type AppealRecord, checkAppealInput, displayText } from "../lib/appeals";
import {
  type AppealFileResponse,
  type AppealGetResponse,
  type AppealStatesResponse,
  MESSAGE_PROTOCOL_VERSION,
} from "../lib/messages";
import { type ApiClient, ApiError } from "./api-client";
import { describeFailure, isPermanentFailure } from "./errors";
import type { KeyValueStore } from "./storage";

export type AppealApi = Pick<ApiClient, "appealFile" | "appealGet">;

export const APPEAL_KEY_PREFIX = "appeal:";
/** Remembered appeals at most; the oldest are forgotten first. */
export const MAX_REMEMBERED_APPEALS = 500;

interface Remembered {
  record: AppealRecord;
  savedAt: number;
}

/** The server refused the appeal for a reason it explains (400, 404, 409, 429): its words are shown. */
const TELLING_STATUS = new Set([400, 404, 409, 429]);

/** A failure worded for the user: the server's own message for the refusals it explains, else the common wording. */
export function describeAppealFailure(error: unknown): string {
  if (error instanceof ApiError && TELLING_STATUS.has(error.httpStatus)) {
    const message = displayText(error.serverMessage, 300).replace(/[.\s]+$/, "");
    const said = message.length > 0 ? `${message}.` : `The server refused the appeal (${error.codeName}).`;
    if (error.httpStatus === 429) {
      const wait = error.retryAfterSeconds;
      return wait === undefined ? `${said} Try again later.` : `${said} Try again in ${formatWait(wait)}.`;
    }
    return said;
  }
  const text = describeFailure(error);
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function formatWait(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

export class AppealService {
  constructor(
    private readonly api: () => Promise<AppealApi>,
    /** storage.local in the extension (MemoryStore in tests). */
    private readonly store: KeyValueStore,
    private readonly now: () => number,
  ) {}

  async file(message: unknown): Promise<AppealFileResponse> {
    const input = checkAppealInput(message);
    if (input === null) return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: "The appeal was not valid; check the reason and the URLs." };
    try {
      const filed = await (await this.api()).appealFile(input);
      const previous = await this.remembered(input.claimId);
      const record: AppealRecord =
        previous?.appealId === filed.appealId
          ? { ...previous, status: filed.status === "OPEN" ? previous.status : filed.status }
          : {
              appealId: filed.appealId,
              claimId: input.claimId,
              status: filed.status,
              role: input.role,
              filedAt: new Date(this.now()).toISOString(),
              decidedAt: null,
              decisionReason: null,
            };
      await this.remember(record);
      return { v: MESSAGE_PROTOCOL_VERSION, ok: true, record, duplicate: filed.duplicate };
    } catch (error: unknown) {
      const response: AppealFileResponse = { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: describeAppealFailure(error) };
      if (error instanceof ApiError && error.retryAfterSeconds !== undefined) response.retryAfterSeconds = error.retryAfterSeconds;
      return response;
    }
  }

  async read(claimId: string, appealId: string): Promise<AppealGetResponse> {
    try {
      const record = await (await this.api()).appealGet({ appealId });
      if (record.claimId !== claimId || record.appealId !== appealId) {
        return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: "The server answered about another appeal.", permanent: true };
      }
      await this.remember(record);
      return { v: MESSAGE_PROTOCOL_VERSION, ok: true, record };
    } catch (error: unknown) {
      // Right after appeal.file the read model may not show the appeal yet: NOT_FOUND is worth another read.
      const notYet = error instanceof ApiError && error.codeName === "NOT_FOUND";
      return {
        v: MESSAGE_PROTOCOL_VERSION,
        ok: false,
        error: describeAppealFailure(error),
        permanent: !notYet && isPermanentFailure(error),
      };
    }
  }

  async states(claimIds: readonly string[]): Promise<AppealStatesResponse> {
    const records: AppealRecord[] = [];
    for (const id of new Set(claimIds)) {
      const record = await this.remembered(id);
      if (record !== undefined) records.push(record);
    }
    return { v: MESSAGE_PROTOCOL_VERSION, records };
  }

  private async remembered(claimId: string): Promise<AppealRecord | undefined> {
    return (await this.store.get<Remembered>(`${APPEAL_KEY_PREFIX}${claimId}`))?.record;
  }

  private async remember(record: AppealRecord): Promise<void> {
    await this.store.set(`${APPEAL_KEY_PREFIX}${record.claimId}`, { record, savedAt: this.now() } satisfies Remembered);
    const all = await this.store.entries<Remembered>(APPEAL_KEY_PREFIX);
    if (all.length <= MAX_REMEMBERED_APPEALS) return;
    all.sort(([, a], [, b]) => a.savedAt - b.savedAt);
    for (const [key] of all.slice(0, all.length - MAX_REMEMBERED_APPEALS)) await this.store.remove(key);
  }
}
