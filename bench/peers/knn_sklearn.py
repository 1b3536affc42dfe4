"""scikit-learn's brute-force KNN on the CPU, the CPU peer of bench_knn.

NearestNeighbors(algorithm='brute').kneighbors on a subset of the queries (rates are
per query, so they scale to Q = 10^6), N = 10^5 training rows, d in {32, 224}, k in
{1, 10, 100, 1024, 4096}, float32 data, all cores (n_jobs=-1). Exits 0 saying so when
scikit-learn is not installed (the GPU host may lack it: it was then measured on the
development host; docs/PERFORMANCE.md says which).
"""
import argparse
import json
import os
import platform
import time

try:
    import numpy as np
except ImportError:
    print("# knn_sklearn: numpy is not installed for this python; no CPU peer figures here")
    raise SystemExit(0)

parser = argparse.ArgumentParser()
parser.add_argument("--queries", type=int, default=2000)
parser.add_argument("--train", type=int, default=100_000)
parser.add_argument("--dims", default="32,224")
parser.add_argument("--k", default="1,10,100,1024,4096")
args = parser.parse_args()

try:
    import sklearn
    from sklearn.neighbors import NearestNeighbors
except ImportError:
    print("# knn_sklearn: scikit-learn is not installed on this host; no CPU peer figures here")
    raise SystemExit(0)

rng = np.random.default_rng(1)
cpu = platform.processor() or platform.machine()
print(f"# knn_sklearn {sklearn.__version__} on {os.cpu_count()} cores ({cpu}): N = {args.train}, "
      f"Q = {args.queries} (scaled: rates per query)")
print(f"{'d':>5} {'k':>5} {'Q':>8} {'seconds':>9} {'queries/s':>12} {'GFLOP/s':>10}")
rows = []
for d in [int(x) for x in args.dims.split(",")]:
    train = (rng.random((args.train, d), dtype=np.float32) * 2 - 1)
    queries = (rng.random((args.queries, d), dtype=np.float32) * 2 - 1)
    for k in [int(x) for x in args.k.split(",")]:
        nn = NearestNeighbors(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(train)
        t0 = time.perf_counter()
        nn.kneighbors(queries)
        s = time.perf_counter() - t0
        q = args.queries
        gflops = 2.0 * q * args.train * d / s / 1e9
        rows.append({"d": d, "k": k, "queries": q, "seconds": s, "queries_per_s": q / s, "gflops": gflops})
        print(f"{d:>5} {k:>5} {q:>8} {s:>9.3f} {q / s:>12.4g} {gflops:>10.1f}", flush=True)
print(json.dumps({"peer": "sklearn", "host": f"{os.cpu_count()} cores {cpu}", "cases": rows}))
