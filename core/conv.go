package core

import (
	"fmt"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// Border is a convolution's border mode (Theano's border_mode): "valid"
// (no padding), "full" (padding kernel-1), "half" (padding kernel/2) or an
// explicit padding (Mode "" with Pad set).
type Border struct {
	Mode string
	Pad  [2]int
}

// ParseBorder reads Theano's border_mode values: "valid", "full", "half" or
// an explicit (rows, cols) padding.
func ParseBorder(mode string, pad []int) (Border, error) {
	switch {
	case pad != nil:
		if len(pad) != 2 || pad[0] < 0 || pad[1] < 0 {
			return Border{}, fmt.Errorf("border_mode: an explicit padding must be two non-negative ints, got %v", pad)
		}
		return Border{Pad: [2]int{pad[0], pad[1]}}, nil
	case mode == "valid" || mode == "full" || mode == "half":
		return Border{Mode: mode}, nil
	}
	return Border{}, fmt.Errorf("border_mode must be 'valid', 'full', 'half' or a (rows, cols) padding, got %q", mode)
}

// Pads is the padding for a kh×kw kernel.
func (b Border) Pads(kh, kw int) (int, int) {
	switch b.Mode {
	case "valid":
		return 0, 0
	case "full":
		return kh - 1, kw - 1
	case "half":
		return kh / 2, kw / 2
	}
	return b.Pad[0], b.Pad[1]
}

func (b Border) String() string {
	if b.Mode != "" {
		return b.Mode
	}
	return fmt.Sprintf("(%d, %d)", b.Pad[0], b.Pad[1])
}

// ConvOutputSize is the output length of a convolution along one axis
// (Theano's get_conv_output_shape); below 1 when the filter does not fit.
func ConvOutputSize(in, k, step, pad int) int {
	return (in+2*pad-k)/step + 1
}

// convParams are what the three convolution ops share: the step, the border
// and whether the filters are flipped (Theano's filter_flip: true
// convolution, the default).
type convParams struct {
	step   [2]int
	border Border
	flip   bool
}

func (p convParams) String() string {
	s := []string{fmt.Sprintf("border=%s", p.border)}
	if p.step != [2]int{1, 1} {
		s = append(s, fmt.Sprintf("step=(%d, %d)", p.step[0], p.step[1]))
	}
	if !p.flip {
		s = append(s, "no flip")
	}
	return strings.Join(s, ", ")
}

// ConvGeom is one convolution's sizes: images N×C×H×W, F filters
// C×KH×KW, steps SH, SW, paddings PH, PW, outputs F×OH×OW, flipped
// filters (true convolution) with Flip.
type ConvGeom struct {
	N, C, H, W     int
	F, KH, KW      int
	SH, SW, PH, PW int
	OH, OW         int
	Flip           bool
}

func (p convParams) geom(xs, ws []int) (ConvGeom, error) {
	if len(xs) != 4 || len(ws) != 4 {
		return ConvGeom{}, fmt.Errorf("conv2d needs 4-d images and filters, got shapes %s and %s", nd.ShapeString(xs), nd.ShapeString(ws))
	}
	g := ConvGeom{N: xs[0], C: xs[1], H: xs[2], W: xs[3], F: ws[0], KH: ws[2], KW: ws[3], SH: p.step[0], SW: p.step[1], Flip: p.flip}
	if ws[1] != xs[1] {
		return g, fmt.Errorf("conv2d: the images have %d channels (shape %s) but the filters expect %d (shape %s)", xs[1], nd.ShapeString(xs), ws[1], nd.ShapeString(ws))
	}
	g.PH, g.PW = p.border.Pads(g.KH, g.KW)
	g.OH = ConvOutputSize(g.H, g.KH, g.SH, g.PH)
	g.OW = ConvOutputSize(g.W, g.KW, g.SW, g.PW)
	if g.KH < 1 || g.KW < 1 || g.OH < 1 || g.OW < 1 || g.H+2*g.PH < g.KH || g.W+2*g.PW < g.KW {
		return g, fmt.Errorf("conv2d: %dx%d filters do not fit %dx%d images with padding (%d, %d)", g.KH, g.KW, g.H, g.W, g.PH, g.PW)
	}
	return g, nil
}

func checkConvTypes(name string, a, b *Variable) (nd.DType, error) {
	if a.ndim != 4 || b.ndim != 4 {
		return 0, fmt.Errorf("%s needs two 4-d variables, got %s (%s) and %s (%s)", name, a, a.TypeString(), b, b.TypeString())
	}
	if !a.dtype.IsFloat() || a.dtype != b.dtype {
		return 0, fmt.Errorf("%s needs float variables of one dtype, got %s and %s", name, a.dtype, b.dtype)
	}
	return a.dtype, nil
}

// Conv2DOp is Theano's conv2d: images (n, c, h, w) and filters
// (f, c, kh, kw) to (n, f, oh, ow), as im2col and matrix products written
// into the NCHW output; with a third input b (f,), b[f] is added to every
// pixel of map f on the way (Blocks' tied biases, without a broadcast
// pass).
type Conv2DOp struct {
	convParams
}

func (o Conv2DOp) String() string { return "Conv2d{" + o.convParams.String() + "}" }
func (o Conv2DOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkConvTypes("conv2d", in[0], in[1])
	if err == nil && len(in) > 2 && (in[2].ndim != 1 || in[2].dtype != dt) {
		err = fmt.Errorf("conv2d: the biases must be a %s vector, got %s (%s)", dt, in[2], in[2].TypeString())
	}
	return dt, 4, err
}

// Geom is the geometry of images of shape xs and filters of shape ws.
func (o Conv2DOp) Geom(xs, ws []int) (ConvGeom, error) { return o.geom(xs, ws) }

func (o Conv2DOp) Shape(in [][]int) ([]int, error) {
	g, err := o.geom(in[0], in[1])
	if err != nil {
		return nil, err
	}
	if len(in) > 2 && in[2][0] != g.F {
		return nil, fmt.Errorf("conv2d: %d biases for %d filters", in[2][0], g.F)
	}
	return []int{g.N, g.F, g.OH, g.OW}, nil
}
func (o Conv2DOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	gx := apply(Conv2DGradInputOp{convParams: o.convParams}, gz, in[1], in[0])
	gw := apply(Conv2DGradWeightsOp{convParams: o.convParams}, in[0], gz, in[1])
	if len(in) > 2 {
		return []*Variable{gx, gw, apply(MapSumOp{}, gz)}
	}
	return []*Variable{gx, gw}
}

// MapSumOp sums a 4-d (n, f, h, w) tensor over all axes but f: the
// gradient of tied biases.
type MapSumOp struct{}

func (MapSumOp) String() string { return "MapSum" }
func (MapSumOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 1, nil
}
func (MapSumOp) Shape(in [][]int) ([]int, error) { return []int{in[0][1]}, nil }
func (MapSumOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{broadcastLike(must1(Dimshuffle(gz, []int{-1, 0, -1, -1})), in[0])}
}

func must1(v *Variable, err error) *Variable {
	if err != nil {
		panic(err)
	}
	return v
}

// Conv2DGradInputOp is the gradient of conv2d with respect to its images
// (and the transposed convolution): inputs gz (n, f, oh, ow), filters
// (f, c, kh, kw) and a third variable whose shape is the images' shape
// (n, c, h, w); or, with size set, only gz and the filters and the image
// size (h, w) fixed.
type Conv2DGradInputOp struct {
	convParams
	size [2]int
}

func (o Conv2DGradInputOp) String() string {
	return "Conv2dGradInputs{" + o.convParams.String() + "}"
}
func (o Conv2DGradInputOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkConvTypes("conv2d_grad_inputs", in[0], in[1])
	return dt, 4, err
}
func (o Conv2DGradInputOp) imageShape(in [][]int) []int {
	if len(in) > 2 {
		return in[2]
	}
	return []int{in[0][0], in[1][1], o.size[0], o.size[1]}
}

// GeomOf is the geometry of the convolution whose images' gradient the
// op computes from inputs of these shapes.
func (o Conv2DGradInputOp) GeomOf(in [][]int) (ConvGeom, error) { return o.geomOf(in) }

func (o Conv2DGradInputOp) geomOf(in [][]int) (ConvGeom, error) {
	xs := o.imageShape(in)
	g, err := o.geom(xs, in[1])
	if err != nil {
		return g, err
	}
	if in[0][0] != g.N || in[0][1] != g.F || in[0][2] != g.OH || in[0][3] != g.OW {
		return g, fmt.Errorf("conv2d_grad_inputs: %s images and %s filters give outputs %s, got %s", nd.ShapeString(xs), nd.ShapeString(in[1]), nd.ShapeString([]int{g.N, g.F, g.OH, g.OW}), nd.ShapeString(in[0]))
	}
	return g, nil
}
func (o Conv2DGradInputOp) Shape(in [][]int) ([]int, error) {
	if _, err := o.geomOf(in); err != nil {
		return nil, err
	}
	return o.imageShape(in), nil
}

// Grad: the op is linear in gz and in the filters. With y = gradInput(z, W)
// and G the gradient of the cost with respect to y, ⟨conv(G, W), z⟩ =
// ⟨G, y⟩ gives dz = conv(G, W) and dW = gradWeights(G, z).
func (o Conv2DGradInputOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	dz := apply(Conv2DOp{convParams: o.convParams}, gz, in[1])
	dw := apply(Conv2DGradWeightsOp{convParams: o.convParams}, gz, in[0], in[1])
	res := []*Variable{dz, dw}
	if len(in) > 2 {
		res = append(res, nil)
	}
	return res
}

// Conv2DGradWeightsOp is the gradient of conv2d with respect to its
// filters: inputs the images x (n, c, h, w), gz (n, f, oh, ow) and a
// variable shaped like the filters (f, c, kh, kw).
type Conv2DGradWeightsOp struct {
	convParams
}

func (o Conv2DGradWeightsOp) String() string {
	return "Conv2dGradWeights{" + o.convParams.String() + "}"
}
func (o Conv2DGradWeightsOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkConvTypes("conv2d_grad_weights", in[0], in[1])
	return dt, 4, err
}

// GeomOf is the geometry of the convolution whose filters' gradient the
// op computes from inputs of these shapes.
func (o Conv2DGradWeightsOp) GeomOf(in [][]int) (ConvGeom, error) { return o.geomOf(in) }

func (o Conv2DGradWeightsOp) geomOf(in [][]int) (ConvGeom, error) {
	g, err := o.geom(in[0], in[2])
	if err != nil {
		return g, err
	}
	if in[1][0] != g.N || in[1][1] != g.F || in[1][2] != g.OH || in[1][3] != g.OW {
		return g, fmt.Errorf("conv2d_grad_weights: %s images and %s filters give outputs %s, got %s", nd.ShapeString(in[0]), nd.ShapeString(in[2]), nd.ShapeString([]int{g.N, g.F, g.OH, g.OW}), nd.ShapeString(in[1]))
	}
	return g, nil
}
func (o Conv2DGradWeightsOp) Shape(in [][]int) ([]int, error) {
	if _, err := o.geomOf(in); err != nil {
		return nil, err
	}
	return in[2], nil
}

// Grad: the op is bilinear, ⟨gradWeights(x, z), G⟩ = ⟨conv(x, G), z⟩, so
// dx = gradInput(z, G) and dz = conv(x, G).
func (o Conv2DGradWeightsOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	dx := apply(Conv2DGradInputOp{convParams: o.convParams}, in[1], gz, in[0])
	dz := apply(Conv2DOp{convParams: o.convParams}, in[0], gz)
	return []*Variable{dx, dz, nil}
}

// Conv2dOptions are conv2d's keyword arguments.
type Conv2dOptions struct {
	// Step is Theano's subsample (default (1, 1)).
	Step [2]int
	// Border is the border mode (default valid).
	Border Border
	// NoFlip computes a cross-correlation instead of Theano's default true
	// convolution (filter_flip=False).
	NoFlip bool
}

func (o Conv2dOptions) params() (convParams, error) {
	p := convParams{step: o.Step, border: o.Border, flip: !o.NoFlip}
	if p.step == [2]int{} {
		p.step = [2]int{1, 1}
	}
	if p.border.Mode == "" && p.border.Pad == [2]int{} {
		p.border.Mode = "valid"
	}
	if p.step[0] < 1 || p.step[1] < 1 {
		return p, fmt.Errorf("conv2d: the step must be positive, got (%d, %d)", p.step[0], p.step[1])
	}
	return p, nil
}

// Conv2d is Theano's conv2d(input, filters, subsample, border_mode,
// filter_flip): images (batch, channels, rows, cols) convolved with filters
// (num_filters, channels, rows, cols); true convolution (flipped filters)
// unless NoFlip.
func Conv2d(x, w *Variable, opts Conv2dOptions) (*Variable, error) {
	p, err := opts.params()
	if err != nil {
		return nil, err
	}
	return tryApply(Conv2DOp{convParams: p}, x, w)
}

// Conv2dBias is Conv2d(x, w) + b.dimshuffle('x', 0, 'x', 'x') in one op:
// b holds one bias per filter.
func Conv2dBias(x, w, b *Variable, opts Conv2dOptions) (*Variable, error) {
	p, err := opts.params()
	if err != nil {
		return nil, err
	}
	return tryApply(Conv2DOp{convParams: p}, x, w, b)
}

// Conv2dGradInputs is the gradient of conv2d with respect to its images:
// the transposed convolution of gz (batch, num_filters, rows, cols) with
// filters (num_filters, channels, kh, kw) back to images of size
// imageSize (Theano's AbstractConv2d_gradInputs).
func Conv2dGradInputs(gz, w *Variable, imageSize [2]int, opts Conv2dOptions) (*Variable, error) {
	p, err := opts.params()
	if err != nil {
		return nil, err
	}
	if imageSize[0] < 1 || imageSize[1] < 1 {
		return nil, fmt.Errorf("conv2d_grad_inputs: the image size must be positive, got %v", imageSize)
	}
	return tryApply(Conv2DGradInputOp{convParams: p, size: imageSize}, gz, w)
}
