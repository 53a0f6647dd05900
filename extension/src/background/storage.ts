// A small key-value interface over chrome.storage areas, so the background
// logic can be tested with a Map and survives the MV3 service worker being
// stopped (storage.session lives as long as the browser session).

export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
  /** Every entry whose key starts with the prefix. */
  entries<T>(prefix: string): Promise<Array<[string, T]>>;
}

export class ChromeStorageStore implements KeyValueStore {
  constructor(private readonly area: chrome.storage.StorageArea) {}

  async get<T>(key: string): Promise<T | undefined> {
    const stored = await this.area.get(key);
    return stored[key] as T | undefined;
  }

  async set(key: string, value: unknown): Promise<void> {
    await this.area.set({ [key]: value });
  }

  async remove(key: string): Promise<void> {
    await this.area.remove(key);
  }

  async entries<T>(prefix: string): Promise<Array<[string, T]>> {
    const all = await this.area.get(null);
    return Object.entries(all)
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, value]) => [key, value as T]);
  }
}

/** For tests, and for browsers without storage.session (state then lasts only as long as the worker). */
export class MemoryStore implements KeyValueStore {
  readonly data = new Map<string, unknown>();

  async get<T>(key: string): Promise<T | undefined> {
    const value = this.data.get(key);
    return value === undefined ? undefined : (structuredClone(value) as T);
  }

  async set(key: string, value: unknown): Promise<void> {
    this.data.set(key, structuredClone(value));
  }

  async remove(key: string): Promise<void> {
    this.data.delete(key);
  }

  async entries<T>(prefix: string): Promise<Array<[string, T]>> {
    return [...this.data.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, value]) => [key, structuredClone(value) as T]);
  }
}

/** storage.session where the browser has it (Chrome 102+, Firefox 115+). */
export function sessionStore(): KeyValueStore {
  const area = chrome.storage.session as chrome.storage.StorageArea | undefined;
  return area === undefined ? new MemoryStore() : new ChromeStorageStore(area);
}
