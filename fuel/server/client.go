//go:build cgo

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
	mon  *zmq.Socket // the socket's handshake events
	poll *zmq.Poller

	received  int      // messages received (batches and stops)
	seq       sequence // the markers received
	marked    bool     // a marker has come
	handshake string   // the last failed handshake, for the timeout's error
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
	var mon *zmq.Socket
	sock, err := zctx.NewSocket(zmq.PULL)
	if err == nil {
		err = setHWM(sock, s.opts.HWM)
	}
	if err == nil {
		err = sock.SetLinger(0)
	}
	if err == nil && s.opts.Curve != nil {
		err = setCurveClient(sock, s.opts.Curve)
	}
	if err == nil {
		// Handshake failures (a key refused, a server that wants CURVE)
		// are reported at once instead of after the timeout.
		err = sock.Monitor("inproc://fuel-client-monitor", zmq.EVENT_HANDSHAKE_FAILED_AUTH|zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL|zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
	}
	if err == nil {
		mon, err = zctx.NewSocket(zmq.PAIR)
		if err == nil {
			err = mon.SetLinger(0)
		}
		if err == nil {
			err = mon.Connect("inproc://fuel-client-monitor")
		}
	}
	if err == nil {
		err = sock.Connect(s.addr)
	}
	if err != nil {
		if mon != nil {
			mon.Close()
		}
		if sock != nil {
			sock.Close()
		}
		zctx.Term()
		return fmt.Errorf("server: ServerDataStream: connecting to %s: %w", s.addr, err)
	}
	s.zctx, s.sock, s.mon = zctx, sock, mon
	s.poll = zmq.NewPoller()
	s.poll.Add(sock, zmq.POLLIN)
	s.poll.Add(mon, zmq.POLLIN)
	s.seq, s.marked, s.handshake = sequence{}, false, ""
	return nil
}

// wait waits for a message (or the timeout); a refused handshake is an
// error at once.
func (s *ServerDataStream) wait() ([][]byte, error) {
	var deadline time.Time
	if s.opts.Timeout > 0 {
		deadline = time.Now().Add(s.opts.Timeout)
	}
	for {
		timeout := time.Duration(-1)
		if !deadline.IsZero() {
			timeout = time.Until(deadline)
			if timeout <= 0 {
				return nil, s.timeoutError()
			}
		}
		polled, err := s.poll.Poll(timeout)
		if err != nil {
			return nil, fmt.Errorf("server: ServerDataStream: receiving from %s: %w", s.addr, err)
		}
		for _, p := range polled {
			if p.Socket != s.mon {
				continue
			}
			for {
				ev, _, value, err := s.mon.RecvEvent(zmq.DONTWAIT)
				if err != nil {
					break
				}
				switch ev {
				case zmq.EVENT_HANDSHAKE_FAILED_AUTH:
					return nil, fmt.Errorf("server: ServerDataStream: the server at %s refused this client (ZeroMQ's authentication failed with status %d): its CURVE mode admits only the client keys it was given; give curve_secret (this client's key file, whose public key the server must list) and curve_server_key", s.addr, value)
				case zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
					hint := "it is in the CURVE mode and this client gave no keys"
					if s.opts.Curve != nil {
						hint = "this client uses CURVE and the server does not, or the server's key is not the one given"
					}
					return nil, fmt.Errorf("server: ServerDataStream: the handshake with the server at %s failed (ZeroMQ protocol error %#x): %s", s.addr, value, hint)
				default:
					// A handshake that failed without detail: the server
					// closed the connection before this client read why.
					// Which event ZeroMQ reports for a client without keys
					// at a CURVE server (this one or the protocol error
					// above) depends on timing, so the hint names the
					// same cause.
					s.handshake = "the last handshake failed (with CURVE, a wrong server key)"
					if s.opts.Curve == nil {
						s.handshake = "the last handshake failed: the server is probably in the CURVE mode and this client gave no keys"
					}
				}
			}
		}
		for _, p := range polled {
			if p.Socket != s.sock {
				continue
			}
			frames, err := s.sock.RecvMessageBytes(zmq.DONTWAIT)
			if err == nil {
				return frames, nil
			}
			if zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN) {
				return nil, fmt.Errorf("server: ServerDataStream: receiving from %s: %w", s.addr, err)
			}
		}
	}
}

func (s *ServerDataStream) timeoutError() error {
	what := "the first message"
	if s.received > 0 {
		what = fmt.Sprintf("a message after the %d received", s.received)
	}
	hint := "is the server running, or did it stop?"
	if s.handshake != "" {
		hint = s.handshake
	}
	return fmt.Errorf("server: ServerDataStream: no data from %s within %v waiting for %s (%s)", s.addr, s.opts.Timeout, what, hint)
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
	frames, err := s.wait()
	if err != nil {
		return nil, err
	}
	s.received++
	arrays, m, err := DecodeMessage(frames)
	stop := errors.Is(err, ErrStop)
	if err != nil && !stop {
		return nil, fmt.Errorf("%w (from %s)", err, s.addr)
	}
	switch {
	case m != nil:
		s.marked = true
		if err := s.seq.check(*m, s.addr); err != nil {
			return nil, err
		}
	case s.opts.Sequence:
		return nil, fmt.Errorf("server: ServerDataStream: %s sends no sequence markers, which this stream requires (sequence=True): start the server with --sequence (or sequence=True), or its CURVE mode", s.addr)
	case s.marked:
		return nil, fmt.Errorf("server: ServerDataStream: a message without a sequence marker from %s, after marked ones: another server took over the address", s.addr)
	}
	if stop {
		return nil, io.EOF
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
	if e := s.mon.Close(); err == nil {
		err = e
	}
	if e := s.zctx.Term(); err == nil {
		err = e
	}
	s.sock, s.mon, s.poll, s.zctx = nil, nil, nil, nil
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
