package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blocks-go/blocks/internal/tty"

	"github.com/blocks-go/blocks/cmd/dashboard"
)

// defaultDashboardPort is the dashboard's port unless --port says
// otherwise.
const defaultDashboardPort = 8765

const dashboardUsage = `  blocks-repl dashboard [--port N] [--addr HOST] [--token T] [LOG.sqlite | DIR]...
                                           a live dashboard in the browser: curves, config,
                                           script, checkpoints of runs; stop a running one
`

const dashboardHelp = `dashboard:
  LOG.sqlite, DIR    SQLite logs (run --log FILE.sqlite) and directories searched
                     (two levels) for logs and checkpoints (.tar); default: .
                     New files and new rows appear while the server runs.
  --port N           the port (default 8765; 0: any free port)
  --addr HOST        the address to bind (default 127.0.0.1, loopback only)
  --token T          the access token (default: BLOCKS_DASHBOARD_TOKEN, else a
                     random one). Every read and every stop needs it (other
                     local users cannot read the runs); the URL printed at
                     start carries it (?token=...).
`

func init() {
	registerCommand(command{
		name:  "dashboard",
		usage: dashboardUsage,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return dashboardCommand(args, stdout, stderr)
		},
	})
}

func dashboardCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", defaultDashboardPort, "")
	addr := fs.String("addr", "127.0.0.1", "")
	token := fs.String("token", os.Getenv("BLOCKS_DASHBOARD_TOKEN"), "")
	usageError := func(err error) int {
		return ownUsageError(stderr, "dashboard", err, dashboardUsage, dashboardHelp)
	}
	if answerOwnHelp(args, stdout, dashboardUsage, dashboardHelp) {
		return 0
	}
	// Paths and flags in any order.
	var paths []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return usageError(err)
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *port < 0 || *port > 65535 {
		return usageError(fmt.Errorf("--port must be in 0..65535, got %d", *port))
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil && !isSQLiteName(p) {
			fmt.Fprintf(stderr, "blocks-repl dashboard: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := startDashboard(ctx, paths, *addr, *port, *token, false, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl dashboard: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "dashboard: %s (Ctrl-C stops it)\n", d.url)
	<-ctx.Done()
	closed := make(chan struct{})
	go func() { d.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second): // a log that does not answer: exit anyway
	}
	return 0
}

func isSQLiteName(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".sqlite", ".sqlite3", ".db":
		return true
	}
	return false
}

// runningDashboard is a dashboard server started by this process.
type runningDashboard struct {
	url    string
	ds     *dashboard.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// startDashboard serves the dashboard on addr:port (fallback: when
// fallback is set and the port is taken, any free port).
func startDashboard(ctx context.Context, paths []string, addr string, port int, token string, fallback bool, stderr io.Writer) (*runningDashboard, error) {
	loopback := addr == "localhost" || net.ParseIP(addr) != nil && net.ParseIP(addr).IsLoopback()
	ds, err := dashboard.New(dashboard.Options{Paths: paths, Token: token, Loopback: loopback, Log: stderr})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil && fallback {
		ln, err = net.Listen("tcp", net.JoinHostPort(addr, "0"))
	}
	if err != nil {
		ds.Close()
		return nil, fmt.Errorf("listening on %s: %w", net.JoinHostPort(addr, strconv.Itoa(port)), err)
	}
	if !loopback {
		fmt.Fprintf(stderr, "blocks-repl dashboard: serving on %s, not loopback: anyone who has the token can read and stop the runs\n", addr)
	}
	cctx, cancel := context.WithCancel(ctx)
	d := &runningDashboard{ds: ds, cancel: cancel, done: make(chan struct{})}
	host := addr
	if loopback && addr != "localhost" {
		host = "127.0.0.1"
		if ip := net.ParseIP(addr); ip != nil && ip.To4() == nil {
			host = "[::1]"
		}
	}
	d.url = fmt.Sprintf("http://%s:%d/?token=%s", host, ln.Addr().(*net.TCPAddr).Port, ds.Token())
	go ds.Run(cctx)
	go func() {
		defer close(d.done)
		if err := ds.Serve(cctx, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "blocks-repl dashboard: %v\n", err)
		}
	}()
	return d, nil
}

func (d *runningDashboard) close() {
	d.cancel() // ends the event streams
	sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
	defer c()
	_ = d.ds.Shutdown(sctx)
	<-d.done
	d.ds.Close()
}

// runDashboard starts the dashboard beside run --dashboard: the run's log
// must be SQLite (*logPath; when empty, SCRIPT.sqlite in the current
// directory).
func runDashboard(ctx context.Context, script string, logPath *string, port int, stderr io.Writer) (*runningDashboard, error) {
	if *logPath == "" {
		*logPath = strings.TrimSuffix(filepath.Base(script), filepath.Ext(script)) + ".sqlite"
		fmt.Fprintf(stderr, "blocks-repl: --dashboard: the log goes to %s\n", *logPath)
	} else if !isSQLiteName(*logPath) {
		return nil, fmt.Errorf("--dashboard reads the log as training writes it: give an SQLite log (--log FILE.sqlite), not %s", *logPath)
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("--dashboard-port must be in 0..65535, got %d", port)
	}
	d, err := startDashboard(ctx, []string{*logPath}, "127.0.0.1", port, os.Getenv("BLOCKS_DASHBOARD_TOKEN"), true, stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "blocks-repl: dashboard: %s (after the run: blocks-repl dashboard %s)\n", d.url, *logPath)
	return d, nil
}

// takeLogFlags removes resume's --log FILE.sqlite and --dashboard from
// args (the other flags are the checkpoint commands').
func takeLogFlags(args []string) (rest []string, logPath string, dash bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			rest = append(rest, a)
			continue
		}
		switch name {
		case "log":
			if !hasVal {
				if i+1 == len(args) {
					return nil, "", false, errors.New("--log needs a file")
				}
				i++
				val = args[i]
			}
			if !isSQLiteName(val) {
				return nil, "", false, fmt.Errorf("resume --log takes an SQLite log (.sqlite, .sqlite3, .db), got %s", val)
			}
			logPath = val
		case "dashboard":
			dash = !hasVal || val == "true"
		default:
			rest = append(rest, a)
		}
	}
	return rest, logPath, dash, nil
}

// commandLog is the SQLite log named by --log in a command line (a
// checkpoint's), or "".
func commandLog(cmd []string) string {
	for i, a := range cmd {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "log" {
			continue
		}
		if !hasVal && i+1 < len(cmd) {
			val = cmd[i+1]
		}
		if isSQLiteName(val) {
			return val
		}
	}
	return ""
}

// finish ends the dashboard of run --dashboard: at a terminal it keeps
// serving the finished run until Ctrl-C (the page would otherwise vanish
// with a short run); elsewhere (scripts, batch jobs) it stops at once.
func (d *runningDashboard) finish(ctx context.Context, stderr io.Writer) {
	if tty.Is(os.Stdin) && ctx.Err() == nil {
		sig, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(stderr, "blocks-repl: the run has ended; the dashboard stays at %s until Ctrl-C\n", d.url)
		<-sig.Done()
		stop()
	}
	d.close()
}

// resumeLogOptions are resume's options for the dashboard.
const resumeLogOptions = `  --log FILE.sqlite  write the resumed run's log into this SQLite log (the run's
                     own log: its curves continue, resumed_from chained)
  --dashboard        serve the live dashboard beside it, as run --dashboard
                     (without --log: the SQLite log the checkpoint's command named,
                     only as a new file in the run directory unless --trust)
`
