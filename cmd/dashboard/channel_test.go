package dashboard

import (
	"math"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// A checkpoint's record is a channel point exactly when the SQLite log
// would have stored it as a number: Go numbers and 0-d arrays, finite;
// not bools, strings, lists, None or arrays of one or more dimensions.
func TestChannelPoint(t *testing.T) {
	scalar := nd.New(nd.Float32)
	scalar.SetFlat(0, 0.25)
	one := nd.New(nd.Float64, 1)
	one.SetFlat(0, 2)
	for _, c := range []struct {
		x    any
		want float64
		ok   bool
	}{
		{3, 3, true},
		{int64(-4), -4, true},
		{float32(0.5), 0.5, true},
		{1.25, 1.25, true},
		{scalar, 0.25, true},
		{one, 0, false},
		{true, 0, false},
		{false, 0, false},
		{"1", 0, false},
		{nil, 0, false},
		{[]any{1.0}, 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{float32(math.Inf(-1)), 0, false},
	} {
		got, ok := channelPoint(c.x)
		if ok != c.ok || got != c.want {
			t.Errorf("channelPoint(%#v) = %v, %v; want %v, %v", c.x, got, ok, c.want, c.ok)
		}
	}
}
