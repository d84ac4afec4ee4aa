package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
)

// blocks-repl fuel serve SCRIPT.star [--port 5557] [--hwm 10] [--host H] [--set NAME=VALUE]...:
// runs a script that defines a stream and serves it with Fuel's protocol.
func init() {
	registerFuelCommand(command{
		name: "serve",
		usage: `  blocks-repl fuel serve SCRIPT.star [--port 5557] [--hwm 10] [--host 127.0.0.1] [--sequence]
                        [--curve-secret SERVER.key_secret --curve-clients DIR] [--set NAME=VALUE]...
                                           run SCRIPT.star and serve its global "stream" (or the
                                           stream it passes to start_server) to ServerDataStream
                                           clients, epoch after epoch, until Ctrl-C; --set as for run;
                                           --sequence adds sequence and epoch markers (a client
                                           detects lost or reordered batches); --curve-* admits only
                                           the clients whose *.key files DIR holds (ZeroMQ CURVE;
                                           implies --sequence; keys from blocks-repl fuel keygen)
`,
		run: fuelServe,
	})
}

func fuelServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuel serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", server.DefaultPort, "TCP port")
	hwm := fs.Int("hwm", server.DefaultHWM, "ZeroMQ high-water mark")
	host := fs.String("host", "127.0.0.1", "address to bind (* for every interface)")
	sequence := fs.Bool("sequence", false, "add sequence and epoch markers")
	curveSecret := fs.String("curve-secret", "", "the server's CURVE secret key file")
	curveClients := fs.String("curve-clients", "", "the admitted clients' CURVE public key files (a directory, or one)")
	sets := overrides{}
	fs.Var(sets, "set", "override a setting: NAME=VALUE")
	usageError := func(err error) int {
		fmt.Fprintf(stderr, "blocks-repl fuel serve: %v\n\nusage:\n%s", err, fuelCommands["serve"].usage)
		return 2
	}
	script, err := parseOneArg(fs, args, "SCRIPT.star")
	if err != nil {
		return usageError(err)
	}
	if *port <= 0 || *port > 65535 || *hwm <= 0 {
		return usageError(fmt.Errorf("--port must be in 1..65535 and --hwm positive, got %d and %d", *port, *hwm))
	}
	if (*curveSecret == "") != (*curveClients == "") {
		return usageError(errors.New("--curve-secret and --curve-clients go together"))
	}
	// Flags given explicitly win over start_server's arguments.
	over := &starfuel.ServeOverrides{Sequence: *sequence}
	if *curveSecret != "" {
		curve, err := starfuel.LoadCurveServer(nil, *curveSecret, *curveClients)
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl fuel serve: %v\n", err)
			return 1
		}
		over.Curve = curve
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "port":
			over.Port = *port
		case "hwm":
			over.HWM = *hwm
		case "host":
			over.Host = *host
		}
	})
	src, err := os.ReadFile(script)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, err := starlib.NewInterp(starlib.Options{Stdout: stdout, Context: ctx, Overrides: sets, Library: all.Library()})
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
		return 1
	}
	starfuel.SetServeOverrides(in.Thread, over)
	globals, err := in.ExecFile(script, src)
	if over.Served {
		// start_server ran in the script, until Ctrl-C or a failure.
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, starlib.Backtrace(err))
			return 1
		}
		return 0
	}
	if err == nil {
		err = in.CheckOverrides()
	}
	if err != nil {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	st, ok := globals["stream"].(*starfuel.Stream)
	if !ok {
		var streams []string
		for name, v := range globals {
			if _, ok := v.(*starfuel.Stream); ok {
				streams = append(streams, name)
			}
		}
		sort.Strings(streams)
		what := "no global named stream"
		if v, ok := globals["stream"]; ok {
			what = "a global stream that is a " + v.Type() + ", not a data stream"
		}
		hint := ""
		if len(streams) > 0 {
			hint = fmt.Sprintf(" (its streams: %s; assign the one to serve to stream)", strings.Join(streams, ", "))
		}
		fmt.Fprintf(stderr, "blocks-repl fuel serve: %s defines %s%s\n", script, what, hint)
		return 1
	}
	opts := server.Options{Host: *host, Port: *port, HWM: *hwm, Log: stderr, Sequence: over.Sequence, Curve: over.Curve}
	if err := starfuel.ServeStream(ctx, st, opts); err != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
		return 1
	}
	return 0
}
