"""A small MCP server that misbehaves on purpose (tests/it/mcp_servers.rs, tests/it/mcp_faults.rs).

Usage: hostile_server.py MODE, MODE one of:
  hang      never answers initialize (writes a line to stderr first)
  garbage   prints non-JSON lines on stdout, then behaves
  exit      exits in the middle of a tools/call (after a line on stderr)
  big       answers tools/call with 10 MB of text
  pages     lists its tools over three pages
  changes   a call to `work` adds the tool `added` and sends tools/list_changed
  where     a call to `work` says where it runs: its folder, what the folder holds, PATH
            and PYTHONSAFEPATH, as JSON
  deep_schema    also lists `deep`, whose input schema is nested 63 levels (JSON nesting
                 past serde_json's limit of 128 with the message around it)
  string_schema  also lists `stringy`, whose input schema is a string
  many      lists 10,000 tools with long descriptions
  prompts   also lists 5,000 prompts `p0`… (descriptions with an escape sequence and 1,000
            more characters) and `huge`, whose text is 1 MB
  http [MODE]  streamable HTTP instead of stdio, in MODE (`plain` when not given):
            prints its port on stdout, then serves POST /mcp (JSON answers, a session
            id; no SSE stream)
  (any other word: behaves)

In every mode a call to `work` obeys its arguments (after the mode's own misdeeds):
  {"bytes": N}         the text is N bytes of "x" (one line of more than N bytes on stdout)
  {"depth": N}         structuredContent nested N objects deep
  {"sleep": S}         sleeps S seconds first
  {"stderr_bytes": N}  writes N bytes of a progress bar drawn with "\\r" (no newline) to
                       stderr, then one line "hostile: flood done"
  {"exit": true}       writes a line to stderr and exits, as `exit` does
  {"status": CODE}     (http) answers with that HTTP status and an HTML page titled
                       "Upstream exploded"
  {"ask_roots": true}  (stdio) asks rein for roots/list first; the text is the answer
  {"ask_sampling": true}  (stdio) asks rein for sampling/createMessage; the text is the
                       answer (rein declines it)
  {"notes": N}         sends N progress notifications (with the call's progressToken)
                       and N log messages (notifications/message) first, each holding a
                       terminal escape sequence and 500 more characters
  {"add_resource": URI} adds a text resource URI and sends
                       notifications/resources/list_changed first
  {"elicit": SCHEMA}   (stdio) asks the user to fill in a form first (elicitation/create
                       with SCHEMA as its requestedSchema); the result's text is the
                       client's answer, as JSON
  {"elicit_fields": N} (stdio) the same with a form of N text fields (required, each
                       with a 5,000-character default when "elicit_defaults" is true)
  {"elicit_order": [NAME...]} (stdio) the form's fields in this order on the wire
  {"elicit_give_up": S} (stdio) asks, then gives up after S seconds without reading the
                       answer: the result says "gave up"

Every mode also offers resources (resources/list, resources/read: `mem://notes` text,
`mem://huge` 100 MB of text on one line, `mem://logo` a PNG blob, and any `file://` URI,
read as the text "file says: URI") and prompts (prompts/list, prompts/get: `review`,
arguments `file` (required) and `focus`; `picture`, an image and a text).
With HOSTILE_PID_FILE set, the server starts a child (`sleep 3600`) and writes its own pid
and the child's there as it starts, and creates HOSTILE_PID_FILE.call when a call comes.
"""
import json
import os
import sys
import time

HTTP = sys.argv[1] == "http"
# Over HTTP the mode is the second word (`http string_schema`); `plain` when there is none.
MODE = (sys.argv[2] if len(sys.argv) > 2 else "plain") if HTTP else sys.argv[1]
added = False

PID_FILE = os.environ.get("HOSTILE_PID_FILE")
if PID_FILE:
    # Its own pid and that of a child of its own (in its process group), for the tests
    # that check what is left of a server when rein dies.
    import subprocess
    helper = subprocess.Popen(["sleep", "3600"])
    with open(PID_FILE + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {helper.pid}")
    os.rename(PID_FILE + ".tmp", PID_FILE)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


asked = 0


def ask(method, params=None):
    """Send rein a request and read lines until its answer (stdio only)."""
    global asked
    asked += 1
    rid = f"hostile-{asked}"
    request = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        request["params"] = params
    send(request)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("id") == rid and "method" not in msg:
            return msg
    return {"error": "stdin closed"}


RESOURCES = [
    {"uri": "mem://notes", "name": "notes", "mimeType": "text/plain",
     "description": "short notes"},
    {"uri": "mem://huge", "name": "huge", "mimeType": "text/plain"},
    {"uri": "mem://logo", "name": "logo", "mimeType": "image/png"},
]

PROMPTS = [
    {"name": "review", "description": "review a file",
     "arguments": [{"name": "file", "required": True}, {"name": "focus"}]},
    {"name": "picture", "description": "a prompt with an image"},
]


def read_resource(uri):
    if uri == "mem://notes":
        return [{"uri": uri, "mimeType": "text/plain", "text": "the notes say hello"}]
    if uri == "mem://huge":
        return [{"uri": uri, "mimeType": "text/plain", "text": "y" * (100 * 1024 * 1024)}]
    if uri == "mem://logo":
        return [{"uri": uri, "mimeType": "image/png", "blob": "iVBORw0KGgo=" * 100}]
    if uri.startswith("file://"):
        return [{"uri": uri, "text": f"file says: {uri}"}]
    return None


def get_prompt(name, args):
    if name == "huge" and MODE == "prompts":
        return {"messages": [
            {"role": "user", "content": {"type": "text", "text": "y" * 1_000_000}}]}
    if name == "review":
        if "file" not in args:
            return None
        text = f"Review {args['file']}" + (f" for {args['focus']}" if "focus" in args else "")
        return {"description": "a review", "messages": [
            {"role": "user", "content": {"type": "text", "text": text}}]}
    if name == "picture":
        return {"messages": [
            {"role": "user", "content": {"type": "image", "data": "iVBORw0KGgo=",
                                         "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "describe it"}}]}
    return None


def tool(name, schema=None, description=None):
    return {"name": name, "description": description or f"{name} tool",
            "inputSchema": schema if schema is not None else {"type": "object"}}


def nested_schema(levels):
    schema = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"n": schema}}
    return schema


def tools():
    listed = [tool("work")] + ([tool("added")] if added else [])
    if MODE == "deep_schema":
        listed.append(tool("deep", nested_schema(63)))
    if MODE == "string_schema":
        listed.append(tool("stringy", "object"))
    if MODE == "many":
        listed += [tool(f"t{i:05}", {"type": "object", "properties": {
            "query": {"type": "string", "description": "what to look for " * 4}}},
            "A tool among very many. " * 6) for i in range(10000)]
    return listed


def call_result(args):
    """The result of a call to `work`, after what its arguments ask for."""
    if args.get("sleep"):
        time.sleep(float(args["sleep"]))
    if args.get("stderr_bytes"):
        left = int(args["stderr_bytes"])
        chunk = "".join(f"\rprogress {i % 100:3}%" for i in range(4096)).encode()
        while left > 0:
            data = chunk[:left]
            sys.stderr.buffer.write(data)
            left -= len(data)
        sys.stderr.buffer.write(b"\nhostile: flood done\n")
        sys.stderr.flush()
    text = "x" * (10 * 1024 * 1024) if MODE == "big" else "done"
    if args.get("bytes"):
        text = "x" * int(args["bytes"])
    result = {"content": [{"type": "text", "text": text}]}
    if args.get("depth"):
        deep = {}
        for _ in range(int(args["depth"])):
            deep = {"n": deep}
        result["structuredContent"] = deep
        result["content"] = [{"type": "text", "text": "deep"}]
    if MODE == "where":
        result["content"][0]["text"] = json.dumps({
            "cwd": os.getcwd(),
            "entries": sorted(os.listdir(".")),
            "PATH": os.environ.get("PATH"),
            "PYTHONSAFEPATH": os.environ.get("PYTHONSAFEPATH"),
        })
    return result


def elicit(args):
    """Ask the client for a form (stdio): the client's answer, or None if given up."""
    schema = args.get("elicit")
    if args.get("elicit_fields"):
        with_defaults = bool(args.get("elicit_defaults"))
        props = {}
        for i in range(int(args["elicit_fields"])):
            prop = {"type": "string", "title": f"Field {i}"}
            if with_defaults:
                prop["default"] = "d" * 5000
            props[f"f{i:04}"] = prop
        schema = {"type": "object", "properties": props, "required": sorted(props)}
    if args.get("elicit_order"):
        # The fields in this order on the wire (the test's JSON sorts them by name).
        props = schema["properties"]
        schema["properties"] = {k: props[k] for k in args["elicit_order"] if k in props}
    send({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create",
          "params": {"mode": "form", "message": args.get("message", "\x1b[31mPlease\x1b[0m fill this in"),
                     "requestedSchema": schema}})
    if args.get("elicit_give_up"):
        time.sleep(float(args["elicit_give_up"]))
        return None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("id") == "elicit-1" and "method" not in msg:
            return msg.get("result", msg.get("error"))
    return None


def answer(msg):
    """The JSON-RPC answer to `msg` (None for a notification or a response)."""
    global added
    method, mid = msg.get("method"), msg.get("id")
    if method is None:
        return None
    if method == "initialize":
        if MODE == "hang":
            sys.stderr.write("hostile: stuck before initialize\n")
            sys.stderr.flush()
            time.sleep(3600)
        if MODE == "garbage":
            sys.stdout.write("this is not json\n{broken\n")
            sys.stdout.flush()
        return {"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": MODE == "changes"},
                             "resources": {"listChanged": True}, "prompts": {},
                             "logging": {}},
            "serverInfo": {"name": "hostile", "version": "0"}}}
    if method == "tools/list":
        if MODE == "pages":
            cursor = (msg.get("params") or {}).get("cursor")
            page = {None: ("a", "p2"), "p2": ("b", "p3"), "p3": ("c", None)}[cursor]
            result = {"tools": [tool(page[0])]}
            if page[1]:
                result["nextCursor"] = page[1]
        else:
            result = {"tools": tools()}
        return {"jsonrpc": "2.0", "id": mid, "result": result}
    if method == "resources/list":
        return {"jsonrpc": "2.0", "id": mid, "result": {"resources": RESOURCES}}
    if method == "resources/read":
        contents = read_resource((msg.get("params") or {}).get("uri", ""))
        if contents is None:
            return {"jsonrpc": "2.0", "id": mid,
                    "error": {"code": -32002, "message": "no such resource"}}
        return {"jsonrpc": "2.0", "id": mid, "result": {"contents": contents}}
    if method == "prompts/list":
        prompts = PROMPTS
        if MODE == "prompts":
            prompts = PROMPTS + [{"name": "huge"}] + [
                {"name": f"p{i}", "description": "\x1b[31mred\x1b[0m " + "x" * 1000}
                for i in range(5000)]
        return {"jsonrpc": "2.0", "id": mid, "result": {"prompts": prompts}}
    if method == "prompts/get":
        params = msg.get("params") or {}
        got = get_prompt(params.get("name"), params.get("arguments") or {})
        if got is None:
            return {"jsonrpc": "2.0", "id": mid,
                    "error": {"code": -32602, "message": "bad prompt or arguments"}}
        return {"jsonrpc": "2.0", "id": mid, "result": got}
    if method == "tools/call":
        if MODE == "garbage":
            sys.stdout.write("more garbage\n")
            sys.stdout.flush()
        args = (msg.get("params") or {}).get("arguments") or {}
        if PID_FILE:
            open(PID_FILE + ".call", "w").close()
        if MODE == "exit" or args.get("exit"):
            sys.stderr.write("hostile: crashing mid-call\n")
            sys.stderr.flush()
            sys.exit(3)
        params = msg.get("params") or {}
        if args.get("ask_roots"):
            answer_ = ask("roots/list")
            return {"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(answer_)}]}}
        if args.get("ask_sampling"):
            answer_ = ask("sampling/createMessage", {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10})
            return {"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(answer_)}]}}
        if args.get("notes"):
            token = (params.get("_meta") or {}).get("progressToken")
            n = int(args["notes"])
            for i in range(1, n + 1):
                tail = " \x1b[31mred\x1b[0m" + " long" * 100
                if token is not None:
                    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": i, "total": n,
                        "message": f"step {i}{tail}"}})
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": "info", "logger": "hostile", "data": f"log {i}{tail}"}})
        if args.get("add_resource"):
            RESOURCES.append({"uri": args["add_resource"], "name": "added",
                              "mimeType": "text/plain"})
            send({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        if MODE == "changes" and not added:
            added = True
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        if not HTTP and (args.get("elicit") or args.get("elicit_fields")):
            got = elicit(args)
            text = "gave up" if got is None else json.dumps(got)
            return {"jsonrpc": "2.0", "id": mid,
                    "result": {"content": [{"type": "text", "text": text}]}}
        return {"jsonrpc": "2.0", "id": mid, "result": call_result(args)}
    if mid is not None:
        return {"jsonrpc": "2.0", "id": mid, "result": {}}
    return None


def serve_stdio():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        reply = answer(msg)
        if reply is not None:
            send(reply)


def serve_http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body, content_type, headers=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # rein stopped reading (an answer too large)

        def do_GET(self):
            self.reply(405, b"", "text/plain")

        def do_DELETE(self):
            self.reply(200, b"", "text/plain")

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            msg = json.loads(self.rfile.read(length))
            args = (msg.get("params") or {}).get("arguments") or {}
            if msg.get("method") == "tools/call" and args.get("status"):
                page = (b"<html><head><title>Upstream exploded</title></head>"
                        b"<body><h1>Upstream exploded</h1></body></html>")
                return self.reply(int(args["status"]), page, "text/html")
            reply = answer(msg)
            if reply is None:
                return self.reply(202, b"", "text/plain")
            self.reply(200, json.dumps(reply).encode(), "application/json",
                       [("Mcp-Session-Id", "hostile-session")])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if HTTP:
    serve_http()
else:
    serve_stdio()
