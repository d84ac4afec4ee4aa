#!/usr/bin/python3
"""PyTorch CPU baseline for the MLP scaling table of `make bench` (bench/table_test.go).

The same training step as ../shared/bench/torch_mnist.py's MLPs (784-H-10, ReLU, softmax
cross-entropy, plain SGD lr 0.1, float32, set_to_none zero_grad), on random data decoded
before the clock starts, for each configuration given as a BATCHxHIDDEN:STEPS argument, or, with no arguments, for each
such line read from standard input (one result line answered per line, so that the Go side can
interleave its own measurements configuration by configuration).
Run with OMP_WAIT_POLICY=passive and 2 threads, as run-torch.sh does for the MLPs.
Prints one line per configuration: RESULT batch=B hidden=H steps=S secs=T ex_per_s=E
"""
import sys, time
import torch


def main():
    torch.set_num_threads(2)
    torch.manual_seed(1)
    nn = torch.nn
    for arg in (sys.argv[1:] or sys.stdin):
        arg = arg.strip()
        if not arg:
            continue
        shape, steps = arg.split(":")
        bs, hidden = (int(v) for v in shape.split("x"))
        steps = int(steps)
        model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        lossf = nn.CrossEntropyLoss()
        x = torch.rand(bs, 784)
        y = torch.arange(bs) % 10

        def step():
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(x), y)
            loss.backward()
            opt.step()

        for _ in range(3):  # warm-up, as the Go side
            step()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        t1 = time.perf_counter()
        print(f"RESULT batch={bs} hidden={hidden} steps={steps} secs={t1 - t0:.4f} "
              f"ex_per_s={steps * bs / (t1 - t0):.0f}", flush=True)


if __name__ == "__main__":
    main()
