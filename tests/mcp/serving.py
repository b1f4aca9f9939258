"""Starting ``chronomem mcp`` as a real subprocess: the command line, a free
127.0.0.1 port, and waiting for the HTTP server to listen."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHRONOMEM = str(Path(sys.executable).with_name("chronomem"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command(url: str, *args: str, scope: tuple[str, ...] = ()) -> list[str]:
    return [CHRONOMEM, "--url", url, *scope, "mcp", *args]


@contextmanager
def http_server(url: str, *args: str, scope: tuple[str, ...] = ()) -> Iterator[str]:
    """``chronomem mcp --transport http`` on a free port; yields its MCP endpoint."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "CHRONOMEM_MCP_TOKEN"}
    proc = subprocess.Popen(
        command(url, "--transport", "http", "--port", str(port), *args, scope=scope),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"chronomem mcp exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("chronomem mcp did not listen within 60 s") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
