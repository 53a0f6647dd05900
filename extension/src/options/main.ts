// Options page: edits the settings and tests them against the server
// (GET /health, then validateSettings with the keys as typed).

import { ApiClient, ApiError, ApiNetworkError, UpgradeRequiredError } from "../background/api-client";
import type { ValidateSettingsOutput } from "../lib/api-types";
import { apiBaseUrlProblem, loadSettings, saveSettings, type Settings } from "../lib/settings";

function input(id: string): HTMLInputElement {
  const node = document.getElementById(id);
  if (!(node instanceof HTMLInputElement)) throw new Error(`missing input #${id}`);
  return node;
}

/** Settings not on this page (the popup's highlight toggle) are kept as loaded. */
let loaded: Settings | null = null;

function readForm(): Settings {
  return {
    showHighlights: loaded?.showHighlights ?? true,
    apiBaseUrl: input("apiBaseUrl").value.trim(),
    apiKey: input("apiKey").value.trim(),
    openaiApiKey: input("openaiApiKey").value.trim(),
    hmacSecret: input("hmacSecret").value,
    autoInvestigate: input("autoInvestigate").checked,
  };
}

function fillForm(settings: Settings): void {
  loaded = settings;
  input("apiBaseUrl").value = settings.apiBaseUrl;
  input("apiKey").value = settings.apiKey;
  input("openaiApiKey").value = settings.openaiApiKey;
  input("hmacSecret").value = settings.hmacSecret;
  input("autoInvestigate").checked = settings.autoInvestigate;
}

function line(text: string, className?: string): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  if (className !== undefined) li.className = className;
  return li;
}

function describeOpenAiKey(result: ValidateSettingsOutput): HTMLLIElement {
  switch (result.openaiApiKeyStatus) {
    case "missing":
      return line("OpenAI key: none entered.", "muted");
    case "valid":
      return line("OpenAI key: accepted by OpenAI.", "good");
    default:
      return line(`OpenAI key (${result.openaiApiKeyStatus.replace(/_/g, " ")}): ${result.openaiApiKeyMessage}`, "bad");
  }
}

function describeError(error: unknown): string {
  if (error instanceof UpgradeRequiredError) {
    const minimum = error.minimumSupportedExtensionVersion;
    return `this extension version is too old for the server${minimum === undefined ? "" : ` (it needs ${minimum} or later)`}`;
  }
  if (error instanceof ApiNetworkError) return "cannot reach the server at this URL";
  if (error instanceof ApiError) return `the server refused the request: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

async function testConnection(): Promise<void> {
  const results = document.getElementById("test-results");
  if (results === null) return;
  const list = document.createElement("ul");
  results.replaceChildren(list);
  results.dataset["status"] = "running";
  try {
    results.dataset["status"] = (await runConnectionTest(list)) ? "ok" : "failed";
  } catch (error: unknown) {
    list.append(line(`Unexpected error: ${describeError(error)}.`, "bad"));
    results.dataset["status"] = "failed";
  }
}

/** Appends one line per check; true when the server is healthy and answered validateSettings. */
async function runConnectionTest(list: HTMLUListElement): Promise<boolean> {
  const settings = readForm();
  const problem = apiBaseUrlProblem(settings.apiBaseUrl);
  if (problem !== null) {
    list.append(line(`API server URL: ${problem}.`, "bad"));
    return false;
  }
  const api = new ApiClient({
    baseUrl: settings.apiBaseUrl,
    extensionVersion: chrome.runtime.getManifest().version,
    apiKey: settings.apiKey,
    openaiApiKey: settings.openaiApiKey,
    hmacSecret: settings.hmacSecret,
  });
  try {
    await api.health();
    list.append(line("Server: reachable and healthy.", "good"));
  } catch (error: unknown) {
    list.append(line(`Server: ${describeError(error)}.`, "bad"));
    return false;
  }
  try {
    const result = await api.validateSettings();
    list.append(
      settings.apiKey.length === 0
        ? line("Instance API key: none entered.", "muted")
        : result.instanceApiKeyAccepted
          ? line("Instance API key: accepted.", "good")
          : line("Instance API key: not accepted by this server.", "bad"),
      describeOpenAiKey(result),
    );
    return true;
  } catch (error: unknown) {
    list.append(line(`Settings check: ${describeError(error)}.`, "bad"));
    return false;
  }
}

const ALL_SITES = ["https://*/*", "http://*/*"];

/** Firefox treats MV3 host permissions as optional: offer to grant them when they are missing. */
async function offerSiteAccess(): Promise<void> {
  const section = document.getElementById("site-access");
  const grant = document.getElementById("grant-access");
  if (section === null || grant === null || chrome.permissions === undefined) return;
  const granted = await chrome.permissions.contains({ origins: ALL_SITES }).catch(() => true);
  section.hidden = granted;
  grant.addEventListener("click", () => {
    void chrome.permissions.request({ origins: ALL_SITES }).then((ok) => {
      section.hidden = ok;
    });
  });
}

async function main(): Promise<void> {
  fillForm(await loadSettings());
  const form = document.getElementById("settings");
  const saved = document.getElementById("saved");
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    const settings = readForm();
    const problem = apiBaseUrlProblem(settings.apiBaseUrl);
    if (saved !== null) saved.textContent = "";
    if (problem !== null) {
      input("apiBaseUrl").setCustomValidity(`API server URL ${problem}`);
      input("apiBaseUrl").reportValidity();
      return;
    }
    input("apiBaseUrl").setCustomValidity("");
    void saveSettings(settings).then((clean) => {
      fillForm(clean);
      if (saved !== null) saved.textContent = "Saved.";
    });
  });
  document.getElementById("test")?.addEventListener("click", () => void testConnection());
  await offerSiteAccess();
}

void main();
