#!/usr/bin/env python3
"""A local stand-in for a remote embedding service, for bench/remote.py and trying kasava by hand.

Serves POST /v1/embeddings in the OpenAI shape (which Voyage's also is: `input`, `model`,
optional `input_type`, `output_dimension`/`dimensions`; answers `data[i].embedding` with
`usage.total_tokens`) on 127.0.0.1 only. Vectors are a deterministic hashed bag of words, so
equal texts get equal vectors and texts sharing words are near each other. It can add latency
and fail a share of requests the ways real services do: 500, 503, 429 with Retry-After, and
connections reset without a reply. GET /stats returns what it has seen as JSON.

    bench/fake_embedding_server.py --port 0 --latency-ms 50 --error-rate 0.05
    # prints "listening on http://127.0.0.1:PORT/v1" on stdout, then serves until killed
"""
import argparse
import hashlib
import json
import math
import random
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def embed(text, dims):
    vector = [0.0] * dims
    for word in WORD.findall(text):
        digest = hashlib.blake2b(word.lower().encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dims
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[slot] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [round(v / norm, 6) for v in vector]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.inputs = 0
        self.failures = {}
        self.max_batch = 0

    def count(self, inputs=0, failure=None):
        with self.lock:
            self.requests += 1
            self.inputs += inputs
            self.max_batch = max(self.max_batch, inputs)
            if failure:
                self.failures[failure] = self.failures.get(failure, 0) + 1

    def json(self):
        with self.lock:
            return json.dumps({"requests": self.requests, "inputs": self.inputs,
                               "max_batch": self.max_batch, "failures": self.failures})


def make_handler(options, stats, rng):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def reply(self, status, body, headers=()):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/stats"):
                self.reply(200, stats.json())
            else:
                self.reply(404, '{"error":{"message":"not found"}}')

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/embeddings"):
                stats.count(failure="404")
                self.reply(404, '{"error":{"message":"not found"}}')
                return
            if options.latency_ms > 0:
                time.sleep(options.latency_ms / 1000.0 * (0.5 + rng.random()))
            if rng.random() < options.error_rate:
                kind = rng.choice(["500", "503", "429", "reset"])
                stats.count(failure=kind)
                if kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.close_connection = True
                    self.connection.close()
                    return
                headers = [("Retry-After", "1")] if kind == "429" else []
                self.reply(int(kind), '{"error":{"message":"simulated failure"}}', headers)
                return
            try:
                request = json.loads(body)
                inputs = request["input"]
                if isinstance(inputs, str):
                    inputs = [inputs]
                dims = int(request.get("output_dimension") or request.get("dimensions") or options.dims)
            except (ValueError, KeyError, TypeError):
                stats.count(failure="400")
                self.reply(400, '{"error":{"message":"malformed request"}}')
                return
            stats.count(inputs=len(inputs))
            data = [{"object": "embedding", "index": i, "embedding": embed(text, dims)}
                    for i, text in enumerate(inputs)]
            tokens = sum(len(text) // 4 + 1 for text in inputs)
            self.reply(200, json.dumps({"object": "list", "data": data, "model": request.get("model"),
                                        "usage": {"total_tokens": tokens}}))

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--dims", type=int, default=256, help="vector length when not asked")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="mean added latency per request (uniform 0.5x-1.5x)")
    parser.add_argument("--error-rate", type=float, default=0.0,
                        help="share of requests that fail (500, 503, 429, reset)")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    stats = Stats()
    server = ThreadingHTTPServer(("127.0.0.1", options.port),
                                 make_handler(options, stats, random.Random(options.seed)))
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    print(stats.json(), file=sys.stderr)


if __name__ == "__main__":
    main()
