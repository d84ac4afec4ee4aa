"""Writes a small ILSVRC development kit meta.mat with scipy.io.savemat
(the reference MAT-file writer) and prints, as JSON, what scipy's loadmat
and Fuel's read_metadata_mat_file logic read back from it.

usage: make_meta_mat.py OUT.mat YEAR SEED COMPRESS > expected.json

The layout is the kit's: a 1-D struct array `synsets` (fields ILSVRC<YEAR>_ID,
WNID, words, gloss, num_children, children, wordnet_height,
num_train_images; the first synsets are leaves with training images, the
rest parents whose children are leaf IDs), and for 2010 a symmetric uint8
`cost_matrix` with a zero diagonal. Extra variables cover the other array
kinds: a cell array, a logical array, an int16 matrix, a non-ASCII string.
"""
import json
import sys

import numpy
import scipy.io

out, year, seed, compress = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
rng = numpy.random.RandomState(seed)
n_leaf, n_parent = 8 + rng.randint(5), 3 + rng.randint(3)
n = n_leaf + n_parent
idf = "ILSVRC%d_ID" % year
fields = [idf, "WNID", "words", "gloss", "num_children", "children", "wordnet_height", "num_train_images"]
synsets = numpy.empty((n, 1), dtype=[(f, object) for f in fields])
for i in range(n):
    leaf = i < n_leaf
    kids = [] if leaf else sorted(rng.choice(n_leaf, 1 + rng.randint(4), replace=False) + 1)
    synsets[i, 0] = (
        float(i + 1),
        "n%08d" % rng.randint(10 ** 8),
        "word %d, alias %d" % (i, rng.randint(100)),
        "a gloss of synset %d" % i + " x" * rng.randint(5),
        float(len(kids)),
        numpy.array(kids, dtype=float) if len(kids) != 1 else float(kids[0]),
        float(0 if leaf else 1 + rng.randint(19)),
        float(500 + rng.randint(800) if leaf else 0),
    )
mdict = {"synsets": synsets}
if year == 2010:
    c = rng.randint(1, 19, size=(n_leaf, n_leaf)).astype(numpy.uint8)
    c = numpy.triu(c, 1)
    mdict["cost_matrix"] = c + c.T
mdict["extra_cell"] = numpy.array([[1.5, "ab"], [numpy.arange(3, dtype=numpy.int16), numpy.zeros((0, 0))]], dtype=object)
mdict["extra_logical"] = numpy.array([[True, False, True]])
mdict["extra_int16"] = numpy.arange(-3, 3, dtype=numpy.int16).reshape(2, 3)
mdict["extra_text"] = "caf\u00e9 \u03bb"
scipy.io.savemat(out, mdict, do_compression=compress)

# What scipy reads back, and Fuel's read_metadata_mat_file on it.
mat = scipy.io.loadmat(out, squeeze_me=True)
s = mat["synsets"]
width = max(s["num_children"])
rows = []
for r in s:
    ch = [int(x) for x in numpy.atleast_1d(r["children"])]
    rows.append(dict(ID=int(r[idf]), WNID=str(r["WNID"]), WordnetHeight=int(r["wordnet_height"]),
                     Gloss=str(r["gloss"]), NumChildren=int(r["num_children"]), Words=str(r["words"]),
                     Children=ch + [-1] * (int(width) - len(ch)), NumTrainImages=int(r["num_train_images"])))
raw = scipy.io.loadmat(out)
cell = raw["extra_cell"]
expected = dict(
    Synsets=rows,
    Cost=mat["cost_matrix"].astype(int).tolist() if year == 2010 else None,
    CellDims=list(cell.shape),
    Cell=[float(cell[0, 0].ravel()[0]), str(cell[0, 1][0]), cell[1, 0].ravel().tolist(), list(cell[1, 1].shape)],
    Logical=raw["extra_logical"].ravel().tolist(),
    Int16=raw["extra_int16"].tolist(),
    Text=str(mat["extra_text"]),
    NTrain=int(s["num_train_images"].sum()),
)
print(json.dumps(expected))
