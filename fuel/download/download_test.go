package download

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixture is 100 KiB of deterministic bytes.
func fixture() []byte {
	b := make([]byte, 100<<10)
	x := uint32(12345)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// fileServer serves content at /NAME, honouring Range requests, and
// records the requests it gets. dropFirst cuts the first response after
// that many bytes (a dropped connection); zero never.
type fileServer struct {
	content   []byte
	dropFirst int
	mu        sync.Mutex
	requests  []string // "PATH RANGE"
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path+" "+r.Header.Get("Range"))
	first := len(s.requests) == 1
	s.mu.Unlock()
	if first && s.dropFirst > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.content)))
		w.WriteHeader(http.StatusOK)
		w.Write(s.content[:s.dropFirst])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // closes the connection mid-body
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.content))
}

func (s *fileServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// noPartial checks that dir holds exactly the given names (no .part).
func dirHolds(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

func TestDownloadVerifiedWithProgress(t *testing.T) {
	content := fixture()
	fs := &fileServer{content: content}
	ts := httptest.NewServer(fs)
	defer ts.Close()
	dir := t.TempDir()
	var out bytes.Buffer
	f := File{Name: "data.gz", URLs: []string{ts.URL + "/data.gz"}, MD5: md5hex(content), DigestSource: "the test"}
	if err := Download(context.Background(), dir, []File{f}, Options{Progress: &out}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "data.gz"))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("file differs (%v)", err)
	}
	dirHolds(t, dir, "data.gz")
	// Plain lines (not a terminal): one per tenth, then the verification.
	// (The tenths are crossed at the copy's 32 KiB chunks.)
	if lines := regexp.MustCompile(`(?m)^data\.gz: [0-9.]+ KiB of 100\.0 KiB \([0-9]+%\)$`).FindAllString(out.String(), -1); len(lines) < 3 {
		t.Errorf("want several progress lines:\n%s", out.String())
	}
	for _, want := range []string{"data.gz: 100.0 KiB of 100.0 KiB (100%)", "data.gz: MD5 " + md5hex(content) + " verified (published in the test)"} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
	// A second run keeps the verified file and asks the server nothing.
	out.Reset()
	if err := Download(context.Background(), dir, []File{f}, Options{Progress: &out}); err != nil {
		t.Fatal(err)
	}
	if n := len(fs.log()); n != 1 || !strings.Contains(out.String(), "already there") {
		t.Errorf("%d requests; output %s", n, out.String())
	}
}

func TestResumeAfterDroppedConnection(t *testing.T) {
	content := fixture()
	fs := &fileServer{content: content, dropFirst: 40000}
	ts := httptest.NewServer(fs)
	defer ts.Close()
	dir := t.TempDir()
	var out bytes.Buffer
	f := File{Name: "data.gz", URLs: []string{ts.URL + "/data.gz"}, MD5: md5hex(content), DigestSource: "the test"}
	if err := Fetch(context.Background(), dir, f, Options{Progress: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data.gz")); !bytes.Equal(got, content) {
		t.Fatal("file differs")
	}
	if reqs := fs.log(); len(reqs) != 2 || reqs[0] != "/data.gz " || reqs[1] != "/data.gz bytes=40000-" {
		t.Errorf("requests %q, want the whole file then bytes=40000-", reqs)
	}
	if !strings.Contains(out.String(), "resuming at 39.1 KiB") {
		t.Errorf("output:\n%s", out.String())
	}
	dirHolds(t, dir, "data.gz")
}

// TestResumeAcrossRuns: a partial file left by an interrupted run is
// continued by the next one, and never looks like the complete file.
func TestResumeAcrossRuns(t *testing.T) {
	content := fixture()
	fs := &fileServer{content: content}
	ts := httptest.NewServer(fs)
	defer ts.Close()
	dir := t.TempDir()
	if err := os.WriteFile(partName(dir, "data.gz"), content[:12345], 0o644); err != nil {
		t.Fatal(err)
	}
	f := File{Name: "data.gz", URLs: []string{ts.URL + "/data.gz"}, MD5: md5hex(content)}
	if err := Fetch(context.Background(), dir, f, Options{}); err != nil {
		t.Fatal(err)
	}
	if reqs := fs.log(); len(reqs) != 1 || reqs[0] != "/data.gz bytes=12345-" {
		t.Errorf("requests %q", reqs)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data.gz")); !bytes.Equal(got, content) {
		t.Fatal("file differs")
	}
}

func TestMirrorFallback(t *testing.T) {
	content := fixture()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	}))
	defer down.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	}))
	defer broken.Close()
	wrong := httptest.NewServer(&fileServer{content: content[:5000]})
	defer wrong.Close()
	good := &fileServer{content: content}
	ts := httptest.NewServer(good)
	defer ts.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close() // nothing listens there now

	dir := t.TempDir()
	var out bytes.Buffer
	f := File{Name: "data.gz", MD5: md5hex(content), URLs: []string{
		refusedURL + "/data.gz", down.URL + "/data.gz", broken.URL + "/data.gz", wrong.URL + "/data.gz", ts.URL + "/data.gz",
	}}
	if err := Fetch(context.Background(), dir, f, Options{Progress: &out, Attempts: 2}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data.gz")); !bytes.Equal(got, content) {
		t.Fatal("file differs")
	}
	for _, want := range []string{refusedURL + "/data.gz failed", down.URL + "/data.gz failed: HTTP 404", broken.URL + "/data.gz failed: HTTP 500", wrong.URL + "/data.gz failed: MD5 mismatch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	dirHolds(t, dir, "data.gz")
}

func TestChecksumMismatchRejected(t *testing.T) {
	content := fixture()
	ts := httptest.NewServer(&fileServer{content: content})
	defer ts.Close()
	dir := t.TempDir()
	want := strings.Repeat("0", 32)
	f := File{Name: "data.gz", URLs: []string{ts.URL + "/data.gz"}, MD5: want, DigestSource: "the test"}
	err := Fetch(context.Background(), dir, f, Options{})
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Got != md5hex(content) || ce.Want != want {
		t.Fatalf("error %v, want a ChecksumError", err)
	}
	msg := regexp.QuoteMeta("download: data.gz: " + ts.URL + "/data.gz: MD5 mismatch: got " + md5hex(content) + ", the published digest (the test) is " + want + "; the file was not kept")
	if !regexp.MustCompile("^" + msg + "$").MatchString(err.Error()) {
		t.Errorf("error %q", err)
	}
	dirHolds(t, dir) // nothing: neither the file nor a partial one
}

func TestUnverifiedFileReportsDigests(t *testing.T) {
	content := fixture()
	ts := httptest.NewServer(&fileServer{content: content})
	defer ts.Close()
	dir := t.TempDir()
	var out bytes.Buffer
	if err := Fetch(context.Background(), dir, File{Name: "iris.data", URLs: []string{ts.URL + "/iris.data"}}, Options{Progress: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "iris.data: no published digest to check it against (MD5 "+md5hex(content)) {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestClear(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	os.WriteFile(partName(dir, "b"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644)
	if err := Clear(dir, []File{{Name: "a"}, {Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	dirHolds(t, dir, "keep")
}

func TestDatasetTable(t *testing.T) {
	hex32 := regexp.MustCompile("^[0-9a-f]{32}$")
	for _, c := range []struct {
		name     string
		args     []string
		files    int
		verified int
	}{
		{"mnist", nil, 4, 4}, {"binarized_mnist", nil, 3, 0}, {"cifar10", nil, 1, 1}, {"cifar100", nil, 1, 1},
		{"svhn", []string{"1"}, 3, 0}, {"svhn", []string{"2"}, 3, 3}, {"iris", nil, 1, 0},
		{"caltech101_silhouettes", []string{"16"}, 1, 0}, {"caltech101_silhouettes", []string{"28"}, 1, 0},
	} {
		fs, err := Lookup(c.name, c.args)
		if err != nil {
			t.Fatal(err)
		}
		verified := 0
		for _, f := range fs {
			if len(f.URLs) == 0 || !strings.HasSuffix(f.URLs[0], "/"+f.Name) {
				t.Errorf("%s: %s: URLs %v", c.name, f.Name, f.URLs)
			}
			if f.MD5 != "" {
				verified++
				if !hex32.MatchString(f.MD5) || f.DigestSource == "" {
					t.Errorf("%s: %s: digest %q from %q", c.name, f.Name, f.MD5, f.DigestSource)
				}
			}
		}
		if len(fs) != c.files || verified != c.verified {
			t.Errorf("%s %v: %d files, %d with digests; want %d, %d", c.name, c.args, len(fs), verified, c.files, c.verified)
		}
	}
	// MNIST: Fuel's address first, then the mirrors.
	fs, _ := Lookup("mnist", nil)
	if fs[0].URLs[0] != "http://yann.lecun.com/exdb/mnist/train-images-idx3-ubyte.gz" || len(fs[0].URLs) != 3 {
		t.Errorf("mnist URLs %v", fs[0].URLs)
	}
	for _, bad := range []struct {
		name string
		args []string
		want string
	}{
		{"svhn", nil, "svhn needs its format, 1 or 2"}, {"caltech101_silhouettes", []string{"32"}, "16 or 28"},
		{"mnist", []string{"x"}, "takes no arguments"}, {"imagenet", nil, "unknown dataset \"imagenet\" (known: adult, binarized_mnist, caltech101_silhouettes, celeba, cifar10, cifar100, dogs_vs_cats, iris, mnist, svhn)"},
	} {
		if _, err := Lookup(bad.name, bad.args); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %v: %v", bad.name, bad.args, err)
		}
	}
}

// TestStalledTransferResumed: a server that stops sending without
// closing is abandoned after Options.Stall and the transfer resumed.
func TestStalledTransferResumed(t *testing.T) {
	content := fixture()
	var mu sync.Mutex
	calls := 0
	release := make(chan struct{})
	defer close(release)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.Write(content[:1000])
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
	}))
	defer ts.Close()
	dir := t.TempDir()
	f := File{Name: "d", URLs: []string{ts.URL + "/d"}, MD5: md5hex(content)}
	var out bytes.Buffer
	if err := Fetch(context.Background(), dir, f, Options{Stall: 200 * time.Millisecond, Progress: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "no data for 200ms; resuming") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestAlwaysDroppingServerGivesUp: a server that ignores Range and drops
// every transfer at the same byte makes no progress: the address is
// given up after Options.Attempts tries, with the reason.
func TestAlwaysDroppingServerGivesUp(t *testing.T) {
	content := fixture()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content[:30000])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer ts.Close()
	dir := t.TempDir()
	err := Fetch(context.Background(), dir, File{Name: "d", URLs: []string{ts.URL + "/d"}}, Options{Attempts: 2})
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file is in place after a failed download: %v", err)
	}
}
