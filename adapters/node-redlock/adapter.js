#!/usr/bin/env node
// lockbench's lock-client adapter for node-redlock 4.2.0 on ioredis 4
// (docs/adapters.md): JSON lines on stdin and stdout, logs on stderr.
// acquire, release and extend are the library's lock(resource, ttl),
// lock.unlock() and lock.extend(ttl); 4.2.0 has no fencing token, no
// auto-extension and no lost notice, so hello_ok claims none of them.
'use strict';

const readline = require('readline');
const Redis = require('ioredis');
const Redlock = require('redlock');

const LIBRARY = 'node-redlock';
const REDLOCK_VERSION = require('redlock/package.json').version;
const IOREDIS_VERSION = require('ioredis/package.json').version;
const CONNECT_BOUND_MS = 5000; // lockbench waits 10 s for hello_ok

// stdout carries protocol lines only: anything a library prints with
// console.log goes to stderr instead of breaking the session.
const protocolOut = process.stdout;
console.log = console.error;
console.info = console.error;

function send(msg) {
  protocolOut.write(JSON.stringify(msg) + '\n');
}

function log(...args) {
  console.error('node-redlock adapter:', ...args);
}

// One session: the library on hello's servers, the locks it holds by
// token, and the server errors seen per key (so that a failed acquire
// tells contention from servers that did not answer).
const session = {
  redlock: null,
  clients: [],
  ttlMs: 0, // hello's: acquire carries none
  held: new Map(), // token -> the library's Lock
  errors: new Map(), // key -> count of server errors on it
  firstError: new Map(), // key -> the latest error's message
  pending: new Set(), // requests' promises, awaited at the end
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
    // Requests wait for hello's connections; lockbench sends none before hello_ok.
    track(hello.then((ok) => ok && serve(m)));
  });
  rl.on('close', () => {
    end().then(() => process.exit(0), (e) => {
      log('at the end:', e && e.message);
      process.exit(1);
    });
  });
}

function track(p) {
  session.pending.add(p);
  p.catch((e) => log('request failed:', e && e.stack)).finally(() => session.pending.delete(p));
}

// end: lockbench closed stdin; release what is still held, then quit.
async function end() {
  await Promise.allSettled([...session.pending]);
  await Promise.allSettled([...session.held.values()].map((l) => l.unlock()));
  session.held.clear();
  await Promise.allSettled(session.clients.map((c) => c.quit()));
}

// settings are hello's design settings this library has (absent ones
// keep its defaults): retries and their delay, the drift factor, the
// per-server timeout (ioredis's commandTimeout, so that a server cut by a
// partition is a missing vote, not a hung request).
function options(m) {
  const s = m.settings || {};
  const o = { driftFactor: 0.01, retryCount: 0, retryDelay: 200, retryJitter: 100 };
  if (typeof s.drift_factor === 'number') o.driftFactor = s.drift_factor;
  const lo = s.retry_delay_min_ms, hi = s.retry_delay_max_ms;
  if (lo > 0 || hi > 0) {
    o.retryDelay = Math.max(1, Math.round(((lo || 0) + (hi || 0)) / 2));
    o.retryJitter = Math.round(Math.abs((hi || 0) - (lo || 0)) / 2);
  }
  // wait_ms bounds one acquire, retries included (0: one attempt); a
  // design that gives retries and no wait time counts its retries.
  const wait = typeof m.wait_ms === 'number' ? m.wait_ms : 0;
  if (typeof s.retries === 'number' && !(s.wait_time_ms > 0)) o.retryCount = Math.max(0, s.retries);
  else o.retryCount = Math.floor(wait / o.retryDelay);
  const timeout = s.timeout_ms > 0 ? s.timeout_ms : undefined;
  return { redlock: o, timeout };
}

function splitAddr(addr) {
  const i = addr.lastIndexOf(':');
  if (i < 0) throw new Error(`server ${JSON.stringify(addr)} is not host:port`);
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(addr.slice(i + 1)) };
}

// sayHello connects to every server and answers hello_ok (or error with
// the reason). It resolves true when the session can go on.
async function sayHello(m) {
  if (m.type !== 'hello') {
    log('first line is not hello:', JSON.stringify(m).slice(0, 80));
    process.exit(2);
  }
  try {
    if (!Array.isArray(m.servers) || m.servers.length === 0) throw new Error('hello names no servers');
    if (!(m.ttl_ms > 0)) throw new Error('hello gives no ttl_ms');
    const opt = options(m);
    session.ttlMs = m.ttl_ms;
    session.clients = m.servers.map((addr) => connectClient(addr, opt.timeout));
    await Promise.all(session.clients.map((c, i) => connected(c, m.servers[i])));
    session.redlock = new Redlock(session.clients.map(wrap), opt.redlock);
    session.redlock.on('clientError', () => {}); // counted per key by wrap
    send({
      type: 'hello_ok', in_reply_to: m.id, protocol: 1,
      library: { name: LIBRARY, version: REDLOCK_VERSION, language: `javascript (node ${process.version}, ioredis ${IOREDIS_VERSION})` },
      capabilities: { extend: true, auto_extend: false, fence: false, lost_notice: false },
      // Redlock's own: validity = TTL − elapsed − round(TTL × factor) − 2 ms.
      validity: { method: 'drift', drift_factor: opt.redlock.driftFactor, drift_ms: 2 },
    });
    log(`${LIBRARY} ${REDLOCK_VERSION} on ${m.servers.length} server(s), ttl ${m.ttl_ms}ms, retryCount ${opt.redlock.retryCount}, ` +
      `retryDelay ${opt.redlock.retryDelay}±${opt.redlock.retryJitter}ms, commandTimeout ${opt.timeout === undefined ? 'none' : opt.timeout + 'ms'}`);
    return true;
  } catch (e) {
    send({ type: 'error', in_reply_to: m.id, code: 'hello_failed', reason: e.message });
    await Promise.allSettled(session.clients.map((c) => c.disconnect()));
    process.exit(1);
  }
}

function connectClient(addr, timeout) {
  const { host, port } = splitAddr(addr);
  const c = new Redis({ host, port, lazyConnect: true, commandTimeout: timeout, connectTimeout: CONNECT_BOUND_MS });
  c.on('error', () => {}); // each command's own error says it; reconnects are ioredis's
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

// wrap is a server as Redlock calls it (evalsha, eval, quit) that counts
// each command's error against the keys it named.
function wrap(client) {
  const counted = (args, cb) => (err, res) => {
    if (err && !String(err.message).startsWith('NOSCRIPT')) {
      const n = Number(args[0]);
      for (const key of args.slice(1, 1 + n)) {
        session.errors.set(key, (session.errors.get(key) || 0) + 1);
        session.firstError.set(key, err.message);
      }
    }
    cb(err, res);
  };
  return {
    evalsha: (hash, args, cb) => client.evalsha(hash, args, counted(args, cb)),
    // eval's args start with the script itself (Redlock unshifts it).
    eval: (args, cb) => client.eval(args, (err, res) => counted(args.slice(1), cb)(err, res)),
    quit: () => client.quit(),
  };
}

function errorsOn(key) {
  return session.errors.get(key) || 0;
}

// serve answers one request; replies go out as each ends, in any order.
async function serve(m) {
  switch (m.type) {
    case 'acquire': return send({ in_reply_to: m.id, ...(await acquire(m)) });
    case 'release': return send({ in_reply_to: m.id, ...(await release(m)) });
    case 'extend': return send({ in_reply_to: m.id, ...(await extend(m)) });
    case 'cancel':
      // 4.2.0's lock() cannot be stopped in its retries: the acquire is
      // answered when they end, and lockbench releases a grant it gave up on.
      return undefined;
    default:
      return send({ type: 'error', in_reply_to: m.id, code: 'not_supported', reason: `unknown request type ${JSON.stringify(m.type)}` });
  }
}

async function acquire(m) {
  const t = Date.now();
  const before = errorsOn(m.key);
  try {
    const l = await session.redlock.lock(m.key, session.ttlMs);
    session.held.set(l.value, l);
    return { type: 'granted', token: l.value, validity_ms: Math.max(0, l.expiration - Date.now()), attempts: l.attempts, elapsed_ms: Date.now() - t };
  } catch (e) {
    return notDone(e, m.key, before, t, 'held by another');
  }
}

// notDone is a LockError's reply: failed when a server errored on the
// key meanwhile (the library released what it set), refused otherwise.
function notDone(e, key, before, t, why) {
  const attempts = e && typeof e.attempts === 'number' ? e.attempts : undefined;
  const elapsed = Date.now() - t;
  if (!(e instanceof Redlock.LockError)) {
    return { type: 'failed', definite: false, reason: String(e && e.message), attempts, elapsed_ms: elapsed };
  }
  if (errorsOn(key) > before) {
    return { type: 'failed', definite: true, reason: `no quorum: ${session.firstError.get(key)} (${e.message})`, attempts, elapsed_ms: elapsed };
  }
  return { type: 'refused', reason: `${why} (${e.message})`, attempts, elapsed_ms: elapsed };
}

async function release(m) {
  const l = session.held.get(m.token);
  if (!l || l.resource[0] !== m.key) return { type: 'refused', reason: 'not held' };
  session.held.delete(m.token);
  const t = Date.now();
  const before = errorsOn(m.key);
  try {
    await l.unlock();
    return { type: 'released', elapsed_ms: Date.now() - t };
  } catch (e) {
    if (errorsOn(m.key) > before) {
      return { type: 'failed', definite: false, reason: `release: ${session.firstError.get(m.key)}`, elapsed_ms: Date.now() - t };
    }
    return { type: 'refused', reason: `not held on a quorum (${e.message})`, elapsed_ms: Date.now() - t };
  }
}

async function extend(m) {
  const l = session.held.get(m.token);
  if (!l || l.resource[0] !== m.key) return { type: 'refused', reason: 'not held' };
  const t = Date.now();
  const before = errorsOn(m.key);
  try {
    await l.extend(m.ttl_ms > 0 ? m.ttl_ms : session.ttlMs);
    return { type: 'extended', validity_ms: Math.max(0, l.expiration - Date.now()), elapsed_ms: Date.now() - t };
  } catch (e) {
    return notDone(e, m.key, before, t, 'not extended within its validity');
  }
}

module.exports = { options, splitAddr };

if (require.main === module) {
  main();
}
