package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzHandlers sends requests of fuzzed method, path, query, token and
// Host to the dashboard's handler over a log of two runs (one resumed
// from the other) and a checkpoint-less directory holding a secret file.
// Every request must get an answer that is not a server error, never the
// secret or a file of the source tree, and a JSON body on the API.
func FuzzHandlers(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "runs.sqlite")
	a := writeRun(f, path, 20, "")
	b := writeRun(f, path, 30, a)
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("TOP-SECRET"), 0o600); err != nil {
		f.Fatal(err)
	}
	s, err := New(Options{Paths: []string{dir}, Token: testToken, Loopback: true, MaxDataRows: 7})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	s.Store().Refresh(context.Background())
	for _, p := range []string{"/api/runs", "/api/runs/" + a, "/api/runs/" + b + "/data", "/", "/static/app.js", "/api/runs/" + b + "/stop", "/api/events"} {
		f.Add("GET", p, "since=3", true, "")
		f.Add("POST", p, "", true, "")
		f.Add("GET", p, "token="+testToken+"&since=-1", false, "127.0.0.1")
	}
	f.Add("GET", "/api/runs/"+b+"/data", "since=99999999999999999999", true, "localhost:1")
	f.Add("GET", "/static/../server.go", "", true, "")
	f.Add("GET", "/api/runs/..%2fsecret.txt/data", "", true, "[::1]")
	f.Fuzz(func(t *testing.T, method, path, query string, withToken bool, host string) {
		if len(path) > 4096 || len(query) > 4096 {
			return
		}
		u := &url.URL{Scheme: "http", Host: "127.0.0.1", RawQuery: query}
		// Paths as a client sends them: the fuzzed text, escaped where
		// it must be.
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u.Path = path
		req, err := http.NewRequest(method, u.String(), nil)
		if err != nil {
			return
		}
		if host != "" {
			req.Host = host
		}
		if withToken {
			req.Header.Set("X-Blocks-Token", testToken)
		}
		wait := time.Minute
		if strings.HasPrefix(req.URL.Path, "/api/events") {
			wait = 10 * time.Millisecond // ends the stream
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		req = req.WithContext(ctx)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		body := w.Body.Bytes()
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %s: %d %.200q", method, u, w.Code, body)
		}
		if bytes.Contains(body, []byte("TOP-SECRET")) || bytes.Contains(body, []byte("package dashboard")) {
			t.Fatalf("%s %s served a file: %.200q", method, u, body)
		}
		if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && !json.Valid(body) {
			t.Fatalf("%s %s: not JSON: %.200q", method, u, body)
		}
		if w.Code == http.StatusOK && strings.HasPrefix(req.URL.Path, "/api/") && !s.tokenOK(req) {
			t.Fatalf("%s %s answered without the token", method, u)
		}
	})
}
