package converters

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// tarMembers reads the named members of a .tar.gz, unpickled.
func tarMembers(path string, names ...string) (map[string]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]map[string]any{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !want[h.Name] {
			continue
		}
		v, err := unpickle(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, h.Name, err)
		}
		d, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s: a pickled %T, want a dict", path, h.Name, v)
		}
		out[h.Name] = d
	}
	for _, n := range names {
		if out[n] == nil {
			return nil, fmt.Errorf("%s: no member %s", path, n)
		}
	}
	return out, nil
}

// images reads batch["data"] as (N, 3, 32, 32): uint8 (N, 3072) as the
// real archives hold it, or any uint8 array of N*3072 elements, such as
// the (N, 3, 32, 32) batches of Fuel's test (Fuel reshapes what it reads
// to (-1, 3, 32, 32)).
func images(batch map[string]any, where string) (*nd.Array, error) {
	a, ok := batch["data"].(*pyArray)
	if !ok {
		return nil, fmt.Errorf("%s: no numpy array under 'data'", where)
	}
	x, err := a.toND()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if x.DType() != nd.Uint8 || x.NDim() < 2 || nd.Prod(x.Shape[1:]) != 3*32*32 {
		return nil, fmt.Errorf("%s: data is %s%v, want uint8 (N, 3072) or (N, 3, 32, 32)", where, x.DType(), x.Shape)
	}
	return x.Reshape(x.Shape[0], 3, 32, 32)
}

// labels reads batch[key] (a list of ints, or an array) as uint8 (N, 1).
func labels(batch map[string]any, key, where string) (*nd.Array, error) {
	var vals []int64
	switch l := batch[key].(type) {
	case *[]any:
		for _, v := range *l {
			i, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("%s: %s holds %T", where, key, v)
			}
			vals = append(vals, i)
		}
	case *pyArray:
		a, err := l.toND()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, key, err)
		}
		vals = a.Astype(nd.Int64).I64()
	default:
		return nil, fmt.Errorf("%s: no list under %q", where, key)
	}
	out := nd.New(nd.Uint8, len(vals), 1)
	for i, v := range vals {
		out.Data.([]uint8)[i] = uint8(v) // numpy.array(labels, dtype=uint8)
	}
	return out, nil
}

// fillCIFAR10 is Fuel's convert_cifar10: cifar-10-python.tar.gz's five
// training batches then the test batch; features uint8 (N, 3, 32, 32),
// targets uint8 (N, 1).
func fillCIFAR10(w *h5.Writer, opts Options) error {
	files, err := findInput("cifar10", opts.Directory, false, "cifar-10-python.tar.gz")
	if err != nil {
		return err
	}
	names := []string{}
	for i := 1; i <= 5; i++ {
		names = append(names, fmt.Sprintf("cifar-10-batches-py/data_batch_%d", i))
	}
	names = append(names, "cifar-10-batches-py/test_batch")
	batches, err := tarMembers(files[0], names...)
	if err != nil {
		return err
	}
	var feats, targs []*nd.Array
	for _, n := range names {
		x, err := images(batches[n], n)
		if err != nil {
			return err
		}
		y, err := labels(batches[n], "labels", n)
		if err != nil {
			return err
		}
		if y.Shape[0] != x.Shape[0] {
			return fmt.Errorf("%s: %d images, %d labels", n, x.Shape[0], y.Shape[0])
		}
		feats, targs = append(feats, x), append(targs, y)
	}
	trainX, err := nd.Concat(feats[:5])
	if err != nil {
		return err
	}
	trainY, err := nd.Concat(targs[:5])
	if err != nil {
		return err
	}
	return w.Fill([]h5.SplitData{
		{Split: "train", Source: "features", Data: trainX},
		{Split: "train", Source: "targets", Data: trainY},
		{Split: "test", Source: "features", Data: feats[5]},
		{Split: "test", Source: "targets", Data: targs[5]},
	}, map[string][]string{"features": imageLabels, "targets": targetLabels})
}

// fillCIFAR100 is Fuel's convert_cifar100: cifar-100-python.tar.gz's train
// and test; features, coarse_labels and fine_labels.
func fillCIFAR100(w *h5.Writer, opts Options) error {
	files, err := findInput("cifar100", opts.Directory, false, "cifar-100-python.tar.gz")
	if err != nil {
		return err
	}
	batches, err := tarMembers(files[0], "cifar-100-python/train", "cifar-100-python/test")
	if err != nil {
		return err
	}
	var data []h5.SplitData
	for _, split := range []string{"train", "test"} {
		n := "cifar-100-python/" + split
		x, err := images(batches[n], n)
		if err != nil {
			return err
		}
		data = append(data, h5.SplitData{Split: split, Source: "features", Data: x})
		for _, key := range []string{"coarse_labels", "fine_labels"} {
			y, err := labels(batches[n], key, n)
			if err != nil {
				return err
			}
			if y.Shape[0] != x.Shape[0] {
				return fmt.Errorf("%s: %d images, %d %s", n, x.Shape[0], y.Shape[0], key)
			}
			data = append(data, h5.SplitData{Split: split, Source: key, Data: y})
		}
	}
	return w.Fill(data, map[string][]string{"features": imageLabels, "coarse_labels": targetLabels, "fine_labels": targetLabels})
}
