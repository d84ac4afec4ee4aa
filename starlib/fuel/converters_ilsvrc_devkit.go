package fuel

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// More of fuel.converters.ilsvrc2010, and fuel.converters.ilsvrc2012: the
// development kit readers:
//
//	read_metadata_mat_file(meta_mat)
//	    2010: (synsets, cost_matrix); 2012: synsets. meta_mat is the path of a meta.mat.
//	    synsets is Fuel's table as a dict of columns: ILSVRC20xx_ID, wordnet_height, num_children,
//	    num_train_images (1-D int16/uint16 arrays), WNID, gloss, words (lists of bytes),
//	    children (an int16 array (n, max num_children), padded with -1); cost_matrix is uint8.
//	read_devkit(f)
//	    2010: (synsets, cost_matrix, raw_valid_groundtruth); 2012: (synsets, raw_valid_groundtruth)
//	    from the development kit archive at path f; the ground truth is a 1-D int16 array.
//	prepare_metadata(devkit_archive, test_groundtruth_path)   (2010)
//	    (n_train, valid_groundtruth, test_groundtruth, wnid_map)
//	prepare_metadata(devkit_archive)                          (2012)
//	    (n_train, valid_groundtruth, n_test, wnid_map); the test archive is read beside the kit
//	DEVKIT_ARCHIVE, DEVKIT_META_PATH, TEST_GROUNDTRUTH (2010), TEST_IMAGES_TAR (2012)
//
// fuel.converters.ilsvrc2012 also has the converter:
//
//	convert_ilsvrc2012(directory, output_directory, output_filename="ilsvrc2012.hdf5",
//	                   shuffle_seed=config.default_seed)
func ilsvrc2012Module() *starlarkstruct.Module {
	return &starlarkstruct.Module{Name: "fuel.converters.ilsvrc2012", Members: starlark.StringDict{
		"convert_ilsvrc2012":     starlib.NewBuiltin("convert_ilsvrc2012", convertBuiltin("ilsvrc2012")),
		"read_metadata_mat_file": starlib.NewBuiltin("read_metadata_mat_file", readMetadataMatFile(2012)),
		"read_devkit":            starlib.NewBuiltin("read_devkit", readDevkit(2012)),
		"prepare_metadata":       starlib.NewBuiltin("prepare_metadata", prepareMetadata(2012)),
		"DEVKIT_ARCHIVE":         starlark.String(converters.ILSVRC2012DevkitArchive),
		"DEVKIT_META_PATH":       starlark.String(converters.ILSVRC2012DevkitMetaPath),
		"TEST_IMAGES_TAR":        starlark.String(converters.ILSVRC2012TestImagesTar),
	}}
}

// ilsvrc2010DevkitMembers are fuel.converters.ilsvrc2010's development
// kit names (its module, in converters_ilsvrc.go, adds them).
func ilsvrc2010DevkitMembers() starlark.StringDict {
	return starlark.StringDict{
		"read_metadata_mat_file": starlib.NewBuiltin("read_metadata_mat_file", readMetadataMatFile(2010)),
		"read_devkit":            starlib.NewBuiltin("read_devkit", readDevkit(2010)),
		"prepare_metadata":       starlib.NewBuiltin("prepare_metadata", prepareMetadata(2010)),
		"DEVKIT_ARCHIVE":         starlark.String(converters.ILSVRC2010DevkitArchive),
		"DEVKIT_META_PATH":       starlark.String(converters.ILSVRC2010DevkitMetaPath),
		"TEST_GROUNDTRUTH":       starlark.String(converters.ILSVRC2010TestGroundtruth),
	}
}

// synsetsValue is Fuel's synsets table as a dict of columns.
func synsetsValue(s []converters.ILSVRCSynset, year int) (*starlark.Dict, error) {
	n := len(s)
	width := 0
	if n > 0 {
		width = len(s[0].Children)
	}
	id, height, nch := nd.New(nd.Int16, n), nd.New(nd.Int16, n), nd.New(nd.Int16, n)
	ntrain, children := nd.New(nd.Uint16, n), nd.New(nd.Int16, n, width)
	var wnid, gloss, words []starlark.Value
	for i, r := range s {
		id.SetFlat(i, float64(r.ID))
		height.SetFlat(i, float64(r.WordnetHeight))
		nch.SetFlat(i, float64(r.NumChildren))
		ntrain.SetFlat(i, float64(r.NumTrainImages))
		for j, c := range r.Children {
			children.SetFlat(i*width+j, float64(c))
		}
		wnid = append(wnid, starlark.Bytes(r.WNID))
		gloss = append(gloss, starlark.Bytes(r.Gloss))
		words = append(words, starlark.Bytes(r.Words))
	}
	d := starlark.NewDict(8)
	for _, kv := range []struct {
		k string
		v starlark.Value
	}{
		{fmt.Sprintf("ILSVRC%d_ID", year), starlib.FromArray(id)}, {"WNID", starlark.NewList(wnid)},
		{"wordnet_height", starlib.FromArray(height)}, {"gloss", starlark.NewList(gloss)},
		{"num_children", starlib.FromArray(nch)}, {"words", starlark.NewList(words)},
		{"children", starlib.FromArray(children)}, {"num_train_images", starlib.FromArray(ntrain)},
	} {
		if err := d.SetKey(starlark.String(kv.k), kv.v); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func intsArray(v []int) starlark.Value {
	a := nd.New(nd.Int16, len(v))
	for i, x := range v {
		a.SetFlat(i, float64(x))
	}
	return starlib.FromArray(a)
}

func intsList(v []int) *starlark.List {
	out := make([]starlark.Value, len(v))
	for i, x := range v {
		out[i] = starlark.MakeInt(x)
	}
	return starlark.NewList(out)
}

func readMetadataMatFile(year int) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		path, err := readablePathArg(thread, b, args, kwargs, "meta_mat")
		if err != nil {
			return nil, err
		}
		meta, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		s, cost, err := converters.ReadILSVRCMetadataMat(meta, year)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		sv, err := synsetsValue(s, year)
		if err != nil {
			return nil, err
		}
		if year == 2012 {
			return sv, nil
		}
		return starlark.Tuple{sv, starlib.FromArray(cost)}, nil
	}
}

func readDevkit(year int) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		path, err := readablePathArg(thread, b, args, kwargs, "f")
		if err != nil {
			return nil, err
		}
		s, cost, gt, err := converters.ReadILSVRCDevkit(path, year)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		sv, err := synsetsValue(s, year)
		if err != nil {
			return nil, err
		}
		if year == 2012 {
			return starlark.Tuple{sv, intsArray(gt)}, nil
		}
		return starlark.Tuple{sv, starlib.FromArray(cost), intsArray(gt)}, nil
	}
}

func prepareMetadata(year int) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var kit, testGT string
		var err error
		if year == 2010 {
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "devkit_archive", &kit, "test_groundtruth_path", &testGT)
		} else {
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "devkit_archive", &kit)
		}
		if err != nil {
			return nil, err
		}
		for _, p := range []string{kit, testGT} {
			if p == "" {
				continue
			}
			if err := starlib.CheckRead(thread, p); err != nil {
				return nil, fmt.Errorf("%s: %w", b.Name(), err)
			}
		}
		var m *converters.ILSVRCMetadata
		if year == 2010 {
			m, err = converters.PrepareILSVRC2010Metadata(kit, testGT)
		} else {
			m, err = converters.PrepareILSVRC2012Metadata(kit)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		wnid := starlark.NewDict(len(m.WNIDMap))
		for _, s := range slices.Sorted(maps.Keys(m.WNIDMap)) {
			if err := wnid.SetKey(starlark.String(s), starlark.MakeInt(m.WNIDMap[s])); err != nil {
				return nil, err
			}
		}
		third := starlark.Value(starlark.MakeInt(m.NTest))
		if year == 2010 {
			third = intsList(m.TestGroundtruth)
		}
		return starlark.Tuple{starlark.MakeInt(m.NTrain), intsList(m.ValidGroundtruth), third, wnid}, nil
	}
}
