"""The handle journey with the official MCP Python SDK 2.x `Client` (mode="auto": MCP
2026-07-28 where the server offers it), over streamable HTTP or stdio. Run by
tests/it/python_sdk.rs:

    python3 python_journey.py http URL TOKEN
    python3 python_journey.py stdio DROIDMCP_BINARY

Prints one JSON line of what it saw; exits non-zero (with the reason) when a step fails.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


def structured(result):
    if result.is_error:
        raise SystemExit(f"tool error: {result.content}")
    return result.structured_content


async def journey(client):
    seen = {"protocol": client.protocol_version}
    call = client.call_tool
    dump = structured(await call("ui", {"operation": "dump"}))
    settings = next(e for e in dump["elements"] if e.get("label") == "Settings")
    tapped = structured(await call("ui", {"operation": "tap", "ref": settings["ref"], "observe": True}))
    seen["tappedInto"] = tapped.get("observed", {}).get("focused", {}).get("package")
    # The tap was recorded for this token, whatever request carried it.
    exported = structured(await call("flow", {"operation": "export", "format": "maestro", "name": "python-sdk"}))
    seen["flowPreview"] = exported["preview"]
    props = structured(await call("adb-device", {"operation": "properties"}))
    got = structured(await call("cache", {"operation": "get", "id": props["cacheId"], "prefix": "ro.product.model"}))
    seen["model"] = json.dumps(got)
    progress = []

    async def on_progress(done, total, message):
        progress.append([done, message])

    code = "console.log((await device.list()).devices.length)"
    run = structured(await call("script", {"operation": "run", "code": code}, progress_callback=on_progress))
    seen["scriptProgress"] = progress
    listed = structured(await call("script", {"operation": "list"}))
    seen["runListed"] = any(r.get("id") == run["runId"] for r in listed["runs"])
    resource = await client.read_resource(f"droidmcp://cache/{props['cacheId']}")
    seen["resourceChars"] = len(resource.contents[0].text)
    return seen


async def main():
    kind = sys.argv[1]
    if kind == "http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        url, token = sys.argv[2], sys.argv[3]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        transport = streamable_http_client(url, http_client=http)
    else:
        transport = StdioServerParameters(command=sys.argv[2], args=["--sim"], env={"RUST_LOG": "warn"})
    async with Client(transport, mode="auto") as client:
        print(json.dumps(await journey(client)))


asyncio.run(main())
