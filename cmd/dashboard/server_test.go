package dashboard

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// writeRun stores a run of n iterations (cost = 1/iteration) in the log
// at path and returns its UUID.
func writeRun(t testing.TB, path string, n int, resumedFrom string) string {
	t.Helper()
	db, err := sqlitelog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := mainloop.NewTrainingLog()
	l.Status.ResumedFrom = resumedFrom
	for i := 1; i <= n; i++ {
		r, _ := l.Row(i)
		r["cost"] = 1 / float64(i)
		l.Status.IterationsDone = i
	}
	if n > 0 {
		l.CurrentRow()[mainloop.RecordTrainingFinished] = true
	}
	if err := db.Save(l); err != nil {
		t.Fatal(err)
	}
	return l.UUID
}

func newTestServer(t *testing.T, paths ...string) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Paths: paths, Token: testToken, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

// testToken is newTestServer's token, which get sends.
const testToken = "secret"

// get GETs url with the test servers' token.
func get(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := getWith(url, testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, b)
		}
	}
	return resp.StatusCode
}

// getWith GETs url with the token in X-Blocks-Token ("": none).
func getWith(url, token string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("X-Blocks-Token", token)
	}
	return http.DefaultClient.Do(req)
}

func TestRunsDataAndDetail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	a := writeRun(t, path, 5, "")
	b := writeRun(t, path, 8, a)
	_, ts := newTestServer(t, dir)
	var list struct{ Runs []Run }
	if code := get(t, ts.URL+"/api/runs", &list); code != 200 {
		t.Fatalf("GET /api/runs: %d", code)
	}
	if len(list.Runs) != 2 {
		t.Fatalf("want 2 runs, got %+v", list.Runs)
	}
	for _, r := range list.Runs {
		if r.ID == b && (len(r.Chain) != 2 || r.Chain[1] != a || r.Status != "finished") {
			t.Errorf("run b: %+v", r)
		}
		if r.ID == a && (len(r.ContinuedBy) != 1 || r.ContinuedBy[0] != b) {
			t.Errorf("run a is continued by b: %+v", r)
		}
	}
	var d Data
	if code := get(t, ts.URL+"/api/runs/"+b+"/data?since=3", &d); code != 200 {
		t.Fatalf("data: %d", code)
	}
	pts := d.Channels["cost"]
	if len(pts) != 6 || pts[0][0] != 3 || pts[5][0] != 8 || pts[5][1] != 1.0/8 {
		t.Errorf("cost since 3: %v", pts)
	}
	var det Detail
	if code := get(t, ts.URL+"/api/runs/"+b, &det); code != 200 || det.StatusValues["resumed_from"] != a {
		t.Errorf("detail: %d %+v", code, det)
	}
}

func TestBadRunIDs(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "runs.sqlite"), 3, "")
	_, ts := newTestServer(t, dir)
	for _, c := range []struct {
		path string
		code int
	}{
		{"/api/runs/0123456789abcdef", 404},
		{"/api/runs/0123456789abcdef/data", 404},
		{"/api/runs/bad%20id", 400},
		{"/api/runs/bad%27%3B--/data", 400},
		{"/api/runs/" + strings.Repeat("a", 200), 400},
		{"/api/runs/..", 404}, // cleaned to /api/
		{"/api/nothing", 404},
	} {
		if code := get(t, ts.URL+c.path, nil); code != c.code {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.code)
		}
	}
	var list struct{ Runs []Run }
	get(t, ts.URL+"/api/runs", &list)
	for _, since := range []string{"-1", "x", "1e3"} {
		if code := get(t, ts.URL+"/api/runs/"+list.Runs[0].ID+"/data?since="+since, nil); code != 400 {
			t.Errorf("since=%s: %d, want 400", since, code)
		}
	}
}

// TestPathTraversal: no URL reaches a file outside the embedded page,
// and no parameter names a file.
func TestPathTraversal(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "runs.sqlite"), 3, "")
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, dir)
	for _, p := range []string{
		"/static/../server.go", "/static/..%2fserver.go", "/static/%2e%2e/%2e%2e/go.mod", "/static/vendor/../../agent.go",
		"/static//etc/passwd", "/static/..%5c..%5cgo.mod", "/%2e%2e/%2e%2e/etc/passwd", "/static/" + secret,
		"/api/runs/..%2F..%2Fetc%2Fpasswd/data", "/api/runs/%2e%2e%2fsecret.txt", "/api/runs?path=" + secret, "/?file=" + secret,
	} {
		resp, err := getWith(ts.URL+p, testToken)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(b, []byte("TOP-SECRET")) || bytes.Contains(b, []byte("package dashboard")) || bytes.Contains(b, []byte("root:x:0")) || bytes.Contains(b, []byte("module github.com")) {
			t.Errorf("GET %s served a file: %.80q", p, b)
		}
	}
	// The page and its library are served.
	for _, p := range []string{"/", "/static/app.js", "/static/vendor/uplot/uPlot.iife.min.js", "/static/vendor/uplot/uPlot.min.css"} {
		if code := get(t, ts.URL+p, nil); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

// TestCyclicResumedFrom: runs that resume from each other (a corrupt
// log) are listed with the cycle named, and their data is served.
func TestCyclicResumedFrom(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	a := writeRun(t, path, 3, "")
	b := writeRun(t, path, 6, a)
	c := writeRun(t, path, 4, "self-missing")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT OR REPLACE INTO status (uuid, "key", value) VALUES (?, 'resumed_from', ?)`, a, b); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, ts := newTestServer(t, dir)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var list struct{ Runs []Run }
		if code := get(t, ts.URL+"/api/runs", &list); code != 200 {
			t.Errorf("runs: %d", code)
			return
		}
		for _, r := range list.Runs {
			switch r.ID {
			case a, b:
				if !strings.Contains(r.ChainError, "cycle") {
					t.Errorf("run %s: chain error %q, want a cycle", r.ID, r.ChainError)
				}
			case c:
				if !strings.Contains(r.ChainError, "not in this log") {
					t.Errorf("run %s: chain error %q", r.ID, r.ChainError)
				}
			}
			var d Data
			if code := get(t, ts.URL+"/api/runs/"+r.ID+"/data", &d); code != 200 || len(d.Channels["cost"]) == 0 {
				t.Errorf("data of %s: %d %v", r.ID, code, d.Channels)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a cyclic resumed_from chain hangs the server")
	}
}

// TestLogWrittenConcurrently reads a log while a writer adds rows: every
// answer is whole, the points only grow, and the last read has them all.
func TestLogWrittenConcurrently(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.sqlite")
	db, err := sqlitelog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := mainloop.NewTrainingLog()
	if err := db.Sync(l); err != nil {
		t.Fatal(err)
	}
	s, ts := newTestServer(t, path)
	const n = 300
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= n; i++ {
			r, _ := l.Row(i)
			r["cost"] = float64(i)
			l.Status.IterationsDone = i
			if err := db.Sync(l); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	last := 0
	deadline := time.Now().Add(30 * time.Second)
	for last < n && time.Now().Before(deadline) {
		s.Store().Refresh(context.Background())
		var d Data
		if code := get(t, ts.URL+"/api/runs/"+l.UUID+"/data", &d); code != 200 {
			t.Fatalf("data: %d", code)
		}
		pts := d.Channels["cost"]
		if len(pts) < last {
			t.Fatalf("points went from %d to %d", last, len(pts))
		}
		for i, p := range pts {
			if p[0] != float64(i+1) || p[1] != float64(i+1) {
				t.Fatalf("point %d is %v", i, p)
			}
		}
		last = len(pts)
	}
	wg.Wait()
	if last != n {
		t.Fatalf("read %d of %d rows", last, n)
	}
}

// TestStopNeedsToken: a stop request without the token, or with a wrong
// one, is refused; with it, a live run gets the request and its Agent
// turns it into a batch interrupt (what SIGTERM does).
func TestStopNeedsToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	l := mainloop.NewTrainingLog()
	agent := &Agent{Backend: &sqlitelog.Lazy{Path: path}, Path: path, Messages: io.Discard,
		Info: RunInfo{ScriptPath: "/x/exp.star", Script: []byte("print(1)\n"), Overrides: map[string]string{"epochs": "3"}}}
	defer agent.Close()
	r, _ := l.Row(1)
	r["cost"] = 1.0
	l.Status.IterationsDone = 1
	if err := agent.Sync(l); err != nil {
		t.Fatal(err)
	}
	s, ts := newTestServer(t, dir)
	waitLive := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			s.Store().Refresh(context.Background())
			if ref, err := s.Store().ref(l.UUID); err == nil && ref.run.Live == want {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("run never live=%v", want)
	}
	waitLive(true)
	post := func(url, token string) int {
		req, _ := http.NewRequest("POST", url, nil)
		if token != "" {
			req.Header.Set("X-Blocks-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	stop := ts.URL + "/api/runs/" + l.UUID + "/stop"
	if code := post(stop, ""); code != http.StatusUnauthorized {
		t.Errorf("stop without a token: %d", code)
	}
	if code := post(stop, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("stop with a wrong token: %d", code)
	}
	if code := post(stop+"?token=wrong", ""); code != http.StatusUnauthorized {
		t.Errorf("stop with a wrong token parameter: %d", code)
	}
	if code := get(t, stop, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET stop: %d", code)
	}
	// Nothing was requested.
	time.Sleep(2 * HeartbeatEvery)
	if err := agent.Sync(l); err != nil {
		t.Fatal(err)
	}
	if l.Status.BatchInterruptReceived {
		t.Fatal("a refused stop stopped the run")
	}
	if code := post(ts.URL+"/api/runs/0123456789abcdef/stop", "secret"); code != http.StatusNotFound {
		t.Errorf("stop of an unknown run: %d", code)
	}
	if code := post(stop, "secret"); code != http.StatusAccepted {
		t.Fatalf("stop with the token: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !l.Status.BatchInterruptReceived && time.Now().Before(deadline) {
		time.Sleep(HeartbeatEvery / 4)
		l.Status.IterationsDone++
		if err := agent.Sync(l); err != nil {
			t.Fatal(err)
		}
	}
	if !l.Status.BatchInterruptReceived || !mainloop.Truthy(l.CurrentRow()[mainloop.RecordBatchInterruptReceived]) {
		t.Fatal("the agent did not act on the stop request")
	}
	// A run that has ended cannot be stopped.
	if err := agent.Close(); err != nil {
		t.Fatal(err)
	}
	waitLive(false)
	if code := post(stop, "secret"); code != http.StatusConflict {
		t.Errorf("stop of an ended run: %d", code)
	}
	var det Detail
	// sha256sum of "print(1)\n"
	if get(t, ts.URL+"/api/runs/"+l.UUID, &det); det.ScriptSHA256 != "cc42155088fca5730758db72b2a5bca33112a941dfaa2d43098ec422ce4ea213" || det.Config[0].Override != "3" {
		t.Errorf("detail: sha256 %s config %+v", det.ScriptSHA256, det.Config)
	}
}

// TestHostAndReadToken: a loopback server refuses other Host names (DNS
// rebinding), and every read of data needs the token, on loopback too
// (another local user would read the scripts and command lines): only
// the page and its static files are served without it.
func TestHostAndReadToken(t *testing.T) {
	dir := t.TempDir()
	id := writeRun(t, filepath.Join(dir, "runs.sqlite"), 3, "")
	_, ts := newTestServer(t, dir)
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs", nil)
	req.Host = "evil.example:80"
	req.Header.Set("X-Blocks-Token", testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	for _, p := range []string{"/api/runs", "/api/runs/" + id, "/api/runs/" + id + "/data?since=0", "/api/events"} {
		for _, c := range []struct {
			token string
			code  int
		}{{"", http.StatusUnauthorized}, {"wrong", http.StatusUnauthorized}, {testToken, http.StatusOK}} {
			if p == "/api/events" && c.code == http.StatusOK {
				continue // a stream: it does not end
			}
			resp, err := getWith(ts.URL+p, c.token)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code || c.code != http.StatusOK && bytes.Contains(b, []byte(id)) {
				t.Errorf("GET %s with token %q: %d %.100q, want %d", p, c.token, resp.StatusCode, b, c.code)
			}
		}
	}
	for _, p := range []string{"/api/runs?token=" + testToken, "/api/runs/" + id + "/data?since=0&token=" + testToken} {
		if code := get(t, ts.URL+p, nil); code != http.StatusOK {
			t.Errorf("GET %s: %d", p, code)
		}
		resp, err := getWith(ts.URL+p, "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s (the token in the URL): %d", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"/", "/static/app.js"} {
		resp, err := getWith(ts.URL+p, "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without the token: %d (the page has no data)", p, resp.StatusCode)
		}
	}
}

// TestConcurrentDetailsDoNotDeadlock asks for the details of two runs of
// one log many times at once, as the page does for its selected runs: a
// query made while another's rows held a connection once took both of the
// pool's connections and hung every later request of that log.
func TestConcurrentDetailsDoNotDeadlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	a := writeRun(t, path, 5, "")
	b := writeRun(t, path, 8, "")
	_, ts := newTestServer(t, dir)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func(id string) {
				defer wg.Done()
				resp, err := getWith(ts.URL+"/api/runs/"+id, testToken)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}([]string{a, b}[i%2])
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("64 concurrent detail requests did not all answer within 20 s (the log's connection pool deadlocked)")
	}
	var det Detail
	if code := get(t, ts.URL+"/api/runs/"+a, &det); code != 200 {
		t.Errorf("detail after the concurrent requests: %d", code)
	}
}
