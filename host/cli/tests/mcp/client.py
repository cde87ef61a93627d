"""The official MCP Python SDK's client (the `mcp` package from PyPI)
against a server: it starts the server over stdio, initializes, lists the
tools and makes the calls the spec (argv[1], JSON) names, and prints one
JSON object: the server's name, its tools, and each call's result, as the
SDK parsed them.
"""

import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    spec = json.loads(sys.argv[1])
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec.get("env"))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            out = {"server": init.server_info.name, "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools], "calls": []}
            for call in spec["calls"]:
                result = await session.call_tool(call["name"], call["arguments"])
                out["calls"].append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            print(json.dumps(out))

asyncio.run(main())
