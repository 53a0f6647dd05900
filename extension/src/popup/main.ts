// Popup: shows what the background worker knows about the active tab's post.

import type { Claim, ClaimPayload } from "../lib/api-types";
import { MESSAGE_PROTOCOL_VERSION, type GetTabStateResponse, type PopupMessage } from "../lib/messages";
import { SKIP_TITLES, type TabState } from "../lib/tab-state";

const PLATFORM_NAMES = { LESSWRONG: "LessWrong", X: "X", SUBSTACK: "Substack", WIKIPEDIA: "Wikipedia" } as const;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

function claimList(claims: ReadonlyArray<Claim | ClaimPayload>): HTMLElement {
  const list = el("ol");
  list.className = "claims";
  for (const claim of claims) {
    const item = el("li");
    item.append(el("div", `“${claim.text}”`, "claim-text"), el("div", claim.summary));
    list.append(item);
  }
  return list;
}

function render(state: TabState): HTMLElement[] {
  if (state.kind === "idle") return [el("p", "No supported post on this page.", "muted")];
  const post = el("p", `${PLATFORM_NAMES[state.platform]} · ${state.url}`, "post muted");
  switch (state.kind) {
    case "skipped":
      return [post, el("p", SKIP_TITLES[state.reason])];
    case "unavailable":
      return [post, el("p", `The post could not be read on this page (${state.reason.replace(/_/g, " ")}).`)];
    case "registering":
      return [post, el("p", "Checking this post…", "muted")];
    case "error":
      return state.upgradeRequired !== undefined
        ? [
            post,
            el(
              "p",
              `This extension version is too old for the server${
                state.upgradeRequired.minimumVersion === undefined ? "" : ` (it needs ${state.upgradeRequired.minimumVersion} or later)`
              }. Please update the extension.`,
              "bad",
            ),
          ]
        : [post, el("p", `Could not check this post: ${state.message}.`, "bad")];
    case "status": {
      const s = state.status;
      switch (s.investigationState) {
        case "NOT_INVESTIGATED":
          return [post, el("p", "Not yet investigated.")];
        case "INVESTIGATING": {
          const out: HTMLElement[] = [post, el("p", `Investigation ${s.status === "PENDING" ? "queued" : "in progress"}.`)];
          const found = [...s.confirmedClaims, ...s.pendingClaims];
          if (found.length > 0) out.push(el("p", "Found so far (not final):", "muted"), claimList(found));
          return out;
        }
        case "INVESTIGATED":
          return s.claims.length === 0
            ? [post, el("p", "No incorrect claims found.", "good")]
            : [
                post,
                el("p", `${s.claims.length} incorrect claim${s.claims.length === 1 ? "" : "s"} found:`, "bad"),
                claimList(s.claims),
              ];
      }
    }
  }
}

async function main(): Promise<void> {
  document.getElementById("open-options")?.addEventListener("click", (event) => {
    event.preventDefault();
    void chrome.runtime.openOptionsPage();
  });
  const target = document.getElementById("state");
  if (target === null) return;
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  let state: TabState = { kind: "idle" };
  if (tab?.id !== undefined) {
    const request: PopupMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "GET_TAB_STATE", tabId: tab.id };
    const response = (await chrome.runtime.sendMessage(request)) as GetTabStateResponse | undefined;
    if (response?.v === MESSAGE_PROTOCOL_VERSION) state = response.state;
  }
  target.replaceChildren(...render(state));
}

void main();
