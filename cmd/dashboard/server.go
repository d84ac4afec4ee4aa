// Package dashboard is blocks-repl's live dashboard: a local web server
// that lists the runs of SQLite logs and checkpoints and shows their
// curves, config, script, status and checkpoints in a browser while they
// train, and an Agent, the run's side, through which the dashboard can
// ask a run to stop (as SIGTERM does: finish the batch, run the
// after_training extensions, exit 0).
//
// The server polls the logs (file signatures, every PollEvery) and tells
// the page through server-sent events (/api/events) when something
// changed; the page then fetches the new rows (/api/runs/{id}/data?since=N).
// EventSource reconnects by itself, so the page survives a restart of the
// server. The page and its charting library (uPlot, vendored at a pinned
// version in web/vendor) are embedded in the binary: nothing is fetched
// from the network.
//
// Endpoints (JSON): GET /api/runs, GET /api/runs/{id}, GET
// /api/runs/{id}/data?since=ITERATION, GET /api/events (text/event-stream),
// POST /api/runs/{id}/stop. Every endpoint needs the token (the page
// and its static files do not: they hold no data); it comes in the
// X-Blocks-Token header or the token query parameter.
//
// What one planted file or many clients can cost is bounded: each log's
// queries have a deadline (SQLite is interrupted), and a log that fails
// or times out is skipped, with the reason logged, until it changes;
// checkpoints are read only as far as the list needs (never their
// parameters); a data answer holds at most MaxDataRows rows (the page
// asks for the rest); at most MaxQueries requests query the logs at
// once, MaxStreams event streams are open, and Serve accepts at most
// MaxConns connections, so a flood of clients cannot take the file
// descriptors of the training process the server may live in.
package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blocks-go/blocks/train/sqlitelog"
)

//go:embed web
var webFS embed.FS

// PollEvery is how often the server looks for changes in the logs.
const PollEvery = 400 * time.Millisecond

// The server's limits, unless Options say otherwise.
const (
	// MaxConns is how many connections Serve holds at once; more wait,
	// unaccepted, in the kernel's queue.
	MaxConns = 64
	// MaxStreams is how many event streams are open at once; more get
	// 503.
	MaxStreams = 16
	// MaxQueries is how many requests read the logs at once; more wait.
	MaxQueries = 4
	// IdleTimeout closes a kept-alive connection that sends nothing.
	IdleTimeout = 60 * time.Second
	// writeTimeout bounds the writing of one answer (of one event).
	writeTimeout = 60 * time.Second
)

// Options configure a Server.
type Options struct {
	// Paths are the SQLite logs and directories to show.
	Paths []string
	// Token guards every request but the page's own files; empty: a
	// random one is made (see Server.Token).
	Token string
	// Loopback makes the server refuse requests whose Host is not a
	// loopback name (DNS rebinding); set it when binding loopback.
	Loopback bool
	// Log gets the reasons files are skipped (nil: discarded).
	Log io.Writer
	// Limits; 0: the package's defaults (QueryTimeout, MaxDataRows,
	// MaxConns, MaxStreams, MaxQueries, IdleTimeout).
	QueryTimeout time.Duration
	MaxDataRows  int
	MaxConns     int
	MaxStreams   int
	MaxQueries   int
	IdleTimeout  time.Duration
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Server is the dashboard's HTTP handler.
type Server struct {
	store    *Store
	token    string
	loopback bool
	started  string
	mux      *http.ServeMux
	maxRows  int
	maxConns int
	idle     time.Duration
	queries  chan struct{} // a slot per request reading the logs
	http     *http.Server

	mu         sync.Mutex
	subs       map[chan uint64]struct{}
	maxStreams int
}

// New returns a server over opts.Paths; Run starts its poller.
func New(opts Options) (*Server, error) {
	tok := opts.Token
	if tok == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("dashboard: making a token: %w", err)
		}
		tok = hex.EncodeToString(b)
	}
	st := NewStore(opts.Paths)
	st.queryTimeout = orDefault(opts.QueryTimeout, QueryTimeout)
	if opts.Log != nil {
		st.logw = opts.Log
	}
	// Nothing is read here: the first refresh is Run's (or the first
	// request's), so that a log that never answers cannot keep the
	// server from listening.
	s := &Server{store: st, token: tok, loopback: opts.Loopback,
		started: time.Now().UTC().Format(time.RFC3339Nano), subs: map[chan uint64]struct{}{},
		maxRows: orDefault(opts.MaxDataRows, MaxDataRows), maxConns: orDefault(opts.MaxConns, MaxConns),
		idle: orDefault(opts.IdleTimeout, IdleTimeout), maxStreams: orDefault(opts.MaxStreams, MaxStreams),
		queries: make(chan struct{}, orDefault(opts.MaxQueries, MaxQueries))}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: min(10*time.Second, s.idle), IdleTimeout: s.idle}
	static, err := fs.Sub(webFS, "web")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.index)
	m.Handle("GET /static/", http.StripPrefix("/static/", noCache(http.FileServer(http.FS(staticFS{static})))))
	m.HandleFunc("GET /api/runs", s.listRuns)
	m.HandleFunc("GET /api/runs/{id}", s.runDetail)
	m.HandleFunc("GET /api/runs/{id}/data", s.runData)
	m.HandleFunc("POST /api/runs/{id}/stop", s.stopRun)
	m.HandleFunc("GET /api/events", s.events)
	s.mux = m
	return s, nil
}

// Token is the token a stop request needs.
func (s *Server) Token() string { return s.token }

// Store is the server's store.
func (s *Server) Store() *Store { return s.store }

// Close closes the logs.
func (s *Server) Close() error { return s.store.Close() }

// Run polls the logs until ctx ends, telling the event streams about
// changes.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(PollEvery)
	defer t.Stop()
	for {
		if s.store.Refresh(ctx) {
			s.broadcast(s.store.Version())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Serve serves on ln until Shutdown, holding at most MaxConns
// connections (more wait unaccepted in the kernel's queue, taking no
// file descriptor of this process), closing idle ones after IdleTimeout
// and those that send no request headers within 10 s (or IdleTimeout
// when shorter). Requests' contexts
// derive from ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.http.BaseContext = func(net.Listener) context.Context { return ctx }
	return s.http.Serve(newLimitListener(ln, s.maxConns))
}

// Shutdown stops Serve, before or after it started (see
// http.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// limitListener accepts a connection only while fewer than cap are open.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// query takes one of the MaxQueries slots for a request that reads the
// logs; false when the request ended first.
func (s *Server) query(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case s.queries <- struct{}{}:
		s.store.ensureRefreshed(r.Context())
		return func() { <-s.queries }, true
	case <-r.Context().Done():
		jsonError(w, http.StatusServiceUnavailable, "the dashboard is busy")
		return nil, false
	}
}

func (s *Server) broadcast(v uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- v:
		default: // the client is behind: it gets the next one
		}
	}
}

// staticFS is the dashboard's own files, where a name that is no valid
// path (invalid UTF-8, say) does not exist: http.FileServer answers
// fs.ErrInvalid with a 500, a client's bad request with a server error.
type staticFS struct{ fs.FS }

func (f staticFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return f.FS.Open(name)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) tokenOK(r *http.Request) bool {
	t := r.Header.Get("X-Blocks-Token")
	if t == "" {
		t = r.URL.Query().Get("token")
	}
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// ServeHTTP checks the Host (loopback servers) and the token (when reads
// need one), sets the security headers and serves.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.loopback && !isLoopbackHost(r.Host) {
		jsonError(w, http.StatusForbidden, "this dashboard serves loopback names only (Host %q)", r.Host)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	if r.URL.Path != "/" && !strings.HasPrefix(r.URL.Path, "/static/") && !s.tokenOK(r) {
		jsonError(w, http.StatusUnauthorized, "this dashboard needs its token (open the URL it printed, with ?token=...)")
		return
	}
	if r.URL.Path != "/api/events" {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	}
	s.mux.ServeHTTP(w, r)
}

func jsonError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	release, ok := s.query(w, r)
	if !ok {
		return
	}
	defer release()
	writeJSON(w, http.StatusOK, map[string]any{"version": s.store.Version(), "started": s.started, "runs": s.store.Runs()})
}

// validID accepts the run ids a log can have (UUIDs and similar names).
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return id != "." && id != ".."
}

func (s *Server) runError(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, ErrNoRun) {
		jsonError(w, http.StatusNotFound, "no run %q", id)
		return
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		jsonError(w, http.StatusServiceUnavailable, "%v", err) // a slow log, or the client gone
		return
	}
	jsonError(w, http.StatusInternalServerError, "%v", err)
}

func (s *Server) runDetail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		jsonError(w, http.StatusBadRequest, "bad run id %q", id)
		return
	}
	release, ok := s.query(w, r)
	if !ok {
		return
	}
	defer release()
	d, err := s.store.Detail(r.Context(), id)
	if err != nil {
		s.runError(w, id, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) runData(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		jsonError(w, http.StatusBadRequest, "bad run id %q", id)
		return
	}
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			jsonError(w, http.StatusBadRequest, "since must be an iteration (an integer >= 0), got %q", v)
			return
		}
		since = n
	}
	release, ok := s.query(w, r)
	if !ok {
		return
	}
	defer release()
	d, err := s.store.Data(r.Context(), id, since, s.maxRows)
	if err != nil {
		s.runError(w, id, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// stopRun writes a stop request for a live run into its log; the run's
// Agent reads it within HeartbeatEvery and stops after its batch.
func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(r) {
		jsonError(w, http.StatusUnauthorized, "a stop request needs the dashboard's token")
		return
	}
	id := r.PathValue("id")
	if !validID(id) {
		jsonError(w, http.StatusBadRequest, "bad run id %q", id)
		return
	}
	release, ok := s.query(w, r)
	if !ok {
		return
	}
	defer release()
	ref, err := s.store.ref(id)
	if err != nil {
		s.runError(w, id, err)
		return
	}
	if ref.log == nil || !ref.run.Live {
		jsonError(w, http.StatusConflict, "run %s is not running (status: %s)", id, ref.run.Status)
		return
	}
	if err := requestStop(r.Context(), ref.log.path, id); err != nil {
		jsonError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.store.Refresh(r.Context())
	s.broadcast(s.store.Version())
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "stop requested", "run": id})
}

// requestStop marks the run's stop request in its log.
func requestStop(ctx context.Context, path, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second) // past the busy timeout
	defer cancel()
	db, err := sql.Open("sqlite", sqlitelog.BusyDSN(path))
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `UPDATE dashboard_runs SET stop_requested = ? WHERE uuid = ? AND stop_requested IS NULL`, unixNow(), id)
	if err != nil {
		return fmt.Errorf("writing the stop request to %s: %w", path, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := db.QueryRowContext(ctx, `SELECT 1 FROM dashboard_runs WHERE uuid = ?`, id).Scan(&one); err != nil {
			return fmt.Errorf("run %s has no control record in %s", id, path)
		}
	}
	return nil
}

// events streams "update" events (the store's version) whenever the logs
// change, and a comment every 15 s to keep the connection open.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		jsonError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "keep-alive")
	ch := make(chan uint64, 1)
	s.mu.Lock()
	if len(s.subs) >= s.maxStreams {
		s.mu.Unlock()
		jsonError(w, http.StatusServiceUnavailable, "the dashboard has %d event streams open, its most", s.maxStreams)
		return
	}
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	rc := http.NewResponseController(w)
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	send := func(event string, v any) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	fmt.Fprint(w, "retry: 1000\n\n")
	if !send("hello", map[string]any{"version": s.store.Version(), "started": s.started}) {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case v := <-ch:
			if !send("update", map[string]any{"version": v}) {
				return
			}
		case <-keep.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
