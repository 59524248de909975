"""The preview's HTTP side: a server for loopback that answers only the address it serves
(its Host, and its Origin on the event stream: a page elsewhere that resolves here, DNS
rebinding, is refused), GET and HEAD only, a bounded number of connections each with a
timeout, and the pages' Server-Sent Events (builder/preview/hub.py says what they carry).
builder/preview/serve.py makes the site it serves."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import mimetypes
import queue
import resource
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import BuildError
from .hub import Hub

EVENTS = "/__events"
LIVE_SCRIPT = Path(__file__).with_name("live.js").read_bytes()  # in <script data-build=...>
KEEP_ALIVE = 15.0  # seconds between SSE comments, so proxies and browsers keep the stream
# A connection that sends no whole request, or takes no data, for this long is closed: idle
# sockets held open one thread each until the process ran out of files.
IDLE_TIMEOUT = 10.0
MAX_CONNECTIONS = 64  # at once (open pages' streams among them); see Server for one more
EVICT_WAIT = 1.0  # seconds a new connection waits for the idle one it displaces to end
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")  # the names of a loopback address in a Host
METHODS = "GET, HEAD"
NO_BUILD = b"<!doctype html><html><body><h1>No build yet</h1></body></html>"


class Served(Protocol):
    """What the handler serves: the files, the pages' hub, and the names it answers to."""

    files: dict[str, bytes]
    hub: Hub
    hosts: frozenset[str]
    origins: frozenset[str]

    @property
    def url(self) -> str: ...


def listen(host: str, port: int, handler: Any) -> Server:
    """The HTTP server bound to host:port, before anything else starts; a port in use or
    not allowed, or a host that is not this machine's, is one line naming host:port."""
    try:
        server = Server((host, port), handler)
    except (OSError, OverflowError, TypeError, ValueError) as error:  # UnicodeError too
        where = host if host.isprintable() else repr(host)
        raise BuildError(
            f"cannot serve on {where}:{port}: {_why(error)}",
            hint="pick another port with --port N (0: any free port)"
            if getattr(error, "errno", None) in (errno.EADDRINUSE, errno.EACCES)
            else "serve on 127.0.0.1 with --port N from 0 to 65535",
        ) from None
    return server


class Server(ThreadingHTTPServer):
    """One thread a connection, at most `slots` at once, well below the open files the
    process may have. A connection over that takes the place of the one idle longest (one
    waiting for a request: that has sent none, or only part of one, or is kept alive
    between two), closed at once; when none is idle it is answered 503 and closed. So any
    local process's idle sockets cannot keep the preview from its own browser (200 idle
    sockets had everyone answered 503 for up to IDLE_TIMEOUT). A client that goes away
    (or times out) is no error to print."""

    daemon_threads = True
    # Connections the OS holds until they are taken (5 by default): over it, a burst (a page
    # and its files) has its SYNs dropped and each client waits a second.
    request_queue_size = 128

    def server_activate(self) -> None:
        super().server_activate()
        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if files == resource.RLIM_INFINITY:
            files = MAX_CONNECTIONS * 4
        self.slots = threading.BoundedSemaphore(max(4, min(MAX_CONNECTIONS, files // 4)))
        self.idle: dict[socket.socket, float] = {}  # waiting for a request, since when
        self.idle_lock = threading.Lock()

    def waiting(self, connection: socket.socket, idle: bool) -> None:
        """`connection` now waits for a request (`idle`), or has one to answer."""
        with self.idle_lock:
            if idle:
                self.idle.setdefault(connection, time.monotonic())
            else:
                self.idle.pop(connection, None)

    def _slot(self) -> bool:
        """A slot for a new connection: a free one, else the one idle longest's."""
        if self.slots.acquire(blocking=False):
            return True
        with self.idle_lock:
            if not self.idle:
                return False
            oldest = min(self.idle, key=self.idle.__getitem__)
            del self.idle[oldest]
        with contextlib.suppress(OSError):  # its thread reads the end of it, and ends
            oldest.shutdown(socket.SHUT_RDWR)
        return self.slots.acquire(timeout=EVICT_WAIT)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slot():
            _turn_away(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: its slot is free again
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.waiting(request, idle=False)
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a bug: its traceback
            super().handle_error(request, client_address)


BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 33\r\n\r\n"
    b"too many connections: retry soon\n"
)


def _turn_away(request: socket.socket) -> None:
    """A 503, never waiting on the client: its socket buffer takes it, or it is dropped."""
    try:
        request.setblocking(False)
        request.send(BUSY)
    except OSError:
        pass


def served_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers that name the address served (lower case): its own spelling, and
    for a loopback address localhost, 127.0.0.1 and [::1], each with the port (and also
    without it on port 80). Any other name is a page elsewhere that resolves here (DNS
    rebinding), refused."""
    names = {f"[{host}]" if ":" in host else host}
    try:
        if ipaddress.ip_address(host).is_loopback:
            names.update(LOOPBACK)
    except ValueError:  # a name, not an address: only that name
        pass
    forms = {f"{name}:{port}".lower() for name in names}
    return frozenset(forms | ({n.lower() for n in names} if port == 80 else set()))


def _why(error: Exception) -> str:
    number = getattr(error, "errno", None)
    if number == errno.EADDRINUSE:
        return "the port is in use (another `serve`, or another server)"
    if number == errno.EACCES:
        return "not allowed (ports below 1024 need root)"
    if isinstance(error, socket.gaierror):
        return f"no such host ({error.strerror})"
    return str(getattr(error, "strerror", None) or error)


class Handler(BaseHTTPRequestHandler):
    timeout = IDLE_TIMEOUT  # on every read and write of the connection
    server: Server

    def __init__(self, preview: Served, *args: Any, **kwargs: Any) -> None:
        self.preview = preview
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        self.server.waiting(self.connection, idle=True)  # until its request is read whole
        super().handle_one_request()

    def parse_request(self) -> bool:
        """A request for the address served (Host: this server's), by GET or HEAD; any
        other is answered here (421, 405) and goes no further."""
        if not super().parse_request():
            return False
        self.server.waiting(self.connection, idle=False)
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].strip().lower() not in self.preview.hosts:
            self._refuse(421, f"this preview answers only at {self.preview.url}")
            return False
        if self.command not in METHODS.split(", "):
            self._refuse(405, f"only {METHODS} here", Allow=METHODS)
            return False
        return True

    def do_HEAD(self) -> None:
        self.do_GET()  # `_send` and `_events` send no body for HEAD

    def do_GET(self) -> None:
        address, _, query = self.path.split("#", 1)[0].partition("?")
        path = urllib.parse.unquote(address)
        if path == EVENTS:
            self._events(urllib.parse.parse_qs(query))
            return
        build = self.preview.hub.build  # before the files: a page is never newer than its number
        files, name = self.preview.files, path.lstrip("/")
        if name == "" or name.endswith("/"):
            name += "index.html"
        if name not in files and f"{name}/index.html" in files:
            self.send_response(301)  # to the name found: never `//x/`, another host
            self.send_header("Location", urllib.parse.quote(f"/{name}/"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data, status = files.get(name), 200
        if data is None:
            name, status = "404.html", 404
            data = files.get(name, NO_BUILD)
        if name.endswith(".html"):
            self._send(status, inject_live(data, build), "text/html; charset=utf-8")
            return
        self._send(status, data, mimetypes.guess_type(name)[0] or "application/octet-stream")

    def _send(self, status: int, data: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status: int, why: str, **headers: str) -> None:
        self.close_connection = True
        self._send(status, f"{why}\n".encode(), "text/plain; charset=utf-8", **headers)

    def _events(self, query: dict[str, list[str]]) -> None:
        """One long-lived response per page (?page=its file&build=the build it shows): the
        state now, then every change. Only to a page of this server: a browser names the
        page's origin when it asks from another (and a page elsewhere that resolves here
        names its own)."""
        origins = self.headers.get_all("Origin") or []
        if any(origin.strip().lower() not in self.preview.origins for origin in origins):
            self._refuse(403, f"the event stream is only for pages of {self.preview.url}")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command == "HEAD":
            return
        page = query.get("page", [""])[0]
        build = query.get("build", [""])[0]
        stream = self.preview.hub.subscribe(page, int(build) if build.isdigit() else None)
        try:
            while True:
                try:
                    message = stream.get(timeout=KEEP_ALIVE)
                except queue.Empty:
                    message = ": keep-alive\n\n"
                if message is None:  # the server is closing
                    return
                self.wfile.write(message.encode())
        except OSError:  # the page went away
            return
        finally:
            self.preview.hub.unsubscribe(stream)


def inject_live(page: bytes, build: int = 0) -> bytes:
    """The page with the preview's script, stamped with the build it is from, just before
    </body> (or at its end)."""
    script = b'<script data-build="%d">%s</script>' % (build, LIVE_SCRIPT)
    index = page.rfind(b"</body>")
    return page + script if index < 0 else page[:index] + script + page[index:]
