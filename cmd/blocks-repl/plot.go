package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/plot"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

const plotUsage = `  blocks-repl plot LOG [--channels A,B]... [--x iterations|epochs] [--out FILE]
                   [--title T] [--width PX] [--height PX] [--run UUID]
                                           draw log channels to a PNG or SVG
`

const plotHelp = `plot:
  LOG                a log written by run --log: JSON lines (.jsonl) or an
                     SQLite database (.sqlite, .db; --run UUID picks a run,
                     default the one run, or the one no other resumed from)
  --channels A,B     record names drawn together in one panel; repeat for more
                     panels (default: every numeric record in one panel,
                     Timing's time_* records in a second one)
  --x AXIS           iterations (default) or epochs
  --out FILE         the image: .png (default LOG's name + .png) or .svg
  --title T          the title (default LOG's file name)
  --width, --height  size in pixels (default 800 × 500, +350 per extra panel)
`

type channelGroups [][]string

func (c *channelGroups) String() string { return fmt.Sprint(*c) }
func (c *channelGroups) Set(s string) error {
	var g []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			g = append(g, n)
		}
	}
	if len(g) == 0 {
		return errors.New("empty channel list")
	}
	*c = append(*c, g)
	return nil
}

func init() {
	registerCommand(command{
		name:  "plot",
		usage: plotUsage,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return plotCommand(args, stdout, stderr)
		},
	})
}

func plotCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var groups channelGroups
	fs.Var(&groups, "channels", "")
	xAxis := fs.String("x", plot.XIterations, "")
	out := fs.String("out", "", "")
	title := fs.String("title", "", "")
	width := fs.Int("width", 0, "")
	height := fs.Int("height", 0, "")
	run := fs.String("run", "", "")
	usageError := func(err error) int {
		return ownUsageError(stderr, "plot", err, plotUsage, plotHelp)
	}
	if answerOwnHelp(args, stdout, plotUsage, plotHelp) {
		return 0
	}
	// The log may come before or after the flags.
	if err := fs.Parse(args); err != nil {
		return usageError(err)
	}
	if fs.NArg() == 0 {
		return usageError(errors.New("missing LOG"))
	}
	logPath := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return usageError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	l, err := readLog(logPath, *run)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl plot: %v\n", err)
		return 1
	}
	if len(groups) == 0 {
		groups = plot.DefaultGroups(l)
		if len(groups) == 0 {
			fmt.Fprintf(stderr, "blocks-repl plot: %s has no numeric records\n", logPath)
			return 1
		}
	}
	known := map[string]bool{}
	for _, c := range plot.NumericChannels(l) {
		known[c] = true
	}
	for _, g := range groups {
		for _, c := range g {
			if !known[c] {
				fmt.Fprintf(stderr, "blocks-repl plot: %s has no numeric record %q (it has: %s)\n", logPath, c, strings.Join(plot.NumericChannels(l), ", "))
				return 1
			}
		}
	}
	if *out == "" {
		*out = strings.TrimSuffix(logPath, filepath.Ext(logPath)) + ".png"
	}
	if *title == "" {
		*title = filepath.Base(logPath)
	}
	o := plot.Options{Title: *title, Channels: groups, XAxis: *xAxis, Width: *width, Height: *height}
	if err := plot.Draw(*out, l, o); err != nil {
		fmt.Fprintf(stderr, "blocks-repl plot: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// readLog reads a JSON-lines log or a run of an SQLite log database.
func readLog(path, run string) (*mainloop.TrainingLog, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sqlite", ".sqlite3", ".db":
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
		db, err := sqlitelog.OpenReadOnly(path)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		if run == "" {
			if run, err = latestRun(db); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		return db.Load(run)
	case ".csv":
		return nil, fmt.Errorf("%s: plot reads JSON-lines logs (.jsonl) and SQLite logs (.sqlite, .db), not CSV (which loses the values' types); write the log with run --log FILE.jsonl or FILE.sqlite", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := mainloop.ReadJSONLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// latestRun is the database's only run, or the only one no other run was
// resumed from (the end of a chain).
func latestRun(db *sqlitelog.DB) (string, error) {
	runs, err := db.Runs()
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", errors.New("no runs")
	}
	parents := map[string]bool{}
	for _, r := range runs {
		l, err := db.Load(r)
		if err != nil {
			return "", err
		}
		if l.Status.ResumedFrom != "" {
			parents[l.Status.ResumedFrom] = true
		}
	}
	var ends []string
	for _, r := range runs {
		if !parents[r] {
			ends = append(ends, r)
		}
	}
	if len(ends) != 1 {
		return "", fmt.Errorf("%d runs (%s): choose one with --run", len(ends), strings.Join(ends, ", "))
	}
	return ends[0], nil
}
