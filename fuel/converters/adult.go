package converters

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// adultVariables are the 14 attributes of a UCI Adult record, in file
// order; adultContinuous are the numeric ones (the others are one-hot
// encoded).
var (
	adultVariables = []string{
		"age", "workclass", "fnlwgt", "education", "education-num",
		"marital-status", "occupation", "relationship", "race", "sex",
		"capital-gain", "capital-loss", "hours-per-week", "native-country",
	}
	adultContinuous = map[string]bool{
		"age": true, "fnlwgt": true, "education-num": true, "capital-gain": true,
		"capital-loss": true, "hours-per-week": true,
	}
)

// fillAdult is Fuel's convert_adult: adult.data (train, its last line
// dropped) and adult.test (test, its first and last lines dropped);
// records with a missing value ('?') are left out. Each file is encoded
// on its own: continuous attributes as floats, categorical ones one-hot
// over the values the file holds. Fuel then appends a zero column to the
// test features (its native-country has one value fewer than train's).
// features float64 (N, 104), targets bool (N, 1) (income '>50K').
//
// Departure: Fuel orders a categorical attribute's one-hot columns by a
// Python set (the order of string hashes, which varies between runs);
// here they are in sorted order, so the file is the same on every run.
func fillAdult(w *h5.Writer, opts Options) error {
	files, err := findInput("adult", opts.Directory, false, "adult.data", "adult.test")
	if err != nil {
		return err
	}
	var feats, targs [2]*nd.Array
	for k, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(b), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1] // SplitAfter's empty tail: not a line
		}
		first := 0
		if k == 1 {
			first = 1 // adult.test's first line is "|1x3 Cross validator"
		}
		if len(lines) < first+1 {
			return fmt.Errorf("%s: %d lines, no records", filepath.Base(path), len(lines))
		}
		if feats[k], targs[k], err = adultEncode(filepath.Base(path), lines[first:len(lines)-1], first+1); err != nil {
			return err
		}
	}
	// The extra zero column of the test features.
	test := feats[1]
	n, f := test.Shape[0], test.Shape[1]
	padded := nd.New(nd.Float64, n, f+1)
	src, dst := test.Data.([]float64), padded.Data.([]float64)
	for i := 0; i < n; i++ {
		copy(dst[i*(f+1):], src[i*f:(i+1)*f])
	}
	if feats[0].Shape[1] != f+1 {
		return fmt.Errorf("adult.data encodes to %d features, adult.test to %d (+1); they must agree",
			feats[0].Shape[1], f)
	}
	return w.Fill([]h5.SplitData{
		{Split: "train", Source: "features", Data: feats[0]},
		{Split: "train", Source: "targets", Data: targs[0]},
		{Split: "test", Source: "features", Data: padded},
		{Split: "test", Source: "targets", Data: targs[1]},
	}, map[string][]string{"features": {"batch", "feature"}, "targets": targetLabels})
}

// adultEncode encodes the records of one file; firstLine is the line
// number of lines[0], for errors.
func adultEncode(file string, lines []string, firstLine int) (*nd.Array, *nd.Array, error) {
	var records [][]string
	for i, l := range lines {
		if strings.Contains(l, "?") {
			continue
		}
		l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		fields := strings.Split(l, ", ")
		if len(fields) != len(adultVariables)+1 {
			return nil, nil, fmt.Errorf("%s: line %d: %d fields separated by \", \", want %d (14 attributes and the income)",
				file, firstLine+i, len(fields), len(adultVariables)+1)
		}
		records = append(records, fields)
	}
	n := len(records)
	if n == 0 {
		return nil, nil, fmt.Errorf("%s: no complete record", file)
	}
	var columns [][]float64 // column-major pieces
	for j, v := range adultVariables {
		if adultContinuous[v] {
			col := make([]float64, n)
			for i, r := range records {
				x, err := strconv.ParseFloat(r[j], 64)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %s of a record (%q) is not a number", file, v, r[j])
				}
				col[i] = x
			}
			columns = append(columns, col)
			continue
		}
		seen := map[string]bool{}
		for _, r := range records {
			seen[r[j]] = true
		}
		values := make([]string, 0, len(seen))
		for s := range seen {
			values = append(values, s)
		}
		sort.Strings(values)
		index := map[string]int{}
		for i, s := range values {
			index[s] = i
		}
		onehot := make([][]float64, len(values))
		for c := range onehot {
			onehot[c] = make([]float64, n)
		}
		for i, r := range records {
			onehot[index[r[j]]][i] = 1
		}
		columns = append(columns, onehot...)
	}
	f := len(columns)
	x := nd.New(nd.Float64, n, f)
	xd := x.Data.([]float64)
	for c, col := range columns {
		for i, v := range col {
			xd[i*f+c] = v
		}
	}
	y := make([]bool, n)
	for i, r := range records {
		y[i] = strings.HasPrefix(r[len(r)-1], ">")
	}
	return x, nd.FromSlice(y, n, 1), nil
}
