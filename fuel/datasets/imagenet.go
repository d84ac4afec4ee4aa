package datasets

import "github.com/blocks-go/blocks/fuel/transformers"

// ILSVRC2010 is Fuel's ILSVRC2010(which_sets) (fuel.datasets.imagenet):
// ilsvrc2010.hdf5 as convert_ilsvrc2010 writes it, splits train, valid
// and test; sources encoded_images (each example a JPEG's bytes, uint8),
// filenames (byte strings, (N, 1)) and targets (int16, (N, 1)). Read from
// the file by default (as Fuel: load_in_memory False); the default
// transformer decodes encoded_images to RGB images, uint8 (3, height,
// width) (Fuel's rgb_images_from_encoded_bytes).
func ILSVRC2010(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("ILSVRC2010", "which_sets="+pyTuple(whichSets)), "ilsvrc2010.hdf5",
		[]string{"train", "valid", "test"}, whichSets, false, opts,
		transformers.RGBImagesFromEncodedBytes([]string{"encoded_images"}))
}

// ILSVRC2012 is Fuel's ILSVRC2012(which_sets): ilsvrc2012.hdf5 as
// convert_ilsvrc2012 writes it; as ILSVRC2010, except that the test split
// has no targets.
func ILSVRC2012(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("ILSVRC2012", "which_sets="+pyTuple(whichSets)), "ilsvrc2012.hdf5",
		[]string{"train", "valid", "test"}, whichSets, false, opts,
		transformers.RGBImagesFromEncodedBytes([]string{"encoded_images"}))
}
