package download

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blocks-go/blocks/internal/tty"
	"github.com/schollz/progressbar/v3"
)

// Options configure a download.
type Options struct {
	// Progress receives the progress: a bar when it is a terminal, plain
	// lines otherwise; nil for none.
	Progress io.Writer
	// Client makes the requests (http.DefaultClient when nil).
	Client *http.Client
	// Attempts is the number of tries of one address whose transfer keeps
	// dropping, each resuming where the last stopped (3 when 0).
	Attempts int
	// Stall aborts a transfer (which is then resumed) when no byte comes
	// for this long (60 s when 0).
	Stall time.Duration
}

func (o *Options) defaults() {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Attempts == 0 {
		o.Attempts = 3
	}
	if o.Stall == 0 {
		o.Stall = 60 * time.Second
	}
}

// partName is where a file is written until complete and verified.
func partName(dir, name string) string { return filepath.Join(dir, "."+name+".part") }

// Download fetches files into dir (created if missing). A file already
// there whose digest matches the published one is kept; every other is
// fetched anew.
func Download(ctx context.Context, dir string, files []File, opts Options) error {
	opts.defaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	logf(opts.Progress, "Downloading %s into %s\n", strings.Join(names, ", "), dir)
	for _, f := range files {
		if err := Fetch(ctx, dir, f, opts); err != nil {
			return err
		}
	}
	return nil
}

// Clear removes files (and their partial downloads) from dir, as
// fuel-download --clear.
func Clear(dir string, files []File) error {
	for _, f := range files {
		for _, p := range []string{filepath.Join(dir, f.Name), partName(dir, f.Name)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("download: %w", err)
			}
		}
	}
	return nil
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// Fetch downloads one file into dir, trying its addresses in order.
func Fetch(ctx context.Context, dir string, f File, opts Options) error {
	opts.defaults()
	if f.Name == "" || strings.ContainsAny(f.Name, `/\`) {
		return fmt.Errorf("download: bad file name %q", f.Name)
	}
	final := filepath.Join(dir, f.Name)
	if f.MD5 != "" {
		if sum, _, err := digests(final); err == nil && sum == f.MD5 {
			logf(opts.Progress, "%s: already there, MD5 %s verified\n", f.Name, sum)
			return nil
		}
	}
	part := partName(dir, f.Name)
	fe := &FetchError{Name: f.Name}
	for i, url := range f.URLs {
		err := fetchURL(ctx, url, part, f.Name, opts)
		if err == nil {
			var sum, sha string
			sum, sha, err = verify(part, f)
			if err == nil {
				if err := commit(part, final); err != nil {
					return err
				}
				if f.MD5 != "" {
					logf(opts.Progress, "%s: MD5 %s verified (published in %s)\n", f.Name, sum, f.DigestSource)
				} else {
					logf(opts.Progress, "%s: no published digest to check it against (MD5 %s, SHA-256 %s)\n", f.Name, sum, sha)
				}
				return nil
			}
			// The whole file came and is wrong: start afresh elsewhere.
			os.Remove(part)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("download: %s: %w", f.Name, context.Cause(ctx))
		}
		// net/http's errors repeat the address; it is said once here.
		var ue *neturl.Error
		if errors.As(err, &ue) && ue.URL == url {
			err = ue.Err
		}
		next := ""
		if i+1 < len(f.URLs) {
			next = "; trying the next address"
		}
		logf(opts.Progress, "%s: %s failed: %v%s\n", f.Name, url, err, next)
		fe.URLs = append(fe.URLs, url)
		fe.Errs = append(fe.Errs, err)
	}
	if len(f.URLs) == 0 {
		return fmt.Errorf("download: %s: no address to fetch it from", f.Name)
	}
	return fe
}

// FetchError is the failure of every address of a file; errors.As finds
// a *ChecksumError among them.
type FetchError struct {
	// Name is the file that could not be fetched.
	Name string
	// URLs are the addresses tried, in order, and Errs why each failed.
	URLs []string
	Errs []error
}

func (e *FetchError) Error() string {
	if len(e.URLs) == 1 {
		return fmt.Sprintf("download: %s: %s: %v", e.Name, e.URLs[0], e.Errs[0])
	}
	lines := make([]string, len(e.URLs))
	for i, u := range e.URLs {
		lines[i] = fmt.Sprintf("%s: %v", u, e.Errs[i])
	}
	return fmt.Sprintf("download: %s: every address failed:\n  %s", e.Name, strings.Join(lines, "\n  "))
}

func (e *FetchError) Unwrap() []error { return e.Errs }

// Unreachable reports whether no address could be reached at all (no
// network, unknown hosts, refused connections), as opposed to a server
// that answered with an error or a wrong file.
func (e *FetchError) Unreachable() bool {
	for _, err := range e.Errs {
		var ne net.Error
		var oe *net.OpError
		var de *net.DNSError
		if !errors.As(err, &oe) && !errors.As(err, &de) && !(errors.As(err, &ne) && ne.Timeout()) {
			return false
		}
	}
	return len(e.Errs) > 0
}

// ChecksumError is a file whose digest is not the published one.
type ChecksumError struct {
	Name, Got, Want, Source string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("MD5 mismatch: got %s, the published digest (%s) is %s; the file was not kept", e.Got, e.Source, e.Want)
}

// verify checks a complete download against the published digest and
// returns its MD5 and SHA-256.
func verify(part string, f File) (md5sum, sha string, err error) {
	md5sum, sha, err = digests(part)
	if err != nil {
		return "", "", err
	}
	if f.MD5 != "" && md5sum != f.MD5 {
		return "", "", &ChecksumError{Name: f.Name, Got: md5sum, Want: f.MD5, Source: f.DigestSource}
	}
	return md5sum, sha, nil
}

func digests(path string) (md5sum, sha string, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer fh.Close()
	m, s := md5.New(), sha256.New()
	if _, err := io.Copy(io.MultiWriter(m, s), fh); err != nil {
		return "", "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(m.Sum(nil)), hex.EncodeToString(s.Sum(nil)), nil
}

// commit moves a verified download into place: fsync, rename, fsync the
// directory.
func commit(part, final string) error {
	fh, err := os.OpenFile(part, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	err = fh.Sync()
	if e := fh.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(part, final)
	}
	if err != nil {
		return fmt.Errorf("download: moving %s into place: %w", filepath.Base(final), err)
	}
	if d, err := os.Open(filepath.Dir(final)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// fetchURL brings part to the complete content of url, resuming from
// what part holds, with up to opts.Attempts tries in a row that make no
// progress.
func fetchURL(ctx context.Context, url, part, name string, opts Options) error {
	var last error
	for tries := 0; tries < opts.Attempts; {
		have := int64(0)
		if st, err := os.Stat(part); err == nil {
			have = st.Size()
		}
		got, done, err := fetchOnce(ctx, url, part, name, have, opts)
		if done {
			return nil
		}
		if err == nil {
			err = errors.New("transfer ended early")
		}
		var perm permanent
		if errors.As(err, &perm) || ctx.Err() != nil {
			return err
		}
		last = err
		if got <= have {
			tries++ // no further than before this try
		}
		if opts.Progress != nil {
			logf(opts.Progress, "%s: %v; resuming\n", name, err)
		}
	}
	return last
}

// permanent marks an error that a retry of the same address will not fix.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// fetchOnce makes one request for the rest of url from offset have. It
// returns the size part has reached and whether it is now complete.
func fetchOnce(ctx context.Context, url, part, name string, have int64, opts Options) (int64, bool, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false, permanent{err}
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) && dns.IsNotFound || errors.Is(err, syscall.ECONNREFUSED) {
			// No such host, or nothing listens there: trying again
			// would only delay the next address.
			return 0, false, permanent{err}
		}
		return 0, false, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE
	start := int64(0)
	total := resp.ContentLength
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		s, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || s != have {
			return 0, false, fmt.Errorf("bad Content-Range %q for a resume at byte %d", resp.Header.Get("Content-Range"), have)
		}
		start, total = have, size
		flags |= os.O_APPEND
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// What part holds is the whole file, or garbage: check it, or
		// start over.
		if _, size, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && size == have {
			return 0, true, nil
		}
		os.Remove(part)
		return 0, false, errors.New("the partial download does not fit the file; starting over")
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC // no range support: the whole file again
	default:
		err := fmt.Errorf("HTTP %s", resp.Status)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return 0, false, permanent{err}
		}
		return 0, false, err
	}
	fh, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, false, permanent{fmt.Errorf("writing %s: %w", part, err)}
	}
	defer fh.Close()
	bar := newProgress(opts.Progress, name, start, total)
	watchdog := time.AfterFunc(opts.Stall, func() {
		cancel(fmt.Errorf("no data for %v", opts.Stall))
	})
	defer watchdog.Stop()
	body := &stallReader{r: resp.Body, timer: watchdog, stall: opts.Stall}
	n, err := io.Copy(io.MultiWriter(fh, bar), body)
	bar.finish(err == nil)
	if err != nil {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil {
			err = c
		}
		return start + n, false, fmt.Errorf("after %d bytes: %w", start+n, err)
	}
	if total >= 0 && start+n != total {
		return start + n, false, fmt.Errorf("got %d of %d bytes", start+n, total)
	}
	return start + n, true, nil
}

func parseContentRange(h string) (start, size int64, ok bool) {
	// bytes START-END/SIZE
	rest, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	size, err := strconv.ParseInt(sz, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if rng == "*" {
		return -1, size, true
	}
	s, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err = strconv.ParseInt(s, 10, 64)
	return start, size, err == nil
}

// stallReader resets the stall watchdog at each read that brings data.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	stall time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.stall)
	}
	return n, err
}

// progress is a progress bar on a terminal, or plain lines every 10%
// (or every 10 MB when the size is unknown) elsewhere.
type progress struct {
	bar        *progressbar.ProgressBar
	w          io.Writer
	name       string
	done, size int64
	next       int64
}

func newProgress(w io.Writer, name string, start, size int64) *progress {
	p := &progress{w: w, name: name, done: start, size: size}
	if w == nil {
		return p
	}
	if tty.Is(w) {
		p.bar = progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(name),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
		if start > 0 {
			p.bar.Set64(start)
		}
		return p
	}
	if start > 0 {
		fmt.Fprintf(w, "%s: resuming at %s\n", name, human(start))
	}
	p.next = p.step(start)
	return p
}

func (p *progress) step(done int64) int64 {
	if p.size > 0 {
		tenth := p.size / 10
		if tenth == 0 {
			tenth = 1
		}
		return (done/tenth + 1) * tenth
	}
	const mb10 = 10 << 20
	return (done/mb10 + 1) * mb10
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	switch {
	case p.bar != nil:
		p.bar.Add(len(b))
	case p.w != nil && p.done >= p.next && (p.size <= 0 || p.done < p.size):
		p.line()
		p.next = p.step(p.done)
	}
	return len(b), nil
}

func (p *progress) line() {
	if p.size > 0 {
		fmt.Fprintf(p.w, "%s: %s of %s (%d%%)\n", p.name, human(p.done), human(p.size), p.done*100/p.size)
	} else {
		fmt.Fprintf(p.w, "%s: %s\n", p.name, human(p.done))
	}
}

func (p *progress) finish(ok bool) {
	switch {
	case p.bar != nil:
		if ok {
			p.bar.Finish()
		} else {
			fmt.Fprintln(p.w)
		}
	case p.w != nil && ok:
		p.line()
	}
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
