// User settings, all in storage.local on this device (the user's OpenAI key
// in particular is never synced and never sent anywhere but the configured
// API, on investigateNow and validateSettings).

export interface Settings {
  /** Base URL of the Errata API. */
  apiBaseUrl: string;
  /** Instance API key issued by the API's operator (optional). */
  apiKey: string;
  /** The user's own OpenAI key (optional). */
  openaiApiKey: string;
  /** Overrides the public attestation key for request signatures (advanced, optional). */
  hmacSecret: string;
  /** Request an investigation automatically when a post has none (needs an OpenAI key). */
  autoInvestigate: boolean;
  /** Draw the annotations on pages (the popup's "Show highlights"). */
  showHighlights: boolean;
}

export const DEFAULT_API_BASE_URL = "http://127.0.0.1:8080";

export const DEFAULT_SETTINGS: Readonly<Settings> = {
  apiBaseUrl: DEFAULT_API_BASE_URL,
  apiKey: "",
  openaiApiKey: "",
  hmacSecret: "",
  autoInvestigate: false,
  showHighlights: true,
};

const STORAGE_KEY = "settings";

/** Why a base URL is unusable, or null when it is fine. */
export function apiBaseUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must start with http:// or https://";
  if (url.search !== "" || url.hash !== "") return "must not have a query or fragment";
  return null;
}

/** Settings from whatever storage holds, falling back to defaults field by field. */
export function parseSettings(stored: unknown): Settings {
  const raw = typeof stored === "object" && stored !== null ? (stored as Record<string, unknown>) : {};
  const text = (key: keyof Settings): string | undefined => {
    const v = raw[key];
    return typeof v === "string" ? v.trim() : undefined;
  };
  const base = text("apiBaseUrl");
  return {
    apiBaseUrl: base !== undefined && apiBaseUrlProblem(base) === null ? base.replace(/\/+$/, "") : DEFAULT_API_BASE_URL,
    apiKey: text("apiKey") ?? "",
    openaiApiKey: text("openaiApiKey") ?? "",
    hmacSecret: text("hmacSecret") ?? "",
    autoInvestigate: raw["autoInvestigate"] === true,
    showHighlights: raw["showHighlights"] !== false,
  };
}

export async function loadSettings(): Promise<Settings> {
  const stored = await chrome.storage.local.get(STORAGE_KEY);
  return parseSettings(stored[STORAGE_KEY]);
}

export async function saveSettings(settings: Settings): Promise<Settings> {
  const clean = parseSettings(settings);
  await chrome.storage.local.set({ [STORAGE_KEY]: clean });
  return clean;
}

/** Whether Investigate Now can be authorized: an instance key or the user's own OpenAI key. */
export function hasInvestigationCredentials(settings: Settings): boolean {
  return settings.apiKey.length > 0 || settings.openaiApiKey.length > 0;
}

/** Whether a post without an investigation is to be investigated without asking (spec 2.6, auto-investigate). */
export function shouldAutoInvestigate(settings: Settings): boolean {
  return settings.autoInvestigate && settings.openaiApiKey.length > 0;
}

export function onSettingsChanged(listener: (settings: Settings) => void): void {
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && STORAGE_KEY in changes) listener(parseSettings(changes[STORAGE_KEY]?.newValue));
  });
}
