package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/blocks-go/blocks/fuel/server"
)

// blocks-repl fuel keygen NAME [-d DIR]: a CURVE key pair for the data
// server's authenticated mode, in pyzmq's zmq.auth file format.
func init() {
	registerFuelCommand(command{
		name: "keygen",
		usage: `  blocks-repl fuel keygen NAME [-d DIR]    write a CURVE key pair for fuel serve's authenticated mode:
                                           DIR/NAME.key (public, to give to the other side) and
                                           DIR/NAME.key_secret (0600, to keep); pyzmq's zmq.auth format
`,
		run: fuelKeygen,
	})
}

func fuelKeygen(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuel keygen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("d", ".", "directory to write the key files in")
	usageError := func(err error) int {
		fmt.Fprintf(stderr, "blocks-repl fuel keygen: %v\n\nusage:\n%s", err, fuelCommands["keygen"].usage)
		return 2
	}
	name, err := parseOneArg(fs, args, "NAME")
	if err != nil {
		return usageError(err)
	}
	pub, sec, err := server.WriteCertificates(*dir, name)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl fuel keygen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "public key: %s\nsecret key: %s (keep it private)\n", pub, sec)
	return 0
}
