package download

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Fuel's fuel.downloaders.base functions, for a downloader given its
// addresses and file names directly rather than by dataset name.

// ErrNeedURLPrefix is Fuel's NeedURLPrefix: a file has no address and no
// url_prefix was given to make one.
var ErrNeedURLPrefix = errors.New("download: a file has no URL and no url_prefix was given to build one (Fuel's NeedURLPrefix)")

var contentDispositionRE = regexp.MustCompile(`filename=([^;]+)`)

// FilenameFromURL is Fuel's filename_from_url: the file name the server
// gives in its Content-Disposition header, else the last element of the
// URL's path ("" when the path ends with a slash).
func FilenameFromURL(ctx context.Context, rawURL string, opts Options) (string, error) {
	opts.defaults()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	resp.Body.Close()
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil && params["filename"] != "" {
			return filepath.Base(params["filename"]), nil
		}
		if m := contentDispositionRE.FindStringSubmatch(cd); m != nil {
			return filepath.Base(strings.Trim(strings.TrimSpace(m[1]), `"`)), nil
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	if u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return "", nil
	}
	return path.Base(u.Path), nil
}

// EnsureDirectoryExists is Fuel's ensure_directory_exists: it creates dir
// and its parents unless dir is already a directory; a file in the way is
// an error.
func EnsureDirectoryExists(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return nil
}

// DefaultDownloader is Fuel's default_downloader(directory, urls,
// filenames, url_prefix=None, clear=False): urls[i] is saved in directory
// as filenames[i]. An empty file name is the one FilenameFromURL gives;
// an empty address is urlPrefix+filename (ErrNeedURLPrefix without a
// prefix). With clear, the files are removed instead. Each file is
// fetched as Fetch does (resumed, written under a temporary name, moved
// into place when complete).
func DefaultDownloader(ctx context.Context, directory string, urls, filenames []string, urlPrefix *string, clear bool, opts Options) error {
	if len(urls) != len(filenames) {
		return fmt.Errorf("download: %d URLs for %d file names", len(urls), len(filenames))
	}
	names := make([]string, len(filenames))
	for i, u := range urls {
		name := filenames[i]
		if name == "" && u != "" {
			var err error
			if name, err = FilenameFromURL(ctx, u, opts); err != nil {
				return err
			}
		}
		if name == "" {
			return fmt.Errorf("download: no filename available for URL %q", u)
		}
		names[i] = name
	}
	if clear {
		for _, n := range names {
			p := filepath.Join(directory, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				if err := os.Remove(p); err != nil {
					return fmt.Errorf("download: %w", err)
				}
			}
		}
		return nil
	}
	logf(opts.Progress, "Downloading %s\n", strings.Join(names, ", "))
	if err := EnsureDirectoryExists(directory); err != nil {
		return err
	}
	for i, u := range urls {
		if u == "" {
			if urlPrefix == nil {
				return ErrNeedURLPrefix
			}
			u = *urlPrefix + names[i]
		}
		if err := Fetch(ctx, directory, File{Name: names[i], URLs: []string{u}}, opts); err != nil {
			return err
		}
	}
	return nil
}
