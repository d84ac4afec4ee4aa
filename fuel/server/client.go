package server

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
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
}

// ServerDataStream is Fuel's ServerDataStream: a stream whose batches
// come from a server. It connects at its first use. Its epoch iterator
// ends (io.EOF) at the server's stop frame; starting the next epoch is
// the server's business, so GetEpochIterator merely goes on reading.
//
// A ServerDataStream is used by one goroutine at a time.
type ServerDataStream struct {
	sources  []string
	examples bool
	opts     ClientOptions
	addr     string

	zctx *zmq.Context
	sock *zmq.Socket

	received int // messages received (batches and stops)
}

var _ fuel.Stream = (*ServerDataStream)(nil)

// NewServerDataStream is Fuel's ServerDataStream(sources,
// produces_examples, host, port, hwm, axis_labels). sources must be the
// server stream's sources, in its order.
func NewServerDataStream(sources []string, producesExamples bool, opts ClientOptions) (*ServerDataStream, error) {
	if len(sources) == 0 {
		return nil, errors.New("server: ServerDataStream needs the names of the sources the server sends")
	}
	if opts.Host == "" {
		opts.Host = "localhost"
	}
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.HWM == 0 {
		opts.HWM = DefaultHWM
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Port < 0 || opts.Port > 65535 || opts.HWM < 0 {
		return nil, fmt.Errorf("server: ServerDataStream: bad port %d or hwm %d", opts.Port, opts.HWM)
	}
	return &ServerDataStream{
		sources:  slices.Clone(sources),
		examples: producesExamples,
		opts:     opts,
		addr:     fmt.Sprintf("tcp://%s:%d", hostPart(opts.Host), opts.Port),
	}, nil
}

// Sources are the names given.
func (s *ServerDataStream) Sources() []string { return slices.Clone(s.sources) }

// AxisLabels are the labels given (a copy).
func (s *ServerDataStream) AxisLabels() map[string][]string {
	if s.opts.AxisLabels == nil {
		return nil
	}
	out := make(map[string][]string, len(s.opts.AxisLabels))
	for k, v := range maps.All(s.opts.AxisLabels) {
		out[k] = slices.Clone(v)
	}
	return out
}

// ProducesExamples is the value given.
func (s *ServerDataStream) ProducesExamples() bool { return s.examples }

// Address is the server's address (tcp://localhost:5557).
func (s *ServerDataStream) Address() string { return s.addr }

func (s *ServerDataStream) connect() error {
	if s.sock != nil {
		return nil
	}
	zctx, err := zmq.NewContext()
	if err != nil {
		return fmt.Errorf("server: ZeroMQ context: %w", err)
	}
	sock, err := zctx.NewSocket(zmq.PULL)
	if err == nil {
		err = setHWM(sock, s.opts.HWM)
	}
	if err == nil {
		err = sock.SetLinger(0)
	}
	if err == nil && s.opts.Timeout > 0 {
		err = sock.SetRcvtimeo(s.opts.Timeout)
	}
	if err == nil {
		err = sock.Connect(s.addr)
	}
	if err != nil {
		if sock != nil {
			sock.Close()
		}
		zctx.Term()
		return fmt.Errorf("server: ServerDataStream: connecting to %s: %w", s.addr, err)
	}
	s.zctx, s.sock = zctx, sock
	return nil
}

// GetEpochIterator returns an iterator over the batches the server sends
// until its next stop frame.
func (s *ServerDataStream) GetEpochIterator() (fuel.EpochIterator, error) {
	if err := s.connect(); err != nil {
		return nil, err
	}
	return &clientIterator{s: s}, nil
}

// Receive reads one message: a batch (one array per source), or io.EOF
// for a stop frame.
func (s *ServerDataStream) Receive() ([]*nd.Array, error) {
	if err := s.connect(); err != nil {
		return nil, err
	}
	frames, err := s.sock.RecvMessageBytes(0)
	if err != nil {
		if zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN) {
			what := "the first message"
			if s.received > 0 {
				what = fmt.Sprintf("a message after the %d received", s.received)
			}
			return nil, fmt.Errorf("server: ServerDataStream: no data from %s within %v waiting for %s (is the server running, or did it stop?)", s.addr, s.opts.Timeout, what)
		}
		return nil, fmt.Errorf("server: ServerDataStream: receiving from %s: %w", s.addr, err)
	}
	s.received++
	arrays, err := DecodeArrays(frames)
	if errors.Is(err, ErrStop) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w (from %s)", err, s.addr)
	}
	if len(arrays) != len(s.sources) {
		return nil, fmt.Errorf("server: ServerDataStream: %s sent %d arrays, but the stream's sources are (%s)", s.addr, len(arrays), strings.Join(s.sources, ", "))
	}
	return arrays, nil
}

// Close disconnects. The stream connects again at its next use.
func (s *ServerDataStream) Close() error {
	if s.sock == nil {
		return nil
	}
	err := s.sock.Close()
	if e := s.zctx.Term(); err == nil {
		err = e
	}
	s.sock, s.zctx = nil, nil
	return err
}

type clientIterator struct {
	s    *ServerDataStream
	done bool
}

func (it *clientIterator) Next() ([]*nd.Array, error) {
	if it.done {
		return nil, io.EOF
	}
	a, err := it.s.Receive()
	if errors.Is(err, io.EOF) {
		it.done = true
	}
	return a, err
}
