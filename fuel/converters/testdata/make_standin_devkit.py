"""Writes, under ./data, stand-in ILSVRC2010 and ILSVRC2012 development kits
with the real kits' layout and the counts upstream's tests assert (1000
classes, 50,000 validation and 150,000 (2010) test labels, n_train
1,261,406 / 1,281,167, a 1000x1000 cost matrix, 100,000 test images for
2012), meta.mat written by scipy.io.savemat. They are not the real kits:
they only check that the pending chunks of
starlib/testdata/upstream/fuel/test_convert_ilsvrc_devkit.star run, with

    cd DIR && python3 make_standin_devkit.py
    BLOCKS_PENDING=1 BLOCKS_SHARED=DIR go test ./starlib -run 'TestUpstream/fuel/.*ilsvrc20'

(the 2012 test archive is 51 MB).

With `--small DIR`, it writes instead small stand-in inputs of the whole
converters, in the real layout: DIR/2010 holds ILSVRC2010_devkit-1.0.tar.gz,
ILSVRC2010_test_ground_truth.txt, ILSVRC2010_images_{train,val,test}.tar
and patch_images.tar; DIR/2012 holds ILSVRC2012_devkit_t12.tar.gz and
ILSVRC2012_img_{train,val,test}.tar. Each image is an 8x8 JPEG of one gray
value; the script prints, as JSON, every image's set, file name, class
(0-based) and gray value (a patched image's is the patch's). Used by
fuel/converters' TestConvertILSVRC.
"""
import numpy, scipy.io, tarfile, io, os, sys, json


def small(out):
    from PIL import Image
    rng = numpy.random.RandomState(1)
    manifest = {}

    def jpeg(v, gz=False):
        b = io.BytesIO()
        Image.fromarray(numpy.full((8, 8, 3), v, dtype=numpy.uint8)).save(b, 'JPEG', quality=95)
        b = b.getvalue()
        if gz:
            import gzip
            b = gzip.compress(b, mtime=0)
        return b

    def tar(path, members, mode='w'):
        with tarfile.open(path, mode) as t:
            for name, data in members:
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                ti.mtime = 0
                t.addfile(ti, io.BytesIO(data))

    for year in (2010, 2012):
        d = os.path.join(out, str(year))
        os.makedirs(d, exist_ok=True)
        counts = [5, 3, 4, 6]
        n_valid, n_test = 7, 5
        idf = 'ILSVRC%d_ID' % year
        fields = [idf, 'WNID', 'words', 'gloss', 'num_children', 'children', 'wordnet_height', 'num_train_images']
        s = numpy.empty((6, 1), dtype=[(f, object) for f in fields])
        for i in range(6):
            leaf = i < 4
            kids = numpy.array([], dtype=float) if leaf else numpy.array([1.0, 2.0]) + 2 * (i - 4)
            s[i, 0] = (float(i + 1), 'n%08d' % (year + i), 'word %d' % i, 'gloss %d' % i, float(len(kids)), kids,
                       float(0 if leaf else 1), float(counts[i] if leaf else 0))
        mat = {'synsets': s}
        if year == 2010:
            mat['cost_matrix'] = numpy.ones((4, 4), dtype=numpy.uint8) - numpy.eye(4, dtype=numpy.uint8)
        b = io.BytesIO()
        scipy.io.savemat(b, mat, do_compression=(year == 2010))
        valid_ids = [int(x) for x in rng.randint(1, 5, size=n_valid)]
        test_ids = [int(x) for x in rng.randint(1, 5, size=n_test)]
        root = 'devkit-1.0' if year == 2010 else 'ILSVRC2012_devkit_t12'
        kit = [(root + '/COPYING', b'stand-in'), (root + '/data/meta.mat', b.getvalue()),
               (root + '/data/ILSVRC%d_validation_ground_truth.txt' % year, ('\n'.join(map(str, valid_ids)) + '\n').encode())]
        kitname = 'ILSVRC2010_devkit-1.0.tar.gz' if year == 2010 else 'ILSVRC2012_devkit_t12.tar.gz'
        tar(os.path.join(d, kitname), kit, 'w:gz')
        if year == 2010:
            with open(os.path.join(d, 'ILSVRC2010_test_ground_truth.txt'), 'w') as f:
                f.write('\n'.join(map(str, test_ids)) + '\n')
        value = iter(range(6, 250, 6))
        images = []
        inner = []
        for k, n in enumerate(counts):
            wnid = 'n%08d' % (year + k)
            members = []
            for j in range(n):
                name = '%s_%d.JPEG' % (wnid, 1000 - 7 * j)  # archive order differs from sorted order
                v = next(value)
                members.append((name, jpeg(v, gz=(year == 2010 and j == 1))))
                images.append(dict(set='train', name=name, cls=k, value=v))
            b = io.BytesIO()
            with tarfile.open(fileobj=b, mode='w') as t:
                for name, data in members:
                    ti = tarfile.TarInfo(name)
                    ti.size = len(data)
                    t.addfile(ti, io.BytesIO(data))
            inner.append((wnid + '.tar', b.getvalue()))
        train = 'ILSVRC2010_images_train.tar' if year == 2010 else 'ILSVRC2012_img_train.tar'
        tar(os.path.join(d, train), inner)
        for which, ids, fn in (('valid', valid_ids, 'ILSVRC2010_images_val.tar' if year == 2010 else 'ILSVRC2012_img_val.tar'),
                               ('test', test_ids, 'ILSVRC2010_images_test.tar' if year == 2010 else 'ILSVRC2012_img_test.tar')):
            members = []
            for i, id_ in enumerate(ids):
                name = 'ILSVRC%d_%s_%08d.JPEG' % (year, 'val' if which == 'valid' else 'test', i + 1)
                v = next(value)
                members.append((name, jpeg(v)))
                images.append(dict(set=which, name=name, cls=(id_ - 1 if (which == 'valid' or year == 2010) else None), value=v))
            tar(os.path.join(d, fn), members[::-1])  # the converter sorts by name
        if year == 2010:
            # One patch per set, replacing the image of that name.
            patched = [x for x in images if x['set'] == 'train'][6], [x for x in images if x['set'] == 'valid'][2], [x for x in images if x['set'] == 'test'][4]
            members = []
            for x, dirn in zip(patched, ('train', 'val', 'test')):
                x['value'] = 255 - x['value'] // 2
                members.append(('patch_images/%s/%s' % (dirn, x['name']), jpeg(x['value'])))
            tar(os.path.join(d, 'patch_images.tar'), members)
        manifest[str(year)] = images
    json.dump(manifest, sys.stdout)


if len(sys.argv) == 3 and sys.argv[1] == '--small':
    small(sys.argv[2])
    sys.exit(0)
rng = numpy.random.RandomState(0)
for year, kitname, metap, gtp in [(2010, 'ILSVRC2010_devkit-1.0.tar.gz', 'devkit-1.0/data/meta.mat', 'devkit-1.0/data/ILSVRC2010_validation_ground_truth.txt'),
                                  (2012, 'ILSVRC2012_devkit_t12.tar.gz', 'ILSVRC2012_devkit_t12/data/meta.mat', 'ILSVRC2012_devkit_t12/data/ILSVRC2012_validation_ground_truth.txt')]:
    n = 1010
    idf = 'ILSVRC%d_ID' % year
    fields = [idf, 'WNID', 'words', 'gloss', 'num_children', 'children', 'wordnet_height', 'num_train_images']
    s = numpy.empty((n, 1), dtype=[(f, object) for f in fields])
    ntr = [1261406 // 1000] * 1000
    ntr[0] += 1261406 - sum(ntr) if year == 2010 else 1281167 - sum(ntr)
    for i in range(n):
        leaf = i < 1000
        kids = numpy.array([], dtype=float) if leaf else numpy.array([1.0, 2.0, 3.0])
        s[i, 0] = (float(i + 1), 'n%08d' % i, 'w', 'g', float(len(kids)), kids, float(0 if leaf else 19), float(ntr[i] if leaf else 0))
    d = {'synsets': s}
    if year == 2010:
        c = rng.randint(1, 19, size=(1000, 1000)).astype(numpy.uint8); c = numpy.triu(c, 1); d['cost_matrix'] = c + c.T
    os.makedirs('data/' + os.path.dirname(metap), exist_ok=True)
    scipy.io.savemat('data/' + metap, d, do_compression=True)
    gt = '\n'.join(str(x) for x in list(range(1, 1001)) * 50).encode()
    with tarfile.open('data/' + kitname, 'w:gz') as t:
        t.add('data/' + metap, arcname=metap)
        ti = tarfile.TarInfo(gtp); ti.size = len(gt); t.addfile(ti, io.BytesIO(gt))
open('data/ILSVRC2010_test_ground_truth.txt', 'w').write('\n'.join(str(x) for x in list(range(1, 1001)) * 150))
with tarfile.open('data/ILSVRC2012_img_test.tar', 'w') as t:
    for i in range(100000):
        ti = tarfile.TarInfo('ILSVRC2012_test_%08d.JPEG' % (i + 1))
        t.addfile(ti, io.BytesIO(b''))
