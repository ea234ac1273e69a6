"""Claude's connector flow with the official MCP Python SDK 2.x's OAuth client: the 401, the
protected resource metadata, the authorization server's metadata, dynamic client registration,
the authorization-code flow with PKCE and a resource indicator, then tool calls. The login and
consent pages of the authorization server (oidc-provider's own) are filled in as a person would,
by a headless HTTP client. Run by tests/it/oauth.rs:

    python3 python_oauth.py MCP_URL LOGIN

Prints one JSON line of what it saw; exits non-zero (with the reason) when a step fails.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

# Never served: the code is read from the authorization server's redirect to it.
REDIRECT = "http://127.0.0.1:9/callback"


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def main():
    url, login = sys.argv[1], sys.argv[2]
    seen = {"pages": [], "authorizeParams": {}}
    redirected = {}

    async def sign_in(authorize_url):
        """The person at the browser: the login page, the consent page, then the redirect."""
        query = parse_qs(urlparse(authorize_url).query)
        seen["authorizeParams"] = {k: query[k][0] for k in ("resource", "scope", "code_challenge_method") if k in query}
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            response = await browser.get(authorize_url)
            for _ in range(20):
                location = response.headers.get("location")
                if response.is_redirect and location:
                    location = urljoin(str(response.url), location)
                    if location.startswith(REDIRECT):
                        got = parse_qs(urlparse(location).query)
                        if "error" in got:
                            raise SystemExit(f"the authorization server refused: {got}")
                        redirected.update({k: v[0] for k, v in got.items()})
                        return
                    response = await browser.get(location)
                    continue
                page = str(response.url)
                if response.status_code == 200 and "/interaction/" in page:
                    uid = page.split("/interaction/")[1].split("/")[0]
                    base = page.split("/interaction/")[0]
                    if 'name="login"' in response.text:
                        seen["pages"].append("login")
                        form = {"prompt": "login", "login": login, "password": "any"}
                        response = await browser.post(f"{base}/interaction/{uid}", data=form)
                    else:
                        seen["pages"].append("consent")
                        response = await browser.post(f"{base}/interaction/{uid}", data={"prompt": "consent"})
                    continue
                raise SystemExit(f"unexpected {response.status_code} at {page}: {response.text[:400]}")
            raise SystemExit("no redirect back after 20 pages")

    async def callback():
        return AuthorizationCodeResult(code=redirected["code"], state=redirected.get("state"), iss=redirected.get("iss"))

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="droidmcp test connector",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=sign_in,
        callback_handler=callback,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=60)
    async with Client(streamable_http_client(url, http_client=http), mode="auto") as client:
        seen["protocol"] = client.protocol_version
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        listed = await client.call_tool("adb-device", {"operation": "list"})
        seen["listError"] = listed.is_error
        seen["devices"] = [d.get("serial") for d in (listed.structured_content or {}).get("devices", [])]
        seen["registered"] = storage.client is not None
        seen["grantedScope"] = storage.tokens.scope if storage.tokens else None
        seen["token"] = storage.tokens.access_token if storage.tokens else None
    print(json.dumps(seen))


asyncio.run(main())
