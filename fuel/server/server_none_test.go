//go:build !cgo

package server

import (
	"errors"
	"strings"
	"testing"
)

// The pure-Go build refuses the data server and its client with an error
// that names the build.
func TestPureGoRefusesZeroMQ(t *testing.T) {
	_, e1 := Listen(nil, Options{})
	_, e2 := NewServerDataStream([]string{"features"}, false, ClientOptions{})
	_, _, e3 := NewCurveKeypair()
	for i, err := range []error{e1, e2, e3} {
		if !errors.Is(err, ErrNoZeroMQ) || !strings.Contains(err.Error(), "pure-Go build") {
			t.Errorf("call %d: %v, want ErrNoZeroMQ naming the build", i+1, err)
		}
	}
}
