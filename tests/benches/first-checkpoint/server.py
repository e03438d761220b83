# A model that first calls bash (`true`), then answers with text (SSE chat completions).
import http.server, json, sys
def sse(delta, finish):
    c = {"id": "x", "object": "chat.completion.chunk", "model": "fake",
         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    e = {"id": "x", "object": "chat.completion.chunk", "model": "fake",
         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    return ("data: " + json.dumps(c) + "\n\ndata: " + json.dumps(e) + "\n\ndata: [DONE]\n\n").encode()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"data": [{"id": "fake"}]}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); req = json.loads(self.rfile.read(n))
        if any(m.get("role") == "tool" for m in req.get("messages", [])):
            body = sse({"role": "assistant", "content": "ok"}, "stop")
        else:
            body = sse({"role": "assistant", "tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "echo hi > made.txt"})}}]}, "tool_calls")
        self.send_response(200); self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body))); self.send_header("Connection", "close"); self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
