// A private, real Errata stack for the end-to-end tests: `errata serve` and
// `errata worker` on the local Kafka, Postgres, Elasticsearch and ClickHouse
// (`make up` in the repository root), with a scripted fake LLM provider
// (`errata fake-openai --script`). Everything it creates is its own and is
// removed when it stops: a Postgres database, Elasticsearch indices under a
// random prefix, a ClickHouse database. (Its Kafka topics, under a random
// prefix, stay: removing them needs a Kafka admin client.)
//
// As a module: `const stack = await startStack(); ...; await stack.stop()`.
// As a command:
//   node scripts/e2e-stack.mjs                 start, print the settings, run until Ctrl-C
//   node scripts/e2e-stack.mjs -- CMD ARGS...  start, run CMD with ERRATA_E2E_* set, stop; exits with CMD's status
// Environment: ERRATA_BIN (default ../bin/errata), ERRATA_E2E_SCRIPT (default
// test/e2e/fixtures/fake-script.json), and the services' ERRATA_KAFKA_BROKERS,
// ERRATA_DATABASE_URL, ERRATA_ELASTICSEARCH_URL, ERRATA_CLICKHOUSE_URL
// (defaults: the local services). Logs go to test-artifacts/stack/.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const EXTENSION_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_DIR = resolve(EXTENSION_DIR, "..");
export const DEFAULT_BIN = join(REPO_DIR, "bin", "errata");
export const DEFAULT_SCRIPT = join(EXTENSION_DIR, "test", "e2e", "fixtures", "fake-script.json");
export const STACK_LOG_DIR = join(EXTENSION_DIR, "test-artifacts", "stack");

const SERVICES = {
  ERRATA_KAFKA_BROKERS: "127.0.0.1:19092",
  ERRATA_DATABASE_URL: "postgres://errata:errata@127.0.0.1:15432/errata?sslmode=disable",
  ERRATA_ELASTICSEARCH_URL: "http://127.0.0.1:19200",
  ERRATA_CLICKHOUSE_URL: "http://127.0.0.1:18123",
};

/** @param {string} msg */
function log(msg) {
  console.log(`e2e-stack: ${msg}`);
}

/** Nothing the stack talks to may be outside 127.0.0.0/8. @param {string} name @param {string} value */
function requireLoopback(name, value) {
  for (const part of value.split(",")) {
    const host = part.includes("://") ? new URL(part).hostname : part.replace(/:\d+$/, "");
    if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== "localhost") {
      throw new Error(`${name}=${value}: the e2e stack only talks to loopback addresses`);
    }
  }
}

/** A free loopback port (closed again; the process that gets it binds it moments later). */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** psql of the local PostgreSQL (PATH, then Debian's versioned directories). */
function findPsql() {
  const found = spawnSync("sh", ["-c", "command -v psql"], { encoding: "utf8" });
  if (found.status === 0 && found.stdout.trim() !== "") return found.stdout.trim();
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    for (const version of readdirSync(base).sort().reverse()) {
      const candidate = join(base, version, "bin", "psql");
      if (existsSync(candidate)) return candidate;
    }
  }
  throw new Error("psql not found (make up installs PostgreSQL from Debian's packages)");
}

/** Runs one SQL statement as the configured user, against the database in adminUrl. @param {string} adminUrl @param {string} sql */
function psql(adminUrl, sql) {
  const r = spawnSync(findPsql(), [adminUrl, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${(r.stderr || r.stdout || String(r.error ?? r.signal)).trim()}`);
}

/** @param {string} url @param {number} timeoutMs */
async function healthy(url, timeoutMs = 2_000) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts the stack. Fails (after cleaning up) when any part does not come up.
 * @param {{ bin?: string, script?: string, logDir?: string }} [options]
 */
export async function startStack(options = {}) {
  const started = Date.now();
  const bin = options.bin ?? process.env["ERRATA_BIN"] ?? DEFAULT_BIN;
  const script = resolve(options.script ?? process.env["ERRATA_E2E_SCRIPT"] ?? DEFAULT_SCRIPT);
  const logDir = options.logDir ?? STACK_LOG_DIR;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run 'make build' in the repository root`);
  const openaiKey = /** @type {{ apiKey?: string }} */ (JSON.parse(readFileSync(script, "utf8"))).apiKey ?? "";

  /** @type {typeof SERVICES} */
  const services = {
    ERRATA_KAFKA_BROKERS: process.env["ERRATA_KAFKA_BROKERS"] || SERVICES.ERRATA_KAFKA_BROKERS,
    ERRATA_DATABASE_URL: process.env["ERRATA_DATABASE_URL"] || SERVICES.ERRATA_DATABASE_URL,
    ERRATA_ELASTICSEARCH_URL: process.env["ERRATA_ELASTICSEARCH_URL"] || SERVICES.ERRATA_ELASTICSEARCH_URL,
    ERRATA_CLICKHOUSE_URL: process.env["ERRATA_CLICKHOUSE_URL"] || SERVICES.ERRATA_CLICKHOUSE_URL,
  };
  for (const [k, v] of Object.entries(services)) requireLoopback(k, v);
  const id = randomBytes(5).toString("hex");
  const names = {
    topicPrefix: `e2e-${id}.`,
    database: `errata_e2e_${id}`,
    indexPrefix: `e2e-${id}-`,
    clickhouseDatabase: `e2e_${id}`,
  };
  const adminUrl = services.ERRATA_DATABASE_URL;
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${names.database}`;

  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });

  /** @type {{ name: string, child: import("node:child_process").ChildProcess }[]} */
  const children = [];
  let databaseCreated = false;
  let stopped = false;

  const killChildren = () => {
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  // Last resort if the launcher dies without stop(): no orphaned processes.
  process.on("exit", killChildren);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const t0 = Date.now();
    await Promise.all(
      children.map(
        ({ child }) =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done(undefined);
            const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
            child.once("exit", () => {
              clearTimeout(timer);
              done(undefined);
            });
            child.kill("SIGTERM");
          }),
      ),
    );
    process.off("exit", killChildren);
    const problems = [];
    if (databaseCreated) {
      try {
        psql(adminUrl, `DROP DATABASE IF EXISTS ${names.database} WITH (FORCE)`);
      } catch (e) {
        problems.push(String(e));
      }
    }
    try {
      const es = services.ERRATA_ELASTICSEARCH_URL.replace(/\/+$/, "");
      const res = await fetch(`${es}/_cat/indices/${names.indexPrefix}*?format=json&h=index&expand_wildcards=all`);
      const indices = res.ok ? /** @type {{ index: string }[]} */ (await res.json()).map((r) => r.index) : [];
      for (const index of indices) {
        // One name per request: wildcard deletes are refused by default.
        const del = await fetch(`${es}/${encodeURIComponent(index)}`, { method: "DELETE" });
        if (!del.ok) problems.push(`DELETE index ${index}: HTTP ${del.status}`);
      }
    } catch (e) {
      problems.push(`Elasticsearch: ${String(e)}`);
    }
    try {
      const ch = services.ERRATA_CLICKHOUSE_URL.replace(/\/+$/, "");
      const list = await fetch(ch, { method: "POST", body: `SELECT name FROM system.databases WHERE startsWith(name, '${names.clickhouseDatabase}') FORMAT TSV` });
      const databases = list.ok ? (await list.text()).split("\n").filter((n) => n === names.clickhouseDatabase || n.startsWith(`${names.clickhouseDatabase}_g`)) : [];
      for (const db of new Set([names.clickhouseDatabase, ...databases])) {
        const drop = await fetch(ch, { method: "POST", body: `DROP DATABASE IF EXISTS ${db}` });
        if (!drop.ok) problems.push(`DROP DATABASE ${db}: HTTP ${drop.status} ${await drop.text()}`);
      }
    } catch (e) {
      problems.push(`ClickHouse: ${String(e)}`);
    }
    log(`stopped and cleaned up in ${((Date.now() - t0) / 1000).toFixed(1)} s${problems.length > 0 ? `, with problems: ${problems.join("; ")}` : ""}`);
  };

  /** @param {string} name @param {string[]} args @param {NodeJS.ProcessEnv} env */
  const startProcess = (name, args, env) => {
    const out = createWriteStream(join(logDir, `${name}.log`));
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    children.push({ name, child });
    return child;
  };

  /** @param {string} name @param {import("node:child_process").ChildProcess} child @param {string} url */
  const waitHealthy = async (name, child, url) => {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`errata ${name} exited during start-up (${child.exitCode ?? child.signalCode}); see ${join(logDir, `${name}.log`)}`);
      }
      if (await healthy(url)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`errata ${name} not healthy at ${url} after 90 s; see ${join(logDir, `${name}.log`)}`);
  };

  try {
    /** @type {[string, string][]} */
    const probes = [
      ["ERRATA_ELASTICSEARCH_URL", `${services.ERRATA_ELASTICSEARCH_URL.replace(/\/+$/, "")}/_cluster/health`],
      ["ERRATA_CLICKHOUSE_URL", `${services.ERRATA_CLICKHOUSE_URL.replace(/\/+$/, "")}/ping`],
    ];
    for (const [k, url] of probes) {
      if (!(await healthy(url, 5_000))) throw new Error(`${k} does not answer at ${url}: start the local services with 'make up' (deploy/local/up)`);
    }
    psql(adminUrl, `CREATE DATABASE ${names.database}`);
    databaseCreated = true;

    // The fake provider first: its URL is the OpenAI base URL of serve and worker.
    const fakeLog = join(logDir, "fake-openai.jsonl");
    const fake = startProcess("fake-openai", ["fake-openai", "--addr", "127.0.0.1:0", "--script", script, "--script-log", fakeLog], process.env);
    const fakeUrl = await new Promise((resolveUrl, reject) => {
      let seen = "";
      const timer = setTimeout(() => reject(new Error(`errata fake-openai printed no URL; see ${join(logDir, "fake-openai.log")}`)), 15_000);
      fake.stdout?.on("data", (chunk) => {
        seen += String(chunk);
        const m = /http:\/\/127\.0\.0\.1:\d+\/v1/.exec(seen);
        if (m !== null) {
          clearTimeout(timer);
          resolveUrl(m[0]);
        }
      });
      fake.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`errata fake-openai exited (${code}); see ${join(logDir, "fake-openai.log")}`));
      });
    });
    // The fake has no /health: the key check's own request is the probe.
    const probe = await fetch(`${fakeUrl}/models`, { headers: { Authorization: `Bearer ${openaiKey}` } });
    if (!probe.ok) throw new Error(`the fake provider refused its own script's key (HTTP ${probe.status})`);

    const [apiPort, workerPort] = [await freePort(), await freePort()];
    /** @type {NodeJS.ProcessEnv} */
    const env = {
      ...process.env,
      ...services,
      ERRATA_DATABASE_URL: dbUrl.toString(),
      ERRATA_KAFKA_TOPIC_PREFIX: names.topicPrefix,
      ERRATA_KAFKA_PARTITIONS: "2",
      ERRATA_KAFKA_SESSION_TIMEOUT: "6s",
      ERRATA_SEARCH_INDEX_PREFIX: names.indexPrefix,
      ERRATA_CLICKHOUSE_DATABASE: names.clickhouseDatabase,
      ERRATA_METRICS_LINGER: "100ms",
      ERRATA_HTTP_ADDR: `127.0.0.1:${apiPort}`,
      ERRATA_WORKER_HTTP_ADDR: `127.0.0.1:${workerPort}`,
      ERRATA_SERVER_VERIFICATION: "false",
      ERRATA_HASH_SECRET: randomBytes(32).toString("hex"),
      ERRATA_KEYSTORE_KEYS: `e2e:${randomBytes(32).toString("base64")}`,
      ERRATA_KEYSTORE_CURRENT_KEY_ID: "",
      ERRATA_BLOBSTORE_URL: join(logDir, "blobs"),
      // Post images would be fetched from their (remote) URLs: off.
      ERRATA_INVESTIGATION_IMAGES: "false",
      // Web search: the script's SearXNG stand-in on the fake's own port
      // (its root, beside /v1), so analyses show their queries and sources.
      ERRATA_SEARCH_PROVIDER: "searxng",
      ERRATA_SEARCH_BASE_URL: fakeUrl.replace(/\/v1$/, ""),
      ERRATA_VIEW_IP_RANGE_DAILY_CAP: "100000",
      // Every browser of the suites is one client (127.0.0.1): room for all their verdict analyses.
      ERRATA_SUBMIT_BURST: "1000",
      OPENAI_BASE_URL: fakeUrl,
      // The instance's own key (the script's): verdict analyses, which no
      // user key reaches (workbench submissions, verdict.request), run on it.
      OPENAI_API_KEY: openaiKey,
      // Small timings, so a retry or a lost lease does not outlast a test.
      ERRATA_INVESTIGATION_RETRY_BASE: "1s",
      ERRATA_INVESTIGATION_MAX_ATTEMPTS: "2",
      ERRATA_WORK_LEASE_TTL: "5s",
      ERRATA_READ_YOUR_WRITES_TIMEOUT: "10s",
      ERRATA_LOG_FORMAT: "text",
    };
    for (const sub of ["topics", "migrate"]) {
      const r = spawnSync(bin, [sub], { env, encoding: "utf8", timeout: 120_000 });
      writeFileSync(join(logDir, `${sub}.log`), `${r.stdout ?? ""}${r.stderr ?? ""}`);
      if (r.status !== 0) throw new Error(`errata ${sub} failed (${r.status ?? r.signal}); see ${join(logDir, `${sub}.log`)}`);
    }
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const workerUrl = `http://127.0.0.1:${workerPort}`;
    const serve = startProcess("serve", ["serve"], env);
    const worker = startProcess("worker", ["worker"], env);
    await Promise.all([waitHealthy("serve", serve, `${apiUrl}/health`), waitHealthy("worker", worker, `${workerUrl}/health`)]);

    const info = { id, apiUrl, workerUrl, fakeUrl, fakeLog, script, ...names, database: names.database, logDir };
    writeFileSync(join(logDir, "stack.json"), `${JSON.stringify(info, null, 2)}\n`);
    log(`up in ${((Date.now() - started) / 1000).toFixed(1)} s: API ${apiUrl}, worker ${workerUrl}, fake provider ${fakeUrl}, id ${id}; logs in ${logDir}`);
    return {
      ...info,
      openaiKey,
      startMs: Date.now() - started,
      /** The variables the real-stack suites read. */
      testEnv: { ERRATA_E2E_API_URL: apiUrl, ERRATA_E2E_OPENAI_KEY: openaiKey, ERRATA_E2E_FAKE_LOG: fakeLog, ERRATA_E2E_SCRIPT: script },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function main() {
  const dash = process.argv.indexOf("--");
  const command = dash >= 0 ? process.argv.slice(dash + 1) : [];
  const stack = await startStack();
  let stopping = false;
  const shutdown = async (/** @type {number} */ code) => {
    if (stopping) return;
    stopping = true;
    await stack.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(130));
  process.on("SIGTERM", () => void shutdown(143));
  if (command.length === 0) {
    for (const [k, v] of Object.entries(stack.testEnv)) console.log(`export ${k}='${v}'`);
    log("running; Ctrl-C stops it and removes what it created");
    return;
  }
  const [cmd = "", ...args] = command;
  const child = spawn(cmd, args, { stdio: "inherit", env: { ...process.env, ...stack.testEnv } });
  child.on("exit", (code, signal) => void shutdown(code ?? (signal === null ? 1 : 128)));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`e2e-stack: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
