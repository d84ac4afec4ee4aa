//go:build !cgo

package server

import (
	"context"
	"errors"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// ErrNoZeroMQ is what the data server, its client and the CURVE key
// functions say in the pure-Go build (CGO_ENABLED=0), which has no libzmq.
var ErrNoZeroMQ = errors.New("the Fuel data server needs ZeroMQ (libzmq through cgo), and this is the pure-Go build of blocks-repl (built with CGO_ENABLED=0); use the cgo build (make build) for fuel.server and ServerDataStream")

// Server is never made in the pure-Go build.
type Server struct{}

// Listen refuses: no ZeroMQ in this build.
func Listen(stream fuel.Stream, opts Options) (*Server, error) { return nil, ErrNoZeroMQ }

// StartServer refuses: no ZeroMQ in this build.
func StartServer(ctx context.Context, stream fuel.Stream, opts Options) error { return ErrNoZeroMQ }

// The methods of a server that cannot be made here.

func (s *Server) Endpoint() string                { return "" }
func (s *Server) Port() int                       { return 0 }
func (s *Server) Serve(ctx context.Context) error { return ErrNoZeroMQ }
func (s *Server) Close() error                    { return nil }

// ServerDataStream is never made in the pure-Go build.
type ServerDataStream struct{}

// NewServerDataStream refuses: no ZeroMQ in this build.
func NewServerDataStream(sources []string, producesExamples bool, opts ClientOptions) (*ServerDataStream, error) {
	return nil, ErrNoZeroMQ
}

// The methods of a stream that cannot be made here.

func (s *ServerDataStream) Sources() []string                             { return nil }
func (s *ServerDataStream) AxisLabels() map[string][]string               { return nil }
func (s *ServerDataStream) ProducesExamples() bool                        { return false }
func (s *ServerDataStream) Address() string                               { return "" }
func (s *ServerDataStream) GetEpochIterator() (fuel.EpochIterator, error) { return nil, ErrNoZeroMQ }
func (s *ServerDataStream) Receive() ([]*nd.Array, error)                 { return nil, ErrNoZeroMQ }
func (s *ServerDataStream) Close() error                                  { return nil }

// NewCurveKeypair refuses: no ZeroMQ in this build.
func NewCurveKeypair() (public, secret string, err error) { return "", "", ErrNoZeroMQ }

// WriteCertificates refuses: no ZeroMQ in this build.
func WriteCertificates(dir, name string) (publicFile, secretFile string, err error) {
	return "", "", ErrNoZeroMQ
}

// ReadCertificate refuses: no ZeroMQ in this build.
func ReadCertificate(path string) (public, secret string, err error) { return "", "", ErrNoZeroMQ }

// ReadClientKeys refuses: no ZeroMQ in this build.
func ReadClientKeys(path string) ([]string, error) { return nil, ErrNoZeroMQ }
