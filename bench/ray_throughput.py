"""Throughput of `coroner.ray.classify` on a local Ray cluster against one `coroner classify`
process, per core, and where the difference goes (issue "Beyond one machine").

    CORONER_BIN=target/release/coroner python bench/ray_throughput.py [N] [SHARDS]

Needs ray and the coroner package (the wheel, or PYTHONPATH=python with CORONER_BIN). The
corpus is tests/python/test_ray.py's: N generated mini-swe-agent runs (not real). Prints
wall-clock seconds of each stage; nothing here runs in the tests."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
import test_ray  # noqa: E402  (write_corpus)

import ray  # noqa: E402

import coroner  # noqa: E402
import coroner.ray as cray  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
SHARDS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
CPUS = 2
test_ray.N = N


def timed(label, f, cores=CPUS):
    t = time.perf_counter()
    r = f()
    dt = time.perf_counter() - t
    print(f"{label:62s} {dt:7.2f} s  {N / dt:8.0f} traj/s  {N / dt / cores:8.0f} traj/s/core", flush=True)
    return r, dt


with tempfile.TemporaryDirectory(prefix="coroner-ray-bench-") as tmp:
    tmp = Path(tmp)
    verdicts = test_ray.write_corpus(tmp / "corpus")
    corpus = str(tmp / "corpus")
    os.system(f"cat $(find {corpus} -name '*.json') > /dev/null")  # page cache warm, as for every bench
    bin_ = coroner.binary()
    env = dict(os.environ, RAYON_NUM_THREADS=str(CPUS))
    one = [bin_, "classify", corpus, "--verdicts", str(verdicts), "-o", str(tmp / "one.parquet"), "-q"]
    quiet = {"stdout": subprocess.DEVNULL, "check": True}
    timed(f"one process, {CPUS} threads", lambda: subprocess.run(one, env=env, **quiet))
    timed("one process, 1 thread", lambda: subprocess.run(one, env=dict(os.environ, RAYON_NUM_THREADS="1"), **quiet), cores=1)
    man = tmp / "m.jsonl"
    timed("coroner manifest, one process (a Ray run splits it over its tasks)", lambda: subprocess.run([bin_, "manifest", corpus, "-o", str(man)], **quiet), cores=1)

    def shards_in_sequence():
        for k in range(1, SHARDS + 1):
            subprocess.run([bin_, "classify", "--manifest", str(man), "--verdicts", str(verdicts), "--shard", f"{k}/{SHARDS}",
                            "-o", str(tmp / "seq") + "/", "-q"], env=dict(os.environ, RAYON_NUM_THREADS="1"), **quiet)

    timed(f"{SHARDS} shards from the manifest, one after another, 1 thread", shards_in_sequence, cores=1)
    _, init = timed(f"ray.init(num_cpus={CPUS})", lambda: ray.init(num_cpus=CPUS, include_dashboard=False, log_to_driver=False))
    timed(f"coroner.ray.classify, {SHARDS} shards on {CPUS} CPUs (cold workers)",
          lambda: cray.classify([corpus], tmp / "ds", shards=SHARDS, verdicts=str(verdicts), cpus_per_shard=1))
    timed(f"coroner.ray.classify again (warm workers)", lambda: cray.classify([corpus], tmp / "ds", shards=SHARDS, verdicts=str(verdicts), cpus_per_shard=1))
    ray.shutdown()
