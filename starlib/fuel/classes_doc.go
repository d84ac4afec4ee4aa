package fuel

// More of fuel.datasets: Fuel's classes over adult.hdf5,
// celeba_<format>.hdf5 and dogs_vs_cats.hdf5 (DogsVsCats is also
// fuel.datasets.dogs_vs_cats.DogsVsCats).
//
//	Adult(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	CelebA(which_format, which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	DogsVsCats(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
