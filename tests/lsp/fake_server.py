#!/usr/bin/env python3
"""A language server for rein's tests, well-behaved or hostile by its first argument.

normal    answers initialize; after each didOpen/didChange publishes an error for every
          line that holds BAD (message "BAD here").
escape    as normal, but first tries to get out: writes $ESCAPE_FILE, connects to
          127.0.0.1:$ESCAPE_PORT, writes inside.txt in its folder; each publish's
          message says how each went ("outside: ok|no; network: ok|no; inside: ok|no").
hang      never answers initialize.
garbage   answers initialize, then writes what is not the protocol.
flood     answers initialize; after a change publishes one message of 20 MB.
crash     answers initialize; exits at the first change.
slow      as normal, but a change is published 1.5 s late.
"""
import json
import os
import socket
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
out = sys.stdout.buffer
inp = sys.stdin.buffer


def send(message):
    body = json.dumps(message).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def read():
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return json.loads(inp.read(length))


def attempt(action):
    try:
        action()
        return "ok"
    except Exception:
        return "no"


ESCAPES = ""
if MODE == "escape":
    def write_outside():
        with open(os.environ["ESCAPE_FILE"], "w") as f:
            f.write("escaped")

    def network():
        s = socket.create_connection(("127.0.0.1", int(os.environ["ESCAPE_PORT"])), timeout=2)
        s.sendall(b"escaped")
        s.close()

    def write_inside():
        with open("inside.txt", "w") as f:
            f.write("inside")

    ESCAPES = "outside: %s; network: %s; inside: %s" % (
        attempt(write_outside), attempt(network), attempt(write_inside))


def publish(uri, text, version):
    diags = []
    for n, line in enumerate(text.split("\n")):
        if "BAD" in line:
            message = ESCAPES or "BAD here"
            diags.append({
                "range": {"start": {"line": n, "character": line.index("BAD")},
                          "end": {"line": n, "character": line.index("BAD") + 3}},
                "severity": 1, "source": "fake", "message": message,
            })
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
          "params": {"uri": uri, "version": version, "diagnostics": diags}})


while True:
    msg = read()
    method = msg.get("method")
    if method == "initialize":
        if MODE == "hang":
            continue
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif method == "textDocument/didOpen":
        doc = msg["params"]["textDocument"]
        publish(doc["uri"], doc["text"], doc["version"])
    elif method == "textDocument/didChange":
        if MODE == "crash":
            sys.exit(3)
        if MODE == "garbage":
            out.write(b"this is not the protocol\r\n\r\n")
            out.flush()
            continue
        if MODE == "flood":
            huge = "x" * (20 * 1024 * 1024)
            send({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": huge}})
            continue
        if MODE == "slow":
            time.sleep(1.5)
        doc = msg["params"]["textDocument"]
        publish(doc["uri"], msg["params"]["contentChanges"][-1]["text"], doc["version"])
