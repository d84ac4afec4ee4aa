package converters

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

var (
	imageLabels  = []string{"batch", "channel", "height", "width"}
	targetLabels = []string{"batch", "index"}
)

// mnistFilename is convert_mnist's default name: mnist.hdf5, or
// mnist_<dtype>.hdf5 with --dtype.
func mnistFilename(opts Options) string {
	if opts.DType != "" {
		return "mnist_" + opts.DType + ".hdf5"
	}
	return "mnist.hdf5"
}

// fillMNIST is Fuel's convert_mnist: features (N, 1, 28, 28) uint8 (or
// the --dtype conversion), targets (N, 1) uint8; train then test.
func fillMNIST(w *h5.Writer, opts Options) error {
	files, err := findInput("mnist", opts.Directory, true,
		"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
	if err != nil {
		return err
	}
	var arrays [4]*nd.Array
	for i, f := range files {
		a, err := datasets.ReadIDXFile(f)
		if err != nil {
			return err
		}
		if a.DType() != nd.Uint8 {
			return fmt.Errorf("%s: %s elements, MNIST has unsigned bytes", f, a.DType())
		}
		if i%2 == 0 {
			if a.NDim() != 3 {
				return fmt.Errorf("%s: Wrong magic number reading MNIST image file (an image file has 3 dimensions, this one %v)", f, a.Shape)
			}
			a = &nd.Array{Shape: []int{a.Shape[0], 1, a.Shape[1], a.Shape[2]}, Data: a.Data}
			if a, err = mnistDType(a, opts.DType); err != nil {
				return err
			}
		} else {
			if a.NDim() != 1 {
				return fmt.Errorf("%s: Wrong magic number reading MNIST label file (a label file has 1 dimension, this one %v)", f, a.Shape)
			}
			a = &nd.Array{Shape: []int{a.Shape[0], 1}, Data: a.Data}
		}
		arrays[i] = a
	}
	return w.Fill([]h5.SplitData{
		{Split: "train", Source: "features", Data: arrays[0]},
		{Split: "train", Source: "targets", Data: arrays[1]},
		{Split: "test", Source: "features", Data: arrays[2]},
		{Split: "test", Source: "targets", Data: arrays[3]},
	}, map[string][]string{"features": imageLabels, "targets": targetLabels})
}

// mnistDType is read_mnist_images' dtype conversion: bool thresholds at
// 128; a float dtype divides by 255 in that dtype.
func mnistDType(a *nd.Array, dtype string) (*nd.Array, error) {
	px := a.Data.([]uint8)
	switch dtype {
	case "":
		return a, nil
	case "bool":
		out := nd.New(nd.Bool, a.Shape...)
		for i, v := range px {
			out.Data.([]bool)[i] = v >= 128
		}
		return out, nil
	case "float32":
		out := nd.New(nd.Float32, a.Shape...)
		for i, v := range px {
			out.F32()[i] = float32(v) / float32(255)
		}
		return out, nil
	case "float64":
		out := nd.New(nd.Float64, a.Shape...)
		for i, v := range px {
			out.F64()[i] = float64(v) / 255
		}
		return out, nil
	}
	return nil, fmt.Errorf("--dtype %q: want float32, float64 or bool", dtype)
}

// fillBinarizedMNIST is Fuel's convert_binarized_mnist: the .amat files
// (one image per line, 784 numbers) as features (N, 1, 28, 28) uint8;
// train, valid, test.
func fillBinarizedMNIST(w *h5.Writer, opts Options) error {
	files, err := findInput("binarized_mnist", opts.Directory, false,
		"binarized_mnist_train.amat", "binarized_mnist_valid.amat", "binarized_mnist_test.amat")
	if err != nil {
		return err
	}
	var data []h5.SplitData
	for i, split := range []string{"train", "valid", "test"} {
		rows, err := loadtxt(files[i], " ", nil)
		if err != nil {
			return err
		}
		a := nd.New(nd.Uint8, len(rows), 1, 28, 28)
		px := a.Data.([]uint8)
		for r, row := range rows {
			if len(row) != 784 {
				return fmt.Errorf("%s: line %d has %d numbers, want 784", files[i], r+1, len(row))
			}
			for j, v := range row {
				px[r*784+j] = uint8(int64(v)) // numpy's astype('uint8') of 0.0/1.0
			}
		}
		data = append(data, h5.SplitData{Split: split, Source: "features", Data: a})
	}
	return w.Fill(data, map[string][]string{"features": imageLabels})
}

// fillIris is Fuel's convert_iris: features (150, 4) float32, targets
// (150, 1) uint8 (setosa 0, versicolor 1, virginica 2); split "all".
func fillIris(w *h5.Writer, opts Options) error {
	files, err := findInput("iris", opts.Directory, false, "iris.data")
	if err != nil {
		return err
	}
	classes := map[string]float64{"Iris-setosa": 0, "Iris-versicolor": 1, "Iris-virginica": 2}
	rows, err := loadtxt(files[0], ",", map[int]func(string) (float64, error){
		4: func(s string) (float64, error) {
			c, ok := classes[s]
			if !ok {
				return 0, fmt.Errorf("unknown class %q", s)
			}
			return c, nil
		},
	})
	if err != nil {
		return err
	}
	features := nd.New(nd.Float32, len(rows), 4)
	targets := nd.New(nd.Uint8, len(rows), 1)
	for r, row := range rows {
		if len(row) != 5 {
			return fmt.Errorf("%s: row %d has %d columns, want 5", files[0], r+1, len(row))
		}
		for j := 0; j < 4; j++ {
			features.F32()[r*4+j] = float32(row[j])
		}
		targets.Data.([]uint8)[r] = uint8(row[4])
	}
	return w.Fill([]h5.SplitData{
		{Split: "all", Source: "features", Data: features},
		{Split: "all", Source: "targets", Data: targets},
	}, map[string][]string{"features": {"batch", "feature"}, "targets": targetLabels})
}

// loadtxt reads numbers as numpy.loadtxt does for these files: one row per
// non-blank line ('#' starts a comment), split on sep (" " means any
// whitespace), each field parsed as a float64 unless a converter is given
// for its column.
func loadtxt(path, sep string, conv map[int]func(string) (float64, error)) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		var fields []string
		if sep == " " {
			fields = strings.Fields(text)
		} else {
			fields = strings.Split(text, sep)
		}
		row := make([]float64, len(fields))
		for j, s := range fields {
			s = strings.TrimSpace(s)
			if c, ok := conv[j]; ok {
				row[j], err = c(s)
			} else {
				row[j], err = strconv.ParseFloat(s, 64)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: line %d, column %d: %v", path, line, j+1, err)
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data", path)
	}
	return rows, nil
}
