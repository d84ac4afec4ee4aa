#!/usr/bin/python3
"""PyTorch's checkpoint baseline (issue 37): torch.save of the 784-2000-2000-10 MLP's state_dict and
Adam's (after a few steps on batches of 128), into a file followed by fsync, as BenchmarkCheckpointStall
saves ours. torch.save is synchronous: the whole save is the training loop's stall.

Usage: /usr/bin/python3 torch_save.py DIR [--saves 5]
Prints: RESULT impl=torch save_ms=MEDIAN cpu_ms=MEDIAN file_mb=... mb_per_s=... rss_added_mb=...
"""
import argparse, os, resource, statistics, time
import torch


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--saves", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(2)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 2000), nn.ReLU(), nn.Linear(2000, 2000), nn.ReLU(), nn.Linear(2000, 10))
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    x = torch.rand(128, 784)
    y = torch.arange(128) % 10
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    path = os.path.join(args.dir, "torch_ckpt.pt")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = rss_mb()
    times, cpus = [], []
    for _ in range(args.saves):
        t, c = time.perf_counter(), time.process_time()
        with open(path, "wb") as f:
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, f)
            f.flush()
            os.fsync(f.fileno())
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    peak = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024.0
    size = os.path.getsize(path)
    os.remove(path)
    med = statistics.median(times)
    print(f"RESULT impl=torch save_ms={med * 1e3:.1f} cpu_ms={statistics.median(cpus) * 1e3:.1f} "
          f"file_mb={size / 1e6:.2f} mb_per_s={size / 1e6 / med:.1f} rss_added_mb={(peak - base) * 1.048576:.1f} "
          f"saves={[round(t * 1e3, 1) for t in times]}")


if __name__ == "__main__":
    main()
