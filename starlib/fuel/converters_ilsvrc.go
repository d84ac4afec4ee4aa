package fuel

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/starlib"
)

// fuel.converters.ilsvrc2010 (the converter, the archive-reading parts;
// the converter core is in converters_ilsvrc_process.go, the development
// kit readers in converters_ilsvrc_devkit.go):
//
//	convert_ilsvrc2010(directory, output_directory, output_filename="ilsvrc2010.hdf5",
//	                   shuffle_seed=config.default_seed)
//	    the whole conversion; returns (output_path,)
//	extract_patch_images(f, which_set)
//	    the replacement images of a patch_images.tar for which_set ("train", "valid" or "test"):
//	    a dict of file name (without path) -> bytes
//	load_from_tar_or_patch(tar, image_filename, patch_images)
//	    (bytes, patched): the image from patch_images (by base name) or from the archive at the
//	    path tar (Fuel takes an open TarFile), gunzipped when the member is a gzipped image
func convertersIlsvrcModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{
		"convert_ilsvrc2010":     starlib.NewBuiltin("convert_ilsvrc2010", convertBuiltin("ilsvrc2010")),
		"extract_patch_images":   starlib.NewBuiltin("extract_patch_images", extractPatchImages),
		"load_from_tar_or_patch": starlib.NewBuiltin("load_from_tar_or_patch", loadFromTarOrPatch),
		"prepare_hdf5_file":      starlib.NewBuiltin("prepare_hdf5_file", prepareHDF5File),
		"process_train_set":      starlib.NewBuiltin("process_train_set", processTrainSet),
		"process_other_set":      starlib.NewBuiltin("process_other_set", processOtherSet),
	}
	for k, v := range ilsvrc2010DevkitMembers() {
		members[k] = v
	}
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.converters.ilsvrc2010", Members: members})
	mods = append(mods, ilsvrc2012Module())
	return
}

func extractPatchImages(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var f, whichSet string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "f", &f, "which_set", &whichSet); err != nil {
		return nil, err
	}
	if err := starlib.CheckRead(thread, f); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	images, err := converters.ExtractPatchImages(f, whichSet)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	names := make([]string, 0, len(images))
	for n := range images {
		names = append(names, n)
	}
	sort.Strings(names)
	d := starlark.NewDict(len(names))
	for _, n := range names {
		if err := d.SetKey(starlark.String(n), starlark.Bytes(images[n])); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func loadFromTarOrPatch(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var tarPath, filename string
	var patchImages *starlark.Dict
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tar", &tarPath, "image_filename", &filename, "patch_images", &patchImages); err != nil {
		return nil, err
	}
	patches := map[string][]byte{}
	for _, item := range patchImages.Items() {
		k, ok := starlark.AsString(item[0])
		if !ok {
			return nil, fmt.Errorf("%s: patch_images: a key %s, want file names (strings)", b.Name(), item[0].Type())
		}
		v, ok := item[1].(starlark.Bytes)
		if !ok {
			return nil, fmt.Errorf("%s: patch_images[%q]: %s, want bytes", b.Name(), k, item[1].Type())
		}
		patches[k] = []byte(v)
	}
	if err := starlib.CheckRead(thread, tarPath); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	data, patched, err := converters.LoadFromTarOrPatch(tarPath, filename, patches)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.Tuple{starlark.Bytes(data), starlark.Bool(patched)}, nil
}
