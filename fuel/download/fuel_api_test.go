package download

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Ports of Fuel's tests/test_downloaders.py: where Fuel mocks requests,
// a local HTTP server (httptest) serves the mock content.

const (
	mockFilename = "mock.data"
	mockContent  = "mock"
)

// mockServer serves mockContent at every path, with the headers Fuel's
// mock_requests gives: a Content-Length unless noLength, a
// Content-Disposition naming mockFilename with disposition.
func mockServer(t *testing.T, disposition, noLength bool) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if disposition {
			w.Header().Set("Content-Disposition", "attachment; filename="+mockFilename)
		}
		if noLength {
			// Two flushed writes: the body goes chunked, without a length.
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(mockContent[:2]))
			w.(http.Flusher).Flush()
			w.Write([]byte(mockContent[2:]))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(mockContent)))
		w.Write([]byte(mockContent))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// upstream fuel: tests/test_downloaders.py::TestFilenameFromURL::test_no_content_disposition
func TestFilenameFromURLNoContentDisposition(t *testing.T) {
	got, err := FilenameFromURL(context.Background(), mockServer(t, false, false)+"/"+mockFilename, Options{})
	if err != nil || got != mockFilename {
		t.Errorf("got %q, %v; want %q", got, err, mockFilename)
	}
}

// upstream fuel: tests/test_downloaders.py::TestFilenameFromURL::test_content_disposition
func TestFilenameFromURLContentDisposition(t *testing.T) {
	// The URL names another file: the header's name wins.
	got, err := FilenameFromURL(context.Background(), mockServer(t, true, false)+"/get?id=3", Options{})
	if err != nil || got != mockFilename {
		t.Errorf("got %q, %v; want %q", got, err, mockFilename)
	}
}

// upstream fuel: tests/test_downloaders.py::TestDownload::test_download_content
// upstream fuel: tests/test_downloaders.py::TestDownload::test_download_content_no_length
func TestDownloadContent(t *testing.T) {
	for _, noLength := range []bool{false, true} {
		dir := t.TempDir()
		url := mockServer(t, false, noLength) + "/" + mockFilename
		if err := Fetch(context.Background(), dir, File{Name: "f", URLs: []string{url}}, Options{}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dir, "f")); got != mockContent {
			t.Errorf("no length %v: got %q", noLength, got)
		}
	}
}

// upstream fuel: tests/test_downloaders.py::test_ensure_directory_exists
func TestEnsureDirectoryExists(t *testing.T) {
	dirpath := filepath.Join(t.TempDir(), "a", "b")
	filepath_ := filepath.Join(dirpath, "f")
	// Multiple checks for the same directory are fine.
	for i := 0; i < 2; i++ {
		if err := EnsureDirectoryExists(dirpath); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(dirpath); err != nil || !st.IsDir() {
		t.Fatalf("%s not made: %v", dirpath, err)
	}
	if err := os.WriteFile(filepath_, []byte(" "), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDirectoryExists(filepath_); err == nil {
		t.Error("a file in the way: no error")
	}
}

// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_save_with_filename
// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_save_no_filename
// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_save_no_url_url_prefix
func TestDefaultDownloaderSaves(t *testing.T) {
	server := mockServer(t, false, false)
	mockURL := server + "/" + mockFilename
	prefix := mockURL[:len(mockURL)-9]
	for _, c := range []struct {
		name            string
		urls, filenames []string
		prefix          *string
	}{
		{"with filename", []string{mockURL}, []string{mockFilename}, nil},
		{"no filename", []string{mockURL}, []string{""}, nil},
		{"no url, url prefix", []string{""}, []string{mockFilename}, &prefix},
	} {
		dir := t.TempDir()
		if err := DefaultDownloader(context.Background(), dir, c.urls, c.filenames, c.prefix, false, Options{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := readFile(t, filepath.Join(dir, mockFilename)); got != mockContent {
			t.Errorf("%s: got %q", c.name, got)
		}
	}
}

// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_save_no_url_no_url_prefix
func TestDefaultDownloaderNeedURLPrefix(t *testing.T) {
	err := DefaultDownloader(context.Background(), t.TempDir(), []string{""}, []string{mockFilename}, nil, false, Options{})
	if !errors.Is(err, ErrNeedURLPrefix) {
		t.Errorf("got %v, want NeedURLPrefix", err)
	}
}

// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_save_no_filename_for_url
func TestDefaultDownloaderNoFilenameForURL(t *testing.T) {
	mockURL := mockServer(t, false, false) + "/" + mockFilename
	err := DefaultDownloader(context.Background(), t.TempDir(), []string{mockURL[:len(mockURL)-9]}, []string{""}, nil, false, Options{})
	if err == nil || !strings.Contains(err.Error(), "no filename available for URL") {
		t.Errorf("got %v", err)
	}
}

// upstream fuel: tests/test_downloaders.py::TestDefaultDownloader::test_default_downloader_clear
func TestDefaultDownloaderClear(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tmp.data")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DefaultDownloader(context.Background(), dir, []string{""}, []string{"tmp.data"}, nil, true, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there (%v)", p, err)
	}
}

// Fuel's per-dataset downloaders (fill_subparser) set the file names and
// the addresses: the table's files carry Fuel's names, and Fuel's address
// comes first (mirrors follow it).
//
// upstream fuel: tests/test_downloaders.py::test_mnist
// upstream fuel: tests/test_downloaders.py::test_adult
// upstream fuel: tests/test_downloaders.py::test_celeba
// upstream fuel: tests/test_downloaders.py::test_dogs_vs_cats
// upstream fuel: tests/test_downloaders.py::test_binarized_mnist
// upstream fuel: tests/test_downloaders.py::test_caltech101_silhouettes
// upstream fuel: tests/test_downloaders.py::test_iris
// upstream fuel: tests/test_downloaders.py::test_cifar10
// upstream fuel: tests/test_downloaders.py::test_cifar100
// upstream fuel: tests/test_downloaders.py::TestSVHNDownloader::test_fill_subparser
// upstream fuel: tests/test_downloaders.py::TestSVHNDownloader::test_svhn_downloader_format_1
// upstream fuel: tests/test_downloaders.py::TestSVHNDownloader::test_svhn_downloader_format_2
func TestFuelDownloaderFilenamesAndURLs(t *testing.T) {
	lecun := "http://yann.lecun.com/exdb/mnist/"
	larochelle := "http://www.cs.toronto.edu/~larocheh/public/datasets/binarized_mnist/"
	svhn := "http://ufldl.stanford.edu/housenumbers/"
	for _, c := range []struct {
		dataset   string
		args      []string
		filenames []string
		urls      []string
	}{
		{"mnist", nil,
			[]string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"},
			[]string{lecun + "train-images-idx3-ubyte.gz", lecun + "train-labels-idx1-ubyte.gz", lecun + "t10k-images-idx3-ubyte.gz", lecun + "t10k-labels-idx1-ubyte.gz"}},
		{"binarized_mnist", nil,
			[]string{"binarized_mnist_train.amat", "binarized_mnist_valid.amat", "binarized_mnist_test.amat"},
			[]string{larochelle + "binarized_mnist_train.amat", larochelle + "binarized_mnist_valid.amat", larochelle + "binarized_mnist_test.amat"}},
		// Fuel's silhouettes_downloader takes the size (the test checks
		// args.size == 16) and builds the name from it.
		{"caltech101_silhouettes", []string{"16"},
			[]string{"caltech101_silhouettes_16_split1.mat"},
			[]string{"https://people.cs.umass.edu/~marlin/data/caltech101_silhouettes_16_split1.mat"}},
		{"adult", nil, []string{"adult.data", "adult.test"},
			[]string{"https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
				"https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test"}},
		{"celeba", nil, []string{"list_attr_celeba.txt", "img_align_celeba.zip"},
			[]string{"https://www.dropbox.com/sh/8oqt9vytwxb3s4r/AAC7-uCaJkmPmvLX2_P5qy0ga/Anno/list_attr_celeba.txt?dl=1",
				"https://www.dropbox.com/sh/8oqt9vytwxb3s4r/AADIKlz8PR9zr6Y20qbkunrba/Img/img_align_celeba.zip?dl=1"}},
		{"dogs_vs_cats", nil, []string{"dogs_vs_cats.train.zip", "dogs_vs_cats.test1.zip"},
			[]string{"https://www.dropbox.com/s/s3u30quvpxqdbz6/train.zip?dl=1", "https://www.dropbox.com/s/21rwu6drnplsbkb/test1.zip?dl=1"}},
		{"iris", nil, []string{"iris.data"},
			[]string{"https://archive.ics.uci.edu/ml/machine-learning-databases/iris/iris.data"}},
		{"cifar10", nil, []string{"cifar-10-python.tar.gz"},
			[]string{"http://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"}},
		{"cifar100", nil, []string{"cifar-100-python.tar.gz"},
			[]string{"http://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"}},
		// svhn: Fuel calls default_downloader with urls [None]*3, these
		// file names and url_prefix the Stanford page.
		{"svhn", []string{"1"}, []string{"train.tar.gz", "test.tar.gz", "extra.tar.gz"},
			[]string{svhn + "train.tar.gz", svhn + "test.tar.gz", svhn + "extra.tar.gz"}},
		{"svhn", []string{"2"}, []string{"train_32x32.mat", "test_32x32.mat", "extra_32x32.mat"},
			[]string{svhn + "train_32x32.mat", svhn + "test_32x32.mat", svhn + "extra_32x32.mat"}},
	} {
		files, err := Lookup(c.dataset, c.args)
		if err != nil {
			t.Errorf("%s %v: %v", c.dataset, c.args, err)
			continue
		}
		var names, first []string
		for _, f := range files {
			names = append(names, f.Name)
			first = append(first, f.URLs[0])
		}
		if !reflect.DeepEqual(names, c.filenames) || !reflect.DeepEqual(first, c.urls) {
			t.Errorf("%s %v: files %v at %v, Fuel's %v at %v", c.dataset, c.args, names, first, c.filenames, c.urls)
		}
	}
	// A format or size Fuel's parser refuses is refused.
	for _, c := range [][]string{{"svhn", "3"}, {"caltech101_silhouettes", "10"}} {
		if _, err := Lookup(c[0], c[1:]); err == nil {
			t.Errorf("%v: no error", c)
		}
	}
}
