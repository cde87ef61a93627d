"""The official MCP Python SDK's client (the `mcp` package from PyPI)
against a server: it starts the server over stdio, initializes, lists the
tools and makes the calls the spec (argv[1], JSON) names, and prints one
JSON object: the server's name, its tools, and each call's result, as the
SDK parsed them.
"""

import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def transport(spec):
    """stdio (`command`, `args`, `env`) or streamable HTTP (`url`, `headers`)."""
    if "url" in spec:
        import httpx2

        client = httpx2.AsyncClient(headers=spec.get("headers", {}))
        return streamable_http_client(spec["url"], http_client=client)
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec.get("env"))
    return stdio_client(params)


async def main():
    spec = json.loads(sys.argv[1])
    async with transport(spec) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            out = {"server": init.server_info.name, "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools], "calls": []}
            for call in spec["calls"]:
                result = await session.call_tool(call["name"], call["arguments"])
                out["calls"].append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            print(json.dumps(out))

asyncio.run(main())
