"""The server under load, and what it opens: many requests in flight all get answers,
memory stays bounded over a long session, and in stdio mode it opens no network socket."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.helpers import SERVER, call, start_session, status, wait_until_indexed, write_workspace

pytestmark = pytest.mark.e2e

IN_FLIGHT = 8
REQUESTS = 200
QUERIES = ["token budget", "outline tiers", "greeting", "parse config", "render bundle", "search index"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    await start_session(lsp_client, write_workspace(tmp_path), "visual_studio_code")
    yield
    await lsp_client.shutdown_session()


def server_pid(client: LanguageClient) -> int:
    process = client._server  # type: ignore[attr-defined]  # pygls keeps the subprocess here
    assert process is not None
    return int(process.pid)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def network_sockets(pid: int) -> list[str]:
    """The process's open sockets that are TCP or UDP (IPv4 or IPv6): the inodes of its
    socket descriptors, looked up in its network namespace's tables."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for row in path.read_text().splitlines()[1:]:
            fields = row.split()
            if len(fields) > 9 and fields[9] in inodes:
                found.append(f"{table}: {row.strip()}")
    return found


@pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(), reason="needs Linux /proc")
async def test_load_memory_and_no_network(client: LanguageClient) -> None:
    """Ensure that 200 requests, 8 in flight at a time, all get an answer (none an error);
    that memory after a long session of bundles stays within a bound of where it settled;
    and that the stdio server holds no TCP or UDP socket at any point."""
    await wait_until_indexed(client)
    pid = server_pid(client)
    assert network_sockets(pid) == []

    async def one(i: int) -> dict:
        query = QUERIES[i % len(QUERIES)]
        if i % 3 == 0:
            return await call(client, "ctx/search", {"query": query, "limit": 5})
        return await call(client, "ctx/bundle", {"query": query, "budget": 2000 + 1000 * (i % 4)})

    answers = []
    for start in range(0, REQUESTS, IN_FLIGHT):
        answers += await asyncio.gather(*(one(i) for i in range(start, min(start + IN_FLIGHT, REQUESTS))))
    assert len(answers) == REQUESTS
    assert all(("hits" in a) or ("sections" in a and a["total_tokens"] <= a["budget"]) for a in answers)

    settled = rss_kb(pid)
    for round_ in range(3):
        await asyncio.gather(*(one(i) for i in range(round_ * 100, round_ * 100 + 100)))
    grown_mb = (rss_kb(pid) - settled) / 1024
    assert grown_mb < 40, f"RSS grew {grown_mb:.1f} MB over 300 more requests"
    assert network_sockets(pid) == []
    assert (await status(client))["files_indexed"] > 0
