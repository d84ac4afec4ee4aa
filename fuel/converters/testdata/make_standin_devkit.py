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
"""
import numpy, scipy.io, tarfile, io, os
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
