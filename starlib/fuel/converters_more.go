package fuel

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// More of Fuel's converter modules (the work is fuel/converters'):
//
// fuel.converters.adult: convert_adult(directory, output_directory, output_filename="adult.hdf5")
// fuel.converters.celeba:
//
//	convert_celeba(which_format, directory, output_directory, output_filename=None)
//	    which_format "aligned_cropped" or "64"; the file is celeba_<which_format>.hdf5 by default
//	convert_celeba_aligned_cropped(directory, output_directory, output_filename="celeba_aligned_cropped.hdf5")
//	convert_celeba_64(directory, output_directory, output_filename="celeba_64.hdf5")
//
// fuel.converters.dogs_vs_cats: convert_dogs_vs_cats(directory, output_directory, output_filename="dogs_vs_cats.hdf5")
//
// and the dataset class fuel.datasets.dogs_vs_cats.DogsVsCats(which_sets)
// (also in fuel.datasets).
func convertersMoreModules() (mods []*starlarkstruct.Module) {
	module := func(name string, fns ...string) {
		members := starlark.StringDict{}
		for i := 0; i < len(fns); i += 2 {
			members[fns[i]] = starlib.NewBuiltin(fns[i], convertBuiltin(fns[i+1]))
		}
		mods = append(mods, &starlarkstruct.Module{Name: "fuel.converters." + name, Members: members})
	}
	module("adult", "convert_adult", "adult")
	module("celeba", "convert_celeba", "celeba",
		"convert_celeba_aligned_cropped", "celeba/aligned_cropped",
		"convert_celeba_64", "celeba/64")
	module("dogs_vs_cats", "convert_dogs_vs_cats", "dogs_vs_cats")
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets.dogs_vs_cats", Members: starlark.StringDict{
		"DogsVsCats": starlib.NewBuiltin("DogsVsCats", fileDatasetBuiltin),
	}})
	return
}
