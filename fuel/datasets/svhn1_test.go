package datasets

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// pySVHN1 writes a small svhn_format_1.hdf5 the way Fuel's
// convert_svhn_format_1 lays it out (make_vlen_dataset: vlen sources,
// uint16 <source>_shapes and <source>_vlen_axis_labels scales named shapes
// and shape_labels, dims[0] labelled batch; the split attribute from
// create_split_array's recipe), with Debian's h5py.
const pySVHN1 = `
import sys
import h5py, numpy
f = h5py.File(sys.argv[1], 'w')
n = 5
sources = ('features', 'bbox_labels', 'bbox_heights', 'bbox_widths', 'bbox_lefts', 'bbox_tops')
dtypes = {'features': 'uint8', 'bbox_labels': 'uint8'}
labels = {'features': ('channel', 'height', 'width'), 'bbox_labels': ('bounding_box', 'index'),
          'bbox_heights': ('bounding_box', 'height'), 'bbox_widths': ('bounding_box', 'width'),
          'bbox_lefts': ('bounding_box', 'x'), 'bbox_tops': ('bounding_box', 'y')}
for s in sources:
    dt = numpy.dtype(dtypes.get(s, 'uint16'))
    d = f.create_dataset(s, (n,), dtype=h5py.special_dtype(vlen=dt))
    shapes = f.create_dataset(s + '_shapes', (n, len(labels[s])), dtype='uint16')
    al = f.create_dataset(s + '_vlen_axis_labels', (len(labels[s]),), dtype='S{}'.format(max(len(l) for l in labels[s])))
    al[...] = [l.encode('utf8') for l in labels[s]]
    d.dims.create_scale(shapes, 'shapes')
    d.dims[0].attach_scale(shapes)
    d.dims.create_scale(al, 'shape_labels')
    d.dims[0].attach_scale(al)
    d.dims[0].label = 'batch'
    for i in range(n):
        shape = (3, 4 + i, 2 + i) if s == 'features' else (1 + i % 3, 1)
        x = (numpy.arange(numpy.prod(shape)) * (i + 1)).astype(dt)
        d[i] = x.ravel()
        shapes[i] = shape
split = numpy.empty(3 * len(sources), dtype=[('split', 'a5'), ('source', 'a12'), ('start', numpy.int64), ('stop', numpy.int64),
    ('indices', h5py.special_dtype(ref=h5py.Reference)), ('available', numpy.bool_), ('comment', 'a1')])
k = 0
for sp, (a, b) in (('train', (0, 2)), ('test', (2, 3)), ('extra', (3, 5))):
    for s in sorted(sources):
        split[k]['split'] = sp.encode(); split[k]['source'] = s.encode(); split[k]['start'] = a; split[k]['stop'] = b
        split[k]['indices'] = h5py.Reference(); split[k]['available'] = True; split[k]['comment'] = b'.'
        k += 1
f.attrs['split'] = split
f.close()
`

func TestSVHNFormat1(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skipf("%s with h5py is needed: %v", py, err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, "-c", pySVHN1, filepath.Join(dir, "svhn_format_1.hdf5")).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	useDataPath(t, dir)
	d, err := SVHN(1, []string{"test", "extra"}, H5Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.NumExamples() != 3 || !slices.Equal(d.Sources(), []string{"bbox_heights", "bbox_labels", "bbox_lefts", "bbox_tops", "bbox_widths", "features"}) {
		t.Fatalf("%d examples, sources %v", d.NumExamples(), d.Sources())
	}
	if got := d.AxisLabels()["features"]; !slices.Equal(got, []string{"batch", "channel", "height", "width"}) {
		t.Errorf("features labels %q", got)
	}
	out, err := d.GetData(fuel.Request{Indices: []int{2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	feats := out[5].Data.([]*nd.Array)
	// Request 2 is example 4 (extra's second): shape (3, 8, 6), values 5*k.
	if !slices.Equal(feats[0].Shape, []int{3, 8, 6}) || feats[0].DType() != nd.Uint8 || feats[0].Data.([]uint8)[7] != 35 {
		t.Errorf("features[4] %s%v", feats[0].DType(), feats[0].Shape)
	}
	heights := out[0].Data.([]*nd.Array)
	if heights[1].DType() != nd.Uint16 || !slices.Equal(heights[1].Shape, []int{3, 1}) || heights[1].Data.([]uint16)[2] != 6 {
		t.Errorf("bbox_heights[2] %v", heights[1])
	}
}
