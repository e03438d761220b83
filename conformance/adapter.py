#!/usr/bin/env python3
"""The MCP conformance suite's client under test: rein, driven by a scripted model.

The suite (npm @modelcontextprotocol/conformance) runs
`<command> SERVER_URL` with MCP_CONFORMANCE_SCENARIO (the scenario's name) and, for some
scenarios, MCP_CONFORMANCE_CONTEXT (JSON: e.g. a pre-registered client_id/client_secret).
This adapter:

1. makes a fresh REIN_HOME and project folder, and writes a config.toml that declares
   SERVER_URL as the HTTP MCP server `conformance` (with `oauth_client_id` and
   `oauth_client_secret_env` when the context gives credentials; the secret itself goes
   in an environment variable, never in the file);
2. sets BROWSER to this script with `--browser`, which follows the authorization
   redirect as a browser would (GET the authorization URL, follow redirects, which ends
   at rein's 127.0.0.1 callback);
3. for the auth/* scenarios runs `rein mcp login conformance`;
4. runs `rein -p` against a tiny scripted OpenAI-compatible model (below, in a thread)
   whose first reply calls the scenario's tool (the first `mcp__conformance__*` tool it
   is offered, with arguments made from its schema) and whose second reply ends the turn.

The rein binary is $REIN_BIN, else target/debug/rein beside this folder.
Exit code: rein's (the suite reads the server's own checks).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = "conformance"


def browser(url):
    """Follow the authorization URL's redirects as a browser would (urllib follows 302s)."""
    try:
        with urllib.request.urlopen(url, timeout=20) as answer:
            answer.read(64 * 1024)
    except Exception as error:  # the callback page's status is not ours to judge
        print(f"adapter browser: {error}", file=sys.stderr)
    return 0


def example_value(schema):
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(schema, dict) and "default" in schema:
        return schema["default"]
    if kind in ("number", "integer"):
        return 2
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "conformance"


def tool_arguments(parameters):
    properties = (parameters or {}).get("properties") or {}
    return {name: example_value(schema) for name, schema in properties.items()}


class Model(BaseHTTPRequestHandler):
    """A chat-completions endpoint: call the offered MCP tool once, then finish."""

    def log_message(self, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages") or []
        called = any(m.get("role") == "tool" for m in messages)
        tools = [
            t.get("function", {})
            for t in request.get("tools") or []
            if t.get("function", {}).get("name", "").startswith(f"mcp__{SERVER}__")
        ]
        if called or not tools:
            message = {"role": "assistant", "content": "Done: the conformance scenario ran."}
            finish = "stop"
        else:
            tool = tools[0]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_conformance_1",
                        "type": "function",
                        "function": {
                            "name": tool["name"],
                            "arguments": json.dumps(tool_arguments(tool.get("parameters"))),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        self.send_json(
            200,
            {
                "id": "chatcmpl-conformance",
                "object": "chat.completion",
                "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )


def toml_string(value):
    return json.dumps(value)


def main(argv):
    if len(argv) >= 2 and argv[0] == "--browser":
        return browser(argv[1])
    if not argv:
        print("usage: adapter.py SERVER_URL (or --browser URL)", file=sys.stderr)
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    rein = os.environ.get("REIN_BIN") or os.path.join(HERE, "..", "target", "debug", "rein")

    home = tempfile.mkdtemp(prefix="rein-conformance-")
    project = os.path.join(home, "project")
    os.makedirs(project)
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("REIN_") or name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            del env[name]
    env["REIN_HOME"] = os.path.join(home, "rein")
    os.makedirs(env["REIN_HOME"])
    env["BROWSER"] = f"{sys.executable} {os.path.abspath(__file__)} --browser"
    lines = [f"[mcp_servers.{SERVER}]", f"url = {toml_string(url)}", "startup_timeout_secs = 20"]
    if context.get("client_id"):
        lines.append(f"oauth_client_id = {toml_string(context['client_id'])}")
    if scenario == "auth/basic-cimd":
        # The suite's stand-in for a client metadata document rein's user would host.
        lines.append('oauth_client_metadata_url = "https://conformance-test.local/client-metadata.json"')
    if context.get("client_secret"):
        env["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
        lines.append('oauth_client_secret_env = "CONFORMANCE_CLIENT_SECRET"')
    with open(os.path.join(env["REIN_HOME"], "config.toml"), "w") as config:
        config.write("\n".join(lines) + "\n")

    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{model.server_address[1]}/v1"
    try:
        if scenario.startswith("auth/"):
            login = subprocess.run(
                [rein, "--cwd", project, "mcp", "login", SERVER], env=env, timeout=60
            )
            if login.returncode != 0:
                return login.returncode
        run = subprocess.run(
            [
                rein,
                "--cwd",
                project,
                "--base-url",
                base_url,
                "--model",
                "scripted",
                "--yes",
                "-p",
                f"Call the {SERVER} server's tool once (scenario {scenario}).",
            ],
            env=env,
            timeout=60,
        )
        return run.returncode
    finally:
        model.shutdown()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
