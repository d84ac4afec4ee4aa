#!/usr/bin/python3
"""PyTorch end to end (issue 37, item 4): the Blocks tutorial's model (784-100-10 ReLU, softmax
cross-entropy, SGD 0.1, batch 256, last partial batch dropped) trained through a map-style Dataset
over MNIST's idx files (the files blocks-repl reads from FUEL_DATA_PATH: decoded when the Dataset is
made, each example scaled to float32 in [0, 1] by __getitem__) and a DataLoader (sequential batches,
default collation, no worker processes: the machine has 2 cores), as a PyTorch user writes it.
make bench times the whole process by the wall clock, N epochs minus a 1-batch run, as it times
blocks-repl run.

Usage: /usr/bin/python3 torch_e2e.py DATA_DIR [--epochs N | --batches 1]
Prints: RESULT impl=torch-dataloader examples=... secs=... ex_per_s=... (the training loop alone)
"""
import argparse, gzip, os, struct, time
import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader


def read_idx(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        raw = f.read()
    ndim = struct.unpack(">I", raw[:4])[0] & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class MNIST(Dataset):
    def __init__(self, data):
        self.x = read_idx(os.path.join(data, "train-images-idx3-ubyte.gz"))
        self.y = read_idx(os.path.join(data, "train-labels-idx1-ubyte.gz")).astype(np.int64)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i].reshape(784).astype(np.float32) / 255.0), int(self.y[i])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batches", type=int, default=0, help="stop after this many batches (0: whole epochs)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(1)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lossf = nn.CrossEntropyLoss()
    loader = DataLoader(MNIST(args.data), batch_size=256, shuffle=False, drop_last=True, num_workers=0)
    n = 0
    t0 = time.perf_counter()
    for _ in range(args.epochs):
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(xb), yb)
            loss.backward()
            opt.step()
            n += xb.shape[0]
            if args.batches and n >= args.batches * 256:
                break
        if args.batches and n >= args.batches * 256:
            break
    secs = time.perf_counter() - t0
    print(f"RESULT impl=torch-dataloader examples={n} secs={secs:.3f} ex_per_s={n / secs:.0f} last_loss={loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
