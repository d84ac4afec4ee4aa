//go:build cuda

package cuda

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
)

// Every kind core.Spec returns gets, when a function is lowered, the kernel
// its route names (gpuRoutes) or the declared CPU route with its reason;
// so does an op without a kind. (The untagged TestKernelTableMatchesRoutes
// checks the same table from the source, without the tag.)
func TestKernelForEveryKind(t *testing.T) {
	for _, kind := range append([]string{""}, core.SpecKinds...) {
		k, why := kernelFor(kind, nil)
		_, gpu := gpuRoutes[kind]
		switch {
		case gpu && (k == nil || why != ""):
			t.Errorf("kind %q is routed to the GPU but gets no kernel (%s)", kind, why)
		case !gpu && k != nil:
			t.Errorf("kind %q gets a kernel but is not routed to the GPU", kind)
		case !gpu && !strings.HasPrefix(why, "on the CPU: "):
			t.Errorf("kind %q: the CPU route says %q", kind, why)
		}
	}
}
