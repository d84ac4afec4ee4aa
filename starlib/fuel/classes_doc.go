package fuel

// More of fuel.datasets: Fuel's classes over adult.hdf5,
// celeba_<format>.hdf5 and dogs_vs_cats.hdf5 (DogsVsCats is also
// fuel.datasets.dogs_vs_cats.DogsVsCats).
//
//	Adult(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	CelebA(which_format, which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	DogsVsCats(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//
// and over ilsvrc2010.hdf5 and ilsvrc2012.hdf5 (also in
// fuel.datasets.imagenet), read from the file by default, with the default
// transformer ImagesFromBytes(color_mode="RGB") on encoded_images:
//
//	ILSVRC2010(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	ILSVRC2012(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
