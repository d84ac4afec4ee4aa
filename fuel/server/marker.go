package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// Sequence and epoch markers.
//
// Fuel's protocol says nothing about order: ZeroMQ's PUSH socket deals
// messages round-robin to every PULL socket connected, so a second
// consumer (any local process, by default) silently takes every other
// batch, and a consumer that joins late, or a server restarted mid-epoch,
// gives epochs that are a splice of two. A server started with markers
// (Options.Sequence, `fuel serve --sequence`, and always in the CURVE
// mode) adds four keys to each message, which Fuel's recv_arrays ignores
// (it reads only shape, descr and fortran_order, and tests only for
// "stop"):
//
//   - in a batch, to the first array's header: "seq" (the message's
//     number since the server started, from 0), "epoch" (from 1),
//     "batch" (its position in the epoch, from 0) and "server" (an id
//     drawn when the server starts);
//   - in the stop frame: the same keys, "batch" being the number of
//     batches the epoch had: {"stop": true, "seq": 27, "epoch": 1,
//     "batch": 27, "server": "…"}.
//
// A ServerDataStream reads them whenever they come and then reports, as
// an error from the batch where it happens: a lost message (a gap in
// seq: another consumer took it), a duplicated or reordered one (seq
// going back), a first message that is not the start of an epoch (this
// consumer joined mid-epoch), a server that restarted mid-epoch (a new
// id, not at an epoch's start), and a marker inconsistent with the ones
// before. Without markers the bytes are Fuel's exactly.

// Marker is what a message says of its place in the server's output.
type Marker struct {
	Server string // the server's id, drawn when it starts
	Seq    int64  // the message's number since the server started, from 0
	Epoch  int    // from 1
	// Batch is the position of a batch in its epoch, from 0; in a stop
	// frame, the number of batches the epoch had.
	Batch int
	Stop  bool
}

// newServerID draws a server's id.
func newServerID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a fixed id only weakens the
		// detection of a restart.
		return "0000000000000000"
	}
	return hex.EncodeToString(b[:])
}

// markerJSON is the marker's keys as they follow a header's or the stop
// frame's own: `, "seq": 3, "epoch": 1, "batch": 3, "server": "…"`.
func (m Marker) markerJSON() string {
	return `, "seq": ` + strconv.FormatInt(m.Seq, 10) + `, "epoch": ` + strconv.Itoa(m.Epoch) +
		`, "batch": ` + strconv.Itoa(m.Batch) + `, "server": ` + strconv.Quote(m.Server)
}

// EncodeMarked is EncodeArrays with the marker m in the first header.
func EncodeMarked(arrays []*nd.Array, m Marker) ([][]byte, error) {
	frames, err := EncodeArrays(arrays)
	if err != nil {
		return nil, err
	}
	h := string(frames[0])
	// The first header's object ends at its first "}".
	i := strings.IndexByte(h, '}')
	frames[0] = []byte(h[:i] + m.markerJSON() + h[i:])
	return frames, nil
}

// StopFrame is the frame that ends an epoch: Fuel's {"stop": true}, with
// the marker's keys when m is not nil.
func StopFrame(m *Marker) []byte {
	if m == nil {
		return stopFrame
	}
	return []byte(`{"stop": true` + m.markerJSON() + `}`)
}

// wireMarker is the marker's keys as decoded from JSON; nil fields were
// absent.
type wireMarker struct {
	Seq    *int64  `json:"seq"`
	Epoch  *int    `json:"epoch"`
	Batch  *int    `json:"batch"`
	Server *string `json:"server"`
}

// marker reads the keys: nil when none is there, an error when some are
// or when they are not consistent.
func (w wireMarker) marker(stop bool) (*Marker, error) {
	if w.Seq == nil && w.Epoch == nil && w.Batch == nil && w.Server == nil {
		return nil, nil
	}
	if w.Seq == nil || w.Epoch == nil || w.Batch == nil || w.Server == nil {
		return nil, errors.New("server: malformed marker: a message needs all of seq, epoch, batch and server, or none")
	}
	if *w.Seq < 0 || *w.Epoch < 1 || *w.Batch < 0 {
		return nil, fmt.Errorf("server: malformed marker: seq %d, epoch %d, batch %d (want seq >= 0, epoch >= 1, batch >= 0)", *w.Seq, *w.Epoch, *w.Batch)
	}
	return &Marker{Server: *w.Server, Seq: *w.Seq, Epoch: *w.Epoch, Batch: *w.Batch, Stop: stop}, nil
}

// DecodeMessage is DecodeArrays that also returns the message's marker
// (nil when the server sends none). A stop frame gives ErrStop with its
// marker.
func DecodeMessage(frames [][]byte) ([]*nd.Array, *Marker, error) {
	if len(frames) == 0 {
		return nil, nil, errors.New("server: malformed message: no frames")
	}
	first := strings.TrimSpace(string(frames[0]))
	var w wireMarker
	if strings.HasPrefix(first, "{") {
		// A stop frame (DecodeArrays says what is wrong with any other).
		if err := json.Unmarshal(frames[0], &w); err == nil {
			arrays, err := DecodeArrays(frames)
			if errors.Is(err, ErrStop) {
				m, merr := w.marker(true)
				if merr != nil {
					return nil, nil, merr
				}
				return nil, m, ErrStop
			}
			return arrays, nil, err
		}
		_, err := DecodeArrays(frames)
		return nil, nil, err
	}
	arrays, err := DecodeArrays(frames)
	if err != nil {
		return nil, nil, err
	}
	var ws []wireMarker
	if err := json.Unmarshal(frames[0], &ws); err != nil || len(ws) == 0 {
		return arrays, nil, nil
	}
	m, err := ws[0].marker(false)
	if err != nil {
		return nil, nil, err
	}
	return arrays, m, nil
}

// sequence follows the markers a client receives.
type sequence struct {
	last *Marker // the last marker received; nil before the first
}

// check takes the marker of the next message and says what is wrong with
// its place, if anything; the marker becomes the last either way.
func (s *sequence) check(m Marker, addr string) error {
	last := s.last
	s.last = &m
	what := func(m Marker) string {
		if m.Stop {
			return fmt.Sprintf("the end of epoch %d (%d batches)", m.Epoch, m.Batch)
		}
		return fmt.Sprintf("batch %d of epoch %d", m.Batch+1, m.Epoch)
	}
	if last == nil {
		if m.Batch != 0 {
			return fmt.Errorf("server: ServerDataStream: the first message from %s is %s: this consumer joined mid-epoch, and the epoch's first %d batches went to another consumer (or to one that left); restart the server to read whole epochs", addr, what(m), m.Batch)
		}
		return nil
	}
	if m.Server != last.Server {
		if last.Stop && m.Seq == 0 && m.Epoch == 1 && m.Batch == 0 {
			return nil // a new server, at an epoch's start
		}
		return fmt.Errorf("server: ServerDataStream: the server at %s restarted: %s of the new server follows %s of the old one, so the epoch in progress would be a splice of two", addr, what(m), what(*last))
	}
	switch {
	case m.Seq > last.Seq+1:
		n := m.Seq - last.Seq - 1
		return fmt.Errorf("server: ServerDataStream: %d message(s) from %s lost between %s and %s (messages %d to %d): another consumer is connected to the server and takes them (a ZeroMQ PUSH socket deals messages round-robin); serve with the CURVE mode to admit only your clients", n, addr, what(*last), what(m), last.Seq+1, m.Seq-1)
	case m.Seq <= last.Seq:
		return fmt.Errorf("server: ServerDataStream: message %d from %s (%s) came after message %d (%s): duplicated or out of order", m.Seq, addr, what(m), last.Seq, what(*last))
	}
	wantEpoch, wantBatch := last.Epoch, last.Batch+1
	if last.Stop {
		wantEpoch, wantBatch = last.Epoch+1, 0
	}
	if m.Epoch != wantEpoch || m.Batch != wantBatch {
		return fmt.Errorf("server: ServerDataStream: the marker of message %d from %s says %s, but it follows %s", m.Seq, addr, what(m), what(*last))
	}
	return nil
}
