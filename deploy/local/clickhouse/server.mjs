// ClickHouse HTTP interface stand-in for machines without a ClickHouse server.
//
// Serves the subset of ClickHouse's HTTP interface that clickhouse-go/v2 (Protocol: HTTP,
// compression none or gzip/deflate/br) and curl use, and runs every statement on the real
// ClickHouse engine embedded in the npm package `chdb` (one persistent Session, so data
// survives restarts). Started by deploy/local/up; see deploy/local/README.md.
//
// Environment (all optional):
//   CH_STANDIN_HOST       listen address, loopback only            (127.0.0.1)
//   CH_STANDIN_PORT       listen port                              (18123)
//   CH_STANDIN_DATA       chdb data directory                      (./data)
//   CH_STANDIN_TMP        insert spool directory                   (<data>/../tmp)
//   CH_STANDIN_LOG        log file; empty = stderr                 ()
//   CH_STANDIN_MODULES    directory whose node_modules holds chdb  (this directory)
//   CH_STANDIN_TZ         server time zone                         (UTC)
//   CH_STANDIN_DATABASES  comma-separated databases to create      (errata)

import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const HOST = env.CH_STANDIN_HOST || '127.0.0.1';
const PORT = Number(env.CH_STANDIN_PORT || 18123);
const DATA = path.resolve(env.CH_STANDIN_DATA || 'data');
const TMP = path.resolve(env.CH_STANDIN_TMP || path.join(DATA, '..', 'tmp'));
const LOG = env.CH_STANDIN_LOG || '';
const MODULES = path.resolve(env.CH_STANDIN_MODULES || HERE);
const DATABASES = (env.CH_STANDIN_DATABASES ?? 'errata').split(',').map((s) => s.trim()).filter(Boolean);
// The engine reads TZ when it starts; a production server in a container runs in UTC.
process.env.TZ = env.CH_STANDIN_TZ || 'UTC';

const MAX_SQL_BYTES = 256 << 20; // a query (not insert data) held in memory
const SHUTDOWN_GRACE_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------------------------
const logStream = LOG ? fs.createWriteStream(LOG, { flags: 'a' }) : process.stderr;
function log(msg) {
  logStream.write(`${new Date().toISOString()} ${msg}\n`);
}
const oneLine = (s, n = 400) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
};

function isLoopback(host) {
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}
if (!isLoopback(HOST)) {
  log(`refusing to listen on ${HOST}: only loopback addresses are allowed`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Engine: one chdb Session, used by one job at a time
// ---------------------------------------------------------------------------------------------
const requireFromModules = createRequire(path.join(MODULES, 'package.json'));
const chdb = requireFromModules('chdb');
// Query parameters (param_* in the URL) arrive already in ClickHouse's escaped text form. The
// public queryBindAsync escapes strings again, so bound queries go to the addon directly
// (the same call queryBindAsync makes, minus the re-escaping). Only used for param_* requests.
let addon = null;
try {
  addon = requireFromModules(path.join(path.dirname(requireFromModules.resolve('chdb')), 'dist', 'loader.js')).loadNative();
} catch (e) {
  log(`query parameters disabled: cannot load the chdb addon directly: ${e.message}`);
}

fs.mkdirSync(DATA, { recursive: true });
fs.mkdirSync(TMP, { recursive: true });
for (const f of fs.readdirSync(TMP)) {
  if (f.startsWith('insert-')) fs.rmSync(path.join(TMP, f), { force: true });
}

const session = new chdb.Session(DATA, { connectionArgs: ['--async_load_databases=0'] });

async function run(sql, format = 'TabSeparated', params = null) {
  if (params && Object.keys(params).length > 0) {
    if (!addon) throw new StandinError(48, 'NOT_IMPLEMENTED', 'query parameters are not available in this stand-in');
    const raw = await addon.QueryAsyncConnection(session.connection, sql, format, params);
    return { bytes: Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength), rowsRead: raw.rowsRead, bytesRead: raw.bytesRead, elapsed: raw.elapsed };
  }
  const r = await session.queryAsync(sql, { format });
  const b = r.bytes();
  return { bytes: Buffer.from(b.buffer, b.byteOffset, b.byteLength), rowsRead: r.rowsRead, bytesRead: r.bytesRead, elapsed: r.elapsed };
}

// Every job runs alone: chdb's session is not safe for concurrent use, and the database and
// settings state below belongs to whichever job holds the engine.
let queueTail = Promise.resolve();
let queueDepth = 0;
function enqueue(job) {
  queueDepth++;
  const p = queueTail.then(job);
  queueTail = p.then(() => { queueDepth--; }, () => { queueDepth--; });
  return p;
}

// Each HTTP request is its own "session" on a real server: current database and settings
// last for that request only. The stand-in keeps one engine session, so it switches the
// database and SETs/resets settings to match each request.
let currentDb = null; // null: unknown, USE before the next job
const appliedSettings = new Map(); // setting -> value currently SET by us

const sqlString = (s) => `'${String(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const sqlIdent = (s) => `\`${String(s).replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

async function useDatabase(db) {
  if (currentDb === db) return;
  currentDb = null;
  await run(`USE ${sqlIdent(db)}`);
  currentDb = db;
}

async function applySettings(wanted) {
  const changes = [];
  for (const k of appliedSettings.keys()) if (!wanted.has(k)) changes.push([k, null]);
  for (const [k, v] of wanted) if (appliedSettings.get(k) !== v) changes.push([k, v]);
  if (changes.length === 0) return;
  // SET checks every assignment before applying any, so a failed SET leaves the state as is.
  await run(`SET ${changes.map(([k, v]) => `${k} = ${v === null ? 'DEFAULT' : sqlString(v)}`).join(', ')}`);
  for (const [k, v] of changes) {
    if (v === null) appliedSettings.delete(k);
    else appliedSettings.set(k, v);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors in ClickHouse's HTTP shape
// ---------------------------------------------------------------------------------------------
class StandinError extends Error {
  constructor(code, name, message) {
    super(message);
    this.chCode = code;
    this.chName = name;
  }
}

// Mirrors the server's mapping of exception codes to HTTP statuses (by error name).
const STATUS_BY_NAME = new Map([
  ...['REQUIRED_PASSWORD'].map((n) => [n, 401]),
  ...['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE'].map((n) => [n, 403]),
  ...['BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE',
    'CANNOT_PARSE_QUOTED_STRING', 'CANNOT_PARSE_DATE', 'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER',
    'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4', 'CANNOT_PARSE_IPV6',
    'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'CANNOT_PARSE_BOOL', 'DUPLICATE_COLUMN',
    'ILLEGAL_COLUMN', 'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE', 'THERE_IS_NO_COLUMN',
    'TOO_DEEP_AST', 'TOO_BIG_AST', 'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA',
    'TYPE_MISMATCH', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE', 'ILLEGAL_TYPE_OF_ARGUMENT',
    'NUMBER_OF_ARGUMENTS_DOESNT_MATCH', 'UNKNOWN_QUERY_PARAMETER', 'BAD_QUERY_PARAMETER',
    'NUMBER_OF_COLUMNS_DOESNT_MATCH', 'EMPTY_LIST_OF_COLUMNS_PASSED', 'NO_SUCH_COLUMN_IN_TABLE',
    'INCORRECT_NUMBER_OF_COLUMNS', 'INCORRECT_QUERY', 'ILLEGAL_AGGREGATION'].map((n) => [n, 400]),
  ...['UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE',
    'UNKNOWN_DATABASE', 'UNKNOWN_SETTING', 'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION',
    'UNKNOWN_FORMAT', 'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE'].map((n) => [n, 404]),
  ['QUERY_IS_TOO_LARGE', 413],
  ['NOT_IMPLEMENTED', 501],
  ['SOCKET_TIMEOUT', 503],
  ['CANNOT_OPEN_FILE', 503],
  ['TIMEOUT_EXCEEDED', 408],
]);

let engineVersion = '';

// chdb sometimes wraps an exception in itself ("Code: 73. DB::Exception: Code: 73.
// DB::Exception: … (UNKNOWN_FORMAT) (version …). (UNKNOWN_FORMAT)"); unwrap to the server's shape.
function toClickHouseError(e) {
  if (e instanceof StandinError) {
    return { code: e.chCode, name: e.chName, text: `Code: ${e.chCode}. DB::Exception: ${e.message}. (${e.chName}) (version ${engineVersion})` };
  }
  const msg = String(e && e.message != null ? e.message : e).trim();
  const prefix = /^Code: (\d+)\. DB::Exception: /;
  let m = prefix.exec(msg);
  if (!m) {
    const code = Number(e && e.clickhouseCode) || 1001;
    return { code, name: 'STD_EXCEPTION', text: `Code: ${code}. DB::Exception: ${msg} (version ${engineVersion})` };
  }
  const code = Number(m[1]);
  let core = msg;
  while ((m = prefix.exec(core))) core = core.slice(m[0].length);
  let t;
  while ((t = /^([\s\S]*\(([A-Z0-9_]+)\)) \(version [^()]*(?:\([^()]*\))?\)\. \(\2\)$/.exec(core))) core = t[1];
  core = core.replace(/ \(version [^()]*(?:\([^()]*\))?\)$/, '');
  const names = [...core.matchAll(/\(([A-Z][A-Z0-9_]+)\)/g)];
  const name = names.length ? names[names.length - 1][1] : '';
  return { code, name, text: `Code: ${code}. DB::Exception: ${core} (version ${engineVersion})` };
}

// ---------------------------------------------------------------------------------------------
// Just enough SQL lexing to find statement boundaries, FORMAT clauses and inline insert data
// ---------------------------------------------------------------------------------------------
// The text is a latin1 view of the bytes, so offsets are byte offsets and binary insert data
// after the statement never needs to be valid UTF-8.
function lex(s) {
  const toks = [];
  let i = 0;
  let depth = 0;
  const n = s.length;
  const isWord = (c) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80;
  let insert = null; // { dataStart, format, formatPos, settingsPos, select }
  while (i < n) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') { i++; continue; }
    if ((c === '-' && s[i + 1] === '-') || c === '#') {
      while (i < n && s[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && s[i + 1] === '*') {
      let level = 0;
      while (i < n) {
        if (s[i] === '/' && s[i + 1] === '*') { level++; i += 2; } else if (s[i] === '*' && s[i + 1] === '/') { level--; i += 2; if (level === 0) break; } else i++;
      }
      continue;
    }
    const start = i;
    let type;
    if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < n) {
        if (s[i] === '\\') { i += 2; continue; }
        if (s[i] === c) { if (s[i + 1] === c) { i += 2; continue; } i++; break; }
        i++;
      }
      type = c === "'" ? 'str' : 'ident';
    } else if (isWord(c)) {
      while (i < n && isWord(s[i])) i++;
      type = 'word';
    } else {
      i++;
      type = 'op';
    }
    const tok = { type, start, end: i, depth, text: s.slice(start, i) };
    if (type === 'op') {
      if (c === '(' || c === '[' || c === '{') depth++;
      else if ((c === ')' || c === ']' || c === '}') && depth > 0) { depth--; tok.depth = depth; }
    }
    toks.push(tok);
    // An INSERT's data starts after "FORMAT <name>" or at "VALUES"; stop lexing there.
    if (toks.length > 0 && toks[0].type === 'word' && toks[0].text.toLowerCase() === 'insert') {
      insert ??= { dataStart: -1, format: null, formatPos: -1, settingsPos: -1, select: false, infile: false };
      if (tok.type === 'word' && tok.depth === 0 && !insert.select) {
        const w = tok.text.toLowerCase();
        if (w === 'select' || w === 'with') insert.select = true;
        else if (w === 'infile') insert.infile = true;
        else if (w === 'settings' && insert.settingsPos < 0) insert.settingsPos = tok.start;
        else if (w === 'values' && !insert.infile) {
          insert.format = 'Values';
          insert.formatPos = tok.start;
          insert.dataStart = tok.end;
          break;
        } else if (w === 'format' && !insert.infile) {
          const m = /^\s*([A-Za-z0-9_]+)/.exec(s.slice(i, i + 200));
          if (m) {
            insert.format = m[1];
            insert.formatPos = tok.start;
            let d = i + m[0].length;
            while (d < n && (s[d] === ' ' || s[d] === '\t' || s[d] === '\r')) d++;
            if (d < n && s[d] === '\n') d++;
            insert.dataStart = d;
            break;
          }
        }
      }
    }
  }
  return { toks, insert };
}

// analyze(buf) describes the first statement in buf.
function analyze(buf) {
  const s = buf.toString('latin1');
  const { toks, insert } = lex(s);
  const first = toks.length ? toks[0].text.toLowerCase() : '';
  const a = { kind: first || 'empty', insert: null, format: null, hello: false, stmtEnd: s.length, multi: false, setNames: [] };
  if (insert && insert.dataStart >= 0) {
    a.insert = insert;
    a.stmtEnd = insert.formatPos;
    // "FORMAT x;" carries no data.
    if (buf[insert.dataStart] === 0x3b && insert.format !== 'Values') insert.dataStart = buf.length;
    return a;
  }
  let end = toks.length;
  const semi = toks.findIndex((t) => t.type === 'op' && t.text === ';' && t.depth === 0);
  if (semi >= 0) {
    end = semi;
    a.stmtEnd = toks[semi].start;
    if (semi + 1 < toks.length && !toks.slice(semi + 1).every((t) => t.text === ';')) a.multi = true;
  } else if (toks.length) {
    a.stmtEnd = toks[toks.length - 1].end;
  }
  const body = toks.slice(0, end);
  for (let j = body.length - 2; j >= 0; j--) {
    const t = body[j];
    if (t.depth === 0 && t.type === 'word' && t.text.toLowerCase() === 'format' && body[j + 1].type === 'word') {
      if (j > 0 && body[j - 1].type === 'word' && body[j - 1].text.toLowerCase() === 'as') continue;
      a.format = body[j + 1].text;
      break;
    }
  }
  a.hello = body.map((t) => t.text.toLowerCase()).join(' ') === 'select displayname ( ) , version ( ) , revision ( ) , timezone ( )';
  if (a.kind === 'set') {
    for (let j = 1; j + 1 < body.length; j++) {
      if (body[j + 1].text === '=' && body[j].type === 'word' && body[j].depth === 0) a.setNames.push(body[j].text);
    }
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// Native block for the driver's connect-time query
// ---------------------------------------------------------------------------------------------
// clickhouse-go decodes its connect-time query `SELECT displayName(), version(), revision(),
// timezone()` at the revision it sent as client_protocol_version, then decodes every later
// reply at the revision() that query returned. chdb writes Native at revision 0 (no block
// info, no per-column serialization flag), so the reply says revision 0 and is itself framed
// for the client's revision.
const MIN_REVISION_WITH_CUSTOM_SERIALIZATION = 54454;
function uvarint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}
const nativeString = (s) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([uvarint(b.length), b]);
};
function helloBlock(revision, cols) {
  const parts = [];
  if (revision > 0) {
    // BlockInfo: field 1 is_overflows=false, field 2 bucket_num=-1, end marker 0.
    parts.push(Buffer.from([1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0]));
  }
  parts.push(uvarint(cols.length), uvarint(1));
  for (const [name, type, value] of cols) {
    parts.push(nativeString(name), nativeString(type));
    if (revision >= MIN_REVISION_WITH_CUSTOM_SERIALIZATION) parts.push(Buffer.from([0]));
    if (type === 'UInt32') {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(value);
      parts.push(b);
    } else {
      parts.push(nativeString(value));
    }
  }
  return Buffer.concat(parts);
}

let serverInfo = { displayName: '', version: '', timezone: 'UTC' };

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------
// URL parameters that are not settings (see the server's HTTPHandler).
const RESERVED_PARAMS = new Set([
  'query', 'database', 'default_format', 'user', 'password', 'quota_key', 'query_id', 'stacktrace',
  'role', 'session_id', 'session_timeout', 'session_check', 'close_session', 'client_protocol_version',
  'compress', 'decompress', 'buffer_size', 'wait_end_of_query', 'enable_http_compression',
  'http_zlib_compression_level', 'http_native_compression_disable_checksumming_on_decompress',
  // readonly would lock the one shared engine session; requests are never made read-only here.
  'readonly',
]);

function contentType(format) {
  const f = format.toLowerCase();
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return 'text/csv; charset=UTF-8';
  if (f.startsWith('json')) return 'application/json; charset=UTF-8';
  if (f === 'xml') return 'application/xml; charset=UTF-8';
  if (f.startsWith('pretty') || f === 'vertical' || f === 'markdown' || f === 'values' || f.startsWith('template') || f === 'raw' || f.startsWith('custom')) return 'text/plain; charset=UTF-8';
  return 'application/octet-stream';
}

function requestBody(req) {
  const enc = String(req.headers['content-encoding'] || '').toLowerCase().trim();
  if (!enc || enc === 'identity') return req;
  let d;
  if (enc === 'gzip' || enc === 'x-gzip') d = zlib.createGunzip();
  else if (enc === 'deflate') d = zlib.createInflate();
  else if (enc === 'br') d = zlib.createBrotliDecompress();
  else throw new StandinError(48, 'NOT_IMPLEMENTED', `Content-Encoding ${enc} is not supported by this stand-in (use none, gzip, deflate or br)`);
  req.pipe(d);
  req.on('error', (e) => d.destroy(e));
  return d;
}

async function readAll(stream, limit) {
  const chunks = [];
  let size = 0;
  for await (const c of stream) {
    size += c.length;
    if (size > limit) throw new StandinError(202, 'QUERY_IS_TOO_LARGE', `Query is too large (more than ${limit} bytes); send insert data after "FORMAT <fmt>" instead`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

let spoolSeq = 0;
async function spool(prefix, stream) {
  const file = path.join(TMP, `insert-${process.pid}-${++spoolSeq}.bin`);
  const out = fs.createWriteStream(file);
  let bytes = 0;
  const counter = new Transform({ transform(chunk, _e, cb) { bytes += chunk.length; cb(null, chunk); } });
  try {
    if (prefix.length) { out.write(prefix); bytes += prefix.length; }
    if (stream) await pipeline(stream, counter, out);
    else await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
  } catch (e) {
    await fsp.rm(file, { force: true });
    throw e;
  }
  return { file, bytes };
}

function send(res, status, headers, body) {
  res.writeHead(status, { ...headers, 'Content-Length': body.length });
  res.end(body);
}

function compressed(req, p, headers, body) {
  if (p.get('enable_http_compression') !== '1' || body.length === 0) return body;
  const accept = String(req.headers['accept-encoding'] || '').toLowerCase();
  const level = Number(p.get('http_zlib_compression_level') || 3);
  for (const enc of accept.split(',').map((s) => s.trim().split(';')[0])) {
    if (enc === 'gzip') { headers['Content-Encoding'] = 'gzip'; return zlib.gzipSync(body, { level }); }
    if (enc === 'deflate') { headers['Content-Encoding'] = 'deflate'; return zlib.deflateSync(body, { level }); }
    if (enc === 'br') { headers['Content-Encoding'] = 'br'; return zlib.brotliCompressSync(body); }
  }
  return body;
}

let requestSeq = 0;
async function handle(req, res) {
  const t0 = process.hrtime.bigint();
  const reqNo = ++requestSeq;
  const url = new URL(req.url, 'http://standin');
  const p = url.searchParams;
  const queryId = p.get('query_id') || String(req.headers['x-clickhouse-query-id'] || '') || crypto.randomUUID();
  const base = {
    'X-ClickHouse-Server-Display-Name': serverInfo.displayName,
    'X-ClickHouse-Query-Id': queryId,
    'X-ClickHouse-Timezone': serverInfo.timezone,
  };
  let what = `${req.method} ${url.pathname}`;
  try {
    if (url.pathname === '/ping' || url.pathname === '/replicas_status' ||
        (req.method !== 'POST' && !p.has('query') && url.pathname === '/')) {
      req.resume();
      send(res, 200, { 'Content-Type': 'text/html; charset=UTF-8' }, Buffer.from('Ok.\n'));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      req.resume();
      throw new StandinError(48, 'NOT_IMPLEMENTED', `HTTP method ${req.method} is not supported`);
    }
    if (p.get('compress') === '1' || p.get('decompress') === '1') {
      req.resume();
      throw new StandinError(48, 'NOT_IMPLEMENTED', 'ClickHouse native block compression (compress/decompress=1, LZ4/ZSTD in clickhouse-go) is not supported by this stand-in; use no compression or gzip/deflate/br');
    }
    const body = req.method === 'POST' ? requestBody(req) : null;
    const database = p.get('database') || String(req.headers['x-clickhouse-database'] || '') || 'default';
    const defaultFormat = p.get('default_format') || String(req.headers['x-clickhouse-format'] || '') || 'TabSeparated';
    const settings = new Map();
    const params = {};
    for (const [k, v] of p) {
      if (k.startsWith('param_')) params[k.slice(6)] = v;
      else if (!RESERVED_PARAMS.has(k)) {
        if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(k)) throw new StandinError(115, 'UNKNOWN_SETTING', `Unknown setting '${k}'`);
        settings.set(k, v);
      }
    }

    // The query is the `query` parameter, a newline, then the body (for an INSERT with
    // FORMAT or VALUES the body continues its data).
    let text = p.has('query') ? Buffer.from(`${p.get('query')}\n`, 'utf8') : Buffer.alloc(0);
    let a = analyze(text);
    let dataStream = null;
    if (a.insert && body) {
      dataStream = body; // streamed to the spool file, never held in memory
    } else if (body) {
      text = Buffer.concat([text, await readAll(body, MAX_SQL_BYTES)]);
      a = analyze(text);
    }
    const sql = text.subarray(0, a.stmtEnd).toString('utf8').trim();
    what = oneLine(sql);
    if (a.kind === 'empty') throw new StandinError(62, 'SYNTAX_ERROR', 'Empty query');
    if (a.multi) throw new StandinError(62, 'SYNTAX_ERROR', 'Multi-statements are not allowed');

    let spooled = null;
    if (a.insert) spooled = await spool(text.subarray(a.insert.dataStart), dataStream);
    const format = a.format || defaultFormat;
    const cpv = Number(p.get('client_protocol_version') || 0);
    const result = await enqueue(async () => {
      try {
        await useDatabase(database);
        await applySettings(settings);
        if (a.insert) {
          // INSERT … FROM INFILE is what clickhouse-local itself does for a client's insert data:
          // columns match by name, omitted columns get their defaults, and binary data of any
          // size goes through intact (chdb's raw-insert API truncates at a blank line).
          // FROM INFILE goes before a SETTINGS clause.
          const split = a.insert.settingsPos >= 0 ? a.insert.settingsPos : a.stmtEnd;
          const head = text.subarray(0, split).toString('utf8').trim();
          const tail = text.subarray(split, a.stmtEnd).toString('utf8').trim();
          const stmt = `${head} FROM INFILE ${sqlString(spooled.file)} ${tail} FORMAT ${a.insert.format}`;
          const r = await run(stmt, 'TabSeparated');
          return { ...r, written: true };
        }
        if (a.hello) {
          if (format.toLowerCase() === 'native' && cpv > 0) {
            return {
              bytes: helloBlock(cpv, [
                ['displayName()', 'String', serverInfo.displayName],
                ['version()', 'String', serverInfo.version],
                ['revision()', 'UInt32', 0],
                ['timezone()', 'String', serverInfo.timezone],
              ]),
              rowsRead: 1, bytesRead: 0, elapsed: 0,
            };
          }
          return await run('SELECT displayName(), version(), toUInt32(0) AS `revision()`, timezone()', format);
        }
        const r = await run(sql, format, params);
        if (a.kind === 'use' || a.kind === 'drop') currentDb = null;
        if (a.kind === 'set' && a.setNames.length) {
          // Over HTTP a SET lasts for its own request only.
          await run(`SET ${a.setNames.map((k) => `${k} = ${appliedSettings.has(k) ? sqlString(appliedSettings.get(k)) : 'DEFAULT'}`).join(', ')}`);
        }
        return r;
      } finally {
        if (spooled) await fsp.rm(spooled.file, { force: true });
      }
    });

    const elapsedNs = process.hrtime.bigint() - t0;
    const summary = result.written
      ? { read_rows: '0', read_bytes: '0', written_rows: String(result.rowsRead), written_bytes: String(result.bytesRead), total_rows_to_read: '0', result_rows: String(result.rowsRead), result_bytes: String(result.bytesRead), elapsed_ns: String(elapsedNs) }
      : { read_rows: String(result.rowsRead), read_bytes: String(result.bytesRead), written_rows: '0', written_bytes: '0', total_rows_to_read: String(result.rowsRead), result_rows: String(result.rowsRead), result_bytes: String(result.bytesRead), elapsed_ns: String(elapsedNs) };
    const headers = {
      ...base,
      'Content-Type': result.bytes.length ? contentType(format) : 'text/plain; charset=UTF-8',
      'X-ClickHouse-Format': format,
      'X-ClickHouse-Summary': JSON.stringify(summary),
    };
    const out = compressed(req, p, headers, result.bytes);
    send(res, 200, headers, out);
    log(`#${reqNo} 200 ${(Number(elapsedNs) / 1e6).toFixed(1)}ms ${spooled ? `in=${spooled.bytes}B rows=${result.rowsRead}` : `out=${result.bytes.length}B`} db=${database} ${what}`);
  } catch (e) {
    const ce = toClickHouseError(e);
    const status = STATUS_BY_NAME.get(ce.name) || 500;
    if (!res.headersSent) {
      send(res, status, { ...base, 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': String(ce.code) }, Buffer.from(`${ce.text}\n`, 'utf8'));
    } else {
      res.destroy();
    }
    if (req.readable) req.resume();
    log(`#${reqNo} ${status} ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)}ms ${what} :: ${oneLine(ce.text, 1000)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Start and stop
// ---------------------------------------------------------------------------------------------
async function start() {
  const info = (await run('SELECT displayName(), version(), timezone()', 'TabSeparated')).bytes.toString('utf8').trim().split('\t');
  serverInfo = { displayName: info[0], version: info[1], timezone: info[2] };
  engineVersion = info[1];
  for (const db of DATABASES) await run(`CREATE DATABASE IF NOT EXISTS ${sqlIdent(db)}`);
  currentDb = null;

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      log(`internal error: ${e && e.stack ? e.stack : e}`);
      if (!res.headersSent) send(res, 500, {}, Buffer.from(`Code: 1001. DB::Exception: ${e}\n`));
    });
  });
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 0; // large inserts stream for as long as they take
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(PORT, HOST, resolve);
  });
  log(`chdb ${serverInfo.version} (npm chdb ${requireFromModules('chdb/package.json').version}) listening on http://${HOST}:${PORT} data=${DATA} tz=${serverInfo.timezone} pid=${process.pid}`);

  let stopping = false;
  const stop = async (sig) => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping (queued jobs: ${queueDepth})`);
    server.close();
    server.closeIdleConnections();
    await Promise.race([queueTail, new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS))]);
    server.closeAllConnections();
    session.close();
    log('stopped');
    logStream.end?.();
    setTimeout(() => process.exit(0), 100);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

process.on('unhandledRejection', (e) => log(`unhandled rejection: ${e && e.stack ? e.stack : e}`));
process.on('uncaughtException', (e) => {
  log(`uncaught exception, exiting: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

start().catch((e) => {
  log(`startup failed: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
