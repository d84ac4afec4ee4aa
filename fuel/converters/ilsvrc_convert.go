package converters

import (
	"fmt"
	"path/filepath"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// This file is Fuel's convert_ilsvrc2010 and convert_ilsvrc2012 (and
// ilsvrc2012's prepare_hdf5_file): the metadata from the development kit,
// then the training, validation and test sets into one file.

// The image archives the converters read, as Fuel names them.
const (
	ILSVRC2010PatchImagesTar = "patch_images.tar"
	ILSVRC2010TrainImagesTar = "ILSVRC2010_images_train.tar"
	ILSVRC2010ValidImagesTar = "ILSVRC2010_images_val.tar"
	ILSVRC2010TestImagesTar  = "ILSVRC2010_images_test.tar"
	ILSVRC2012TrainImagesTar = "ILSVRC2012_img_train.tar"
	ILSVRC2012ValidImagesTar = "ILSVRC2012_img_val.tar"
)

// shuffleSeed is the seed of the training set's order on disk:
// opts.ShuffleSeed, else Fuel's config.default_seed.
func shuffleSeed(opts Options) (uint32, error) {
	seed := config.DefaultSeed()
	if opts.ShuffleSeed != nil {
		seed = *opts.ShuffleSeed
	}
	if seed < 0 || seed >= 1<<32 {
		return 0, fmt.Errorf("shuffle_seed %d: numpy's RandomState takes a seed in [0, 2**32)", seed)
	}
	return uint32(seed), nil
}

// fillILSVRC2010 is convert_ilsvrc2010(directory, output_directory,
// output_filename='ilsvrc2010.hdf5', shuffle_seed=config.default_seed).
func fillILSVRC2010(w *h5.Writer, opts Options) error {
	paths, err := findInput("ilsvrc2010", opts.Directory, false,
		ILSVRC2010TestGroundtruth, ILSVRC2010DevkitArchive,
		ILSVRC2010TrainImagesTar, ILSVRC2010ValidImagesTar, ILSVRC2010TestImagesTar, ILSVRC2010PatchImagesTar)
	if err != nil {
		return err
	}
	testGT, devkit, train, valid, test, patch := paths[0], paths[1], paths[2], paths[3], paths[4], paths[5]
	seed, err := shuffleSeed(opts)
	if err != nil {
		return err
	}
	m, err := PrepareILSVRC2010Metadata(devkit, testGT)
	if err != nil {
		return err
	}
	nValid, nTest := len(m.ValidGroundtruth), len(m.TestGroundtruth)
	if err := PrepareILSVRC2010File(w, m.NTrain, nValid, nTest); err != nil {
		return err
	}
	if err := ProcessTrainSet(w, train, patch, m.NTrain, m.WNIDMap, &seed); err != nil {
		return fmt.Errorf("training set: %w", err)
	}
	if err := ProcessOtherSet(w, "valid", valid, patch, m.ValidGroundtruth, m.NTrain); err != nil {
		return fmt.Errorf("validation set: %w", err)
	}
	if err := ProcessOtherSet(w, "test", test, patch, m.TestGroundtruth, m.NTrain+nValid); err != nil {
		return fmt.Errorf("test set: %w", err)
	}
	return nil
}

// PrepareILSVRC2012File is ilsvrc2012's prepare_hdf5_file(hdf5_file,
// n_train, n_valid, n_test): as ILSVRC2010's, except that `targets` has
// only the n_train + n_valid labelled rows and the test split provides
// `encoded_images` and `filenames` only (the test labels are not public).
func PrepareILSVRC2012File(w *h5.Writer, nTrain, nValid, nTest int) error {
	if nTrain < 0 || nValid < 0 || nTest < 0 {
		return fmt.Errorf("prepare_hdf5_file: negative set size (n_train %d, n_valid %d, n_test %d)", nTrain, nValid, nTest)
	}
	n, labeled := nTrain+nValid+nTest, nTrain+nValid
	if err := w.CreateVlenSource("encoded_images", nd.Uint8, n, nil, h5.VlenLayout{Flat: true}); err != nil {
		return err
	}
	if err := w.CreateSource("targets", nd.Int16, []int{labeled, 1}, nil); err != nil {
		return err
	}
	if err := w.CreateStringSource("filenames", ILSVRC2010FilenameWidth, []int{n, 1}, nil); err != nil {
		return err
	}
	for _, s := range []h5.SplitDef{
		{Name: "train", Start: 0, Stop: nTrain},
		{Name: "valid", Start: nTrain, Stop: labeled},
		{Name: "test", Start: labeled, Stop: n, Sources: []string{"encoded_images", "filenames"}},
	} {
		if err := w.AddSplit(s); err != nil {
			return err
		}
	}
	return nil
}

// fillILSVRC2012 is convert_ilsvrc2012(directory, output_directory,
// output_filename='ilsvrc2012.hdf5', shuffle_seed=config.default_seed).
// ILSVRC2012 has no patch images (Fuel passes an empty TAR); its test
// images have no labels, so no targets are written for them.
func fillILSVRC2012(w *h5.Writer, opts Options) error {
	paths, err := findInput("ilsvrc2012", opts.Directory, false,
		ILSVRC2012DevkitArchive, ILSVRC2012TrainImagesTar, ILSVRC2012ValidImagesTar, ILSVRC2012TestImagesTar)
	if err != nil {
		return err
	}
	devkit, train, valid, test := paths[0], paths[1], paths[2], paths[3]
	seed, err := shuffleSeed(opts)
	if err != nil {
		return err
	}
	// Fuel counts the test archive in the working directory; the
	// converter's input directory is where it is (see
	// PrepareILSVRC2012Metadata).
	m, err := PrepareILSVRC2012Metadata(devkit)
	if err != nil {
		return err
	}
	if filepath.Dir(devkit) != filepath.Dir(test) {
		return fmt.Errorf("the test archive %s is not beside the development kit %s", test, devkit)
	}
	nValid := len(m.ValidGroundtruth)
	if err := PrepareILSVRC2012File(w, m.NTrain, nValid, m.NTest); err != nil {
		return err
	}
	noPatches := map[string][]byte{}
	if err := processTrainSet(w, train, noPatches, m.NTrain, m.WNIDMap, &seed); err != nil {
		return fmt.Errorf("training set: %w", err)
	}
	if err := processOtherSet(w, valid, noPatches, m.ValidGroundtruth, nValid, m.NTrain); err != nil {
		return fmt.Errorf("validation set: %w", err)
	}
	if err := processOtherSet(w, test, noPatches, nil, m.NTest, m.NTrain+nValid); err != nil {
		return fmt.Errorf("test set: %w", err)
	}
	return nil
}
