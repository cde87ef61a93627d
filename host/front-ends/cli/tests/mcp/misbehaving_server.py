"""An MCP server over stdio (newline-delimited JSON-RPC, standard library
only) whose tools misbehave on purpose, for kaizen's client to survive:

- `echo` {text}: answers the text;
- `read_path` {path}: answers the file's text, or the error reading it
  (the OS sandbox decides what it may read);
- `hang`: never answers;
- `crash`: says so on stderr and exits with code 3;
- `malformed`: answers with a result whose content is not a list.

Each start appends a line to `starts.log` in its working directory. With
`HANG=initialize` in its environment it never answers the handshake.
"""

import json, os, sys


def tool(name, properties=None, required=()):
    return {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {
            "type": "object",
            "properties": properties or {},
            "required": list(required),
        },
    }


TOOLS = [
    tool("echo", {"text": {"type": "string"}}, ["text"]),
    tool("read_path", {"path": {"type": "string"}}, ["path"]),
    tool("hang"),
    tool("crash"),
    tool("malformed"),
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(id, value, error=False):
    send({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": value}], "isError": error}})


def call(id, name, args):
    if name == "echo":
        text(id, args["text"])
    elif name == "read_path":
        try:
            with open(args["path"]) as f:
                text(id, f.read())
        except OSError as e:
            text(id, f"cannot read: {e.strerror}", error=True)
    elif name == "hang":
        pass
    elif name == "crash":
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "malformed":
        send({"jsonrpc": "2.0", "id": id, "result": {"content": "not a list", "isError": "maybe"}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": f"no tool {name}"}})


def main():
    with open("starts.log", "a") as log:
        log.write("started\n")
    for line in sys.stdin:
        message = json.loads(line)
        id, method = message.get("id"), message.get("method")
        if method == "initialize" and os.environ.get("HANG") == "initialize":
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "misbehaving", "version": "1.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            call(id, message["params"]["name"], message["params"].get("arguments") or {})
        elif id is not None:
            send({"jsonrpc": "2.0", "id": id, "result": {}})


main()
