"""The official MCP Python SDK's client (the `mcp` package from PyPI)
against a server: it starts the server over stdio, initializes, lists the
tools and makes the calls the spec (argv[1], JSON) names, and prints one
JSON object: the server's name, its tools, each call's result as the SDK
parsed them (with the progress messages of a call that asked for them),
and the questions the server asked by elicitation; with `prompts` in the
spec, the prompts listed and each one it names got (or its error).
"""

import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters, types
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


def elicitation(spec, asked):
    """With `elicit` in the spec ("allow" or "deny"), the client declares
    elicitation and answers each question so, noting the question."""
    answer = spec.get("elicit")
    if answer is None:
        return None

    async def callback(context, params):
        asked.append(params.message)
        content = {"allow": answer == "allow", "note": "not now"}
        return types.ElicitResult(action="accept", content=content)

    return callback


async def main():
    spec = json.loads(sys.argv[1])
    asked = []
    async with transport(spec) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, elicitation_callback=elicitation(spec, asked)) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            out = {"server": init.server_info.name, "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools], "calls": [], "asked": asked}
            for call in spec["calls"]:
                progress = []

                async def on_progress(value, total, message):
                    progress.append(message)

                # A call with "progress": true asks for progress notifications.
                callback = on_progress if call.get("progress") else None
                result = await session.call_tool(call["name"], call["arguments"], progress_callback=callback)
                dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                if callback:
                    dumped["progress"] = progress
                out["calls"].append(dumped)
            if "prompts" in spec:
                listed = await session.list_prompts()
                out["prompts"] = [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in listed.prompts]
                out["got"] = []
                for get in spec["prompts"]:
                    try:
                        got = await session.get_prompt(get["name"], get.get("arguments"))
                        out["got"].append(got.model_dump(mode="json", by_alias=True, exclude_none=True))
                    except Exception as error:
                        out["got"].append({"error": str(error)})
            print(json.dumps(out))

asyncio.run(main())
