package converters

import (
	"archive/zip"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// The Kaggle archives convert_dogs_vs_cats reads.
const (
	dogsVsCatsTrain = "dogs_vs_cats.train.zip"
	dogsVsCatsTest  = "dogs_vs_cats.test1.zip"
)

// fillDogsVsCats is Fuel's convert_dogs_vs_cats: image_features, a
// variable-length uint8 source of the images as (channel, height, width)
// (int32 image_features_shapes and S7 image_features_shapes_labels
// scales), the training images first in the order
// numpy.random.RandomState(123522).shuffle gives them, then the test
// images sorted by number; targets uint8 (N_train, 1), 0 for a cat and 1
// for a dog (the member name holds "cat" or not). Splits: train (both
// sources) and test (image_features only).
//
// Departures: Fuel's sizes are the constants 25,000 and 12,500 and it
// drops the first member of each archive as its directory; here the sizes
// are the archives' counts of files, and directory members (names ending
// in "/") are the ones dropped.
func fillDogsVsCats(w *h5.Writer, opts Options) error {
	files, err := findInput("dogs_vs_cats", opts.Directory, false, dogsVsCatsTrain, dogsVsCatsTest)
	if err != nil {
		return err
	}
	var zips [2]*zip.ReadCloser
	var names [2][]*zip.File
	for k, f := range files {
		z, err := zip.OpenReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Base(f), err)
		}
		defer z.Close()
		zips[k] = z
		for _, m := range z.File {
			if !strings.HasSuffix(m.Name, "/") {
				names[k] = append(names[k], m)
			}
		}
		if len(names[k]) == 0 {
			return fmt.Errorf("%s: no images", path.Base(f))
		}
	}
	train, test := names[0], names[1]
	rng := numpyrand.New(123522)
	rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	number := func(m *zip.File) (int, error) {
		base := path.Base(m.Name)
		n, err := strconv.Atoi(strings.TrimSuffix(base, path.Ext(base)))
		if err != nil {
			return 0, fmt.Errorf("%s: member %s is not named <number>.<ext>", dogsVsCatsTest, m.Name)
		}
		return n, nil
	}
	keys := make(map[*zip.File]int, len(test))
	for _, m := range test {
		if keys[m], err = number(m); err != nil {
			return err
		}
	}
	sort.SliceStable(test, func(i, j int) bool { return keys[test[i]] < keys[test[j]] })

	nTrain, nTest := len(train), len(test)
	if err := w.CreateVlenSource("image_features", nd.Uint8, nTrain+nTest, []string{"batch", "channel", "height", "width"}, h5.VlenLayout{}); err != nil {
		return err
	}
	targets := make([]uint8, nTrain)
	i := 0
	for k, list := range [][]*zip.File{train, test} {
		for _, m := range list {
			b, err := readZipMember(m)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path.Base(files[k]), m.Name, err)
			}
			im, err := decodeRGB(b)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path.Base(files[k]), m.Name, err)
			}
			if err := w.WriteVlenExample("image_features", i, im); err != nil {
				return err
			}
			if k == 0 && !strings.Contains(m.Name, "cat") {
				targets[i] = 1
			}
			i++
		}
	}
	if err := w.AddSource("targets", nd.FromSlice(targets, nTrain, 1), targetLabels); err != nil {
		return err
	}
	if err := w.AddSplit(h5.SplitDef{Name: "train", Ranges: map[string][2]int{"image_features": {0, nTrain}, "targets": {0, nTrain}}}); err != nil {
		return err
	}
	return w.AddSplit(h5.SplitDef{Name: "test", Ranges: map[string][2]int{"image_features": {nTrain, nTrain + nTest}}})
}
