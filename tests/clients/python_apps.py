"""The official MCP Python SDK 2.x `Client` with and without the MCP Apps extension
(io.modelcontextprotocol/ui), over stdio: what droidmcp declares and links for each. Run by
tests/it/panel.rs:

    python3 python_apps.py DROIDMCP_BINARY

Prints one JSON line: for "plain" and "apps", whether the extension is declared, which tools
link a UI resource, and whether the panel is in resources/list.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.client.extension import ClientExtension

UI = "io.modelcontextprotocol/ui"


class Apps(ClientExtension):
    identifier = UI

    def settings(self):
        return {"mimeTypes": ["text/html;profile=mcp-app"]}


async def look(extensions):
    server = StdioServerParameters(command=sys.argv[1], args=["--sim"], env={"RUST_LOG": "warn"})
    async with Client(server, mode="auto", extensions=extensions) as client:
        declared = UI in (client.server_capabilities.extensions or {})
        tools = (await client.list_tools()).tools
        linked = sorted(t.name for t in tools if (t.meta or {}).get("ui", {}).get("resourceUri"))
        resources = (await client.list_resources()).resources
        listed = any(str(r.uri) == "ui://droidmcp/device" for r in resources)
        return {"protocol": client.protocol_version, "declared": declared, "linked": linked, "panelListed": listed}


async def main():
    print(json.dumps({"plain": await look(None), "apps": await look([Apps()])}))


asyncio.run(main())
