package starlib

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// BenchmarkElementValue measures what an array element costs as a numpy
// scalar (ElementValue: an example of a 1-d source, a[i]) against the
// Starlark number it was before (NumberValue).
func BenchmarkElementValue(b *testing.B) {
	for _, dt := range []nd.DType{nd.Int64, nd.Float32} {
		b.Run(dt.String()+"/number", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = NumberValue(dt, float64(i&1023))
			}
		})
		b.Run(dt.String()+"/scalar", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = ElementValue(dt, float64(i&1023))
			}
		})
	}
}
