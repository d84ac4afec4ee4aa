package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/blocks-go/blocks/core"
)

// GraphFingerprint is a digest of b's training graph: every variable of
// the cost and the updates, in core.Ancestors order, with its kind, op,
// dtype, number of dimensions, inputs and, for constants, value. Two
// builds of a script give the same fingerprint when they train the same
// computation (a different dropout probability or a different cost
// weight changes it; a different stopping condition does not).
func GraphFingerprint(b Bindings) string {
	h := sha256.New()
	index := map[*core.Variable]int{}
	for i, v := range core.Ancestors(b.trainingRoots()) {
		index[v] = i
		op := ""
		if v.Op() != nil {
			op = v.Op().String()
		}
		fmt.Fprintf(h, "%d|%s|%s|%d|", v.Kind(), op, v.DType(), v.NDim())
		for _, in := range v.Inputs() {
			fmt.Fprintf(h, "%d,", index[in])
		}
		if v.IsConstant() && v.Value() != nil {
			fmt.Fprintf(h, "%v", v.Value().Shape)
			h.Write(arrayBytes(v.Value()))
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
