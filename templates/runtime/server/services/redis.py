"""The shared services of a server scaled out over several workers, on Redis (the ``redis`` extra).

``SharedRedis`` holds one asyncio client per worker process (made on first use, in the loop
that serves) and the three Redis implementations of the services' seams: ``RedisBus`` (a
pub/sub channel), ``RedisSessionStore`` (one key per legacy session, expiring when idle, and
an index that caps how many are kept) and ``RedisEventStore`` (one Redis Stream per SSE
stream, trimmed to its newest events, expiring when idle); and ``RedisProofMemory``, the DPoP
proofs a protected server has seen. All keys live under one namespace
per server (``mcpgen:<server name>`` by default), so servers may share a Redis.

When Redis goes away mid-run, what needs no shared state keeps working: stateless requests
are answered, a change is still delivered to this worker's own streams; a legacy session's
request fails with ``SharedStateUnavailable`` (the HTTP app answers 503), and so does a request
with a DPoP proof (no proof is let through unchecked for replay). The failure is
logged once per outage, each use tries again, and its end is logged too. This module is
imported only when a ``redis_url`` is set, so nothing else pays for ``redis``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from .bus import Change, Deliver
from .event_store import StreamKind, new_stream, split_event_id
from .session_store import MemorySessionStore, Session, SessionLimitReached, SharedStateUnavailable

log = logging.getLogger("mcpgen.server")

S = TypeVar("S", bound=Session)
SESSION_ID = re.compile(r"[0-9a-f]{32}")
FAILURES = (RedisError, OSError)
STREAM_ENTRY = re.compile(r"\d{1,20}-\d{1,20}")  # a Redis Stream entry id: what an event id's position is here
RECONNECT_DELAY = 0.5  # seconds between attempts to reach a lost Redis (doubling up to 8)


def redacted(url: str) -> str:
    """``url`` without its password, fit for a log line."""
    return re.sub(r"//([^:/@]*):[^@/]*@", r"//\1:***@", url)


def check_reachable(url: str, timeout: float = 5.0) -> None:
    """Ping Redis once (before a server starts): raise ``SharedStateUnavailable`` in one sentence."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            client.ping()
        finally:
            client.close()
    except (RedisError, OSError, ValueError) as exc:
        raise SharedStateUnavailable(f"cannot reach Redis at {redacted(url)}: {exc}") from None


class Outage:
    """Logs a lost Redis once, and its return once."""

    def __init__(self, url: str) -> None:
        self.url = redacted(url)
        self.down = False

    def failed(self, exc: BaseException) -> None:
        if not self.down:
            self.down = True
            log.warning("lost Redis at %s (%s); serving what needs no shared state, reconnecting", self.url, exc)

    def ok(self) -> None:
        if self.down:
            self.down = False
            log.warning("Redis at %s is back", self.url)


class SharedRedis:
    """One worker's connections to the deployment's Redis (the clients are made lazily, per process).

    ``client`` runs commands, each bounded by ``timeout`` seconds (a stalled Redis is then a
    failure like a lost one); ``listener`` holds the pub/sub subscription, which waits for
    messages as long as none come, so its reads have no timeout.
    """

    def __init__(self, url: str, namespace: str, timeout: float = 5.0, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.namespace = namespace
        self.timeout = timeout
        self.outage = Outage(url)
        self.clock = clock
        self.offset: float | None = None  # Redis's clock minus this worker's, once read
        self._client: aioredis.Redis | None = None
        self._listener: aioredis.Redis | None = None

    def now(self) -> float:
        """The time by Redis's clock (this worker's, corrected by the last reading of Redis's):
        lease deadlines and idle times compare across workers whose clocks differ."""
        return self.clock() + (self.offset or 0.0)

    def read_clock(self, redis_time: Any, asked_at: float) -> None:
        """Take a ``TIME`` answer (seconds, microseconds) asked for at ``asked_at`` by this clock."""
        seconds, micros = redis_time
        self.offset = int(seconds) + int(micros) / 1e6 - (asked_at + self.clock()) / 2

    async def synced(self) -> None:
        """Read Redis's clock once, before this worker's first deadline."""
        if self.offset is None:
            asked_at = self.clock()
            self.read_clock(await self.client.time(), asked_at)

    @property
    def client(self) -> aioredis.Redis:
        if self._client is None:
            self._client = self._connect(self.timeout)
        return self._client

    @property
    def listener(self) -> aioredis.Redis:
        if self._listener is None:
            self._listener = self._connect(None)
        return self._listener

    def _connect(self, timeout: float | None) -> aioredis.Redis:
        return aioredis.Redis.from_url(
            self.url,
            socket_connect_timeout=min(5.0, self.timeout),
            socket_timeout=timeout,
            health_check_interval=30,
            retry_on_timeout=False,
        )

    def key(self, *parts: str) -> str:
        return ":".join((self.namespace, *parts))

    async def close(self) -> None:
        for client in (self._client, self._listener):
            if client is not None:
                with contextlib.suppress(*FAILURES):
                    await client.aclose()
        self._client = self._listener = None


class RedisBus:
    """Changes on one pub/sub channel; each worker reads it in one task and delivers locally."""

    def __init__(self, shared: SharedRedis) -> None:
        self.shared = shared
        self.channel = shared.key("changes")
        # a client's answer to a server->client request, posted to a worker whose copy of the
        # session did not ask it: "<session id>\n<the JSON-RPC response>", for the one that did
        self.answers = shared.key("answers")
        self.on_answer: Callable[[str, bytes], Awaitable[None]] | None = None
        self._deliver: Deliver | None = None
        self._reader: asyncio.Task[None] | None = None
        self._subscribed = False  # the reader is subscribed now (not reconnecting)
        self._again = asyncio.Event()  # Redis answered a command: a reconnecting reader tries at once
        self.unreadable = 0  # messages on the channel that are no change this runtime reads (dropped)

    async def publish(self, change: Change) -> None:
        try:
            await self.shared.client.publish(self.channel, change.encode())
        except FAILURES as exc:
            self.shared.outage.failed(exc)
            if self._deliver is not None:  # this worker's own streams still hear of it
                await self._deliver(change)
        else:
            self.shared.outage.ok()
            if not self._subscribed and self._deliver is not None:
                # Redis is back before this worker's reader (still waiting to reconnect): the
                # change reached the other workers, and reaches this one's streams here
                self._again.set()
                await self._deliver(change)

    async def forward_answer(self, session_id: str, data: bytes) -> None:
        """Hand a client's answer to every worker: the one whose copy of the session asked takes it."""
        try:
            await self.shared.client.publish(self.answers, session_id.encode() + b"\n" + data)
        except FAILURES as exc:
            self.shared.outage.failed(exc)  # lost with Redis: the request waits for its own timeout

    async def attach(self, deliver: Deliver) -> None:
        self._deliver = deliver
        if self._reader is None or self._reader.done():
            ready = asyncio.Event()
            self._reader = asyncio.create_task(self._read(ready))
            await ready.wait()  # subscribed, or failed: both within the command timeout

    async def _read(self, ready: asyncio.Event) -> None:
        delay = RECONNECT_DELAY
        while True:
            pubsub = self.shared.listener.pubsub(ignore_subscribe_messages=True)
            try:
                # bounded like every command: the listener's reads wait for ever, and a stalled
                # Redis held the first listen stream (and every publish waiting on attach) as long
                async with asyncio.timeout(self.shared.timeout):
                    await pubsub.subscribe(self.channel, self.answers)
                self._subscribed = True
                self.shared.outage.ok()
                ready.set()
                delay = RECONNECT_DELAY
                answers = self.answers.encode()
                async for message in pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    if message.get("channel") == answers:
                        session_id, _, data = bytes(message["data"]).partition(b"\n")
                        if self.on_answer is not None:
                            await self.on_answer(session_id.decode("ascii", "replace"), data)
                        continue
                    change = Change.decode(message["data"])
                    if change is None:
                        self.dropped(message["data"])
                    elif self._deliver is not None:
                        await self._deliver(change)
            except (*FAILURES, TimeoutError) as exc:
                self._subscribed = False
                self.shared.outage.failed(exc)
                ready.set()  # listen streams open anyway; changes of this worker still reach them
                self._again.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._again.wait(), delay)
                delay = min(delay * 2, 8.0)
            finally:
                self._subscribed = False
                with contextlib.suppress(*FAILURES, TimeoutError):
                    async with asyncio.timeout(self.shared.timeout):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]

    def dropped(self, data: object) -> None:
        """A message on the channel no change this runtime reads: counted, and told once per worker,
        since every one after it is dropped alike (a worker of another mcpgen version publishing
        in the same namespace, as in a rolling upgrade that changed the wire form, or another
        program on the channel): the streams of this worker never hear of those changes."""
        self.unreadable += 1
        if self.unreadable == 1:
            shown = bytes(data)[:80] if isinstance(data, bytes | bytearray | memoryview) else repr(data)[:80]
            log.warning(
                "a message on %s is no change this worker reads (%r), dropped: is a worker of another "
                "mcpgen version publishing in this namespace? (told once; RedisBus.unreadable counts them)",
                self.channel,
                shown,
            )

    async def close(self) -> None:
        self._deliver = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None


# Removes one session and everything kept for it: its state, its place in the index, its busy
# leases and its SSE streams (the sorted set ``<ns>:sse:<id>`` names them). A session is busy while
# ``<ns>:busy:<id>`` (worker -> lease deadline) holds a lease not yet past.
DROP = """
local function drop(ns, id)
  local streams = ns .. ':sse:' .. id
  for _, stream in ipairs(redis.call('ZRANGE', streams, 0, -1)) do
    redis.call('DEL', ns .. ':events:' .. id .. ':' .. stream)
  end
  local earlier = ns .. ':streams:' .. id  -- the set of a release before (a rolling upgrade)
  if redis.call('TYPE', earlier).ok == 'set' then
    for _, stream in ipairs(redis.call('SMEMBERS', earlier)) do
      redis.call('DEL', ns .. ':events:' .. id .. ':' .. stream)
    end
  end
  redis.call('DEL', ns .. ':session:' .. id, ns .. ':busy:' .. id, ns .. ':subscribed:' .. id, streams, earlier)
  redis.call('ZREM', ns .. ':sessions', id)
end
local function busy(ns, id, now)
  local leases = ns .. ':busy:' .. id
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  return redis.call('ZCARD', leases) > 0
end
"""

# A new session: sessions idle past the timeout (and not busy) are dropped, then, while the cap
# is reached, the least recently used session that is not busy; when every session is busy
# nothing is dropped and -1 comes back (refused). Else the ids it dropped. One script, so two
# workers adding at once cannot both take the last place or drop a session being leased.
# ARGV: namespace, now, idle timeout, max sessions, new id, state, ttl.
ADD = (
    DROP
    + """
local ns, now, idle, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local index = ns .. ':sessions'
local dropped = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now - idle)) do
  if not busy(ns, id, now) then
    drop(ns, id)
    dropped[#dropped + 1] = id
  end
end
local count, skipped = redis.call('ZCARD', index), 0
while count >= cap do
  local batch = redis.call('ZRANGE', index, skipped, skipped + 63)
  if #batch == 0 then return -1 end
  for _, id in ipairs(batch) do
    if count < cap then break end
    if busy(ns, id, now) then
      skipped = skipped + 1
    else
      drop(ns, id)
      dropped[#dropped + 1] = id
      count = count - 1
    end
  end
end
redis.call('SET', ns .. ':session:' .. ARGV[5], ARGV[6], 'EX', ARGV[7])
redis.call('ZADD', index, ARGV[2], ARGV[5])
return dropped
"""
)

REMOVE = DROP + "drop(ARGV[1], ARGV[2])\nreturn 1\n"


class RedisSessionStore(Generic[S]):
    """Legacy sessions in Redis (``<ns>:session:<id>``, expiring ``idle_timeout`` after their
    last use; at most ``max_sessions``), their live connections in this worker's
    ``MemorySessionStore``; ``blank`` makes an empty session for ``Session.restore``.

    The cap keeps the memory store's rule across workers: a new session drops the least recently
    used session that is not busy, and is refused (``SessionLimitReached``) when every one is.
    Busy is a lease each worker holds in ``<ns>:busy:<id>`` (worker -> until when): a lookup
    takes one for ``busy_lease`` seconds (the request it serves is about to start); while the
    session is busy here (a request in flight, a stream open) the worker renews it every third
    of the lease, with the session's expiry and its place in the index, and gives it up
    (``release``) once it is idle here. So a busy session is never evicted nor expires, an idle
    one holds no lease, and a worker that dies holds its leases ``busy_lease`` seconds at most.
    Dropping a session (``remove``, the cap, expiry) deletes its SSE streams with it
    (``<ns>:sse:<id>`` names them, see ``RedisEventStore``). When Redis is out of reach,
    leases lapse with everything else; the next beat after it is back renews them.
    """

    def __init__(
        self,
        shared: SharedRedis,
        blank: Callable[[], S],
        *,
        max_sessions: int = 10_000,
        idle_timeout: float = 1800.0,
        busy_lease: float | None = None,
    ) -> None:
        self.shared = shared
        self.blank = blank
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.ttl = max(1, round(idle_timeout))
        self.busy_lease = busy_lease if busy_lease is not None else min(10.0, idle_timeout / 3)
        self.local: MemorySessionStore[S] = MemorySessionStore(max_sessions=max_sessions, idle_timeout=idle_timeout)
        self.index = shared.key("sessions")
        self.worker = secrets.token_hex(8)  # this store's name in the leases
        self.held: set[str] = set()  # the sessions this worker holds a lease on
        self._client: aioredis.Redis | None = None  # the client the scripts were registered with
        self._scripts: tuple[AsyncScript, AsyncScript] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._taken: dict[str, int] = {}  # lookups begun, by session (see _drop_released)
        self._stop: asyncio.Event | None = None  # set by ``close``: the renewer ends between round trips

    def __len__(self) -> int:
        return len(self.local)

    def _key(self, session_id: str) -> str:
        return self.shared.key("session", session_id)

    def _script(self, which: int) -> AsyncScript:
        """The ``ADD`` (0) or ``REMOVE`` (1) script on the current client (made again with it)."""
        client = self.shared.client
        if self._scripts is None or self._client is not client:
            self._client, self._scripts = client, (client.register_script(ADD), client.register_script(REMOVE))
        return self._scripts[which]

    def _leases(self, session_id: str) -> str:
        return self.shared.key("busy", session_id)

    def _subscribed(self, session_id: str) -> str:
        """The set of the session's resource subscriptions: kept apart from its state, so requests
        subscribing at once (on any workers) each add theirs (as one state, the last write won:
        3 of 20 concurrent subscriptions were kept)."""
        return self.shared.key("subscribed", session_id)

    def _failed(self, exc: BaseException) -> SharedStateUnavailable:
        self.shared.outage.failed(exc)
        return SharedStateUnavailable(f"the session store (Redis at {self.shared.outage.url}) is out of reach")

    async def add(self, session: S) -> str:
        session_id = secrets.token_hex(16)
        state = json.dumps(session.state(), separators=(",", ":"))
        try:
            await self.shared.synced()
        except FAILURES as exc:
            raise self._failed(exc) from None
        args: list[str | float] = [
            self.shared.namespace,
            self.shared.now(),
            self.idle_timeout,
            self.max_sessions,
            session_id,
            state,
            self.ttl,
        ]
        try:
            dropped: Any = await self._script(0)(args=args)
        except FAILURES as exc:
            raise self._failed(exc) from None
        self.shared.outage.ok()
        if dropped == -1:
            raise SessionLimitReached(f"all {self.max_sessions} sessions are in use")
        for name in dropped:
            gone = await self.local.remove(name.decode() if isinstance(name, bytes) else str(name))
            if gone is not None:
                gone.close()
        self.local.put(session_id, session)
        return session_id

    async def get(self, session_id: str) -> S | None:
        if SESSION_ID.fullmatch(session_id) is None:
            return None
        self._taken[session_id] = self._taken.get(session_id, 0) + 1  # (a beat's late ZREM spares it)
        try:
            await self.shared.synced()
            now = self.shared.now()
            async with self.shared.client.pipeline(transaction=False) as pipe:
                pipe.getex(self._key(session_id), ex=self.ttl)
                pipe.smembers(self._subscribed(session_id))
                pipe.expire(self._subscribed(session_id), self.ttl)
                pipe.zadd(self.index, {session_id: now}, xx=True)
                self._lease(pipe, session_id, now)
                raw, subscribed, *_ = await pipe.execute()
        except FAILURES as exc:
            raise self._failed(exc) from None
        self.shared.outage.ok()
        if raw is None:  # expired, evicted or deleted (maybe by another worker)
            with contextlib.suppress(*FAILURES):
                await self.shared.client.delete(self._leases(session_id))
            gone = await self.local.remove(session_id)
            if gone is not None:
                gone.close()
            return None
        self.held.add(session_id)
        if self._renewer is None or self._renewer.done():
            self._stop = asyncio.Event()
            self._renewer = asyncio.create_task(self._renew(self._stop))
        try:
            state = json.loads(raw)
        except ValueError:
            return None
        if isinstance(state, dict) and (subscribed or "subscribed" in state):
            state["subscribed"] = sorted(uri.decode() if isinstance(uri, bytes) else str(uri) for uri in subscribed)
        session = await self.local.get(session_id)
        if session is not None:
            return session if session.restore(state) else None
        session = self.blank()
        if not session.restore(state):
            session.close()
            return None
        self.local.put(session_id, session)
        return session

    def _lease(self, pipe: Any, session_id: str, now: float) -> None:
        """Queue taking (or renewing) this worker's lease on ``session_id`` on ``pipe``."""
        leases = self._leases(session_id)
        pipe.zadd(leases, {self.worker: now + self.busy_lease})
        pipe.pexpire(leases, max(1, round(self.busy_lease * 1000)))

    async def release(self, session_id: str) -> None:
        """The request that looked ``session_id`` up is over: give up this worker's lease on it
        unless the session is still busy here (another request, a stream)."""
        session = self.local.peek(session_id)
        if session_id not in self.held or (session is not None and session.busy):
            return
        self.held.discard(session_id)
        try:
            await self.shared.client.zrem(self._leases(session_id), self.worker)
        except FAILURES as exc:
            self.shared.outage.failed(exc)  # the lease lapses on its own

    async def _renew(self, stop: asyncio.Event) -> None:
        """Every third of the lease: renew the leases of the sessions busy here (and their
        expiry), give up those of the sessions no longer busy; ends when it holds none (a lookup
        starts it again), or when ``stop`` is set."""
        while self.held:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.busy_lease / 3)
            if stop.is_set():
                return
            busy: list[str] = []
            idle: list[str] = []
            for session_id in self.held:
                session = self.local.peek(session_id)
                (busy if session is not None and session.busy else idle).append(session_id)
            self.held.difference_update(idle)  # before the await: a lookup meanwhile holds it again
            if not (busy or idle):
                continue
            taken = {session_id: self._taken.get(session_id, 0) for session_id in busy}
            for session_id in idle:  # (counted again from its next lookup; the beat renews none of them)
                self._taken.pop(session_id, None)
            now = self.shared.now()
            try:
                async with self.shared.client.pipeline(transaction=False) as pipe:
                    pipe.time()  # Redis's clock, read again each beat (a worker's may drift)
                    for session_id in busy:
                        pipe.expire(self._key(session_id), self.ttl)
                        pipe.zadd(self.index, {session_id: now}, xx=True)
                        self._lease(pipe, session_id, now)
                    for session_id in idle:
                        pipe.zrem(self._leases(session_id), self.worker)
                    asked_at = self.shared.clock()
                    redis_time, *_ = await pipe.execute()
                    self.shared.read_clock(redis_time, asked_at)
            except FAILURES as exc:
                self.shared.outage.failed(exc)  # the next beat tries again (idle leases lapse)
            else:
                self.shared.outage.ok()
                await self._drop_released(taken)

    async def _drop_released(self, renewed: dict[str, int]) -> None:
        """Give up again the leases just renewed of sessions released meanwhile: a ``release``
        whose ZREM reached Redis before the beat's ZADD left the lease standing for a whole
        ``busy_lease``, the session counted busy on every worker (a new one refused at the cap).
        Not one looked up again since the beat read it (``renewed``: its count of lookups then):
        that lookup's lease stands."""
        released = [
            session_id
            for session_id, taken in renewed.items()
            if session_id not in self.held and self._taken.get(session_id, 0) == taken
        ]
        if not released:
            return
        try:
            async with self.shared.client.pipeline(transaction=False) as pipe:
                for session_id in released:
                    pipe.zrem(self._leases(session_id), self.worker)
                await pipe.execute()
        except FAILURES as exc:
            self.shared.outage.failed(exc)  # the lease lapses on its own

    def peek(self, session_id: str) -> S | None:
        """This worker's copy of ``session_id``, as it is (no round trip)."""
        return self.local.peek(session_id)

    def discard(self, session_id: str) -> None:
        """Close this worker's copy of ``session_id`` (it ended on another worker)."""
        self.held.discard(session_id)
        self._taken.pop(session_id, None)
        self.local.discard(session_id)

    async def save(self, session_id: str, session: S) -> None:
        state = session.state()
        if state is None:
            return
        state.pop("subscribed", None)  # kept as a set of its own: what changed is added or removed
        take = getattr(session, "subscription_changes", None)
        changes: dict[str, bool] = take() if take is not None else {}
        subscribed = self._subscribed(session_id)
        try:
            async with self.shared.client.pipeline(transaction=False) as pipe:
                pipe.set(self._key(session_id), json.dumps(state, separators=(",", ":")), ex=self.ttl, xx=True)
                added = [uri for uri, on in changes.items() if on]
                removed = [uri for uri, on in changes.items() if not on]
                if added:
                    pipe.sadd(subscribed, *added)
                if removed:
                    pipe.srem(subscribed, *removed)
                pipe.expire(subscribed, self.ttl)
                await pipe.execute()
        except FAILURES as exc:
            restore = getattr(session, "unsaved_subscriptions", None)
            if restore is not None:
                restore(changes)  # tried again with the next save
            raise self._failed(exc) from None

    async def remove(self, session_id: str) -> S | None:
        if SESSION_ID.fullmatch(session_id) is not None:
            try:
                await self._script(1)(args=[self.shared.namespace, session_id])
            except FAILURES as exc:
                raise self._failed(exc) from None
        self.held.discard(session_id)
        self._taken.pop(session_id, None)
        return await self.local.remove(session_id)

    async def close(self) -> None:
        """Stop renewing leases; the shared client is ``SharedRedis.close``'s to release."""
        renewer, self._renewer = self._renewer, None
        if renewer is None or renewer.done():
            return
        # Not cancelled mid round trip: redis-py (8.1) can hang a pipeline cancelled while it
        # runs, and with it this close. Asked to stop, it ends between round trips; cancelled
        # only if a round trip outlasts a lease (Redis out of reach).
        if self._stop is not None:
            self._stop.set()
        done, _ = await asyncio.wait([renewer], timeout=self.busy_lease)
        if not done:
            renewer.cancel()


class RedisProofMemory:
    """The DPoP proofs seen at any worker (``dpop.ProofMemory``): one key per proof, set only if
    absent, expiring with the proof's window."""

    def __init__(self, shared: SharedRedis) -> None:
        self.shared = shared

    async def first_use(self, key: str, now: float, ttl: float) -> bool:
        try:
            fresh = await self.shared.client.set(
                self.shared.key("dpop", key), b"1", nx=True, px=max(1, int(ttl * 1000))
            )
        except FAILURES as exc:
            self.shared.outage.failed(exc)
            raise SharedStateUnavailable(
                f"the DPoP proofs seen are kept in Redis, which is unreachable: {exc}"
            ) from exc
        self.shared.outage.ok()
        return bool(fresh)


class RedisEventStore:
    """Each SSE stream a Redis Stream ``<ns>:events:<session>:<stream>``: trimmed to its newest
    ``max_events`` entries, expiring ``ttl`` seconds after its last event. A session's streams
    are named in the sorted set ``<ns>:sse:<session>`` by their last event's time (expiring
    with its newest stream), so that dropping the session deletes them at once
    (``RedisSessionStore``), without a scan; names of expired streams leave it as streams open,
    and past ``max_session_streams`` the oldest streams go (the names piled up: 293 for 73
    streams in a review, every one walked when the session was dropped)."""

    def __init__(
        self, shared: SharedRedis, *, max_events: int = 1000, ttl: float = 300.0, max_session_streams: int = 128
    ) -> None:
        self.shared = shared
        self.max_events = max_events
        self.ttl = max(1, round(ttl))
        self.max_session_streams = max_session_streams

    def _key(self, session_id: str, stream: str) -> str:
        return self.shared.key("events", session_id, stream)

    def _failed(self, exc: BaseException) -> SharedStateUnavailable:
        self.shared.outage.failed(exc)
        return SharedStateUnavailable(f"the event store (Redis at {self.shared.outage.url}) is out of reach")

    async def _add(self, session_id: str, stream: str, fields: dict[str, bytes], *, opening: bool = False) -> str:
        key, streams = self._key(session_id, stream), self.shared.key("sse", session_id)
        now = self.shared.now()
        try:
            async with self.shared.client.pipeline(transaction=False) as pipe:
                pipe.xadd(key, fields, maxlen=self.max_events, approximate=False)  # type: ignore[arg-type]
                pipe.expire(key, self.ttl)
                pipe.zadd(streams, {stream: now})
                if opening:  # the names of streams expired by now go, and the oldest past the cap
                    pipe.zremrangebyscore(streams, "-inf", now - self.ttl)
                    pipe.zrange(streams, 0, -self.max_session_streams - 1)
                pipe.expire(streams, self.ttl)
                entry, *rest = await pipe.execute()
                if opening and rest[3]:
                    old = [name.decode() if isinstance(name, bytes) else str(name) for name in rest[3]]
                    pipe.delete(*(self._key(session_id, name) for name in old))
                    pipe.zrem(streams, *old)
                    await pipe.execute()
        except FAILURES as exc:
            raise self._failed(exc) from None
        self.shared.outage.ok()
        return entry.decode() if isinstance(entry, bytes) else str(entry)

    async def open(self, session_id: str, kind: StreamKind) -> tuple[str, str]:
        stream = new_stream(kind)
        entry = await self._add(session_id, stream, {"o": b"1"}, opening=True)
        return stream, f"{stream}.{entry}"

    async def append(self, session_id: str, stream: str, data: bytes, *, last: bool = False) -> str:
        fields = {"d": data, "e": b"1"} if last else {"d": data}
        return f"{stream}.{await self._add(session_id, stream, fields)}"

    async def resume(self, session_id: str, event_id: str) -> str | None:
        parts = split_event_id(event_id)
        if parts is None:
            return None
        try:
            found = await self.shared.client.exists(self._key(session_id, parts[0]))
        except FAILURES as exc:
            raise self._failed(exc) from None
        return parts[0] if found else None

    async def read(self, session_id: str, event_id: str, *, wait: float) -> AsyncIterator[tuple[str, bytes]]:
        parts = split_event_id(event_id)
        if parts is None or STREAM_ENTRY.fullmatch(parts[1]) is None:
            return  # not an entry id of ours (XREAD refused it, which was logged as a lost Redis)
        stream, after = parts
        key = self._key(session_id, stream)
        deadline = time.monotonic() + wait
        while True:
            # each XREAD blocks for less than the command timeout (a longer one timed out, taken
            # for a lost Redis): a wait of 30 s is several reads
            left = deadline - time.monotonic()
            block = max(1, round(min(left, self.shared.timeout / 2) * 1000))
            try:
                got: Any = await self.shared.client.xread({key: after}, count=256, block=block)
            except FAILURES as exc:
                self.shared.outage.failed(exc)
                return
            if not got:
                if time.monotonic() < deadline:
                    continue
                return  # nothing for ``wait`` seconds
            entries: list[tuple[bytes, dict[bytes, bytes]]] = got[0][1]
            for entry, fields in entries:
                after = entry.decode()
                data = fields.get(b"d")
                if data is not None:
                    yield f"{stream}.{after}", data
                if b"e" in fields:
                    return

    async def forget(self, session_id: str, stream: str) -> None:
        try:
            async with self.shared.client.pipeline(transaction=False) as pipe:
                pipe.delete(self._key(session_id, stream))
                pipe.zrem(self.shared.key("sse", session_id), stream)
                await pipe.execute()
        except FAILURES as exc:
            self.shared.outage.failed(exc)  # it expires on its own

    async def close(self) -> None:
        """Nothing beyond the shared client, which ``SharedRedis.close`` releases."""
