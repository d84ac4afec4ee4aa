package converters

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// This file is the core of Fuel's ILSVRC2010 converter: the layout of its
// HDF5 file (prepare_hdf5_file) and the filling of the training set and of
// the validation or test set (process_train_set, process_other_set). Fuel
// runs a producer (reading the archives) and a consumer (writing the file)
// in two processes joined by a ZeroMQ PUSH/PULL pair; here they are two
// goroutines joined by a channel, with the same messages in the same order.

// ILSVRC2010FilenameWidth is the width of the `filenames` source: Fuel
// stores file names as numpy's S32.
const ILSVRC2010FilenameWidth = 32

// PrepareILSVRC2010File is Fuel's prepare_hdf5_file(hdf5_file, n_train,
// n_valid, n_test): the sources of an ILSVRC2010 (and 2012) file, for
// n_train + n_valid + n_test examples: `encoded_images` (a 1-D
// variable-length uint8 source, the JPEG bytes), `targets` (int16,
// (n, 1)) and `filenames` (S32, (n, 1)); and the splits train, valid and
// test, in that order, each over its range of every source.
func PrepareILSVRC2010File(w *h5.Writer, nTrain, nValid, nTest int) error {
	if nTrain < 0 || nValid < 0 || nTest < 0 {
		return fmt.Errorf("prepare_hdf5_file: negative set size (n_train %d, n_valid %d, n_test %d)", nTrain, nValid, nTest)
	}
	n := nTrain + nValid + nTest
	if err := w.CreateVlenSource("encoded_images", nd.Uint8, n, nil, h5.VlenLayout{Flat: true}); err != nil {
		return err
	}
	if err := w.CreateSource("targets", nd.Int16, []int{n, 1}, nil); err != nil {
		return err
	}
	if err := w.CreateStringSource("filenames", ILSVRC2010FilenameWidth, []int{n, 1}, nil); err != nil {
		return err
	}
	for _, s := range []h5.SplitDef{
		{Name: "train", Start: 0, Stop: nTrain},
		{Name: "valid", Start: nTrain, Stop: nTrain + nValid},
		{Name: "test", Start: nTrain + nValid, Stop: n},
	} {
		if err := w.AddSplit(s); err != nil {
			return err
		}
	}
	return nil
}

// ProcessTrainSet is Fuel's process_train_set(hdf5_file, train_archive,
// patch_archive, n_train, wnid_map, shuffle_seed): it writes the n_train
// training images into examples [0, n_train) of a file laid out by
// PrepareILSVRC2010File. trainArchive is a TAR of TARs, one per class,
// named "<WordNet ID>.tar"; each image's target is wnidMap of its inner
// TAR's WordNet ID. Each inner TAR's images are read in sorted order,
// from patchArchive's training patches when there (ExtractPatchImages);
// every patch must be used. shuffleSeed, when not nil, seeds the numpy
// RandomState whose permutation(n_train) gives the example each image is
// written to (so the file is not ordered by class); nil writes them in
// order.
func ProcessTrainSet(w *h5.Writer, trainArchive, patchArchive string, nTrain int, wnidMap map[string]int, shuffleSeed *uint32) error {
	patches, err := ExtractPatchImages(patchArchive, "train")
	if err != nil {
		return fmt.Errorf("patch images: %w", err)
	}
	return processTrainSet(w, trainArchive, patches, nTrain, wnidMap, shuffleSeed)
}

// processTrainSet is ProcessTrainSet with the patch images given
// (ILSVRC2012 has none).
func processTrainSet(w *h5.Writer, trainArchive string, patches map[string][]byte, nTrain int, wnidMap map[string]int, shuffleSeed *uint32) error {
	produce := func(send func(ilsvrcImage) bool) error {
		return trainSetProducer(send, trainArchive, patches, wnidMap)
	}
	return producerConsumer(w, produce, nTrain, shuffleSeed, 0, true)
}

// ProcessOtherSet is Fuel's process_other_set(hdf5_file, which_set,
// image_archive, patch_archive, groundtruth, offset): it writes the
// images of imageArchive (a TAR of JPEGs), sorted by member name, into
// examples [offset, offset+len(groundtruth)), the i-th with target
// groundtruth[i], in order. whichSet ("valid" or "test") chooses the
// patches of patchArchive; every one must be used.
func ProcessOtherSet(w *h5.Writer, whichSet, imageArchive, patchArchive string, groundtruth []int, offset int) error {
	if offset < 0 {
		return fmt.Errorf("process_other_set: negative offset %d", offset)
	}
	patches, err := ExtractPatchImages(patchArchive, whichSet)
	if err != nil {
		return fmt.Errorf("patch images: %w", err)
	}
	return processOtherSet(w, imageArchive, patches, groundtruth, len(groundtruth), offset)
}

// processOtherSet is ProcessOtherSet with the patch images given; a nil
// groundtruth is Fuel's (None,) * n: n images without labels, whose
// targets are not written (ILSVRC2012's test set).
func processOtherSet(w *h5.Writer, imageArchive string, patches map[string][]byte, groundtruth []int, n, offset int) error {
	if offset < 0 {
		return fmt.Errorf("process_other_set: negative offset %d", offset)
	}
	produce := func(send func(ilsvrcImage) bool) error {
		return otherSetProducer(send, imageArchive, patches, groundtruth, n)
	}
	return producerConsumer(w, produce, n, nil, offset, groundtruth != nil)
}

// ilsvrcImage is one producer message: Fuel's (filename, class_index)
// object followed by the image's bytes.
type ilsvrcImage struct {
	filename string
	class    int
	data     []byte
}

// producerConsumer runs produce in a goroutine, sending images to the
// consumer, which writes numExpected of them (Fuel's image_consumer). An
// error on either side stops both; the producer's own error is reported
// first when it is the cause.
func producerConsumer(w *h5.Writer, produce func(send func(ilsvrcImage) bool) error, numExpected int, shuffleSeed *uint32, offset int, labelled bool) error {
	if numExpected < 0 {
		return fmt.Errorf("%d images expected", numExpected)
	}
	ch := make(chan ilsvrcImage, 64)
	stop := make(chan struct{})
	perr := make(chan error, 1)
	go func() {
		defer close(ch)
		perr <- produce(func(m ilsvrcImage) bool {
			select {
			case ch <- m:
				return true
			case <-stop:
				return false
			}
		})
	}()
	cerr := imageConsumer(w, ch, numExpected, shuffleSeed, offset, labelled)
	close(stop)
	for range ch {
	}
	if err := <-perr; err != nil && !errors.Is(err, errStopped) {
		return err
	}
	return cerr
}

// errStopped is the producer's error when the consumer stopped first.
var errStopped = errors.New("the consumer stopped")

// imageConsumer is Fuel's image_consumer: it receives numExpected images
// and writes the i-th to example index(i)+offset, where index is the
// identity, or numpy's RandomState(shuffleSeed).permutation(numExpected).
// Targets and file names are kept and written once at the end (two
// writes, not one per image); the images go through WriteVlenExample.
// Without labelled, no targets are written (Fuel's class_index None).
func imageConsumer(w *h5.Writer, ch <-chan ilsvrcImage, numExpected int, shuffleSeed *uint32, offset int, labelled bool) error {
	var index []int
	if shuffleSeed != nil {
		index = numpyrand.New(*shuffleSeed).Permutation(numExpected)
	}
	targets := make([]int16, numExpected)
	names := make([]string, numExpected)
	got := 0
	for m := range ch {
		if got == numExpected {
			return fmt.Errorf("the producer sent more than the %d images expected", numExpected)
		}
		at := got
		if index != nil {
			at = index[got]
		}
		if m.class < -1<<15 || m.class >= 1<<15 {
			return fmt.Errorf("%s: class index %d does not fit the int16 targets", m.filename, m.class)
		}
		if len(m.filename) > ILSVRC2010FilenameWidth {
			return fmt.Errorf("%s: a file name longer than %d bytes does not fit the filenames source", m.filename, ILSVRC2010FilenameWidth)
		}
		targets[at], names[at] = int16(m.class), m.filename
		if err := w.WriteVlenExample("encoded_images", at+offset, nd.FromSlice(m.data, len(m.data))); err != nil {
			return err
		}
		got++
	}
	if got != numExpected {
		return fmt.Errorf("the producer sent %d images, %d expected", got, numExpected)
	}
	if numExpected == 0 {
		return nil
	}
	if labelled {
		if err := w.WriteRows("targets", offset, nd.FromSlice(targets, numExpected, 1)); err != nil {
			return err
		}
	}
	return w.WriteStringRows("filenames", offset, names)
}

// trainSetProducer is Fuel's train_set_producer.
func trainSetProducer(send func(ilsvrcImage) bool, trainArchive string, patches map[string][]byte, wnidMap map[string]int) error {
	numPatched := 0
	err := eachTarMember(trainArchive, func(hdr *tar.Header, r io.Reader) (bool, error) {
		wnid, _, _ := strings.Cut(hdr.Name, ".")
		class, ok := wnidMap[wnid]
		if !ok {
			return false, fmt.Errorf("WordNet ID %q is not in wnid_map", wnid)
		}
		b, err := readMember(hdr, r)
		if err != nil {
			return false, err
		}
		var ir io.Reader = bytes.NewReader(b)
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			if ir, err = gzip.NewReader(ir); err != nil {
				return false, err
			}
		}
		inner, err := readTarFiles(ir)
		if err != nil {
			return false, err
		}
		for _, name := range slices.Sorted(mapsKeys(inner)) {
			data, patched, err := fromMemberOrPatch(name, inner[name], patches)
			if err != nil {
				return false, err
			}
			if patched {
				numPatched++
			}
			if !send(ilsvrcImage{filename: path.Base(name), class: class, data: data}) {
				return false, errStopped
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if numPatched != len(patches) {
		return fmt.Errorf("not all patch images were used (%d of %d)", numPatched, len(patches))
	}
	return nil
}

// otherSetProducer is Fuel's other_set_producer.
func otherSetProducer(send func(ilsvrcImage) bool, imageArchive string, patches map[string][]byte, groundtruth []int, n int) error {
	idx, err := indexTarFile(imageArchive)
	if err != nil {
		return err
	}
	defer idx.Close()
	names := slices.Sorted(mapsKeys(idx.members))
	if groundtruth != nil && len(names) != len(groundtruth) {
		return fmt.Errorf("%s holds %d images, the ground truth has %d labels", path.Base(imageArchive), len(names), len(groundtruth))
	}
	if len(names) != n {
		return fmt.Errorf("%s holds %d images, %d expected", path.Base(imageArchive), len(names), n)
	}
	numPatched := 0
	for i, name := range names {
		var b []byte
		if _, ok := patches[path.Base(name)]; !ok {
			if b, err = idx.read(name); err != nil {
				return err
			}
		}
		data, patched, err := fromMemberOrPatch(name, b, patches)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Base(imageArchive), err)
		}
		if patched {
			numPatched++
		}
		class := 0
		if groundtruth != nil {
			class = groundtruth[i]
		}
		if !send(ilsvrcImage{filename: path.Base(name), class: class, data: data}) {
			return errStopped
		}
	}
	if numPatched != len(patches) {
		return fmt.Errorf("not all patch images were used (%d of %d)", numPatched, len(patches))
	}
	return nil
}

// fromMemberOrPatch is load_from_tar_or_patch on a member already read.
func fromMemberOrPatch(name string, b []byte, patches map[string][]byte) ([]byte, bool, error) {
	if p, ok := patches[path.Base(name)]; ok {
		return p, true, nil
	}
	d, err := imageOrGunzipped(b)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	return d, false, nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readTarFiles reads the regular files of a (plain) TAR held in memory.
func readTarFiles(r io.Reader) (map[string][]byte, error) {
	out := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not a readable tar archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		b, err := readMember(hdr, tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		out[hdr.Name] = b
	}
}

// tarIndex gives random access to the regular files of a TAR archive:
// a plain archive is indexed by offset and read in place (the validation
// and test archives are several GB); a gzipped one is read into memory.
type tarIndex struct {
	name    string
	file    *os.File
	members map[string][2]int64 // offset, size (plain archives)
	data    map[string][]byte   // gzipped archives
}

func (t *tarIndex) Close() {
	if t.file != nil {
		t.file.Close()
	}
}

func (t *tarIndex) read(name string) ([]byte, error) {
	if t.data != nil {
		return t.data[name], nil
	}
	m := t.members[name]
	b := make([]byte, m[1])
	if _, err := t.file.ReadAt(b, m[0]); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", t.name, name, err)
	}
	return b, nil
}

// offsetReader counts the bytes read (and skipped) from a file, so that
// the offset of a member's data is known when tar.Reader.Next returns.
type offsetReader struct {
	f   *os.File
	pos int64
}

func (r *offsetReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.pos += int64(n)
	return n, err
}

func (r *offsetReader) Seek(off int64, whence int) (int64, error) {
	p, err := r.f.Seek(off, whence)
	if err == nil {
		r.pos = p
	}
	return p, err
}

// indexTarFile indexes the regular files of a TAR archive (Fuel's
// tar_open: gzipped or not).
func indexTarFile(archive string) (*tarIndex, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	t := &tarIndex{name: path.Base(archive), file: f}
	magic := make([]byte, 2)
	if n, _ := f.ReadAt(magic, 0); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		f.Close()
		t.file = nil
		zf, err := os.Open(archive)
		if err != nil {
			return nil, err
		}
		defer zf.Close()
		zr, err := gzip.NewReader(bufio.NewReader(zf))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		if t.data, err = readTarFiles(zr); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		t.members = map[string][2]int64{}
		for k, v := range t.data {
			t.members[k] = [2]int64{0, int64(len(v))}
		}
		return t, nil
	}
	t.members = map[string][2]int64{}
	or := &offsetReader{f: f}
	tr := tar.NewReader(or)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a readable tar archive: %w", t.name, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if hdr.Size > maxMember {
			f.Close()
			return nil, fmt.Errorf("%s: %s: %d bytes: too large", t.name, hdr.Name, hdr.Size)
		}
		t.members[hdr.Name] = [2]int64{or.pos, hdr.Size}
	}
}
