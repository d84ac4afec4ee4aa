#!/usr/bin/python3
"""Writes the HDF5 files of the port of Fuel's tests/test_hdf5.py.

Fuel's tests build these files in their setUp with h5py; the port reads
them from here (Starlark has no h5py). Run from this directory with
Debian's python3-h5py to rebuild them:

    /usr/bin/python3 make_files.py

The split attribute is Fuel's: one row per (split, source) of
product(split_dict, sorted(sources)), a missing pair unavailable, an
empty comment stored as '.'.
"""
import itertools

import h5py
import numpy


def split_array(split_dict):
    sources = sorted({s for split in split_dict.values() for s in split})
    comments = [v[3] for split in split_dict.values() for v in split.values()
                if len(v) == 4]
    width = max([1] + [len(c) for c in comments])
    dtype = numpy.dtype([
        ('split', 'S%d' % max(len(s) for s in split_dict)),
        ('source', 'S%d' % max(len(s) for s in sources)),
        ('start', numpy.int64), ('stop', numpy.int64),
        ('indices', h5py.special_dtype(ref=h5py.Reference)),
        ('available', bool), ('comment', 'S%d' % width)])
    rows = numpy.empty(len(split_dict) * len(sources), dtype=dtype)
    for i, (split, source) in enumerate(
            itertools.product(split_dict, sources)):
        entry = split_dict[split].get(source)
        row = rows[i]
        row['split'] = split.encode('utf8')
        row['source'] = source.encode('utf8')
        if entry is None:
            row['start'], row['stop'] = 0, 0
            row['indices'] = h5py.Reference()
            row['available'] = False
            row['comment'] = b'.'
            continue
        row['start'], row['stop'] = entry[:2]
        ref = entry[2] if len(entry) > 2 else None
        row['indices'] = ref if ref is not None else h5py.Reference()
        row['available'] = True
        comment = entry[3] if len(entry) > 3 else '.'
        row['comment'] = (comment or '.').encode('utf8')
    return rows


def labelled(f, name, array, labels):
    f[name] = array
    for dim, label in zip(f[name].dims, labels):
        dim.label = label


def main_file(path, split_dict):
    # TestH5PYDataset.setUp's h5file.
    with h5py.File(path, 'w') as f:
        labelled(f, 'features',
                 numpy.arange(3600, dtype='uint16').reshape((100, 36)),
                 ('batch', 'feature'))
        labelled(f, 'targets',
                 numpy.arange(30, dtype='uint8').reshape((30, 1)),
                 ('batch', 'index'))
        f.attrs['split'] = split_array(split_dict)


def vlen_file(path, targets_shapes=False):
    # TestH5PYDataset.setUp's vlen_h5file; with targets_shapes, as
    # test_vlen_sources_raises_error_on_dim_gt_1 changes it.
    features = [numpy.arange(12, dtype='uint8').reshape((3, 2, 2)),
                numpy.arange(48, dtype='uint8').reshape((3, 4, 4)),
                numpy.arange(60, dtype='uint8').reshape((3, 5, 4)),
                numpy.arange(18, dtype='uint8').reshape((3, 2, 3))]
    with h5py.File(path, 'w') as f:
        ds = f.create_dataset(
            'features', (4,), dtype=h5py.special_dtype(vlen=numpy.uint8))
        ds[...] = [x.flatten() for x in features]
        ds.dims[0].label = 'batch'
        shapes = f.create_dataset('features_shapes', (4, 3), dtype='uint8')
        shapes[...] = numpy.array([x.shape for x in features])
        shapes.make_scale('shapes')
        ds.dims[0].attach_scale(shapes)
        labels = f.create_dataset('features_shape_labels', (3,), dtype='S7')
        labels[...] = [b'channel', b'height', b'width']
        labels.make_scale('shape_labels')
        ds.dims[0].attach_scale(labels)
        labelled(f, 'targets',
                 numpy.arange(4, dtype='uint8').reshape((4, 1)),
                 ('batch', 'index'))
        if targets_shapes:
            ts = f.create_dataset('targets_shapes', (4, 1), dtype='uint8')
            ts.make_scale('shapes')
            f['targets'].dims[0].attach_scale(ts)
        f.attrs['split'] = split_array(
            {'train': {'features': (0, 4), 'targets': (0, 4)}})


def index_split_file(path):
    # test_index_split_{in,out_of}_memory's file.
    with h5py.File(path, 'w') as f:
        labelled(f, 'features', numpy.arange(50, dtype='uint8').reshape(
            (10, 5)), ('batch', 'feature'))
        f['train_features_subset'] = numpy.arange(0, 10, 2)
        f['test_features_subset'] = numpy.arange(1, 10, 2)
        f.attrs['split'] = split_array({
            'train': {'features': (-1, -1, f['train_features_subset'].ref,
                                   '.')},
            'test': {'features': (-1, -1, f['test_features_subset'].ref,
                                  '')}})


def pickling_file(path):
    # test_pickling's file.
    with h5py.File(path, 'w') as f:
        f['features'] = numpy.arange(360, dtype='uint16').reshape((10, 36))
        f.attrs['split'] = split_array(
            {'train': {'features': (0, 10, None, '.')}})


def pytables_file(path):
    # TestPytablesDataset.setUp's file, laid out as PyTables writes it (a
    # group Data holding a chunked carray y of UInt8 (500, 1), y[i] = i,
    # wrapping as uint8) and its node attributes. PyTables is not in
    # Debian's python3 here, and its blosc filter is not part of libhdf5:
    # the carray is deflate-compressed instead.
    with h5py.File(path, 'w') as f:
        f.attrs['CLASS'] = numpy.bytes_('GROUP')
        f.attrs['TITLE'] = numpy.bytes_('Test')
        group = f.create_group('Data')
        group.attrs['CLASS'] = numpy.bytes_('GROUP')
        y = group.create_dataset('y', data=(numpy.arange(500) % 256).astype(
            'uint8').reshape((500, 1)), chunks=(100, 1), compression='gzip',
            compression_opts=5)
        y.attrs['CLASS'] = numpy.bytes_('CARRAY')
        y.attrs['TITLE'] = numpy.bytes_('Data targets')
        y.attrs['VERSION'] = numpy.bytes_('1.1')


if __name__ == '__main__':
    main_file('file.hdf5', {
        'train': {'features': (0, 20, None), 'targets': (0, 20)},
        'test': {'features': (20, 30), 'targets': (20, 30)},
        'unlabeled': {'features': (30, 100, None, '.')}})
    # test_value_error_on_unequal_sources rewrites the split.
    main_file('unequal.hdf5', {
        'train': {'features': (0, 20), 'targets': (0, 15)},
        'test': {'features': (20, 30), 'targets': (20, 30)},
        'unlabeled': {'features': (30, 100, None, '.')}})
    vlen_file('test_vl.hdf5')
    vlen_file('test_vl_dim_gt_1.hdf5', targets_shapes=True)
    index_split_file('index_split.hdf5')
    pickling_file('pickling.hdf5')
    pytables_file('tmp.h5')
