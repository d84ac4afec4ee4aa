package starlib_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blocks-go/blocks/numpyrand"
)

func init() { fixtures["ilsvrc2010_sets"] = ilsvrc2010SetsFixture }

// ilsvrc2010SetsFixture writes the archives of test_convert_ilsvrc2010.py's
// test_process_train_set and test_process_other_set:
//
//   - ILSVRC2010_images_train.tar: create_fake_tar_of_tars(20150925, 5,
//     min_num_images=45, max_num_images=55): 5 inner TARs n00000000.tar to
//     n00000004.tar (upstream names them by Python hashes), the k-th of
//     RandomState(20150925+k).random_integers(45, 55) random JPEGs (the
//     generator's first draw, as upstream), about half of them gzipped,
//     named by their number over all the TARs in 27 digits (upstream: SHA-1
//     digests of that number);
//   - patch_train.tar: the first 10 of all the JPEG names shuffled by
//     RandomState(20150925), one-value images under train/;
//   - ILSVRC2010_images_val.tar: create_fake_jpeg_tar(3, 30, 40,
//     gzip_probability=0): RandomState(3).random_integers(30, 40) random
//     JPEGs 000...0.JPEG, 000...1.JPEG, ...;
//   - patch_valid.tar: the first 15 of those names shuffled by
//     RandomState(20151202), under val/.
func ilsvrc2010SetsFixture(dir string) error {
	var outerNames, all []string
	var outerData [][]byte
	for k := range 5 {
		rng := numpyrand.New(uint32(20150925 + k))
		n := int(rng.Randint(45, 56))
		var names []string
		var data [][]byte
		for i := range n {
			b, err := fakeJPEG(rng, i, true)
			if err != nil {
				return err
			}
			if rng.RandomSample() < 0.5 {
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(b)
				zw.Close()
				b = z.Bytes()
			}
			names = append(names, fmt.Sprintf("%027d.JPEG", len(all)))
			all = append(all, names[len(names)-1])
			data = append(data, b)
		}
		inner := filepath.Join(dir, "inner.tar")
		if err := writeTar(inner, names, data); err != nil {
			return err
		}
		b, err := os.ReadFile(inner)
		if err != nil {
			return err
		}
		os.Remove(inner)
		outerNames = append(outerNames, fmt.Sprintf("n%08d.tar", k))
		outerData = append(outerData, b)
	}
	if err := writeTar(filepath.Join(dir, "ILSVRC2010_images_train.tar"), outerNames, outerData); err != nil {
		return err
	}
	if err := writePatches(dir, "patch_train.tar", "train/", all, 20150925, 10); err != nil {
		return err
	}
	rng := numpyrand.New(3)
	n := int(rng.Randint(30, 41))
	var names []string
	var data [][]byte
	for i := range n {
		b, err := fakeJPEG(rng, i, true)
		if err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%027d.JPEG", i))
		data = append(data, b)
	}
	if err := writeTar(filepath.Join(dir, "ILSVRC2010_images_val.tar"), names, data); err != nil {
		return err
	}
	return writePatches(dir, "patch_valid.tar", "val/", names, 20151202, 15)
}

// writePatches is create_fake_patch_images of the first n of names
// shuffled by RandomState(seed), one-value images under dir.
func writePatches(out, file, dir string, names []string, seed uint32, n int) error {
	shuffled := append([]string(nil), names...)
	numpyrand.New(seed).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	rng := numpyrand.New(1)
	var pnames []string
	var pdata [][]byte
	for i, name := range shuffled[:n] {
		b, err := fakeJPEG(rng, i, false)
		if err != nil {
			return err
		}
		pnames = append(pnames, dir+name)
		pdata = append(pdata, b)
	}
	return writeTar(filepath.Join(out, file), pnames, pdata)
}
