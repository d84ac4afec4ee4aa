//go:build cgo

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/blocks-go/blocks/fuel"
)

// Server is a bound PUSH socket that serves a stream.
type Server struct {
	stream   fuel.Stream
	opts     Options
	zctx     *zmq.Context
	sock     *zmq.Socket
	endpoint string
	port     int
	id       string        // the id in the markers
	zapDone  chan struct{} // closed when the CURVE authenticator has stopped; nil without CURVE
}

// Listen binds the server's socket; Serve then sends the stream's
// batches.
func Listen(stream fuel.Stream, opts Options) (*Server, error) {
	if stream == nil {
		return nil, errors.New("server: no stream to serve")
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.HWM == 0 {
		opts.HWM = DefaultHWM
	}
	if opts.HWM < 0 || opts.Port < -1 || opts.Port > 65535 {
		return nil, fmt.Errorf("server: bad port %d or hwm %d", opts.Port, opts.HWM)
	}
	zctx, err := zmq.NewContext()
	if err != nil {
		return nil, fmt.Errorf("server: ZeroMQ context: %w", err)
	}
	sock, err := zctx.NewSocket(zmq.PUSH)
	if err == nil {
		err = setHWM(sock, opts.HWM)
	}
	if err == nil {
		// A blocked send wakes up this often to see whether the server was
		// stopped.
		err = sock.SetSndtimeo(100 * time.Millisecond)
	}
	if err == nil {
		err = sock.SetLinger(0)
	}
	var zapDone chan struct{}
	if err == nil && opts.Curve != nil {
		zapDone, err = startCurve(zctx, sock, opts.Curve)
	}
	if err != nil {
		if sock != nil {
			sock.Close()
		}
		zctx.Term()
		return nil, fmt.Errorf("server: ZeroMQ socket: %w", err)
	}
	port := "*"
	if opts.Port > 0 {
		port = strconv.Itoa(opts.Port)
	}
	addr := "tcp://" + hostPart(opts.Host) + ":" + port
	if err := sock.Bind(addr); err != nil {
		sock.Close()
		zctx.Term()
		return nil, fmt.Errorf("server: binding %s: %w", addr, err)
	}
	if opts.Curve != nil {
		opts.Sequence = true
	}
	ep, err := sock.GetLastEndpoint()
	if err != nil {
		ep = addr
	}
	s := &Server{stream: stream, opts: opts, zctx: zctx, sock: sock, endpoint: ep, port: opts.Port, id: newServerID(), zapDone: zapDone}
	if i := strings.LastIndexByte(ep, ':'); i >= 0 {
		if p, err := strconv.Atoi(ep[i+1:]); err == nil {
			s.port = p
		}
	}
	return s, nil
}

// hostPart brackets an IPv6 address for a ZeroMQ endpoint.
func hostPart(h string) string {
	if ip := net.ParseIP(h); ip != nil && ip.To4() == nil {
		return "[" + h + "]"
	}
	return h
}

func setHWM(sock *zmq.Socket, hwm int) error {
	if err := sock.SetSndhwm(hwm); err != nil {
		return err
	}
	return sock.SetRcvhwm(hwm)
}

// Endpoint is the bound address (tcp://127.0.0.1:5557).
func (s *Server) Endpoint() string { return s.endpoint }

// Port is the bound port.
func (s *Server) Port() int { return s.port }

// Serve sends the stream's batches, epoch after epoch, each epoch ended
// by a stop frame, as Fuel's start_server does, until ctx is done (it then
// returns nil), Options.Epochs epochs are queued, or the stream fails.
// Serve closes the server when it returns.
func (s *Server) Serve(ctx context.Context) error {
	defer s.Close()
	if s.opts.Log != nil {
		mode := ""
		switch {
		case s.opts.Curve != nil:
			mode = fmt.Sprintf(", CURVE: %d client key(s), with sequence markers", len(s.opts.Curve.ClientKeys))
		case s.opts.Sequence:
			mode = ", with sequence markers"
		}
		fmt.Fprintf(s.opts.Log, "fuel server: serving %s on %s (hwm %d%s)\n", strings.Join(s.stream.Sources(), ", "), s.endpoint, s.opts.HWM, mode)
	}
	var seq int64
	for epoch := 0; s.opts.Epochs <= 0 || epoch < s.opts.Epochs; epoch++ {
		it, err := s.stream.GetEpochIterator()
		if err != nil {
			return fmt.Errorf("server: starting epoch %d: %w", epoch+1, err)
		}
		batches := 0
		for {
			data, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					// Stopped while the stream was producing (a Starlark
					// stream's thread is cancelled with the run).
					return nil
				}
				return fmt.Errorf("server: epoch %d, batch %d: %w", epoch+1, batches+1, err)
			}
			var frames [][]byte
			if s.opts.Sequence {
				frames, err = EncodeMarked(data, Marker{Server: s.id, Seq: seq, Epoch: epoch + 1, Batch: batches})
			} else {
				frames, err = EncodeArrays(data)
			}
			if err != nil {
				return fmt.Errorf("server: epoch %d, batch %d: %w", epoch+1, batches+1, err)
			}
			if stopped, err := s.send(ctx, frames); stopped || err != nil {
				return err
			}
			batches++
			seq++
		}
		var stop *Marker
		if s.opts.Sequence {
			stop = &Marker{Server: s.id, Seq: seq, Epoch: epoch + 1, Batch: batches, Stop: true}
		}
		if stopped, err := s.send(ctx, [][]byte{StopFrame(stop)}); stopped || err != nil {
			return err
		}
		seq++
		if s.opts.Log != nil {
			fmt.Fprintf(s.opts.Log, "fuel server: epoch %d queued (%d batches)\n", epoch+1, batches)
		}
	}
	// Done: let the client take what is queued (a cancelled server drops
	// it at once).
	linger := s.opts.Linger
	if linger == 0 {
		linger = 10 * time.Second
	}
	if err := s.sock.SetLinger(linger); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// send sends one multipart message, waiting while the HWM is reached;
// stopped is true when ctx was done first.
func (s *Server) send(ctx context.Context, frames [][]byte) (stopped bool, err error) {
	// A consumer that keeps up never blocks a send, so the stop signal is
	// looked at before every message, not only while a send waits.
	if ctx.Err() != nil {
		return true, nil
	}
	for i, f := range frames {
		flag := zmq.SNDMORE
		if i == len(frames)-1 {
			flag = 0
		}
		for {
			_, err := s.sock.SendBytes(f, flag)
			if err == nil {
				break
			}
			if zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN) {
				return false, fmt.Errorf("server: sending on %s: %w", s.endpoint, err)
			}
			if ctx.Err() != nil {
				return true, nil
			}
		}
	}
	return false, nil
}

// Close closes the socket; messages still queued are dropped.
func (s *Server) Close() error {
	if s.sock == nil {
		return nil
	}
	err := s.sock.Close()
	s.sock = nil
	// Term ends the CURVE authenticator's wait, and waits for it to close
	// its socket.
	if e := s.zctx.Term(); err == nil {
		err = e
	}
	if s.zapDone != nil {
		<-s.zapDone
	}
	return err
}

// StartServer is Fuel's start_server(data_stream, port, hwm): it binds
// and serves until ctx is done or the stream fails.
func StartServer(ctx context.Context, stream fuel.Stream, opts Options) error {
	s, err := Listen(stream, opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}
