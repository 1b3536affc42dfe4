"""The KNN search written plainly in PyTorch, the GPU peer of bench_knn.

torch.cdist + torch.topk(largest=False) over query chunks sized to fit, FP32 (TF32
off, as in hyperbatch), queries and training on the GPU already (as bench_knn's are
on pinned host memory: the peer is not charged for the copy). N = 10^5 training rows,
d in {32, 224}, k in {1, 10, 100, 1024, 4096}. Each case runs as many queries as fit
its time budget (at most 10^6) after a warm chunk; rates are per query. Prints one
aligned row per case and one JSON line at the end.
"""
import argparse
import json
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--queries", type=int, default=1_000_000)
parser.add_argument("--train", type=int, default=100_000)
parser.add_argument("--dims", default="32,224")
parser.add_argument("--k", default="1,10,100,1024,4096")
parser.add_argument("--budget", type=float, default=1.5, help="seconds per case")
parser.add_argument("--chunk-bytes", type=float, default=4e9, help="distance chunk in device memory")
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = False
device = torch.device("cuda")
gen = torch.Generator(device=device).manual_seed(1)
rows = []
print(f"# knn_torch on {torch.cuda.get_device_name(0)}, torch {torch.__version__}: N = {args.train}")
print(f"{'d':>5} {'k':>5} {'Q':>8} {'seconds':>9} {'queries/s':>12} {'GFLOP/s':>10}")
for d in [int(x) for x in args.dims.split(",")]:
    train = torch.rand(args.train, d, device=device, generator=gen) * 2 - 1
    queries = torch.rand(args.queries, d, device=device, generator=gen) * 2 - 1
    chunk = max(1, int(args.chunk_bytes // (4 * args.train)))
    for k in [int(x) for x in args.k.split(",")]:
        def search(q):
            out_d, out_i = [], []
            for q0 in range(0, q, chunk):
                dist = torch.cdist(queries[q0:min(q, q0 + chunk)], train)
                values, index = torch.topk(dist, k, dim=1, largest=False, sorted=True)
                out_d.append(values)
                out_i.append(index)
            torch.cuda.synchronize()
            return out_d, out_i

        search(min(chunk, 512))  # warm
        pilot_q = min(chunk, args.queries, 4096)
        t0 = time.perf_counter()
        search(pilot_q)
        pilot_s = time.perf_counter() - t0
        q = max(pilot_q, min(args.queries, int(pilot_q / pilot_s * args.budget)))
        if q > pilot_q:
            t0 = time.perf_counter()
            search(q)
            s = time.perf_counter() - t0
        else:
            q, s = pilot_q, pilot_s
        gflops = 2.0 * q * args.train * d / s / 1e9
        rows.append({"d": d, "k": k, "queries": q, "seconds": s, "queries_per_s": q / s, "gflops": gflops})
        print(f"{d:>5} {k:>5} {q:>8} {s:>9.3f} {q / s:>12.4g} {gflops:>10.0f}", flush=True)
    del train, queries
    torch.cuda.empty_cache()
print(json.dumps({"peer": "torch", "cases": rows}))
