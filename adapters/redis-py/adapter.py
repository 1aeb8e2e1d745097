#!/usr/bin/python3
"""lockbench's lock-client adapter for redis-py's redis.lock.Lock.

Speaks the adapter protocol (docs/adapters.md): JSON lines on stdin and
stdout, logs on stderr. Runs on Debian's own python3 with Debian's
python3-redis (4.3.4): a python3 found earlier on PATH, such as a version
manager's shim, may lack the module. The Lock is one server's (topology
single); it has no drift, no fencing token, no auto-extension and no lost
notice; extend is Lock.extend(ttl, replace_ttl=True).

Each request is served on a thread of its own, so that every worker's
request is in flight at once; replies go out as each ends, in any order.
"""

import json
import os
import platform
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# stdout carries protocol lines only: the protocol gets its own copy of fd
# 1, and fd 1 (print, a C library's writes) becomes stderr.
_PROTOCOL_OUT = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
sys.stdout = sys.stderr

try:
    import redis
    from redis.exceptions import LockError, LockNotOwnedError, RedisError
    from redis.lock import Lock
except ImportError as e:  # the hello's error says it; lockbench shows stderr's last lines
    redis = None
    _IMPORT_ERROR = e

LIBRARY = "redis-py"
CONNECT_BOUND_S = 5.0  # lockbench waits 10 s for hello_ok


def log(*args):
    print("redis-py adapter:", *args, file=sys.stderr, flush=True)


class Out:
    """Writes protocol lines from any thread, one whole line at a time."""

    def __init__(self, f):
        self.f = f
        self.mu = threading.Lock()

    def send(self, msg):
        line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self.mu:
            self.f.write(line)
            self.f.flush()


class Cancelled(Exception):
    """lockbench gave up on the acquire: stop trying (raised between attempts)."""


if redis is not None:

    class TimedLock(Lock):
        """redis-py's Lock, its attempts counted and the last one's start
        kept (the lock's TTL runs from it); a cancelled acquire stops at its
        next attempt. The acquire loop and the SET are the library's."""

        def __init__(self, *args, cancelled=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.cancelled = cancelled
            self.attempts = 0
            self.last_attempt = None

        def do_acquire(self, token):
            if self.cancelled is not None and self.cancelled.is_set():
                raise Cancelled()
            self.attempts += 1
            self.last_attempt = time.monotonic()
            return super().do_acquire(token)


def ms_since(t):
    return int((time.monotonic() - t) * 1000)


class Session:
    """One adapter session: the client on hello's server, held locks by token."""

    def __init__(self, out):
        self.out = out
        self.mu = threading.Lock()
        self.held = {}  # token -> TimedLock
        self.cancels = {}  # acquire id -> threading.Event
        self.client = None
        self.ttl_ms = 0
        self.wait_ms = 0
        self.sleep_s = 0.1  # Lock's own default
        self.pool = None

    def hello(self, m):
        """Connects to hello's one server and answers hello_ok, or error."""
        try:
            self.open(m)
        except Exception as e:  # any reason the session cannot start is hello's error
            self.out.send({"type": "error", "in_reply_to": m.get("id"), "code": "hello_failed", "reason": str(e)})
            return False
        self.out.send({
            "type": "hello_ok", "in_reply_to": m.get("id"), "protocol": 1,
            "library": {"name": LIBRARY, "version": redis.__version__,
                        "language": "python (%s %s)" % (platform.python_implementation(), platform.python_version())},
            "capabilities": {"extend": True, "auto_extend": False, "fence": False, "lost_notice": False},
            # No drift: the key's TTL from the SET that won.
            "validity": {"method": "ttl"},
        })
        return True

    def open(self, m):
        if redis is None:
            raise RuntimeError("cannot import redis (%s): install Debian's python3-redis and run /usr/bin/python3" % _IMPORT_ERROR)
        servers = m.get("servers") or []
        if len(servers) != 1:
            raise ValueError("redis-py's Lock is one server's; hello gave %d servers (use topology single)" % len(servers))
        if not m.get("ttl_ms", 0) > 0:
            raise ValueError("hello gives no ttl_ms")
        s = m.get("settings") or {}
        self.ttl_ms, self.wait_ms = int(m["ttl_ms"]), int(m.get("wait_ms") or 0)
        # wait_ms bounds one acquire, retries included; a design that
        # gives no retries and no wait time makes one attempt (the Lock's
        # loop is bounded by time, not by a count of retries).
        if s.get("retries") == 0 and not (s.get("wait_time_ms") or 0) > 0:
            self.wait_ms = 0
        lo, hi = s.get("retry_delay_min_ms") or 0, s.get("retry_delay_max_ms") or 0
        if lo > 0 or hi > 0:
            self.sleep_s = (lo + hi) / 2000.0
        host, _, port = servers[0].rpartition(":")
        # The per-server timeout bounds each command, so that a server cut
        # by a partition fails the request instead of hanging it.
        timeout = s.get("timeout_ms") / 1000.0 if (s.get("timeout_ms") or 0) > 0 else None
        self.client = redis.Redis(host=host.strip("[]"), port=int(port), socket_timeout=timeout,
                                  socket_connect_timeout=timeout or CONNECT_BOUND_S)
        self.client.ping()
        self.pool = ThreadPoolExecutor(max_workers=max(int(m.get("max_in_flight") or 1), 1) + 4)
        log("redis-py %s on %s, ttl %dms, wait %dms, sleep %gs, socket_timeout %s" % (
            redis.__version__, servers[0], self.ttl_ms, self.wait_ms, self.sleep_s, timeout))

    def serve(self, m):
        """Answers one request on a thread of its own (cancel: at once, no reply)."""
        typ = m.get("type")
        if typ == "cancel":
            with self.mu:
                ev = self.cancels.get(m.get("cancels"))
            if ev is not None:
                ev.set()
            return
        do = {"acquire": self.acquire, "release": self.release, "extend": self.extend}.get(typ)
        if do is None:
            self.out.send({"type": "error", "in_reply_to": m.get("id"), "code": "not_supported",
                           "reason": "unknown request type %s" % json.dumps(typ)})
            return
        if typ == "acquire":
            with self.mu:
                self.cancels[m.get("id")] = threading.Event()
        self.pool.submit(self.answer, do, m)

    def answer(self, do, m):
        try:
            r = do(m)
        except Exception as e:  # a bug here must not leave lockbench waiting
            log("%s %s: %r" % (m.get("type"), m.get("id"), e))
            r = {"type": "failed", "definite": False, "reason": repr(e)}
        r["in_reply_to"] = m.get("id")
        self.out.send(r)

    def acquire(self, m):
        with self.mu:
            cancelled = self.cancels.get(m.get("id"))
        t = time.monotonic()
        lk = TimedLock(self.client, m.get("key"), timeout=self.ttl_ms / 1000.0, sleep=self.sleep_s,
                       thread_local=False, cancelled=cancelled)
        try:
            if self.wait_ms > 0:
                ok = lk.acquire(blocking=True, blocking_timeout=self.wait_ms / 1000.0)
            else:
                ok = lk.acquire(blocking=False)
        except Cancelled:
            return {"type": "refused", "reason": "cancelled", "attempts": lk.attempts, "elapsed_ms": ms_since(t)}
        except RedisError as e:  # the SET may have been applied before the error
            return {"type": "failed", "definite": False, "reason": "%s: %s" % (type(e).__name__, e),
                    "attempts": lk.attempts, "elapsed_ms": ms_since(t)}
        finally:
            with self.mu:
                self.cancels.pop(m.get("id"), None)
        if not ok:
            return {"type": "refused", "reason": "held by another", "attempts": lk.attempts, "elapsed_ms": ms_since(t)}
        token = lk.local.token.decode()
        with self.mu:
            self.held[token] = lk
        return {"type": "granted", "token": token, "validity_ms": max(0, self.ttl_ms - ms_since(lk.last_attempt)),
                "attempts": lk.attempts, "elapsed_ms": ms_since(t)}

    def held_lock(self, m, take):
        with self.mu:
            lk = self.held.get(m.get("token"))
            if lk is None or lk.name != m.get("key"):
                return None
            if take:
                del self.held[m.get("token")]
            return lk

    def release(self, m):
        lk = self.held_lock(m, take=True)
        if lk is None:
            return {"type": "refused", "reason": "not held"}
        t = time.monotonic()
        try:
            lk.release()
        except LockNotOwnedError:
            return {"type": "refused", "reason": "not held (expired, or taken since)", "elapsed_ms": ms_since(t)}
        except RedisError as e:
            return {"type": "failed", "definite": False, "reason": "%s: %s" % (type(e).__name__, e), "elapsed_ms": ms_since(t)}
        return {"type": "released", "elapsed_ms": ms_since(t)}

    def extend(self, m):
        lk = self.held_lock(m, take=False)
        if lk is None:
            return {"type": "refused", "reason": "not held"}
        ttl_ms = int(m.get("ttl_ms") or self.ttl_ms)
        t = time.monotonic()
        try:
            lk.extend(ttl_ms / 1000.0, replace_ttl=True)
        except (LockNotOwnedError, LockError):
            return {"type": "refused", "reason": "not held (expired, or taken since)", "elapsed_ms": ms_since(t)}
        except RedisError as e:
            return {"type": "failed", "definite": False, "reason": "%s: %s" % (type(e).__name__, e), "elapsed_ms": ms_since(t)}
        return {"type": "extended", "validity_ms": max(0, ttl_ms - ms_since(t)), "elapsed_ms": ms_since(t)}

    def end(self):
        """stdin closed: stop acquires trying, wait for the requests, release what is held."""
        with self.mu:
            for ev in self.cancels.values():
                ev.set()
        if self.pool is not None:
            self.pool.shutdown(wait=True)
        with self.mu:
            held, self.held = list(self.held.values()), {}
        for lk in held:
            try:
                lk.release()
            except (LockError, RedisError):
                pass  # expired or unreachable: its TTL ends it


def main():
    out = Out(_PROTOCOL_OUT)
    session = Session(out)
    stdin = sys.stdin.buffer
    line = stdin.readline()
    try:
        m = json.loads(line)
    except ValueError:
        log("first line is not hello: %r" % line[:80])
        return 2
    if m.get("type") != "hello":
        log("first line is not hello: %r" % line[:80])
        return 2
    if not session.hello(m):
        return 1
    for line in iter(stdin.readline, b""):
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError:
            log("malformed request, ignored: %r" % line[:80])
            continue
        session.serve(req)
    session.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
