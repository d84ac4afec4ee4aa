"""The Python side of the fuel/h5 MNIST stream benchmark.

A vectorized h5py + numpy loop producing the batches the Go pipeline
produces: MNIST's train split in batches of 256, features flattened,
scaled by 1/255 (float64, as Fuel's ScaleAndShift on uint8) and cast to
float32, targets as stored. Two modes, as H5PYDataset has: "memory" reads
the split once (load_in_memory=True, Fuel's MNIST default; the read is
timed) and slices it; "file" reads each batch from the file by hyperslab.
Prints one line per mode: "RESULT mode=... ex_per_s=..." (median of runs).

usage: /usr/bin/python3 bench_mnist.py FILE.hdf5 [RUNS]
"""
import statistics
import sys
import time

import h5py
import numpy


def epoch(features, targets, n, batch=256):
    count = 0
    for start in range(0, n, batch):
        x = features[start:start + batch]
        y = targets[start:start + batch]
        x = (x.reshape(x.shape[0], -1) * (1 / 255.0)).astype('float32')
        count += x.shape[0] + 0 * y.shape[0]
    return count


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with h5py.File(path, 'r') as f:
        split = {(r['split'].decode(), r['source'].decode()): (int(r['start']), int(r['stop'])) for r in f.attrs['split']}
        start, stop = split[('train', 'features')]
        for mode in ('memory', 'file'):
            rates = []
            for _ in range(runs):
                t0 = time.perf_counter()
                if mode == 'memory':
                    feats = f['features'][start:stop]
                    targs = f['targets'][start:stop]
                    n = epoch(feats, targs, stop - start)
                else:
                    feats, targs = f['features'], f['targets']
                    n = epoch(_Offset(feats, start), _Offset(targs, start), stop - start)
                rates.append(n / (time.perf_counter() - t0))
            print('RESULT mode=%s ex_per_s=%.0f' % (mode, statistics.median(rates)))


class _Offset:
    """Slices a dataset from an offset (the split's start)."""

    def __init__(self, ds, off):
        self.ds, self.off = ds, off

    def __getitem__(self, s):
        return self.ds[self.off + s.start:self.off + s.stop]


if __name__ == '__main__':
    main()
