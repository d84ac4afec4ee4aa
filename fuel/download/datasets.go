package download

import (
	"fmt"
	"sort"
	"strings"
)

// File is one file of a dataset: its name on disk, the addresses it is
// fetched from (tried in order) and, when one is published, its MD5.
type File struct {
	Name string
	URLs []string
	// MD5 is the published digest of the canonical file (lower-case hex),
	// "" when there is none to check against.
	MD5 string
	// DigestSource says where MD5 comes from.
	DigestSource string
}

// Dataset is a dataset Fuel's fuel-download knows.
type Dataset struct {
	Name string
	// Args names the positional arguments after the dataset ("" for
	// none), as in Fuel: svhn's format (1 or 2), caltech101_silhouettes'
	// size (16 or 28).
	Args string
	// Files gives the files for the arguments.
	Files func(args []string) ([]File, error)
}

// Published digests, and where they are published.
const (
	srcTorchvision = "torchvision's dataset table"
	srcCIFAR       = "the CIFAR page (www.cs.toronto.edu/~kriz/cifar.html), also torchvision's table"
)

// Mirrors, in the order tried: Fuel's own address first.
var (
	mnistMirrors = []string{
		"http://yann.lecun.com/exdb/mnist/",                   // Fuel's
		"https://ossci-datasets.s3.amazonaws.com/mnist/",      // torchvision's
		"https://storage.googleapis.com/cvdf-datasets/mnist/", // TensorFlow's
	}
	cifarMirrors = []string{
		"http://www.cs.toronto.edu/~kriz/",  // Fuel's
		"https://www.cs.toronto.edu/~kriz/", // torchvision's
	}
)

func files(mirrors []string, names []string, md5s map[string]string, source string) []File {
	out := make([]File, len(names))
	for i, n := range names {
		urls := make([]string, len(mirrors))
		for j, m := range mirrors {
			urls[j] = m + n
		}
		f := File{Name: n, URLs: urls, MD5: md5s[n]}
		if f.MD5 != "" {
			f.DigestSource = source
		}
		out[i] = f
	}
	return out
}

func noArgs(name string, fs func() []File) func([]string) ([]File, error) {
	return func(args []string) ([]File, error) {
		if len(args) > 0 {
			return nil, fmt.Errorf("download: %s takes no arguments, got %s", name, strings.Join(args, " "))
		}
		return fs(), nil
	}
}

// Datasets are the datasets download knows, by Fuel's names.
var Datasets = map[string]Dataset{
	"mnist": {Name: "mnist", Files: noArgs("mnist", func() []File {
		return files(mnistMirrors, []string{
			"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
			"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
		}, map[string]string{
			"train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
			"train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
			"t10k-images-idx3-ubyte.gz":  "9fb629c4189551a2d022fa330f9573f3",
			"t10k-labels-idx1-ubyte.gz":  "ec29112dd5afa0611ce80d1b7f02629c",
		}, srcTorchvision)
	})},
	"binarized_mnist": {Name: "binarized_mnist", Files: noArgs("binarized_mnist", func() []File {
		return files([]string{"http://www.cs.toronto.edu/~larocheh/public/datasets/binarized_mnist/"},
			[]string{"binarized_mnist_train.amat", "binarized_mnist_valid.amat", "binarized_mnist_test.amat"}, nil, "")
	})},
	"cifar10": {Name: "cifar10", Files: noArgs("cifar10", func() []File {
		return files(cifarMirrors, []string{"cifar-10-python.tar.gz"},
			map[string]string{"cifar-10-python.tar.gz": "c58f30108f718f92721af3b95e74349a"}, srcCIFAR)
	})},
	"cifar100": {Name: "cifar100", Files: noArgs("cifar100", func() []File {
		return files(cifarMirrors, []string{"cifar-100-python.tar.gz"},
			map[string]string{"cifar-100-python.tar.gz": "eb9058c3a382ffc7106e4002c42a8d85"}, srcCIFAR)
	})},
	"svhn": {Name: "svhn", Args: "FORMAT (1 or 2)", Files: func(args []string) ([]File, error) {
		if len(args) != 1 || args[0] != "1" && args[0] != "2" {
			return nil, fmt.Errorf("download: svhn needs its format, 1 or 2 (fuel download svhn 2), got %q", strings.Join(args, " "))
		}
		mirror := []string{"http://ufldl.stanford.edu/housenumbers/"}
		if args[0] == "1" {
			return files(mirror, []string{"train.tar.gz", "test.tar.gz", "extra.tar.gz"}, nil, ""), nil
		}
		return files(mirror, []string{"train_32x32.mat", "test_32x32.mat", "extra_32x32.mat"}, map[string]string{
			"train_32x32.mat": "e26dedcc434d2e4c54c9b2d4a06d8373",
			"test_32x32.mat":  "eb5a983be6a315427106f1b164d9cef3",
			"extra_32x32.mat": "a93ce644f1a588dc4d68dda5feec44a7",
		}, srcTorchvision), nil
	}},
	"adult": {Name: "adult", Files: noArgs("adult", func() []File {
		return files([]string{"https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"}, []string{"adult.data", "adult.test"}, nil, "")
	})},
	"celeba": {Name: "celeba", Files: noArgs("celeba", func() []File {
		// Fuel's Dropbox addresses, one per file.
		return []File{
			{Name: "list_attr_celeba.txt", URLs: []string{"https://www.dropbox.com/sh/8oqt9vytwxb3s4r/AAC7-uCaJkmPmvLX2_P5qy0ga/Anno/list_attr_celeba.txt?dl=1"}},
			{Name: "img_align_celeba.zip", URLs: []string{"https://www.dropbox.com/sh/8oqt9vytwxb3s4r/AADIKlz8PR9zr6Y20qbkunrba/Img/img_align_celeba.zip?dl=1"}},
		}
	})},
	"dogs_vs_cats": {Name: "dogs_vs_cats", Files: noArgs("dogs_vs_cats", func() []File {
		return []File{
			{Name: "dogs_vs_cats.train.zip", URLs: []string{"https://www.dropbox.com/s/s3u30quvpxqdbz6/train.zip?dl=1"}},
			{Name: "dogs_vs_cats.test1.zip", URLs: []string{"https://www.dropbox.com/s/21rwu6drnplsbkb/test1.zip?dl=1"}},
		}
	})},
	"iris": {Name: "iris", Files: noArgs("iris", func() []File {
		return files([]string{"https://archive.ics.uci.edu/ml/machine-learning-databases/iris/"}, []string{"iris.data"}, nil, "")
	})},
	"caltech101_silhouettes": {Name: "caltech101_silhouettes", Args: "SIZE (16 or 28)", Files: func(args []string) ([]File, error) {
		if len(args) != 1 || args[0] != "16" && args[0] != "28" {
			return nil, fmt.Errorf("download: caltech101_silhouettes needs the image size, 16 or 28 (fuel download caltech101_silhouettes 28), got %q", strings.Join(args, " "))
		}
		return files([]string{"https://people.cs.umass.edu/~marlin/data/"},
			[]string{"caltech101_silhouettes_" + args[0] + "_split1.mat"}, nil, ""), nil
	}},
}

// Names lists the datasets, sorted.
func Names() []string {
	out := make([]string, 0, len(Datasets))
	for n := range Datasets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the files of dataset name with its arguments.
func Lookup(name string, args []string) ([]File, error) {
	d, ok := Datasets[name]
	if !ok {
		return nil, fmt.Errorf("download: unknown dataset %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return d.Files(args)
}

// UseMirrors replaces each file's addresses with base+"/"+name for each
// base, in order: a local mirror or cache (what FUEL_DOWNLOAD_MIRRORS
// gives blocks-repl fuel download).
func UseMirrors(files []File, bases []string) []File {
	out := make([]File, len(files))
	for i, f := range files {
		var urls []string
		for _, b := range bases {
			if b = strings.TrimSpace(b); b != "" {
				urls = append(urls, strings.TrimSuffix(b, "/")+"/"+f.Name)
			}
		}
		f.URLs = urls
		out[i] = f
	}
	return out
}
