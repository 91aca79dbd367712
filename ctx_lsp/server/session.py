"""The read loop and the process's lifetime: bytes in, frames decoded, messages dispatched,
and the exit code.

It replaces pygls's `start_io`/`start_tcp` loops (`pygls/server.py`, `pygls/io_.py`), whose
reader wedges or exits on bad input (framing.py says how). Beyond reading it decides when
the server ends, as LSP asks:
- `exit`: code 0 after `shutdown`, else 1 (pygls catches its own `SystemExit` and the
  process always exited 0);
- stdin (or the TCP connection) closes: the client is gone;
- the client process named by initialize's `processId` dies: polled every
  `PARENT_POLL_S`, as vscode-languageserver does (not on Windows, where `os.kill(pid, 0)`
  would terminate it).

stdin is read by a daemon thread, so a blocked read never keeps the process alive, and
through a small queue, so a client that floods the server cannot fill its memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from ctx_lsp.server.framing import MAX_FRAME_BYTES, BadFrame, FrameDecoder
from ctx_lsp.server.protocol import CtxProtocol

log = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
QUEUED_CHUNKS = 16
"""At most 1 MiB read ahead of what the loop has handled."""
STALL_S = 1.0
"""No byte for this long in the middle of a body: see `FrameDecoder.stalled`."""
PARENT_POLL_S = 1.0

Read = Callable[[], Awaitable[bytes]]


class Session:
    """One client connection: reads until the client goes, then says with which exit code."""

    def __init__(self, protocol: CtxProtocol, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self.protocol = protocol
        self.max_frame_bytes = max_frame_bytes
        self._done: asyncio.Future[int] | None = None
        self._parent: asyncio.Task[None] | None = None

    async def run(self, read: Read) -> int:
        """Serve until `exit`, end of input or the client's death; returns the exit code."""
        self._done = asyncio.get_running_loop().create_future()
        reader = asyncio.create_task(self._read(read))
        try:
            return await self._done
        finally:
            reader.cancel()
            if self._parent is not None:
                self._parent.cancel()

    def finish(self, code: int, why: str) -> None:
        if self._done is not None and not self._done.done():
            log.info("stopping (%s), exit code %d", why, code)
            self._done.set_result(code)

    def _default_code(self) -> int:
        return 0 if self.protocol._shutdown else 1

    async def _read(self, read: Read) -> None:
        decoder = FrameDecoder(self.max_frame_bytes)
        try:
            while True:
                if decoder.mid_body:
                    try:
                        data = await asyncio.wait_for(read(), STALL_S)
                    except asyncio.TimeoutError:
                        self._dispatch(decoder.stalled())
                        continue
                else:
                    data = await read()
                if not data:
                    self.finish(self._default_code(), "end of input")
                    return
                skipped = decoder.skipped_bytes
                self._dispatch(decoder.feed(data))
                if decoder.skipped_bytes > skipped:
                    log.warning("skipped %d bytes that were not a frame", decoder.skipped_bytes - skipped)
        except SystemExit as stop:  # pygls's `exit` handler
            self.finish(stop.code if isinstance(stop.code, int) else 1, "exit")
        except (BrokenPipeError, ConnectionError) as err:
            self.finish(self._default_code(), f"connection lost: {err}")
        except Exception:
            log.exception("the read loop failed")
            self.finish(1, "read loop failed")

    def _dispatch(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, BadFrame):
                self.protocol.refuse_frame(event)
                continue
            try:
                self.protocol.receive(event.body)
            except (SystemExit, BrokenPipeError, ConnectionError):
                raise
            except Exception:
                # Never lose the stream over one message: log it and read on.
                log.exception("failed to handle a message")

    # ------------------------------------------------------------------ parent process
    def watch_parent(self, pid: Any) -> None:
        """Exit when `pid` (initialize's processId) dies. Not watched: no pid, Windows, or a
        pid that is not alive from here already (the client is in another PID namespace,
        e.g. a container), which would otherwise end the server at once."""
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or sys.platform == "win32":
            return
        if not _alive(pid):
            log.warning("processId %d is not a process visible from here; not watching it", pid)
            return
        self._parent = asyncio.get_running_loop().create_task(self._poll_parent(pid))

    async def _poll_parent(self, pid: int) -> None:
        while _alive(pid):
            await asyncio.sleep(PARENT_POLL_S)
        self.finish(self._default_code(), f"the client process {pid} died")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except OSError:
        return False
    return True


def stdin_reader(stdin: BinaryIO, loop: asyncio.AbstractEventLoop) -> Read:
    """Chunks of stdin as they arrive, read by a daemon thread (b"" at end of input)."""
    queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_CHUNKS)
    read_some: Callable[[int], bytes] = getattr(stdin, "read1", None) or (lambda n: os.read(stdin.fileno(), n))

    def pump() -> None:
        while True:
            try:
                data = read_some(CHUNK_BYTES)
            except (OSError, ValueError):
                data = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(data), loop).result()
            except Exception:
                return  # the loop is gone
            if not data:
                return

    threading.Thread(target=pump, name="ctx-lsp-stdin", daemon=True).start()
    return queue.get


def run_stdio(protocol: CtxProtocol, session: Session, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve over stdio until the session ends; the exit code."""
    from pygls.io_ import StdoutWriter

    protocol.set_writer(StdoutWriter(stdout))

    async def main() -> int:
        return await session.run(stdin_reader(stdin, asyncio.get_running_loop()))

    return _run(main())


def run_tcp(protocol: CtxProtocol, session: Session, host: str, port: int) -> int:
    """Serve one TCP client until its session ends; the exit code."""

    async def main() -> int:
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if done.done() or protocol.writer is not None:
                writer.close()  # one client per server, like stdio
                return
            protocol.set_writer(writer)
            code = await session.run(lambda: reader.read(CHUNK_BYTES))
            with contextlib.suppress(Exception):
                writer.close()
            if not done.done():
                done.set_result(code)

        server = await asyncio.start_server(connected, host, port)
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in server.sockets))
        async with server:
            return await done

    return _run(main())


def _run(main: Awaitable[int]) -> int:
    """Run the loop without waiting for worker threads at the end (asyncio.run would wait
    for every `to_thread` call still running); the caller exits the process."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    except KeyboardInterrupt:
        return 1
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
