"""Runners: serve a ``Router`` from this process, on stdin/stdout or with uvicorn.

On SIGTERM or SIGINT both end open ``subscriptions/listen`` streams (each answered with its
result), stop accepting input and let requests in flight finish. Both apply the server's
``Limits``: the stdio transport bounds lines and requests in flight; uvicorn runs with
``LimitedHttpToolsProtocol`` (its httptools protocol, bounded: 431 for headers over
``max_header_bytes``, read with bounded memory, 408 for headers not complete within
``header_timeout``), ``limit_concurrency`` and ``timeout_keep_alive`` from the limits.

``run_http(..., workers=N)`` binds the port once and forks N uvicorn workers that accept on
it; they need a shared store (the server's ``redis_url``), and a server with one checks that
Redis answers before it serves: otherwise it exits with one sentence. The parent keeps the
socket and supervises (``Supervisor``): a worker that dies while the server is not stopping is
reported in one line on stderr and replaced; more than ``DEATH_BUDGET`` deaths within
``DEATH_WINDOW`` seconds stop every worker and the parent (exit 1, one line saying why).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import gc
import io
import logging
import os
import queue
import select
import selectors
import signal
import socket
import stat
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from ..lines import READ_CHUNK
from .kernel import stderr
from .router import Router
from .services import Limits
from .transports.stdio import serve

if TYPE_CHECKING:
    import uvicorn

    from .transports.asgi import HttpApp


class Coalescer:
    """Lines written within one event-loop iteration go out in one ``write``: with many requests in
    flight, one system call per batch of answers instead of one per answer."""

    __slots__ = ("loop", "parts", "sink")

    def __init__(self, loop: asyncio.AbstractEventLoop, sink: Callable[[bytes], object]) -> None:
        self.loop = loop
        self.sink = sink
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self.parts:
            self.loop.call_soon(self.flush)
        self.parts.append(data)

    def flush(self) -> None:
        if self.parts:
            data = b"".join(self.parts)
            self.parts.clear()
            self.sink(data)

    def close(self) -> None:
        """Write what is pending; whatever is written later is dropped (the output is closing)."""
        self.flush()
        self.sink = _dropped


def _dropped(data: bytes) -> None:
    pass


async def serve_stdio(router: Router) -> int | None:
    """Serve ``router`` on this process's stdin and stdout until EOF or a signal; the signal that
    stopped it (SIGTERM or SIGINT, the first), if one did.

    Each may be a pipe, a terminal, a socket, ``/dev/null`` or a regular file (``python -m server
    < requests.jsonl > replies.jsonl``): pipes and terminals go through the event loop's pipe
    transports (stdin also when it is a socket), the rest through ``FileReader``/``FileWriter``,
    worker threads that never block the loop. A socket's peer closing its side for writing ends
    the input and still gets every reply.

    Input read by ``FileReader`` (a file: no live client behind it) is served with ``serve(...,
    from_file=True)``: a request past ``max_inflight`` waits for a place instead of being
    refused, and at the end of the input every request in flight is waited for, however long it
    takes; the first signal stops the reading as on a pipe, a second one ends the process.
    """
    with protocol_stdout() as stdout:
        return await _serve_stdio(router, stdout)


@contextlib.contextmanager
def protocol_stdout() -> Iterator[int]:
    """A descriptor of the process's stdout for the protocol alone (the caller closes it), while
    descriptor 1 and ``sys.stdout`` go to stderr: a ``print`` in a tool, a C library writing to
    stdout or a child process inheriting it cannot put a line that is not an MCP message on the
    stream (stdio.mdx: a server MUST NOT write anything else to its stdout); they reach stderr,
    line by line. Descriptor 1 is given back at the end."""
    out = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
    saved = os.dup(out)
    # descriptor 2 is the process's stderr only if it was open when Python started (else Python
    # set sys.stderr to None, and 2 may be any file opened since: a log, a database)
    try:
        err = sys.__stderr__.fileno() if sys.__stderr__ is not None else None
    except (OSError, ValueError):  # closed, or no file behind it
        err = None
    if err == 2:
        os.dup2(2, out)
    else:  # no stderr: what is printed goes nowhere rather than onto the stream
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out)
        os.close(devnull)
    text: io.TextIOWrapper | None = None
    try:
        if isinstance(sys.stdout, io.TextIOWrapper) and not sys.stdout.line_buffering:
            with contextlib.suppress(Exception):  # a stdout the program closed: left as it is
                sys.stdout.reconfigure(line_buffering=True)
                text = sys.stdout
        yield os.dup(saved)
    finally:
        with contextlib.suppress(Exception):  # what was printed goes to stderr, not the stream
            sys.stdout.flush()
        if text is not None:
            with contextlib.suppress(Exception):
                text.reconfigure(line_buffering=False)
        os.dup2(saved, out)
        os.close(saved)


async def _serve_stdio(router: Router, stdout: int) -> int | None:
    loop = asyncio.get_running_loop()
    stdin = sys.stdin.buffer.fileno()
    reader = asyncio.StreamReader(limit=READ_CHUNK)  # what is buffered before stdin is paused
    file_reader: asyncio.Task[None] | None = None
    read_transport: asyncio.BaseTransport | None = None
    if kind(stdin) == stat.S_IFSOCK or pipe_like(stdin):
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    else:
        file_reader = FileReader(stdin, reader).start()
    # replies the client has not read are kept up to one maximal line before input is paused
    high = router.limits.max_line_bytes
    signals = (signal.SIGTERM, signal.SIGINT)
    received: list[int] = []

    def stop_on(signum: int) -> None:
        received.append(signum)
        shut_down()

    def shut_down() -> None:  # SIGTERM/SIGINT: end listen streams, stop reading, let requests finish
        router.services.subscriptions.close()
        reader.feed_eof()
        if read_transport is not None:  # what the client still writes is not read (fed past the end,
            read_transport.close()  # each chunk was an AssertionError traceback: a review of the diff)
        if file_reader is not None:  # requests from a file are waited for: a second signal ends the process
            file_reader.cancel()  # which would feed ``reader`` past its end
            for signum in signals:
                loop.remove_signal_handler(signum)

    def output_lost() -> None:
        """The client closed our stdout (or it failed): nothing can be answered any more, so the
        server stops as on a signal (a hostile-input review: it served on, logging every reply
        it could not write, until its input ended)."""
        if not reader.at_eof():  # (at the end the runner closes stdout itself: the input ended first)
            shut_down()

    write: Callable[[bytes], object]
    if pipe_like(stdout):  # not a socket: the pipe transport would read it to detect a close
        pipe = open(stdout, "wb", buffering=0)  # closed with the transport
        transport, protocol = await loop.connect_write_pipe(lambda: Output(output_lost), pipe)
        transport.set_write_buffer_limits(high=high)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        wait = writer.drain

        def write(data: bytes) -> None:
            if not transport.is_closing():  # once it is gone, asyncio logs a line for every write
                writer.write(data)

        async def close() -> None:
            transport.set_write_buffer_limits(high=0)  # drain now waits until every reply is written
            with contextlib.suppress(ConnectionError, TimeoutError):
                await asyncio.wait_for(writer.drain(), SHUTDOWN_FLUSH)
            transport.close()

    else:
        file_writer = FileWriter(stdout, high, lost=output_lost)
        write, wait = file_writer.write, file_writer.drain

        async def close() -> None:
            await file_writer.close()
            if not file_writer.thread.is_alive():  # else it may still write: left open
                os.close(stdout)

    async def drain() -> None:
        with contextlib.suppress(ConnectionError):  # stdout gone: what is written is dropped
            await wait()

    for signum in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop_on, signum)
    out = Coalescer(loop, write)  # what the client has not read is still counted by ``drain``
    try:
        await serve(router, reader, out.write, drain, from_file=file_reader is not None)
    finally:
        out.close()
        if file_reader is not None:
            file_reader.cancel()
        await close()  # replies still buffered are written before the loop ends
    return received[0] if received else None


SHUTDOWN_FLUSH = 10.0  # seconds the runner waits at exit for buffered replies to be written


def kind(fd: int) -> int:
    """The file type of ``fd`` (``stat.S_IFIFO``, ``S_IFSOCK``, ``S_IFREG``...)."""
    return stat.S_IFMT(os.fstat(fd).st_mode)


def pipe_like(fd: int) -> bool:
    """A pipe, or a terminal the event loop can poll (``/dev/null`` is a character device it cannot)."""
    mode = kind(fd)
    if mode == stat.S_IFIFO:
        return True
    if mode != stat.S_IFCHR:
        return False
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except OSError:
            return False
    return True


class Output(asyncio.streams.FlowControlMixin):
    """The protocol of stdout's pipe transport: ``lost`` is called when the pipe closes (the
    transport watches the pipe for its reader's close, before anything is written)."""

    def __init__(self, lost: Callable[[], None]) -> None:
        super().__init__()
        self.lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost()


class FileReader(asyncio.ReadTransport):
    """Feeds ``reader`` from ``fd`` (a regular file, or anything the pipe transport refuses),
    read in a worker thread one chunk at a time; paused and resumed by ``reader`` as a pipe
    transport is, so a file is never read further ahead than the pipe would be."""

    def __init__(self, fd: int, reader: asyncio.StreamReader) -> None:
        super().__init__()
        self.fd, self.reader = fd, reader
        self.resumed = asyncio.Event()
        self.resumed.set()
        reader.set_transport(self)

    def pause_reading(self) -> None:
        self.resumed.clear()

    def resume_reading(self) -> None:
        self.resumed.set()

    def start(self) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while chunk := await loop.run_in_executor(None, read_blocking, self.fd):
                self.reader.feed_data(chunk)
                await self.resumed.wait()
        except OSError as exc:
            self.reader.set_exception(exc)
            return
        self.reader.feed_eof()


def read_blocking(fd: int) -> bytes:
    """One chunk of ``fd``, waiting for it even if the descriptor is non-blocking."""
    while True:
        try:
            return os.read(fd, READ_CHUNK)
        except BlockingIOError:
            select.select([fd], [], [])


class FileWriter:
    """Writes lines to ``fd`` (a regular file or a socket) from a worker thread, in order.

    ``drain`` waits while more than ``high`` bytes are queued, as a pipe transport's does; a
    peer that stopped reading stalls the thread, never the event loop. ``close`` waits (in the
    thread) until everything queued is written.
    """

    def __init__(self, fd: int, high: int, lost: Callable[[], None] | None = None) -> None:
        self.fd, self.high, self.lost = fd, high, lost
        self.loop = asyncio.get_running_loop()
        self.queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.pending = 0
        self.lock = threading.Lock()
        self.room = asyncio.Event()
        self.room.set()
        self.error: OSError | None = None
        self.thread = threading.Thread(target=self.run, name="mcp-stdout", daemon=True)
        self.thread.start()

    def write(self, data: bytes) -> None:
        if self.error is not None:
            return  # the reader is gone: what is written is dropped
        with self.lock:
            self.pending += len(data)
            if self.pending > self.high:
                self.room.clear()
        self.queue.put(data)

    async def drain(self) -> None:
        if self.error is not None:
            raise ConnectionResetError(str(self.error))
        await self.room.wait()

    async def close(self) -> None:
        """Wait (at most ``SHUTDOWN_FLUSH``) until what is queued is written."""
        self.queue.put(None)
        await asyncio.to_thread(self.thread.join, SHUTDOWN_FLUSH)

    def run(self) -> None:
        while (data := self.queue.get()) is not None:
            if self.error is None:
                try:
                    write_all(self.fd, data)
                except OSError as exc:
                    self.error = exc
                    if self.lost is not None:  # the client is gone: the server stops reading
                        self.loop.call_soon_threadsafe(self.lost)
            with self.lock:
                self.pending -= len(data)
                if self.pending <= self.high:
                    self.loop.call_soon_threadsafe(self.room.set)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, waiting for room even if the descriptor is non-blocking."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


@functools.cache
def end_without_a_last_collection() -> None:
    """When the interpreter exits, ``gc.freeze()`` first: its last garbage collections walk every
    object still alive (a server's models and validators, some 10^5 objects), which took a stdio
    server 60-70 ms of the 75-85 between EOF and its exit. Registered once, as a runner starts, so
    a program that serves and goes on collects as usual until it exits; what ``atexit`` runs
    after it (logging's flush, ``weakref.finalize``) runs as before. Objects alive at exit, and
    garbage in reference cycles not collected by then (a program that serves and goes on), are
    left to the operating system: Python never promised their finalizers would run then."""
    atexit.register(gc.freeze)


def run_stdio(router: Router) -> None:
    """Serve ``router`` on stdin/stdout until EOF (blocking). Ctrl-C (SIGINT) stops it as SIGTERM
    does (the requests in flight are answered first), then ends the process with status 130 (128 +
    SIGINT) and no traceback, as the HTTP runner does; it ended with 0, as at EOF."""
    end_without_a_last_collection()
    try:
        stopped_by = asyncio.run(serve_stdio(router))
    except KeyboardInterrupt:  # before the loop's handlers are set, or a second one (file input)
        stopped_by = signal.SIGINT
    if stopped_by == signal.SIGINT:
        raise SystemExit(128 + signal.SIGINT)


def uvicorn_config(app: HttpApp, host: str, port: int) -> uvicorn.Config:
    """The uvicorn configuration serving ``app`` within its server's ``Limits``."""
    import uvicorn  # imported here: a stdio server never pays for it

    limits = app.limits
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # never printed at "warning": not even asked per request
        proxy_headers=False,  # the app reads no client address or scheme: no middleware per request
        lifespan="off",
        http=limited_protocol(limits),
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=int(limits.keep_alive_timeout) or 1,
    )


def run_http(
    router: Router,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    workers: int = 1,
    ready: Callable[[str], object] | None = None,
    **options: Any,
) -> None:
    """Serve Streamable HTTP with uvicorn at ``http://host:port/mcp`` (blocking); ``options`` go to
    ``HttpApp``; ``workers`` > 1 forks that many worker processes on one listening socket, which
    this process keeps and supervises them on (``Supervisor``): a worker that dies is replaced;
    too many deaths end the server with ``SystemExit(1)``. ``ready`` is called with the URL once
    the port listens (the port bound, not the one asked, when that is 0), never when the server
    refuses to start (Redis unreachable, the port in use)."""
    if workers < 1:
        refuse(f"workers must be at least 1, not {workers}")
    end_without_a_last_collection()
    if workers > 1 and router.redis_url is None:
        refuse(f"{workers} workers need a shared store: set redis_url on the server class or MCP_REDIS_URL")
    if router.redis_url is not None:
        from .services import SharedStateUnavailable
        from .services.redis import check_reachable

        try:
            check_reachable(router.redis_url)
        except SharedStateUnavailable as exc:
            refuse(str(exc))
    from .transports.asgi import HttpApp  # not on the stdio path

    config = uvicorn_config(HttpApp(router, **options), host, port)
    if workers == 1:
        serve_uvicorn(router, config, ready=ready)
        return
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:  # the port in use, the address not this host's: one sentence, as uvicorn says it
        sock.close()
        refuse(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    sock.set_inheritable(True)
    if ready is not None:
        ready(url_of(sock))
    with sock:  # kept open while the server runs: a replacement worker accepts on it
        code = Supervisor(workers, lambda: serve_uvicorn(router, config, sock)).run()
    if code:
        raise SystemExit(code)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
PR_SET_PDEATHSIG = 1  # prctl(2)


def end_with_the_parent(parent: int) -> None:
    """A forked worker gets SIGTERM when its supervisor dies (``kill -9``: it had no chance to stop
    its workers, which served on unsupervised and held the port against a restart). Linux's
    ``prctl(PR_SET_PDEATHSIG)``; elsewhere nothing is asked. A supervisor already gone (before
    the request took effect) ends the worker at once."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # only in a forked worker: not on a stdio server's start

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


DEATH_BUDGET = 5  # worker deaths tolerated within DEATH_WINDOW seconds; one more stops the server
DEATH_WINDOW = 10.0


class Supervisor:
    """The parent of ``run_http(..., workers=N)``: forks ``count`` workers that each run ``work``
    and keeps ``count`` of them running (blocking, ``run``).

    A worker that exits while the server is not stopping (a crash in an extension, the OOM
    killer, ``kill -9``) gets one line on stderr, which worker and its exit status or signal,
    and a replacement in its place. A death that is one too many within ``window`` seconds (more
    than ``budget``: a worker that cannot start) is not replaced: its line says why, every other
    worker gets SIGTERM, and ``run`` returns 1 once they have all exited.

    SIGTERM or SIGINT stops the server: the first one reaches every worker as SIGTERM (a graceful
    shutdown, whichever the signal: a Ctrl-C also reaches the workers from the terminal, and
    uvicorn forces its exit on a second SIGINT), a later one is forwarded as it is (SIGINT forces
    the exit); nobody is replaced, and ``run`` returns once every worker has exited: 0 when each
    exited with status 0, else 1 (after a line for each that did not).

    Signals are blocked while a worker is forked and recorded, so a stop never misses a worker;
    a worker starts with handlers that end it at once (status 0) on a stop signal until uvicorn
    installs its own. Waiting is ``os.waitpid``, which a signal handler interrupts and Python
    resumes.
    """

    def __init__(
        self, count: int, work: Callable[[], None], *, budget: int = DEATH_BUDGET, window: float = DEATH_WINDOW
    ) -> None:
        self.count, self.work, self.budget, self.window = count, work, budget, window
        self.workers: dict[int, int] = {}  # pid -> worker number (1..count)
        self.deaths: deque[float] = deque()  # when workers died, within the window
        self.stopping = False
        self.failed = False  # run returns 1
        self.gave_up = False  # too many deaths: the workers are being stopped
        self.parent = os.getpid()

    def run(self) -> int:
        previous = {signum: signal.signal(signum, self.stop) for signum in STOP_SIGNALS}
        try:
            for number in range(1, self.count + 1):
                self.fork(number)
            while self.workers:
                try:
                    pid, status = os.waitpid(-1, 0)
                except ChildProcessError:  # reaped elsewhere: nobody is left to wait for
                    break
                with blocked_signals():
                    self.exited(pid, status)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return 1 if self.failed else 0

    def fork(self, number: int) -> None:
        with blocked_signals():
            if self.stopping:
                return
            pid = os.fork()
            if pid == 0:
                self.be_worker()
            self.workers[pid] = number

    def be_worker(self) -> NoReturn:
        """In a new worker: run ``work`` and leave without the parent's cleanup."""
        code = 1
        try:
            for signum in STOP_SIGNALS:
                signal.signal(signum, stop_worker)
            end_with_the_parent(self.parent)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            self.work()
            code = 0
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)

    def exited(self, pid: int, status: int) -> None:
        number = self.workers.pop(pid, None)
        if number is None:  # not a worker
            return
        how = describe(status)
        if self.stopping:
            if os.waitstatus_to_exitcode(status) != 0 and not self.gave_up:  # a give-up is said once
                self.failed = True
                say(f"worker {number} (pid {pid}) {how} while stopping")
            return
        now = time.monotonic()
        self.deaths.append(now)
        while self.deaths and self.deaths[0] < now - self.window:
            self.deaths.popleft()
        if len(self.deaths) > self.budget:
            say(
                f"worker {number} (pid {pid}) {how}: {len(self.deaths)} workers died within "
                f"{self.window:g} s, stopping the server"
            )
            self.failed = self.gave_up = True
            self.signal_workers(signal.SIGTERM)
            return
        say(f"worker {number} (pid {pid}) {how}; starting a new one")
        self.fork(number)

    def stop(self, signum: int, frame: Any) -> None:
        """SIGTERM/SIGINT in the parent: stop every worker (see the class's docstring)."""
        first = not self.stopping
        self.signal_workers(signal.SIGTERM if first else signum)  # (which marks the server stopping)

    def signal_workers(self, signum: int) -> None:
        self.stopping = True
        for pid in list(self.workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)


@contextlib.contextmanager
def blocked_signals() -> Iterator[None]:
    """SIGTERM and SIGINT held back (delivered on leaving) while the block runs."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def stop_worker(signum: int, frame: Any) -> None:
    """A stop signal in a worker before uvicorn handles them (or after it has): nothing is being
    served, the worker ends now, cleanly."""
    os._exit(0)


def describe(status: int) -> str:
    """``exited with status N`` or ``was killed by SIGNAME``, from a ``waitpid`` status."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return f"exited with status {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed by {name}"


def say(line: str) -> None:
    print(line, file=stderr(), flush=True)


def refuse(message: str) -> NoReturn:
    """A server that cannot start: one sentence on stderr, exit status 2."""
    print(message, file=stderr())
    raise SystemExit(2)


def url_of(sock: socket.socket) -> str:
    """The MCP endpoint's URL on a listening socket."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"


def serve_uvicorn(
    router: Router,
    config: uvicorn.Config,
    sock: socket.socket | None = None,
    *,
    ready: Callable[[str], object] | None = None,
) -> None:
    """Run one uvicorn server (on ``sock`` when given); a signal ends open listen streams first.
    Ctrl-C ends the process with status 130 and no traceback: uvicorn, once shut down, raises the
    signal again, which Python turns into a ``KeyboardInterrupt`` through every caller."""
    try:
        uvicorn_server(router, config, ready).run(sockets=[sock] if sock is not None else None)
    except KeyboardInterrupt:
        raise SystemExit(128 + signal.SIGINT) from None


def uvicorn_server(
    router: Router, config: uvicorn.Config, ready: Callable[[str], object] | None = None
) -> uvicorn.Server:
    """uvicorn's server for ``config``: a signal ends open listen streams first, and once its
    connections are shut down, what the process holds open is closed: the app's (``aclose``:
    the verifier's client) and the services' (the Redis connections). Done in ``shutdown``, not
    after ``serve``: uvicorn re-raises the signal as ``serve`` returns, and a forked worker ends
    with ``os._exit`` (runners' ``stop_worker``). ``ready`` gets the URL once uvicorn listens."""
    import uvicorn

    subscriptions = router.services.subscriptions
    app = config.app

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)  # a port it cannot bind ends the process in there
            if ready is not None and self.started and self.servers and self.servers[0].sockets:
                ready(url_of(self.servers[0].sockets[0]))

        def handle_exit(self, sig: int, frame: Any) -> None:
            subscriptions.close()  # open listen streams end, so shutdown need not wait for them
            super().handle_exit(sig, frame)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            try:
                await super().shutdown(sockets=sockets)
            finally:  # lifespan is off (runners.uvicorn_config): closed here instead
                closers = (("the app", getattr(app, "aclose", None)), ("the services", router.services.aclose))
                for what, close in closers:
                    try:
                        if close is not None:
                            await close()
                    except Exception as exc:  # the process ends anyway: said, not raised over the exit
                        logging.getLogger(__name__).warning("closing %s failed: %r", what, exc)

    return Server(config)


def limited_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol bounded by ``limits`` (a subclass per server)."""
    base = _limited_base()
    return type("LimitedHttpToolsProtocol", (base,), {"limits": limits})


def _limited_base() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        """Headers over ``max_header_bytes`` get 431 and are fed to the parser at most that many
        bytes at a time, so an oversized header costs bounded memory and time (httptools gathers
        a header in full before handing it over); a connection that has not sent its request
        line and headers within ``header_timeout`` gets 408 and is closed."""

        limits: ClassVar[Limits] = Limits()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.head = 0  # bytes of the current request line and headers; -1 once they are in
            self.head_started = 0.0  # when the current request line and headers began (loop time)
            self.head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.start_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_head_timer()
            super().connection_lost(exc)

        def start_head(self) -> None:
            """A request line and headers begin: due within ``header_timeout``. The connection's
            timer is armed once and left running across keep-alive requests (arming one per
            request was a tenth of uvicorn's cost per request); when it fires it checks the head
            in progress, if any, against its own start, and waits again for the rest."""
            self.head = 0
            self.head_started = self.loop.time()
            if self.head_timer is None:
                self.head_timer = self.loop.call_at(self.head_started + self.limits.header_timeout, self.head_due)

        def stop_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def head_due(self) -> None:
            self.head_timer = None
            if self.head < 0:  # no head in progress: the next one arms the timer again
                return
            due = self.head_started + self.limits.header_timeout
            if self.loop.time() < due:
                self.head_timer = self.loop.call_at(due, self.head_due)
            else:
                self.head_timed_out()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.start_head()

        def on_headers_complete(self) -> None:
            self.head = -1  # the timer stays: it finds no head in progress
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            limit = self.limits.max_header_bytes
            while data:
                if self.head < 0:  # a body: uvicorn's own flow control bounds it
                    super().data_received(data)
                    return
                room = limit - self.head
                if room <= 0:
                    self.refuse(431, b"Request Header Fields Too Large")
                    return
                piece, data = data[:room], data[room:]
                self.head += len(piece)
                super().data_received(piece)
                if self.transport.is_closing():
                    return

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.head >= 0:
                self.refuse(408, b"Request Timeout")

        def refuse(self, status: int, reason: bytes) -> None:
            """Answer ``status`` and close, unless a response is under way (then just close)."""
            self.stop_head_timer()
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete:
                head = b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                self.transport.write(head % (status, reason, len(reason)) + reason)
            self.transport.close()

    return LimitedHttpToolsProtocol
