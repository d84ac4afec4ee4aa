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
	s, err := NewServerDataStream([]string{"features"}, false, ClientOptions{Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Receive()
	if !errors.Is(err, ErrNoZeroMQ) || !strings.Contains(err.Error(), "pure-Go build") {
		t.Errorf("Receive: %v, want ErrNoZeroMQ naming the build", err)
	}
}
