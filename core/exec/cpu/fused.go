package cpu

import (
	"fmt"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The kernels of the user's fused elementwise kernels (core.Fused).

// fused is core.FusedOp's kernel: the fused kernel run on views of its output's parts.
func fused(op core.Op, out *nd.Array, in []*nd.Array) {
	k := op.(core.FusedOp).Kernel()
	n := nd.Prod(out.Shape[1:])
	parts := make([]*nd.Array, k.Parts())
	for p := range parts {
		parts[p] = &nd.Array{Shape: out.Shape[1:], Data: partData(out.Data, p, n)}
	}
	k.Run(parts, in)
}

// fusedPart is core.FusedPartOp's kernel: a view of one result.
func fusedPart(op core.Op, out *nd.Array, in []*nd.Array) {
	out.Data = partData(in[0].Data, op.(core.FusedPartOp).Part(), nd.Prod(out.Shape))
}

func partData(d any, p, n int) any {
	switch x := d.(type) {
	case []float32:
		return x[p*n : (p+1)*n : (p+1)*n]
	case []float64:
		return x[p*n : (p+1)*n : (p+1)*n]
	}
	panic(fmt.Sprintf("cpu: fused kernel output of type %T", d))
}
