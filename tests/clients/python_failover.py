"""A legacy (`Mcp-Session-Id`) session whose instance dies, with the official MCP Python SDK 2.x
`Client` in mode="legacy", through a balancer. Run by tests/it/team.rs:

    python3 python_failover.py URL TOKEN

It takes a cacheId and a lease, prints one JSON line naming its session, and waits for a line on
stdin (the test kills the instance holding the session meanwhile). Then its next call fails as
the spec says (the session is unknown: 404; a 502 first is retried, a few times at most), and it does what the spec tells a client to do: a
new session (initialize again, through the balancer), where its cacheId and lease still work.
Prints one JSON line of what it saw; exits non-zero (with the reason) when a step fails.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def structured(result):
    if result.is_error:
        raise SystemExit(f"tool error: {result.content}")
    return result.structured_content


def connect(url, token, seen_sessions, statuses=None):
    async def note(response):
        if statuses is not None and response.status_code >= 400:
            statuses.append(f"{response.request.method} {response.status_code}")
        session = response.headers.get("mcp-session-id")
        if session and session not in seen_sessions:
            seen_sessions.append(session)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=60, event_hooks={"response": [note]}
    )
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


async def main():
    url, token = sys.argv[1], sys.argv[2]
    seen = {}
    sessions = []
    statuses = []
    async with connect(url, token, sessions, statuses) as client:
        seen["protocol"] = client.protocol_version
        props = structured(await client.call_tool("adb-device", {"operation": "properties"}))
        cache_id = props["cacheId"]
        structured(await client.call_tool("adb-device", {"operation": "lease", "ttlSecs": 600}))
        print(json.dumps({"session": sessions[0], "cacheId": cache_id}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        # A gateway error (502: the balancer sent the call on a connection the kill cut, and
        # cannot tell whether it ran; it may hold several such) is retried, as a client retries
        # one, a few times; the 404 is final.
        for _ in range(5):
            try:
                await client.call_tool("cache", {"operation": "get", "id": cache_id, "prefix": "ro.build"})
                seen["afterKill"] = "answered"
                break
            except MCPError as e:
                seen["afterKill"] = {"code": e.error.code, "message": e.error.message}
                if e.error.message == "Session terminated":
                    break
                await asyncio.sleep(0.2)
    # What the spec tells a client: initialize again, without the old session id.
    async with connect(url, token, sessions) as client:
        got = structured(
            await client.call_tool("cache", {"operation": "get", "id": cache_id, "prefix": "ro.build"})
        )
        seen["cacheAgain"] = json.dumps(got)
        shell = structured(await client.call_tool("adb-shell", {"operation": "run", "command": "echo still-mine"}))
        seen["actsAgain"] = shell.get("stdout", "")
        structured(await client.call_tool("adb-device", {"operation": "release"}))
    seen["sessions"] = sessions
    seen["statuses"] = statuses
    print(json.dumps(seen), flush=True)


asyncio.run(main())
