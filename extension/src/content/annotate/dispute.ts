// "Dispute this claim" in the claim panel: a button, then a small form
// (author or reader, the reason with a live character count, up to five
// source URLs), checked by the server's rules before it is sent through the
// background; then the appeal's state, followed until it is decided. Every
// string from the server is inserted as text, isolated for bidirectional
// text. Keyboard: the form takes focus when it opens, Escape or Cancel
// closes it and gives focus back to the button, the outcome takes focus
// after sending.

import type { Claim } from "../../lib/api-types";
import {
  APPEAL_MAX_URLS,
  APPEAL_REASON_MAX,
  APPEAL_REASON_MIN,
  type AppealRecord,
  checkAppealForm,
  displayText,
  reasonLength,
} from "../../lib/appeals";
import type { AppealTracker } from "./appeal-tracker";

export interface PanelSection {
  element: HTMLElement;
  /** Handles Escape; true when it closed something of its own (the panel stays open). */
  escape(): boolean;
}

export const DISPUTE_STYLES = `
.dispute { margin-top: 12px; padding-top: 8px; border-top: 1px solid var(--e-border); }
.dispute form { display: grid; gap: 6px; margin-top: 6px; }
.dispute label { display: block; font-size: 12px; color: var(--e-fg); }
.dispute .check { display: flex; gap: 6px; align-items: center; }
.dispute textarea { box-sizing: border-box; width: 100%; font: 12px/1.4 system-ui, sans-serif; color: var(--e-fg); background: var(--e-bg);
  border: 1px solid var(--e-border); border-radius: 4px; padding: 4px 6px; resize: vertical; }
.dispute textarea:focus-visible, .dispute input:focus-visible { outline: 2px solid var(--e-link); outline-offset: 1px; }
.dispute .count { font-size: 11px; color: var(--e-muted); text-align: right; }
.dispute .count.bad { color: var(--e-accent); }
.dispute .errors { margin: 0; padding-left: 18px; color: var(--e-accent); font-size: 12px; }
.dispute .errors:empty { display: none; }
.dispute .actions { display: flex; gap: 12px; justify-content: flex-end; }
.dispute .primary { color: var(--e-bg); background: var(--e-link); border-radius: 4px; padding: 3px 10px; }
.dispute .primary:disabled { opacity: .6; cursor: default; }
.dispute .state { margin: 4px 0 0; font-weight: 600; }
.dispute .state:focus { outline: none; }
.dispute .state:focus-visible { outline: 2px solid var(--e-link); }
.dispute .decision { margin: 4px 0 0; unicode-bidi: isolate; white-space: pre-wrap; }
.dispute .note { margin: 4px 0 0; color: var(--e-muted); font-size: 12px; }
.dispute .error { margin: 4px 0 0; color: var(--e-accent); font-size: 12px; unicode-bidi: isolate; }
`;

let sequence = 0;

function el<K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function headline(record: AppealRecord): string {
  switch (record.status) {
    case "OPEN":
      return "Appeal received: under review";
    case "UPHELD":
      return "Reviewed: the correction stands";
    case "RETRACTED":
      return "Withdrawn after review";
  }
}

/** The dispute section of one claim's panel. */
export function disputeSection(doc: Document, claim: Claim, tracker: AppealTracker, relayout: () => void = () => undefined): PanelSection {
  const id = `errata-dispute-${(sequence += 1)}`;
  const root = el(doc, "section", "dispute");
  root.setAttribute("aria-label", "Dispute this claim");
  root.dataset["claimId"] = claim.id;
  let formOpen = false;
  let opener: HTMLButtonElement | null = null;
  let sending = false;
  let focusStateNext = false;

  const renderState = (): void => {
    const state = tracker.get(claim.id);
    if (state === undefined) {
      renderButton();
      return;
    }
    const status = el(doc, "p", "state", headline(state.record));
    status.tabIndex = -1;
    status.setAttribute("role", "status");
    status.dataset["status"] = state.record.status;
    const parts: HTMLElement[] = [status];
    const reason = state.record.decisionReason;
    if (state.record.status !== "OPEN" && reason !== null && reason.trim().length > 0) {
      const decision = el(doc, "p", "decision", displayText(reason, 2000));
      decision.dir = "auto";
      parts.push(decision);
    }
    if (state.record.status === "OPEN") {
      if (state.note !== null) {
        const note = el(doc, "p", "note", displayText(state.note, 300));
        note.dir = "auto";
        const again = el(doc, "button", "again", "Check again");
        again.type = "button";
        again.addEventListener("click", () => {
          focusStateNext = true;
          tracker.checkAgain(claim.id);
        });
        parts.push(note, again);
      } else if (state.following) {
        parts.push(el(doc, "p", "note", "Checking for a decision…"));
      }
    }
    root.replaceChildren(...parts);
    relayout();
    if (focusStateNext) {
      focusStateNext = false;
      status.focus({ preventScroll: true });
    }
  };

  const renderButton = (): void => {
    const button = el(doc, "button", "dispute-open", "Dispute this claim");
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-controls", `${id}-form`);
    button.addEventListener("click", () => renderForm());
    opener = button;
    formOpen = false;
    root.replaceChildren(button);
    relayout();
  };

  const renderForm = (): void => {
    formOpen = true;
    const form = el(doc, "form");
    form.id = `${id}-form`;
    form.noValidate = true;

    const author = el(doc, "input");
    author.type = "checkbox";
    author.id = `${id}-author`;
    const authorLabel = el(doc, "label", "check");
    authorLabel.append(author, doc.createTextNode("I am the author of this post"));

    const reason = el(doc, "textarea", "reason");
    reason.id = `${id}-reason`;
    reason.rows = 4;
    reason.required = true;
    reason.setAttribute("aria-describedby", `${id}-count`);
    const reasonLabel = el(doc, "label", undefined, "Your reason: what does the correction get wrong?");
    reasonLabel.htmlFor = reason.id;
    const count = el(doc, "div", "count");
    count.id = `${id}-count`;
    const updateCount = (): void => {
      const n = reasonLength(reason.value);
      count.textContent = `${n} / ${APPEAL_REASON_MAX} characters (at least ${APPEAL_REASON_MIN})`;
      count.classList.toggle("bad", n < APPEAL_REASON_MIN || n > APPEAL_REASON_MAX);
    };
    reason.addEventListener("input", updateCount);
    updateCount();

    const urls = el(doc, "textarea", "urls");
    urls.id = `${id}-urls`;
    urls.rows = 2;
    urls.placeholder = "https://…";
    const urlsLabel = el(doc, "label", undefined, `Sources (optional): up to ${APPEAL_MAX_URLS} URLs, one per line`);
    urlsLabel.htmlFor = urls.id;

    const errors = el(doc, "ul", "errors");
    errors.setAttribute("role", "alert");

    const submit = el(doc, "button", "primary", "Send appeal");
    submit.type = "submit";
    const cancel = el(doc, "button", "cancel", "Cancel");
    cancel.type = "button";
    cancel.addEventListener("click", () => close());
    const actions = el(doc, "div", "actions");
    actions.append(cancel, submit);

    form.append(authorLabel, reasonLabel, reason, count, urlsLabel, urls, errors, actions);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (sending) return;
      const check = checkAppealForm({ author: author.checked, reason: reason.value, urlLines: urls.value });
      if (!check.ok) {
        errors.replaceChildren(...check.errors.map((e) => el(doc, "li", undefined, e)));
        relayout();
        return;
      }
      errors.replaceChildren();
      sending = true;
      submit.disabled = true;
      submit.textContent = "Sending…";
      void tracker
        .file({ claimId: claim.id, role: check.role, reason: check.reason, urls: check.urls })
        .then((result) => {
          sending = false;
          if (root.parentNode === null) return;
          if (result.ok) {
            formOpen = false;
            focusStateNext = true;
            renderState();
            return;
          }
          submit.disabled = false;
          submit.textContent = "Send appeal";
          const item = el(doc, "li", "server", displayText(result.error, 400));
          item.dir = "auto";
          errors.replaceChildren(item);
          relayout();
        });
    });
    opener = null;
    root.replaceChildren(el(doc, "span", "label", "Dispute this claim"), form);
    relayout();
    author.focus({ preventScroll: true });
  };

  const close = (): void => {
    renderButton();
    opener?.focus({ preventScroll: true });
  };

  const unsubscribe = tracker.subscribe((claimId) => {
    if (root.parentNode === null) {
      unsubscribe(); // the panel shows another claim now
      return;
    }
    if (claimId === claim.id && !formOpen) renderState();
  });
  // Keys typed into the form are ours: the page's own shortcuts must not see them.
  for (const type of ["keydown", "keyup", "keypress"] as const) {
    root.addEventListener(type, (event) => {
      if ((event as KeyboardEvent).key !== "Escape") event.stopPropagation();
    });
  }
  renderState();

  return {
    element: root,
    escape(): boolean {
      if (!formOpen) return false;
      close();
      return true;
    },
  };
}
