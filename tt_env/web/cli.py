"""The command line of the browser app: ``python -m tt_env.web``.

    python -m tt_env.web                                  # http://127.0.0.1:8000/, opens the browser
    python -m tt_env.web --port 0 --no-browser            # any free port, printed
    python -m tt_env.web --checkpoint runs/x/checkpoints/final.pt

Every argument is checked before the server starts (exit status 2 and one line for a bad
one: a port out of range or taken, a checkpoint that does not load). The server listens on
``--host`` (127.0.0.1, this machine only, by default) and stops with Ctrl-C (exit status 0).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Iterator
from typing import Any

from ..cli_checks import CommandParser, int_at_least
from .config import DEFAULT_MAX_GAMES, DEFAULT_PORT, LOOPBACK_HOSTS

PROG = "python -m tt_env.web"


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog=PROG, description="Play, watch and compare Three Thirteen agents in the "
                                                  "browser (a local web app).")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the "
                             "network, without any login)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"port, 0..65535 (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser window")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="PATH",
                        help="a checkpoint (.pt) the app may seat as an agent (repeatable); no other file is read")
    parser.add_argument("--max-games", type=int_at_least(1), default=DEFAULT_MAX_GAMES,
                        help=f"games kept in memory, all browsers together; the least recently used is dropped "
                             f"past it (default {DEFAULT_MAX_GAMES})")
    return parser


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: use an integer 0..65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: use 0..65535")
    return value


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``OSError`` with the reason when it cannot be had)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def allowed_hosts(host: str) -> list[str]:
    """Host names the app answers to (the ``Host`` header without its port): on any loopback address
    (:func:`is_loopback`: 127.0.0.0/8, ::1, localhost) only the loopback names and that address itself
    (an IPv6 one also in brackets, as browsers send it), which keeps DNS rebinding out; on any other
    address every name (``main`` says so)."""
    if not is_loopback(host):
        return ["*"]
    name = host.lower()
    own = [name, f"[{name}]"] if ":" in name else [name]
    return list(LOOPBACK_HOSTS) + [n for n in own if n not in LOOPBACK_HOSTS]


@contextlib.contextmanager
def serve_in_background(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread for the ``with`` block; yields its address
    (``http://host:port``). For tests and the screenshot script."""
    import uvicorn

    sock = bind(host, port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="tt-web-server", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the web server stopped before it started")
            time.sleep(0.02)
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost in any case), in every
    spelling the socket binds to: ``127.1`` (the C library's short forms), ``::ffff:127.0.0.1``
    (IPv4 mapped into IPv6), ``localhost.`` (a fully qualified name). Any spelling taken for another
    address would open the app to DNS rebinding while it listens on loopback."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            address = ipaddress.ip_address(socket.inet_aton(host))  # 127.1, 0x7f.1, 2130706433
        except OSError:
            return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def main(argv: list[str] | None = None) -> int:
    """Start the app and serve until Ctrl-C; returns the exit status (2 for a bad command line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        import uvicorn

        from .app import create_app
    except ImportError as exc:
        parser.error(f"the browser app needs the web extra (pip install -e '.[web]'): {exc}")
    try:
        app = create_app(checkpoints=args.checkpoint, max_games=args.max_games, allowed_hosts=allowed_hosts(args.host))
    except ValueError as exc:
        parser.error(str(exc))
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        why = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        parser.error(f"cannot listen on {args.host}:{args.port}: {why}")
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else shown}:{port}/"
    print(f"Three Thirteen is at {url}  (Ctrl-C stops it)", flush=True)
    if not is_loopback(args.host):
        print(f"note: listening on {args.host}: anyone who can reach this machine can use the app", file=sys.stderr)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    if not args.no_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # pragma: no cover - uvicorn handles the signal itself
        pass
    finally:
        sock.close()
    return 0
