"""A small MCP server over stdio that misbehaves on purpose (tests/mcp_servers.rs).

Usage: hostile_server.py MODE, MODE one of:
  hang      never answers initialize (writes a line to stderr first)
  garbage   prints non-JSON lines on stdout, then behaves
  exit      exits in the middle of a tools/call (after a line on stderr)
  big       answers tools/call with 10 MB of text
  pages     lists its tools over three pages
  changes   a call to `work` adds the tool `added` and sends tools/list_changed
  where     a call to `work` says where it runs: its folder, what the folder holds, PATH
            and PYTHONSAFEPATH, as JSON
"""
import json
import os
import sys
import time

MODE = sys.argv[1]
added = False


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name):
    return {"name": name, "description": f"{name} tool", "inputSchema": {"type": "object"}}


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if MODE == "hang":
            sys.stderr.write("hostile: stuck before initialize\n")
            sys.stderr.flush()
            time.sleep(3600)
        if MODE == "garbage":
            sys.stdout.write("this is not json\n{broken\n")
            sys.stdout.flush()
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": MODE == "changes"}},
            "serverInfo": {"name": "hostile", "version": "0"}}})
    elif method == "tools/list":
        if MODE == "pages":
            cursor = (msg.get("params") or {}).get("cursor")
            page = {None: ("a", "p2"), "p2": ("b", "p3"), "p3": ("c", None)}[cursor]
            result = {"tools": [tool(page[0])]}
            if page[1]:
                result["nextCursor"] = page[1]
        else:
            result = {"tools": [tool("work")] + ([tool("added")] if added else [])}
        send({"jsonrpc": "2.0", "id": mid, "result": result})
    elif method == "tools/call":
        if MODE == "garbage":
            sys.stdout.write("more garbage\n")
            sys.stdout.flush()
        if MODE == "exit":
            sys.stderr.write("hostile: crashing mid-call\n")
            sys.stderr.flush()
            sys.exit(3)
        if MODE == "changes" and not added:
            added = True
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text = "x" * (10 * 1024 * 1024) if MODE == "big" else "done"
        if MODE == "where":
            text = json.dumps({
                "cwd": os.getcwd(),
                "entries": sorted(os.listdir(".")),
                "PATH": os.environ.get("PATH"),
                "PYTHONSAFEPATH": os.environ.get("PYTHONSAFEPATH"),
            })
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
