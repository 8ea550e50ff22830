"""A search API rankscope's http engine can benchmark, in the standard library alone.

    python examples/own-retriever/server.py 8765

GET /search?q=<query>&k=<k> answers a JSON list of {"id": ..., "score": ...}, best first.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlparse

from my_retriever import TfIdf

retriever = TfIdf()
corpus = Path(__file__).resolve().parent.parent / "corpus.jsonl"
rows = [json.loads(line) for line in corpus.open(encoding="utf-8")]
retriever.index([SimpleNamespace(id=r["_id"], title=r["title"], text=r["text"]) for r in rows])


class Search(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        args = parse_qs(url.query)
        if url.path != "/search" or "q" not in args:
            self.send_error(404, "use /search?q=...&k=...")
            return
        hits = retriever.search(args["q"][0], int(args.get("k", ["10"])[0]))
        body = json.dumps([{"id": doc, "score": score} for doc, score in hits]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # quiet
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    print(f"serving on http://127.0.0.1:{port}/search", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Search).serve_forever()
