package fuel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/starlib"
)

// Module fuel.server, and ServerDataStream in fuel.streams: Fuel's data
// server (see fuel/server for the protocol and the fault behaviour).
//
// fuel.server:
//
//	start_server(data_stream, port=5557, hwm=10, host="127.0.0.1", sequence=False,
//	             curve_secret=None, curve_clients=None)
//	    serve the stream's batches, epoch after epoch, on a ZeroMQ PUSH socket,
//	    with Fuel's wire protocol; blocks until the run is cancelled (Ctrl-C).
//	    Binds loopback unless host says otherwise ("*": every interface).
//	    sequence=True adds sequence and epoch markers (lost, duplicated or
//	    reordered batches are detected by ServerDataStream). curve_secret (the
//	    server's key file) and curve_clients (a directory of *.key files, or one)
//	    turn on the CURVE mode: only the clients listed connect, encrypted, with
//	    markers. Under blocks-repl fuel serve, its flags win over the arguments.
//
// fuel.streams:
//
//	ServerDataStream(sources, produces_examples, host="localhost", port=5557, hwm=10,
//	                 axis_labels=None, timeout=60, sequence=False,
//	                 curve_server_key=None, curve_secret=None)
//	    a stream whose batches come from a Fuel server (this project's or Python
//	    Fuel's); usable wherever a stream is (DataStreamMonitoring, MainLoop,
//	    transformers). timeout: seconds to wait for a batch before failing
//	    (None waits forever, as Fuel). Sequence markers are checked whenever the
//	    server sends them; sequence=True requires them. curve_server_key (the
//	    server's public key file) and curve_secret (this client's secret key
//	    file) connect to a server in the CURVE mode.
func serverModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.server", Members: starlark.StringDict{
		"start_server": starlib.NewBuiltin("start_server", startServer),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.streams", Members: starlark.StringDict{
		"ServerDataStream": starlib.NewBuiltin("ServerDataStream", serverDataStream),
	}})
	return
}

// ServeOverrides are what blocks-repl fuel serve's flags set: they win
// over start_server's arguments. Zero fields leave the argument.
type ServeOverrides struct {
	Host      string
	Port, HWM int
	// Sequence turns markers on; Curve, when not nil, the CURVE mode.
	Sequence bool
	Curve    *server.CurveServer
	// Served is set once start_server has run.
	Served bool
}

const serveKey = "fuel.server.overrides"

// SetServeOverrides makes start_server, in scripts run on thread, use o
// and record in it that it ran.
func SetServeOverrides(thread *starlark.Thread, o *ServeOverrides) { thread.SetLocal(serveKey, o) }

func startServer(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	port, hwm, host := server.DefaultPort, server.DefaultHWM, "127.0.0.1"
	var sequence bool
	var curveSecret, curveClients starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "port?", &port, "hwm?", &hwm, "host?", &host,
		"sequence?", &sequence, "curve_secret?", &curveSecret, "curve_clients?", &curveClients); err != nil {
		return nil, err
	}
	curve, err := curveServerArgs(thread, b.Name(), curveSecret, curveClients)
	if err != nil {
		return nil, err
	}
	if o, ok := thread.Local(serveKey).(*ServeOverrides); ok {
		if o.Sequence {
			sequence = true
		}
		if o.Curve != nil {
			curve = o.Curve
		}
		if o.Host != "" {
			host = o.Host
		}
		if o.Port != 0 {
			port = o.Port
		}
		if o.HWM != 0 {
			hwm = o.HWM
		}
		o.Served = true
	}
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("start_server: port must be in 1..65535, got %d", port)
	}
	if hwm <= 0 {
		return nil, fmt.Errorf("start_server: hwm must be positive, got %d", hwm)
	}
	if err := starlib.CheckNetwork(thread, fmt.Sprintf("tcp://%s:%d (serving)", host, port)); err != nil {
		return nil, fmt.Errorf("start_server: %w", err)
	}
	if err := ServeStream(starlib.Context(thread), st, server.Options{Host: host, Port: port, HWM: hwm, Log: serverLog{thread}, Sequence: sequence, Curve: curve}); err != nil {
		return nil, fmt.Errorf("start_server: %w", err)
	}
	return starlark.None, starlib.Cancelled(thread)
}

// ServeStream serves a stream value until ctx is done (then it returns
// nil) or the stream fails.
func ServeStream(ctx context.Context, st *Stream, opts server.Options) error {
	if st == nil {
		return errors.New("no stream")
	}
	return server.StartServer(ctx, st.S, opts)
}

// serverLog sends the server's log lines to the script's print.
type serverLog struct{ thread *starlark.Thread }

func (w serverLog) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	if w.thread.Print != nil {
		w.thread.Print(w.thread, msg)
	}
	return len(p), nil
}

func serverDataStream(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sources, labels starlark.Value
	var examples bool
	host, port, hwm := "localhost", server.DefaultPort, server.DefaultHWM
	var timeout starlark.Value = starlark.MakeInt(int(server.DefaultTimeout / time.Second))
	labels = starlark.None
	var sequence bool
	var curveServerKey, curveSecret starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "sources", &sources, "produces_examples", &examples,
		"host?", &host, "port?", &port, "hwm?", &hwm, "axis_labels?", &labels, "timeout?", &timeout,
		"sequence?", &sequence, "curve_server_key?", &curveServerKey, "curve_secret?", &curveSecret); err != nil {
		return nil, err
	}
	srcs, err := stringList("ServerDataStream: sources", sources)
	if err != nil {
		return nil, err
	}
	opts := server.ClientOptions{Host: host, Port: port, HWM: hwm, Sequence: sequence}
	if opts.Curve, err = curveClientArgs(thread, b.Name(), curveServerKey, curveSecret); err != nil {
		return nil, err
	}
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("ServerDataStream: port must be in 1..65535, got %d", port)
	}
	if hwm <= 0 {
		return nil, fmt.Errorf("ServerDataStream: hwm must be positive, got %d", hwm)
	}
	if timeout == starlark.None {
		opts.Timeout = -1
	} else if f, ok := starlark.AsFloat(timeout); ok && f > 0 {
		opts.Timeout = time.Duration(f * float64(time.Second))
	} else {
		return nil, fmt.Errorf("ServerDataStream: timeout must be a positive number of seconds or None, got %s", timeout)
	}
	if opts.AxisLabels, err = axisLabelsArg("ServerDataStream", labels); err != nil {
		return nil, err
	}
	if err := starlib.CheckNetwork(thread, fmt.Sprintf("tcp://%s:%d", host, port)); err != nil {
		return nil, fmt.Errorf("ServerDataStream: %w", err)
	}
	s, err := server.NewServerDataStream(srcs, examples, opts)
	if err != nil {
		return nil, err
	}
	return &Stream{S: s, Name: "ServerDataStream"}, nil
}

// curveServerArgs reads start_server's curve_secret and curve_clients
// (both or neither): nil when neither is given.
func curveServerArgs(thread *starlark.Thread, fn string, secret, clients starlark.Value) (*server.CurveServer, error) {
	if secret == starlark.None && clients == starlark.None {
		return nil, nil
	}
	secretFile, ok1 := starlark.AsString(secret)
	clientsPath, ok2 := starlark.AsString(clients)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: curve_secret and curve_clients go together, as paths (the server's secret key file; a directory of the clients' *.key files, or one), got %s and %s", fn, secret.Type(), clients.Type())
	}
	return LoadCurveServer(thread, secretFile, clientsPath)
}

// LoadCurveServer reads the CURVE mode's keys: the server's secret key file
// and the admitted clients' public keys (a directory of *.key files, or
// one file). The reads are the sandbox's.
func LoadCurveServer(thread *starlark.Thread, secretFile, clientsPath string) (*server.CurveServer, error) {
	for _, p := range []string{secretFile, clientsPath} {
		if err := starlib.CheckRead(thread, p); err != nil {
			return nil, err
		}
	}
	_, secret, err := server.ReadCertificate(secretFile)
	if err != nil {
		return nil, err
	}
	if secret == "" {
		return nil, fmt.Errorf("CURVE: %s holds no secret-key (give the server's .key_secret file)", secretFile)
	}
	clients, err := server.ReadClientKeys(clientsPath)
	if err != nil {
		return nil, err
	}
	return &server.CurveServer{SecretKey: secret, ClientKeys: clients}, nil
}

// curveClientArgs reads ServerDataStream's curve_server_key and
// curve_secret (both or neither).
func curveClientArgs(thread *starlark.Thread, fn string, serverKey, secret starlark.Value) (*server.CurveClient, error) {
	if serverKey == starlark.None && secret == starlark.None {
		return nil, nil
	}
	serverFile, ok1 := starlark.AsString(serverKey)
	secretFile, ok2 := starlark.AsString(secret)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: curve_server_key and curve_secret go together, as paths (the server's public key file; this client's .key_secret file), got %s and %s", fn, serverKey.Type(), secret.Type())
	}
	for _, p := range []string{serverFile, secretFile} {
		if err := starlib.CheckRead(thread, p); err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
	}
	serverPub, _, err := server.ReadCertificate(serverFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	pub, sec, err := server.ReadCertificate(secretFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	if sec == "" {
		return nil, fmt.Errorf("%s: CURVE: %s holds no secret-key (give this client's .key_secret file)", fn, secretFile)
	}
	return &server.CurveClient{ServerKey: serverPub, PublicKey: pub, SecretKey: sec}, nil
}
