"""A small LLM server for live capture (issue 30, item 5): an HTTP endpoint in front of worker
processes (multiprocessing spawn), each holding a random-weight Llama (bf16) and serving requests from
a queue: a prefill and GEN decode steps per request, each an NVTX range ("prefill", "decode_step"),
so `kernscope record --paused --step-range auto` can count steps. The client mode sends requests
for a while and prints their latencies.

  serve_demo.py serve --port 8765 --workers 2 --seconds 40      the server (exits after SECONDS)
  serve_demo.py client --port 8765 --seconds 10 --concurrency 4 requests while windows are opened"""
import argparse, json, multiprocessing as mp, os, threading, time, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def worker(requests, replies, ready, layers, gen):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers, num_attention_heads=32,
                      num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(dtype=torch.bfloat16).eval()
    nvtx = torch.cuda.nvtx
    ready.set()
    with torch.inference_mode():
        while True:
            item = requests.get()
            if item is None:
                return
            rid, prompt = item
            t0 = time.perf_counter()
            ids = torch.randint(0, cfg.vocab_size, (1, prompt), device="cuda")
            nvtx.range_push("prefill")
            out = model(input_ids=ids, use_cache=True)
            nxt = out.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
            nvtx.range_pop()
            ttft = time.perf_counter() - t0
            cache = out.past_key_values
            for _ in range(gen):
                nvtx.range_push("decode_step")
                out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                nxt = out.logits[:, -1:].argmax(-1)
                torch.cuda.synchronize()
                nvtx.range_pop()
            replies.put((rid, ttft * 1e3, (time.perf_counter() - t0) * 1e3, os.getpid()))


def serve(args):
    ctx = mp.get_context("spawn")
    requests, replies = ctx.Queue(), ctx.Queue()
    readies = [ctx.Event() for _ in range(args.workers)]
    procs = [ctx.Process(target=worker, args=(requests, replies, r, args.layers, args.gen)) for r in readies]
    for p in procs:
        p.start()
    for r in readies:
        r.wait()
    waiting, lock, counter = {}, threading.Lock(), [0]

    def route():
        while True:
            rid, ttft, total, pid = replies.get()
            with lock:
                slot = waiting.pop(rid)
            slot.append({"ttft_ms": ttft, "total_ms": total, "worker": pid})
            slot[0].set()

    threading.Thread(target=route, daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ready")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            done = threading.Event(); slot = [done]
            with lock:
                counter[0] += 1; rid = counter[0]; waiting[rid] = slot
            requests.put((rid, int(body.get("prompt", 128))))
            done.wait()
            self.send_response(200); self.end_headers(); self.wfile.write(json.dumps(slot[1]).encode())

    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving on {args.port} with {args.workers} workers", flush=True)
    threading.Timer(args.seconds, httpd.shutdown).start()
    httpd.serve_forever()
    for _ in procs:
        requests.put(None)
    for p in procs:
        p.join()


def client(args):
    url = f"http://127.0.0.1:{args.port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url, timeout=1).read(); break
        except Exception:
            time.sleep(0.5)
    end, results, lock = time.time() + args.seconds, [], threading.Lock()

    def send():
        while time.time() < end:
            req = urllib.request.Request(url, data=json.dumps({"prompt": 128}).encode(), method="POST")
            r = json.loads(urllib.request.urlopen(req, timeout=120).read())
            with lock:
                results.append(r)

    threads = [threading.Thread(target=send) for _ in range(args.concurrency)]
    for t in threads: t.start()
    for t in threads: t.join()
    per = {}
    for r in results:
        per.setdefault(r["worker"], []).append(r["total_ms"])
    print(json.dumps({"requests": len(results), "per_worker": {k: len(v) for k, v in per.items()},
                      "median_total_ms": sorted(r["total_ms"] for r in results)[len(results) // 2] if results else None}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["serve", "client"])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    serve(args) if args.mode == "serve" else client(args)
