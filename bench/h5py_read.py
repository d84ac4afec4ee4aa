#!/usr/bin/python3
"""h5py's side of the out-of-core benchmark (issue 37, item 5; bench/outofcore_test.go): reads the
batches whose sorted index lists BenchmarkOutOfCore wrote (int64 little-endian, 128 a batch) from
the same file, ds[sorted list] for features and targets as Fuel's H5PYDataset does with h5py, after
dropping the file's pages from the page cache (fsync, posix_fadvise DONTNEED).

Usage: /usr/bin/python3 h5py_read.py FILE INDEX
Prints: RESULT impl=h5py examples=N secs=S ex_per_s=R mb_per_s=M
"""
import os, sys, time
import h5py, numpy as np


def main():
    path, index = sys.argv[1], sys.argv[2]
    idx = np.fromfile(index, dtype='<i8').reshape(-1, 128)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    t0 = time.perf_counter()
    with h5py.File(path, 'r') as f:
        feats, targs = f['features'], f['targets']
        n = 0
        for lst in idx:
            x = feats[lst]
            y = targs[lst]
            assert x.shape == (128, 3, 32, 32) and y.shape == (128, 1)
            n += x.shape[0]
    secs = time.perf_counter() - t0
    print("RESULT impl=h5py examples=%d secs=%.3f ex_per_s=%.0f mb_per_s=%.1f" % (n, secs, n / secs, n * 3073 / secs / 1e6))


if __name__ == '__main__':
    main()
