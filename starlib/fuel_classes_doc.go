package starlib

// More of fuel.datasets: Fuel's classes over adult.hdf5 and
// celeba_<format>.hdf5 (the converters that write them are not here yet).
//
//	Adult(which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
//	CelebA(which_format, which_sets, subset=None, load_in_memory=None, sort_indices=True, sources=None)
