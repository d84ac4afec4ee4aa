package dashboard

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/sqlitelog"
)

// plantLog writes an SQLite file whose status is a view over a recursive
// query that never ends (and never yields a row).
func plantLog(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIEW status AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
		SELECT 'u' AS uuid, 'k' AS "key", x AS value FROM c WHERE x < 0`); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serve starts s on a loopback port with its poller; stop ends both and
// reports how long they took to end.
func serve(t *testing.T, s *Server) (url string, stop func() time.Duration) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.Run(ctx) }()
	go func() { defer wg.Done(); _ = s.Serve(ctx, ln) }()
	stopped := false
	stop = func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		start := time.Now()
		cancel()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		_ = s.Shutdown(sctx)
		wg.Wait()
		s.Close()
		return time.Since(start)
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String(), stop
}

// waitRuns polls /api/runs until ok accepts the list.
func waitRuns(t *testing.T, url string, within time.Duration, ok func([]Run) bool) []Run {
	t.Helper()
	deadline := time.Now().Add(within)
	var list struct{ Runs []Run }
	for time.Now().Before(deadline) {
		list.Runs = nil
		if get(t, url+"/api/runs", &list) == http.StatusOK && ok(list.Runs) {
			return list.Runs
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("within %v, /api/runs never gave what was awaited; last: %+v", within, list.Runs)
	return nil
}

// TestPlantedLogNeverBlocks: an SQLite file planted in a searched
// directory whose status never ends once made the dashboard never serve
// (New read every log before listening, without a deadline) and ignore
// Ctrl-C; dropped in later, it froze every run's state. Now its queries
// are interrupted at the deadline, it is skipped with the reason logged,
// and the other logs stay live.
func TestPlantedLogNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "runs.sqlite")
	id := writeRun(t, good, 3, "")
	plantLog(t, filepath.Join(dir, "sub", "trap.sqlite"))
	var logw syncBuffer
	// New reads nothing: with an hour's deadline it still returns at
	// once, and the server serves.
	start := time.Now()
	s, err := New(Options{Paths: []string{dir}, Token: testToken, Loopback: true, QueryTimeout: 500 * time.Millisecond, Log: &logw})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("New took %v", d)
	}
	url, stop := serve(t, s)
	waitRuns(t, url, 30*time.Second, func(r []Run) bool { return len(r) == 1 && r[0].ID == id && r[0].Iterations == 3 })
	if !strings.Contains(logw.String(), "skipping "+filepath.Join(dir, "sub", "trap.sqlite")+": its queries took over 500ms") {
		t.Errorf("the skipped log is not logged: %q", logw.String())
	}
	// Dropped in later: the good run's rows still reach the list.
	plantLog(t, filepath.Join(dir, "later.db"))
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logw.String(), "later.db"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the later log is never skipped: %q", logw.String())
		}
	}
	db, err := sqlitelog.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4; i <= 6; i++ {
		r, _ := l.Row(i)
		r["cost"] = 1 / float64(i)
		l.Status.IterationsDone = i
	}
	if err := db.Sync(l); err != nil {
		t.Fatal(err)
	}
	db.Close()
	waitRuns(t, url, 30*time.Second, func(r []Run) bool { return len(r) == 1 && r[0].Iterations == 6 })
	if d := stop(); d > 5*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

// TestStopWhileReadingPlantedLog: with a deadline longer than the test,
// ending the server's context interrupts the query at once (Ctrl-C was
// ignored while New read such a log).
func TestStopWhileReadingPlantedLog(t *testing.T) {
	dir := t.TempDir()
	plantLog(t, filepath.Join(dir, "trap.sqlite"))
	s, err := New(Options{Paths: []string{dir}, Token: testToken, Loopback: true, QueryTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, s)
	// The page is served while the poller is stuck in the log.
	if code := get(t, url+"/", nil); code != http.StatusOK {
		t.Errorf("GET /: %d", code)
	}
	if code := get(t, url+"/api/runs", nil); code != http.StatusOK {
		t.Errorf("GET /api/runs: %d", code)
	}
	if d := stop(); d > 5*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(es)
}

// TestConnectionsCapped: idle connections by the thousand once took every
// file descriptor of the training process the server lives in (its
// checkpoint then failed: too many open files). The server now holds at
// most MaxConns connections (more wait in the kernel's queue), closes
// those idle past IdleTimeout, and keeps at most MaxStreams event
// streams; the others are served once the idle ones are closed.
func TestConnectionsCapped(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "runs.sqlite"), 3, "")
	s, err := New(Options{Paths: []string{dir}, Token: testToken, Loopback: true, MaxConns: 8, MaxStreams: 3, IdleTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := serve(t, s)
	host := strings.TrimPrefix(url, "http://")
	// Three streams are served, the fourth is refused.
	var streams []net.Conn
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /api/events?token=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", testToken)
		status, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		want := "200"
		if i == 3 {
			want = "503"
		}
		if !strings.Contains(status, " "+want+" ") {
			t.Errorf("event stream %d: %q, want %s", i+1, status, want)
		}
		streams = append(streams, c)
	}
	streams[3].Close()
	// 100 idle connections: the server's side holds at most 8.
	before := openFDs(t)
	const n = 100
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	time.Sleep(200 * time.Millisecond) // let the server accept what it will
	if got := openFDs(t) - before; got > n+8 {
		t.Errorf("%d idle connections took %d file descriptors (theirs, and %d of the server's; at most 8)", n, got, got-n)
	}
	// Served anyway, once the idle ones are closed (0.3 s each, 5 at
	// a time); the three streams stay.
	client := &http.Client{Timeout: 120 * time.Second}
	req, _ := http.NewRequest("GET", url+"/api/runs", nil)
	req.Header.Set("X-Blocks-Token", testToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the flood: %s", resp.Status)
	}
}

// TestDataPaged: a data answer holds at most MaxDataRows rows and says
// where the rest starts; paging through gives every point once, along a
// resumed chain too (a 2M-row log once took 700 MB a request).
func TestDataPaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	a := writeRun(t, path, 300, "")
	b := writeRun(t, path, 500, a) // iterations 1..500 again: b's values win
	s, err := New(Options{Paths: []string{dir}, Token: testToken, Loopback: true, MaxDataRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptestServer(t, s)
	waitRuns(t, ts, 30*time.Second, func(r []Run) bool { return len(r) == 2 })
	got := map[float64]float64{}
	pages := 0
	for since := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging never ends")
		}
		var d Data
		if code := get(t, fmt.Sprintf("%s/api/runs/%s/data?since=%d", ts, b, since), &d); code != 200 {
			t.Fatalf("data since %d: %d", since, code)
		}
		pts := d.Channels["cost"]
		if len(pts) > 100 {
			t.Errorf("a page of %d points (the cap is 100 rows)", len(pts))
		}
		for _, p := range pts {
			if _, dup := got[p[0]]; dup {
				t.Errorf("iteration %v twice", p[0])
			}
			got[p[0]] = p[1]
		}
		if d.Next == 0 {
			break
		}
		if d.Next <= since {
			t.Fatalf("next %d after since %d", d.Next, since)
		}
		since = d.Next
	}
	if len(got) != 500 || pages < 5 {
		t.Errorf("%d points in %d pages, want 500 in at least 5", len(got), pages+1)
	}
	for it := 1; it <= 500; it++ {
		if got[float64(it)] != 1/float64(it) {
			t.Fatalf("iteration %d: %v", it, got[float64(it)])
		}
	}
}

func httptestServer(t *testing.T, s *Server) string {
	t.Helper()
	url, _ := serve(t, s)
	return url
}
