package datasets

import (
	"fmt"

	"github.com/blocks-go/blocks/fuel/transformers"
)

// Adult is Fuel's Adult(which_sets): the UCI Adult census data,
// adult.hdf5 (as Fuel's convert_adult writes it), splits train (30,162)
// and test (15,060); features (N, 104), targets (N, 1). Loaded in memory
// by default; no default transformers.
func Adult(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("Adult", "which_sets="+pyTuple(whichSets)), "adult.hdf5",
		[]string{"train", "test"}, whichSets, true, opts, nil)
}

// CelebA is Fuel's CelebA(which_format, which_sets): the CelebFaces
// Attributes data, celeba_64.hdf5 (which_format "64": features uint8 (N,
// 3, 64, 64)) or celeba_aligned_cropped.hdf5 ("aligned_cropped": (N, 3,
// 218, 178)), targets uint8 (N, 40); splits train, valid and test. Read
// from the file by default (as Fuel); default transformers scale the
// features to [0, 1] in floatX.
func CelebA(whichFormat string, whichSets []string, opts H5Options) (*FileDataset, error) {
	name := call("CelebA", fmt.Sprintf("which_format=%q", whichFormat), "which_sets="+pyTuple(whichSets))
	if whichFormat != "64" && whichFormat != "aligned_cropped" {
		return nil, fmt.Errorf("datasets: %s: which_format must be '64' or 'aligned_cropped'", name)
	}
	return openFileDataset(name, "celeba_"+whichFormat+".hdf5",
		[]string{"train", "valid", "test"}, whichSets, false, opts, transformers.Uint8PixelsToFloatX([]string{"features"}))
}
