package datasets

import "github.com/blocks-go/blocks/fuel/transformers"

// DogsVsCats is Fuel's DogsVsCats(which_sets): the Kaggle Dogs vs. Cats
// images, dogs_vs_cats.hdf5 (as convert_dogs_vs_cats writes it), splits
// train (25,000 images and their targets, 0 for a cat and 1 for a dog)
// and test (12,500 images, no targets); image_features is
// variable-length, uint8 (channel, height, width). Read from the file by
// default (as Fuel); the default transformer scales image_features by
// 1/255 (Fuel's ScaleAndShift(1 / 255.0, 0)). There is no valid split:
// make one with subset.
func DogsVsCats(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("DogsVsCats", "which_sets="+pyTuple(whichSets)), "dogs_vs_cats.hdf5",
		[]string{"train", "test"}, whichSets, false, opts,
		[]transformers.Spec{{Name: "ScaleAndShift", Scale: 1 / 255.0, Shift: 0, WhichSources: []string{"image_features"}}})
}
