package server

// The options and key types of the data server and its client, shared by
// the cgo build (libzmq) and the pure-Go build, which refuses to serve.

import (
	"io"
	"time"
)

// DefaultTimeout is how long a ServerDataStream waits for a message by
// default before it fails.
const DefaultTimeout = 60 * time.Second

// ClientOptions configure a ServerDataStream.
type ClientOptions struct {
	// Host to connect to ("localhost" when empty) and Port (DefaultPort
	// when 0).
	Host string
	Port int
	// HWM is the receiving socket's high-water mark (DefaultHWM when 0).
	HWM int
	// AxisLabels are the stream's axis labels (Fuel's axis_labels); nil
	// for none. The protocol does not carry them.
	AxisLabels map[string][]string
	// Timeout is the longest wait for one message (DefaultTimeout when 0;
	// negative waits forever, as Fuel's client does).
	Timeout time.Duration
	// Sequence requires sequence and epoch markers (a server started with
	// Options.Sequence or CURVE): a message without one is an error.
	// Markers are checked whenever they come, required or not.
	Sequence bool
	// Curve, when not nil, connects with ZeroMQ's CURVE mechanism to a
	// server in the CURVE mode.
	Curve *CurveClient
}

// Fuel's defaults.
const (
	DefaultPort = 5557
	DefaultHWM  = 10
)

// Options configure a server.
type Options struct {
	// Host is the address to bind: "127.0.0.1" when empty; "*" binds
	// every interface (what Fuel did).
	Host string
	// Port is the TCP port: DefaultPort when 0; -1 picks a free port
	// (see Server.Port).
	Port int
	// HWM is the ZeroMQ high-water mark of the socket (DefaultHWM when 0).
	HWM int
	// Epochs, when > 0, stops serving after that many epochs (and their
	// stop frames) have been queued; 0 serves forever, as Fuel. Serve then
	// waits up to Linger (10 s when 0) for the queued messages to be
	// taken before it closes the socket.
	Epochs int
	Linger time.Duration
	// Log receives a line when the server starts and one per epoch; nil
	// for none.
	Log io.Writer
	// Sequence adds sequence and epoch markers to every message (see
	// Marker), so that ServerDataStream clients detect lost, duplicated
	// and reordered messages; Fuel's clients ignore them. The CURVE mode
	// always adds them.
	Sequence bool
	// Curve, when not nil, admits only clients whose CURVE key it lists
	// (ZeroMQ's CURVE mechanism: the messages are also encrypted).
	Curve *CurveServer
}

// CurveServer is the server's side of the CURVE mode.
type CurveServer struct {
	SecretKey  string   // the server's secret key (Z85)
	ClientKeys []string // the public keys (Z85) of the clients admitted
}

// CurveClient is a client's side of the CURVE mode.
type CurveClient struct {
	ServerKey string // the server's public key (Z85)
	PublicKey string // this client's key pair (Z85)
	SecretKey string
}
