package converters

import (
	"fmt"
	"path/filepath"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// fillSVHN is Fuel's convert_svhn: format 2 (cropped digits:
// {train,test,extra}_32x32.mat, X (32, 32, 3, N) transposed to (N, 3, 32,
// 32), y (N, 1) with 10 mapped to 0); format 1 is fillSVHN1.
func fillSVHN(w *h5.Writer, opts Options) error {
	switch opts.Format {
	case 2:
	case 1:
		return fillSVHN1(w, opts)
	default:
		return fmt.Errorf("svhn: which_format must be 1 or 2, got %d", opts.Format)
	}
	files, err := findInput("svhn", opts.Directory, false, "train_32x32.mat", "test_32x32.mat", "extra_32x32.mat")
	if err != nil {
		return err
	}
	var feats, targs []h5.SplitData
	for i, split := range []string{"train", "test", "extra"} {
		vars, err := loadMat(files[i])
		if err != nil {
			return err
		}
		x, y := vars["X"], vars["y"]
		if x == nil || y == nil || len(x.dims) != 4 || x.dims[2] != 3 || len(y.dims) != 2 || y.dims[0] != x.dims[3] {
			return fmt.Errorf("%s: want X (32, 32, 3, N) and y (N, 1)", filepath.Base(files[i]))
		}
		rows, cols, n := x.dims[0], x.dims[1], x.dims[3]
		// X.transpose(3, 2, 0, 1): out[n, c, r, k] = X[r, k, c, n].
		out := nd.New(x.data.DType(), n, 3, rows, cols)
		src := x.data
		o := 0
		for e := 0; e < n; e++ {
			for c := 0; c < 3; c++ {
				for r := 0; r < rows; r++ {
					for k := 0; k < cols; k++ {
						out.SetFlat(o, src.Flat(x.at(r, k, c, e)))
						o++
					}
				}
			}
		}
		t := nd.New(y.data.DType(), y.dims[0], y.dims[1])
		for r := 0; r < y.dims[0]; r++ {
			for c := 0; c < y.dims[1]; c++ {
				v := y.data.Flat(y.at(r, c))
				if v == 10 {
					v = 0
				}
				t.SetFlat(r*y.dims[1]+c, v)
			}
		}
		feats = append(feats, h5.SplitData{Split: split, Source: "features", Data: out})
		targs = append(targs, h5.SplitData{Split: split, Source: "targets", Data: t})
	}
	return w.Fill(append(feats, targs...), map[string][]string{"features": imageLabels, "targets": targetLabels})
}

// fillSilhouettes is Fuel's convert_silhouettes: caltech101_silhouettes_
// <size>_split1.mat's {train,val,test}_data reshaped to (N, 1, size, size)
// and {train,val,test}_labels, in the dtypes the file stores.
func fillSilhouettes(w *h5.Writer, opts Options) error {
	if opts.Size != 16 && opts.Size != 28 {
		return fmt.Errorf("caltech101_silhouettes: size must be 16 or 28, got %d", opts.Size)
	}
	files, err := findInput("caltech101_silhouettes", opts.Directory, false, fmt.Sprintf("caltech101_silhouettes_%d_split1.mat", opts.Size))
	if err != nil {
		return err
	}
	vars, err := loadMat(files[0])
	if err != nil {
		return err
	}
	var data []h5.SplitData
	for _, s := range [][2]string{{"train", "train"}, {"valid", "val"}, {"test", "test"}} {
		x, y := vars[s[1]+"_data"], vars[s[1]+"_labels"]
		if x == nil || y == nil || len(x.dims) != 2 || x.dims[1] != opts.Size*opts.Size || len(y.dims) != 2 || y.dims[0] != x.dims[0] {
			return fmt.Errorf("%s: want %s_data (N, %d) and %s_labels (N, 1)", filepath.Base(files[0]), s[1], opts.Size*opts.Size, s[1])
		}
		n, size := x.dims[0], opts.Size
		f := nd.New(x.data.DType(), n, 1, size, size)
		for e := 0; e < n; e++ {
			for j := 0; j < size*size; j++ {
				f.SetFlat(e*size*size+j, x.data.Flat(x.at(e, j)))
			}
		}
		t := nd.New(y.data.DType(), y.dims[0], y.dims[1])
		for r := 0; r < y.dims[0]; r++ {
			for c := 0; c < y.dims[1]; c++ {
				t.SetFlat(r*y.dims[1]+c, y.data.Flat(y.at(r, c)))
			}
		}
		data = append(data, h5.SplitData{Split: s[0], Source: "features", Data: f}, h5.SplitData{Split: s[0], Source: "targets", Data: t})
	}
	return w.Fill(data, map[string][]string{"features": imageLabels, "targets": targetLabels})
}
