#!/usr/bin/env node
// lockbench's lock-client adapter for node-redlock 5.0.0-beta.2's
// auto-extending using(resources, duration, routine) on ioredis 4
// (docs/adapters.md): JSON lines on stdin and stdout, logs on stderr.
// A grant is using()'s routine starting; the library extends the lock
// before it expires while the routine runs, and aborts the routine's
// signal when an extension fails: that is the lost notice. release ends
// the routine (using() then releases). The routine cannot extend on its
// own, so extend is not claimed; 5.0.0-beta.2 issues no fencing token.
'use strict';

const crypto = require('crypto');
const readline = require('readline');
const Redis = require('ioredis');
const { default: Redlock, ExecutionError, ResourceLockedError } = require('redlock');

const LIBRARY = 'node-redlock';
// redlock 5 exports no package.json: its version is read beside its entry point.
const REDLOCK_VERSION = JSON.parse(require('fs').readFileSync(
  require('path').join(require.resolve('redlock'), '..', '..', '..', 'package.json'), 'utf8')).version.replace(/^v/, '');
const IOREDIS_VERSION = require('ioredis/package.json').version;
const CONNECT_BOUND_MS = 5000; // lockbench waits 10 s for hello_ok
const DEFAULT_THRESHOLD_MS = 500; // the library's automaticExtensionThreshold

// stdout carries protocol lines only: a library's console.log goes to stderr.
const protocolOut = process.stdout;
console.log = console.error;
console.info = console.error;

function send(msg) {
  protocolOut.write(JSON.stringify(msg) + '\n');
}

function log(...args) {
  console.error('node-redlock5 adapter:', ...args);
}

const session = {
  redlock: null,
  settings: null,
  clients: [],
  ttlMs: 0,
  driftMs: 0,
  id: crypto.randomBytes(6).toString('hex'),
  n: 0,
  held: new Map(), // token -> {key, end (resolves the routine), finished (using's promise)}
  pending: new Set(),
};

function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  let hello = null;
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    let m;
    try {
      m = JSON.parse(line);
    } catch (e) {
      log('malformed request, ignored:', line.slice(0, 80));
      return;
    }
    if (hello === null) {
      hello = sayHello(m);
      return;
    }
    track(hello.then((ok) => ok && serve(m)));
  });
  rl.on('close', () => end().then(() => process.exit(0), () => process.exit(1)));
}

function track(p) {
  session.pending.add(p);
  p.catch((e) => log('request failed:', e && e.stack)).finally(() => session.pending.delete(p));
}

// end: stdin closed; every routine ends (using() releases), then quit.
async function end() {
  for (const h of session.held.values()) h.end();
  await Promise.allSettled([...session.pending, ...[...session.held.values()].map((h) => h.finished)]);
  await Promise.allSettled(session.clients.map((c) => c.quit()));
}

// settings: hello's that the library has, as adapters/node-redlock maps
// them (retries, their delay, the drift factor, the per-server timeout);
// the extension threshold is the library's 500ms, less for a TTL too short
// for it (using() wants the TTL 100ms above it).
function settingsOf(m) {
  const s = m.settings || {};
  const o = { driftFactor: 0.01, retryCount: 0, retryDelay: 200, retryJitter: 100 };
  if (typeof s.drift_factor === 'number') o.driftFactor = s.drift_factor;
  const lo = s.retry_delay_min_ms, hi = s.retry_delay_max_ms;
  if (lo > 0 || hi > 0) {
    o.retryDelay = Math.max(1, Math.round(((lo || 0) + (hi || 0)) / 2));
    o.retryJitter = Math.round(Math.abs((hi || 0) - (lo || 0)) / 2);
  }
  const wait = typeof m.wait_ms === 'number' ? m.wait_ms : 0;
  if (typeof s.retries === 'number' && !(s.wait_time_ms > 0)) o.retryCount = Math.max(0, s.retries);
  else o.retryCount = Math.floor(wait / o.retryDelay);
  o.automaticExtensionThreshold = Math.min(DEFAULT_THRESHOLD_MS, Math.floor(m.ttl_ms / 3));
  return { redlock: o, timeout: s.timeout_ms > 0 ? s.timeout_ms : undefined };
}

async function sayHello(m) {
  if (m.type !== 'hello') {
    log('first line is not hello:', JSON.stringify(m).slice(0, 80));
    process.exit(2);
  }
  try {
    if (!Array.isArray(m.servers) || m.servers.length === 0) throw new Error('hello names no servers');
    if (!(m.ttl_ms > 0)) throw new Error('hello gives no ttl_ms');
    const opt = settingsOf(m);
    session.ttlMs = m.ttl_ms;
    session.driftMs = Math.round(opt.redlock.driftFactor * m.ttl_ms) + 2;
    session.clients = m.servers.map((addr) => connectClient(addr, opt.timeout));
    await Promise.all(session.clients.map((c, i) => connected(c, m.servers[i])));
    session.redlock = new Redlock(session.clients, opt.redlock);
    session.redlock.on('error', () => {}); // each operation's outcome says it
    send({
      type: 'hello_ok', in_reply_to: m.id, protocol: 1,
      library: { name: LIBRARY, version: REDLOCK_VERSION, language: `javascript (node ${process.version}, ioredis ${IOREDIS_VERSION}; using())` },
      capabilities: { extend: false, auto_extend: true, fence: false, lost_notice: true },
      validity: { method: 'drift', drift_factor: opt.redlock.driftFactor, drift_ms: 2 },
    });
    log(`${LIBRARY} ${REDLOCK_VERSION} using() on ${m.servers.length} server(s), ttl ${m.ttl_ms}ms, retryCount ${opt.redlock.retryCount}, ` +
      `extension ${opt.redlock.automaticExtensionThreshold}ms before expiry, commandTimeout ${opt.timeout === undefined ? 'none' : opt.timeout + 'ms'}`);
    return true;
  } catch (e) {
    send({ type: 'error', in_reply_to: m.id, code: 'hello_failed', reason: e.message });
    await Promise.allSettled(session.clients.map((c) => c.disconnect()));
    process.exit(1);
  }
}

function connectClient(addr, timeout) {
  const i = addr.lastIndexOf(':');
  const c = new Redis({ host: addr.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(addr.slice(i + 1)), lazyConnect: true,
    commandTimeout: timeout, connectTimeout: CONNECT_BOUND_MS });
  c.on('error', () => {});
  return c;
}

function connected(c, addr) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`server ${addr} unreachable within ${CONNECT_BOUND_MS}ms`)), CONNECT_BOUND_MS);
  });
  const conn = c.connect().catch((e) => {
    throw new Error(`server ${addr}: ${e.message}`);
  });
  return Promise.race([conn, bound]).finally(() => clearTimeout(timer));
}

async function serve(m) {
  switch (m.type) {
    case 'acquire': return send({ in_reply_to: m.id, ...(await acquire(m)) });
    case 'release': return send({ in_reply_to: m.id, ...(await release(m)) });
    case 'cancel': return undefined; // using() cannot be stopped in its retries: answered when they end
    default:
      return send({ type: 'error', in_reply_to: m.id, code: 'not_supported', reason: `unknown request type ${JSON.stringify(m.type)}` });
  }
}

// acquire: using()'s routine starting is the grant; it then waits for
// release. A failed acquire is answered from using()'s error.
function acquire(m) {
  const t = Date.now();
  const token = `${session.id}.${++session.n}`;
  return new Promise((answer) => {
    let granted = false;
    const h = { key: m.key, end: null, finished: null };
    const held = new Promise((resolve) => { h.end = resolve; });
    h.finished = session.redlock.using([m.key], session.ttlMs, async (signal) => {
      granted = true;
      session.held.set(token, h);
      signal.addEventListener('abort', () => {
        if (session.held.has(token)) send({ type: 'lost', key: m.key, token, reason: `extension failed: ${signal.error && signal.error.message}` });
      });
      answer({ type: 'granted', token, validity_ms: Math.max(0, session.ttlMs - session.driftMs - (Date.now() - t)), elapsed_ms: Date.now() - t });
      await held;
    });
    h.finished.catch((e) => {
      if (!granted) notDone(e, t).then(answer);
    });
  });
}

// notDone: refused when every vote against was the key held by another,
// failed (definite: the library released what it set) when a server erred.
async function notDone(e, t) {
  if (!(e instanceof ExecutionError)) return { type: 'failed', definite: false, reason: String(e && e.message), elapsed_ms: Date.now() - t };
  const stats = await Promise.all(e.attempts);
  const errs = stats.flatMap((s) => [...s.votesAgainst.values()]).filter((x) => !(x instanceof ResourceLockedError));
  if (errs.length > 0) return { type: 'failed', definite: true, reason: `no quorum: ${errs[0].message}`, attempts: stats.length, elapsed_ms: Date.now() - t };
  return { type: 'refused', reason: 'held by another', attempts: stats.length, elapsed_ms: Date.now() - t };
}

async function release(m) {
  const h = session.held.get(m.token);
  if (!h || h.key !== m.key) return { type: 'refused', reason: 'not held' };
  session.held.delete(m.token);
  const t = Date.now();
  h.end();
  try {
    await h.finished;
    return { type: 'released', elapsed_ms: Date.now() - t };
  } catch (e) {
    return { type: 'refused', reason: `not released on a quorum (${e.message})`, elapsed_ms: Date.now() - t };
  }
}

if (require.main === module) main();
