package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuelDownloadCLI downloads from a local server standing in for the
// mirrors (FUEL_DOWNLOAD_MIRRORS): no real network.
func TestFuelDownloadCLI(t *testing.T) {
	files := map[string][]byte{"/iris.data": []byte("5.1,3.5,1.4,0.2,Iris-setosa\n")}
	// Stand-ins for the MNIST files: not the canonical bytes, so their
	// published MD5s must reject them.
	for _, n := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		files["/"+n] = []byte("not the canonical " + n)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer ts.Close()
	t.Setenv("FUEL_DOWNLOAD_MIRRORS", ts.URL+"/")
	dir := t.TempDir()

	var out, errb bytes.Buffer
	if code := Main([]string{"fuel", "download", "iris", "-d", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "iris.data")); !bytes.Equal(b, files["/iris.data"]) {
		t.Errorf("iris.data: %q", b)
	}
	if !strings.Contains(errb.String(), "iris.data: no published digest") {
		t.Errorf("stderr: %s", errb.String())
	}

	errb.Reset()
	code := Main([]string{"fuel", "download", "mnist", "-d", dir}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "train-images-idx3-ubyte.gz: "+ts.URL+"/train-images-idx3-ubyte.gz failed: MD5 mismatch") ||
		!strings.Contains(errb.String(), "is f68b3c2dcbeaaa9fbdd348bbdeb94873") {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("after a rejected download the directory holds %d entries, want iris.data alone", len(ents))
	}

	if code := Main([]string{"fuel", "download", "--clear", "iris", "-d", dir}, nil, &out, &errb); code != 0 {
		t.Fatal(code)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("--clear left %v", ents)
	}
	if code := Main([]string{"fuel", "download", "svhn"}, nil, &out, &errb); code != 2 {
		t.Errorf("svhn without a format: exit %d", code)
	}
}
