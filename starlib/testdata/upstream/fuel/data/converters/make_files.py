#!/usr/bin/python3
"""Writes the fake source files of the port of Fuel's
tests/test_converters.py, as its setUp methods write them (same seeds,
same draws, same formats). Run from this directory with Debian's
python3-numpy, python3-h5py and python3-pil to rebuild them:

    /usr/bin/python3 make_files.py

The port regenerates the expected arrays in Starlark from the same seeds
(numpy.random.RandomState is numpy's, bit for bit).
"""
import gzip
import os
import pickle
import shutil
import struct
import tarfile

import numpy


def mnist():
    # TestMNIST.setUp
    image_magic, label_magic = 2051, 2049
    numpy.random.seed(9 + 5 + 2015)
    train_features = numpy.random.randint(0, 256, (10, 1, 28, 28)).astype('uint8')
    train_targets = numpy.random.randint(0, 10, (10, 1)).astype('uint8')
    test_features = numpy.random.randint(0, 256, (10, 1, 28, 28)).astype('uint8')
    test_targets = numpy.random.randint(0, 10, (10, 1)).astype('uint8')
    os.makedirs('mnist', exist_ok=True)

    def write(name, header, data=None):
        # mtime=0: the same bytes on every run.
        with open(os.path.join('mnist', name), 'wb') as raw:
            with gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as f:
                f.write(header)
                if data is not None:
                    f.write(memoryview(data.flatten()))
    write('train-images-idx3-ubyte.gz',
          struct.pack('>iiii', image_magic, 10, 28, 28), train_features)
    write('train-labels-idx1-ubyte.gz',
          struct.pack('>ii', label_magic, 10), train_targets)
    write('t10k-images-idx3-ubyte.gz',
          struct.pack('>iiii', image_magic, 10, 28, 28), test_features)
    write('t10k-labels-idx1-ubyte.gz',
          struct.pack('>ii', label_magic, 10), test_targets)
    write('wrong_images.gz', struct.pack('>iiii', 2000, 10, 28, 28))
    write('wrong_labels.gz', struct.pack('>ii', 2000, 10))


def binarized_mnist():
    # TestBinarizedMNIST.setUp
    numpy.random.seed(9 + 5 + 2015)
    os.makedirs('binarized_mnist', exist_ok=True)
    for split in ('train', 'valid', 'test'):
        mock = numpy.random.randint(0, 2, (5, 784))
        numpy.savetxt(os.path.join(
            'binarized_mnist', 'binarized_mnist_{}.amat'.format(split)), mock)


def tar_dir(archive, directory):
    # A gzipped tar of directory, with fixed times and owners.
    def clean(info):
        info.mtime, info.uid, info.gid = 0, 0, 0
        info.uname = info.gname = ''
        return info
    with open(archive, 'wb') as raw:
        with gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode='w') as tar:
                tar.add(directory, filter=clean)
    shutil.rmtree(directory)


def cifar10():
    # TestCIFAR10.setUp: (10, 3, 32, 32) batches and label arrays.
    numpy.random.seed(9 + 5 + 2015)
    train_features = [numpy.random.randint(0, 256, (10, 3, 32, 32)).astype('uint8')
                      for i in range(5)]
    train_targets = [numpy.random.randint(0, 10, (10,)).astype('uint8')
                     for i in range(5)]
    test_features = numpy.random.randint(0, 256, (10, 3, 32, 32)).astype('uint8')
    test_targets = numpy.random.randint(0, 10, (10,)).astype('uint8')
    os.makedirs('cifar10', exist_ok=True)
    os.chdir('cifar10')
    os.makedirs('cifar-10-batches-py', exist_ok=True)
    for i, (x, y) in enumerate(zip(train_features, train_targets)):
        with open(os.path.join('cifar-10-batches-py',
                               'data_batch_{}'.format(i + 1)), 'wb') as f:
            pickle.dump({'data': x, 'labels': y}, f)
    with open(os.path.join('cifar-10-batches-py', 'test_batch'), 'wb') as f:
        pickle.dump({'data': test_features, 'labels': test_targets}, f)
    tar_dir('cifar-10-python.tar.gz', 'cifar-10-batches-py')
    os.chdir('..')


def cifar100():
    # TestCIFAR100.setUp
    numpy.random.seed(9 + 5 + 2015)
    draws = {}
    for split in ('train', 'test'):
        draws[split] = (
            numpy.random.randint(0, 256, (10, 3, 32, 32)).astype('uint8'),
            numpy.random.randint(0, 100, (10,)).astype('uint8'),
            numpy.random.randint(0, 20, (10,)).astype('uint8'))
    os.makedirs('cifar100', exist_ok=True)
    os.chdir('cifar100')
    os.makedirs('cifar-100-python', exist_ok=True)
    for split, (x, fine, coarse) in draws.items():
        with open(os.path.join('cifar-100-python', split), 'wb') as f:
            pickle.dump({'data': x.reshape((10, -1)), 'fine_labels': fine,
                         'coarse_labels': coarse}, f)
    tar_dir('cifar-100-python.tar.gz', 'cifar-100-python')
    os.chdir('..')


def savemat5(path, arrays):
    # What scipy.io.savemat writes for uint8 arrays (scipy is not in
    # Debian's python3 here): a level 5 MAT-file, one miMATRIX element per
    # variable, data in column-major order.
    def element(typ, data):
        pad = (-len(data)) % 8
        return struct.pack('<II', typ, len(data)) + data + b'\0' * pad
    out = bytearray(b'MATLAB 5.0 MAT-file, written by make_files.py'.ljust(116))
    out += b'\0' * 8 + struct.pack('<H', 0x0100) + b'IM'
    for name, a in arrays.items():
        a = numpy.asarray(a, dtype='uint8')
        body = element(6, struct.pack('<II', 9, 0))  # mxUINT8_CLASS
        body += element(5, struct.pack('<%di' % a.ndim, *a.shape))
        body += element(1, name.encode('ascii'))
        body += element(2, a.tobytes(order='F'))
        out += struct.pack('<II', 14, len(body)) + body
    with open(path, 'wb') as f:
        f.write(bytes(out))


def svhn_format_1(split):
    # TestSVHN.setUp's make_mock_format_1: two PNG images and a MATLAB 7.3
    # digitStruct.mat (HDF5, written by h5py as setUp does: image 1's two
    # boxes are datasets named by strings, image 2's one box is stored
    # directly; bbox holds references to the two images' groups), in
    # <split>.tar.gz.
    from PIL import Image
    import h5py
    mock = {'image': [
        numpy.random.randint(0, 256, (6, 6, 3)).astype('uint8'),
        numpy.random.randint(0, 256, (5, 5, 3)).astype('uint8')]}
    other_sources = ('label', 'height', 'width', 'left', 'top')
    for source in other_sources:
        mock[source] = [numpy.random.randint(0, 4, (2,)).astype('uint8'),
                        10 * numpy.ones((1,)).astype('uint8')]
    os.makedirs(split)
    for i, image in enumerate(mock['image']):
        Image.fromarray(image).save(os.path.join(split, '{}.png'.format(i + 1)))
    with h5py.File(os.path.join(split, 'digitStruct.mat'), 'w') as f:
        for source in other_sources:
            suffixes = []
            for i in range(2):
                suffix = 'i1{}{}'.format(source, i)
                suffixes.append([suffix.encode('utf8')])
                f['digitStruct/{}'.format(suffix)] = [[mock[source][0][i]]]
            f['digitStruct/image_1/{}'.format(source)] = suffixes
            f['digitStruct/image_2/{}'.format(source)] = [[mock[source][1][0]]]
        ref_dtype = h5py.special_dtype(ref=h5py.Reference)
        bbox = f.create_dataset('digitStruct/bbox', (2, 1), dtype=ref_dtype)
        bbox[...] = [[f['digitStruct/image_1'].ref],
                     [f['digitStruct/image_2'].ref]]
    tar_dir('{}.tar.gz'.format(split), split)


def svhn():
    # TestSVHN.setUp: format 1's archives first (the same draws), then
    # format 2's .mat files.
    numpy.random.seed(9 + 5 + 2015)
    os.makedirs('svhn', exist_ok=True)
    os.chdir('svhn')
    for split in ('train', 'test', 'extra'):
        svhn_format_1(split)
    os.chdir('..')
    for split in ('train', 'test', 'extra'):
        features = numpy.random.randint(0, 256, (32, 32, 3, 10)).astype('uint8')
        targets = numpy.random.randint(1, 11, (10, 1)).astype('uint8')
        savemat5(os.path.join('svhn', split + '_32x32.mat'),
                 {'X': features, 'y': targets})


if __name__ == '__main__':
    mnist()
    binarized_mnist()
    cifar10()
    cifar100()
    svhn()
