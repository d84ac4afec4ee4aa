package transformers

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // ImagesFromBytes decodes GIF
	_ "image/jpeg" // ImagesFromBytes decodes JPEG
	_ "image/png"  // and PNG
	"log/slog"
	"math"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	_ "golang.org/x/image/bmp" // ImagesFromBytes decodes BMP
)

// This file holds fuel.transformers.image.

// eachExample applies f to an example, or to every example of a batch (a
// regular array along its first axis, or an object array), giving a
// regular batch when the results agree in shape and an object array
// otherwise (always one for an object input, as Fuel keeps lists lists).
func eachExample(a *nd.Array, example bool, f func(*nd.Array) (*nd.Array, error)) (*nd.Array, error) {
	if example {
		return f(a)
	}
	parts, err := a.Parts()
	if err != nil {
		return nil, err
	}
	out := make([]*nd.Array, len(parts))
	for i, p := range parts {
		if out[i], err = f(p); err != nil {
			return nil, fmt.Errorf("example %d: %w", i, err)
		}
	}
	if a.DType() == nd.Object || len(out) == 0 {
		return nd.Objects(out), nil
	}
	return nd.Stack(out)
}

// ImagesFromBytes is Fuel's ImagesFromBytes(data_stream, which_sources,
// color_mode='RGB'): each example of the selected sources is the bytes of
// a PNG, JPEG, BMP or GIF file (a uint8 vector) and becomes its pixels,
// uint8, (channel, height, width): 3 channels with "RGB", 1 with "L"
// (grey levels), and with "" (Fuel's None) the channels as decoded (1 for
// a grey or paletted image: its levels or palette indices; 4 for RGBA or
// CMYK; else 3). A batch becomes an object array of images. The selected
// sources' axis labels become ('batch',) 'channel', 'height', 'width', as
// Fuel's. Go's decoders do the work (JPEG pixels may differ from PIL's by
// a rounding step).
func ImagesFromBytes(stream fuel.Stream, whichSources []string, colorMode string) (*Transformer, error) {
	if colorMode != "RGB" && colorMode != "L" && colorMode != "" {
		return nil, fmt.Errorf("transformers: ImagesFromBytes: color_mode must be 'RGB', 'L' or None, got %q", colorMode)
	}
	if stream == nil {
		return nil, fmt.Errorf("transformers: ImagesFromBytes: no data stream")
	}
	labels := copyLabels(stream)
	if labels == nil {
		labels = map[string][]string{}
	}
	for i, src := range stream.Sources() {
		if selected(stream.Sources(), whichSources)[i] {
			labels[src] = []string{"channel", "height", "width"}
			if !stream.ProducesExamples() {
				labels[src] = append([]string{"batch"}, labels[src]...)
			}
		}
	}
	return sourcewise("ImagesFromBytes", stream, whichSources, labels, func(a *nd.Array, _ string, example bool) (*nd.Array, error) {
		if example {
			return decodeImage(a, colorMode)
		}
		parts, err := a.Parts()
		if err != nil {
			return nil, err
		}
		out := make([]*nd.Array, len(parts))
		for i, p := range parts {
			if out[i], err = decodeImage(p, colorMode); err != nil {
				return nil, fmt.Errorf("example %d: %w", i, err)
			}
		}
		return nd.Objects(out), nil
	})
}

func decodeImage(a *nd.Array, mode string) (*nd.Array, error) {
	b, ok := a.Data.([]uint8)
	if !ok || a.NDim() != 1 {
		return nil, fmt.Errorf("expected bytes (a uint8 vector), got %s%v", a.DType(), a.Shape)
	}
	// The header is read first: a few bytes can declare a picture of
	// gigabytes, which the decoder would allocate before reading a pixel.
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decoding an image: %w", err)
	}
	const maxBytesPerPixel = 8 // the decoders' widest pixels (16-bit RGBA)
	if cfg.Width <= 0 || cfg.Height <= 0 ||
		uint64(cfg.Width)*uint64(cfg.Height) > nd.AvailableMemory()/2/maxBytesPerPixel {
		return nil, fmt.Errorf("decoding an image: it declares %d×%d pixels, more than the memory available (%d bytes) can hold",
			cfg.Width, cfg.Height, nd.AvailableMemory())
	}
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decoding an image: %w", err)
	}
	r := img.Bounds()
	h, w := r.Dy(), r.Dx()
	at := func(x, y int) color.Color { return img.At(r.Min.X+x, r.Min.Y+y) }
	// planes fills a (c, h, w) array from a pixel's channel values.
	planes := func(c int, px func(x, y int, v []uint8)) *nd.Array {
		out := nd.New(nd.Uint8, c, h, w)
		d := out.Data.([]uint8)
		v := make([]uint8, c)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				px(x, y, v)
				for k := range v {
					d[k*h*w+y*w+x] = v[k]
				}
			}
		}
		return out
	}
	if mode == "" {
		// Fuel's None: the image as decoded (PIL's mode), channels first.
		// Go decodes an RGB PNG or BMP into RGBA: the file says which.
		switch {
		case format == "png" && len(b) > 25 && b[25] == 2, format == "bmp":
			mode = "RGB"
		}
	}
	if mode == "" {
		switch m := img.(type) {
		case *image.Paletted:
			return planes(1, func(x, y int, v []uint8) { v[0] = m.ColorIndexAt(r.Min.X+x, r.Min.Y+y) }), nil
		case *image.CMYK:
			return planes(4, func(x, y int, v []uint8) {
				c := m.CMYKAt(r.Min.X+x, r.Min.Y+y)
				v[0], v[1], v[2], v[3] = c.C, c.M, c.Y, c.K
			}), nil
		}
		switch img.ColorModel() {
		case color.GrayModel, color.Gray16Model:
			mode = "L"
		case color.RGBAModel, color.RGBA64Model, color.NRGBAModel, color.NRGBA64Model:
			return planes(4, func(x, y int, v []uint8) {
				c := color.NRGBAModel.Convert(at(x, y)).(color.NRGBA)
				v[0], v[1], v[2], v[3] = c.R, c.G, c.B, c.A
			}), nil
		default:
			mode = "RGB"
		}
	}
	if mode == "L" {
		// (1, height, width), as Fuel adds a channel axis to PIL's 2-d array.
		return planes(1, func(x, y int, v []uint8) {
			if g, ok := at(x, y).(color.Gray); ok {
				v[0] = g.Y
				return
			}
			c := color.NRGBAModel.Convert(at(x, y)).(color.NRGBA)
			// PIL's ITU-R 601-2 luma in 16-bit fixed point, rounded.
			v[0] = uint8((int(c.R)*19595 + int(c.G)*38470 + int(c.B)*7471 + 0x8000) >> 16)
		}), nil
	}
	return planes(3, func(x, y int, v []uint8) {
		c := color.NRGBAModel.Convert(at(x, y)).(color.NRGBA)
		v[0], v[1], v[2] = c.R, c.G, c.B
	}), nil
}

// verifyAxisLabels is Fuel's ExpectsAxisLabels: a selected source whose
// axis labels are known and are not (batch,) channel, height, width gets
// a warning (once, when the transformer is made); the data are used as
// they are.
func verifyAxisLabels(name string, stream fuel.Stream, whichSources []string) {
	if stream == nil {
		return
	}
	want := []string{"channel", "height", "width"}
	if !stream.ProducesExamples() {
		want = append([]string{"batch"}, want...)
	}
	labels := stream.AxisLabels()
	for i, src := range stream.Sources() {
		l, ok := labels[src]
		if !ok || l == nil || !selected(stream.Sources(), whichSources)[i] {
			continue
		}
		if !slices.Equal(l, want) {
			slog.Warn(fmt.Sprintf("fuel.transformers.image.%s: source %q has axis labels %v; %v were expected, the axes are taken in that order", name, src, l, want))
		}
	}
}

// imageDims checks a 2-d (height, width) or 3-d (channel, height, width)
// image and returns its channels, height and width.
func imageDims(a *nd.Array) (c, h, w int, err error) {
	switch a.NDim() {
	case 2:
		return 1, a.Shape[0], a.Shape[1], nil
	case 3:
		return a.Shape[0], a.Shape[1], a.Shape[2], nil
	}
	return 0, 0, 0, fmt.Errorf("expected an image of 2 or 3 dimensions (channel, height, width), got shape %v", a.Shape)
}

// MinimumImageDimensions is Fuel's MinimumImageDimensions(data_stream,
// minimum_shape, resample='nearest', which_sources=None): an image
// smaller than minimum_shape (height, width) in either dimension is
// enlarged, keeping its aspect ratio (Fuel's arithmetic, truncating), so
// that both reach the minimum; larger images pass as they are. Only
// nearest-neighbour resampling is implemented.
func MinimumImageDimensions(stream fuel.Stream, minimumShape [2]int, resample string, whichSources []string) (*Transformer, error) {
	if resample == "" {
		resample = "nearest"
	}
	if resample != "nearest" {
		return nil, fmt.Errorf("transformers: MinimumImageDimensions: resample %q is not supported (only 'nearest')", resample)
	}
	minH, minW := minimumShape[0], minimumShape[1]
	verifyAxisLabels("MinimumImageDimensions", stream, whichSources)
	return sourcewise("MinimumImageDimensions", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, example bool) (*nd.Array, error) {
		return eachExample(a, example, func(im *nd.Array) (*nd.Array, error) {
			_, h, w, err := imageDims(im)
			if err != nil {
				return nil, err
			}
			if h >= minH && w >= minW {
				return im, nil
			}
			aspect := float64(w) / float64(h)
			nw, nh := w, h
			if nw < minW {
				nw = minW
				nh = int(float64(nw) / aspect)
			}
			if nh < minH {
				nh = minH
				nw = int(float64(nh) * aspect)
			}
			return resizeNearest(im, nh, nw), nil
		})
	})
}

// resizeNearest resizes the last two axes as PIL's NEAREST filter does:
// output pixel x samples source pixel floor((x + 0.5) * w / nw).
func resizeNearest(im *nd.Array, nh, nw int) *nd.Array {
	c, h, w, _ := imageDims(im)
	shape := []int{nh, nw}
	if im.NDim() == 3 {
		shape = []int{c, nh, nw}
	}
	out := nd.New(im.DType(), shape...)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < nh; y++ {
			sy := min(int((float64(y)+0.5)*float64(h)/float64(nh)), h-1)
			for x := 0; x < nw; x++ {
				sx := min(int((float64(x)+0.5)*float64(w)/float64(nw)), w-1)
				out.SetFlat((ch*nh+y)*nw+x, im.Flat((ch*h+sy)*w+sx))
			}
		}
	}
	return out
}

// defaultRNG is the generator of a random transformer: rng, or
// RandomState(config.default_seed) as Fuel makes it.
func defaultRNG(name string, rng *numpyrand.RandomState) (*numpyrand.RandomState, error) {
	if rng != nil {
		return rng, nil
	}
	r, err := schemes.DefaultRNG()
	if err != nil {
		return nil, fmt.Errorf("transformers: %s: %w", name, err)
	}
	return r, nil
}

// RandomFixedSizeCrop is Fuel's RandomFixedSizeCrop(data_stream,
// window_shape, rng=None, which_sources=None): every image (channel,
// height, width) is cropped to window_shape (height, width) at a random
// offset. A 4-d batch draws all horizontal offsets, then all vertical
// ones (rng.random_integers(0, max_offset, size=batch)); an example, or
// each image of an object batch, draws its vertical then its horizontal
// offset, each only when the image is larger than the window. The
// generator (default RandomState(default_seed)) is part of the state.
func RandomFixedSizeCrop(stream fuel.Stream, windowShape [2]int, rng *numpyrand.RandomState, whichSources []string) (*Transformer, error) {
	rng, err := defaultRNG("RandomFixedSizeCrop", rng)
	if err != nil {
		return nil, err
	}
	wh, ww := windowShape[0], windowShape[1]
	verifyAxisLabels("RandomFixedSizeCrop", stream, whichSources)
	if wh < 1 || ww < 1 {
		return nil, fmt.Errorf("transformers: RandomFixedSizeCrop: window_shape must be positive, got %v", windowShape)
	}
	cropExample := func(im *nd.Array) (*nd.Array, error) {
		if im.NDim() != 3 {
			return nil, fmt.Errorf("uninterpretable example format; expected an array with ndim = 3, got shape %v", im.Shape)
		}
		_, h, w, _ := imageDims(im)
		if h < wh || w < ww {
			return nil, fmt.Errorf("image of shape %v is smaller than the window %v", im.Shape, windowShape)
		}
		offH, offW := 0, 0
		if h > wh {
			offH = int(rng.Randint(0, int64(h-wh)+1))
		}
		if w > ww {
			offW = int(rng.Randint(0, int64(w-ww)+1))
		}
		return crop(im, offH, offW, wh, ww), nil
	}
	t, err := sourcewise("RandomFixedSizeCrop", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, example bool) (*nd.Array, error) {
		if example || a.DType() == nd.Object {
			return eachExample(a, example, cropExample)
		}
		if a.NDim() != 4 {
			return nil, fmt.Errorf("uninterpretable batch format; expected an object batch of 3-d images or an array with ndim = 4, got shape %v", a.Shape)
		}
		n, h, w := a.Shape[0], a.Shape[2], a.Shape[3]
		if h < wh || w < ww {
			return nil, fmt.Errorf("got a batch with image dimensions %v but requested window shape of %v", a.Shape[2:], windowShape)
		}
		offW := make([]int, n)
		offH := make([]int, n)
		for i := range offW {
			offW[i] = int(rng.Randint(0, int64(w-ww)+1))
		}
		for i := range offH {
			offH[i] = int(rng.Randint(0, int64(h-wh)+1))
		}
		parts, _ := a.Parts()
		out := make([]*nd.Array, n)
		for i, p := range parts {
			out[i] = crop(p, offH[i], offW[i], wh, ww)
		}
		if n == 0 {
			return nd.New(a.DType(), 0, a.Shape[1], wh, ww), nil
		}
		return nd.Stack(out)
	})
	if err != nil {
		return nil, err
	}
	t.rng = rng
	return t, nil
}

func crop(im *nd.Array, offH, offW, wh, ww int) *nd.Array {
	c, h, w, _ := imageDims(im)
	out := nd.New(im.DType(), c, wh, ww)
	// Flat 1-d views, so that each row is one copy of ww elements.
	flatOut := &nd.Array{Shape: []int{c * wh * ww}, Data: out.Data}
	flatIn := &nd.Array{Shape: []int{c * h * w}, Data: im.Data}
	for ch := 0; ch < c; ch++ {
		for y := 0; y < wh; y++ {
			src := (ch*h+offH+y)*w + offW
			dst := (ch*wh + y) * ww
			// Same dtype and length: CopyFrom cannot fail.
			_ = flatOut.Slice(dst, dst+ww).CopyFrom(flatIn.Slice(src, src+ww))
		}
	}
	return out
}

// Random2DRotation is Fuel's Random2DRotation(data_stream,
// maximum_rotation=pi, resample='nearest', rng=None, which_sources=None):
// every image (channel, height, width) is rotated about its centre by an
// angle drawn uniformly in [-maximum_rotation, maximum_rotation] radians
// (counter-clockwise, as PIL's Image.rotate, keeping the size and filling
// with zeros): one rng.uniform(size=batch) draw per batch, one
// rng.uniform() per example. Nearest-neighbour sampling as PIL's affine
// transform does it; only 'nearest' is implemented.
func Random2DRotation(stream fuel.Stream, maximumRotation float64, resample string, rng *numpyrand.RandomState, whichSources []string) (*Transformer, error) {
	if resample == "" {
		resample = "nearest"
	}
	if resample != "nearest" {
		return nil, fmt.Errorf("transformers: Random2DRotation: resample %q is not supported (only 'nearest')", resample)
	}
	if math.IsNaN(maximumRotation) || maximumRotation <= 0 || maximumRotation > math.Pi {
		return nil, fmt.Errorf("transformers: Random2DRotation: maximum_rotation must be in (0, pi], got %v", maximumRotation)
	}
	verifyAxisLabels("Random2DRotation", stream, whichSources)
	rng, err := defaultRNG("Random2DRotation", rng)
	if err != nil {
		return nil, err
	}
	t, err := sourcewise("Random2DRotation", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, example bool) (*nd.Array, error) {
		if example {
			return rotate(a, rng.Uniform(-maximumRotation, maximumRotation))
		}
		parts, err := a.Parts()
		if err != nil {
			return nil, err
		}
		angles := make([]float64, len(parts))
		for i := range angles {
			angles[i] = rng.Uniform(-maximumRotation, maximumRotation)
		}
		k := 0
		return eachExample(a, false, func(im *nd.Array) (*nd.Array, error) {
			k++
			return rotate(im, angles[k-1])
		})
	})
	if err != nil {
		return nil, err
	}
	t.rng = rng
	return t, nil
}

// rotate turns each channel by angle radians counter-clockwise about the
// image centre, as PIL's Image.rotate(degrees(angle), NEAREST) does: the
// output pixel centre (x+0.5, y+0.5) maps back through the inverse
// rotation and takes the source pixel it lands in, 0 outside.
func rotate(im *nd.Array, angle float64) (*nd.Array, error) {
	if im.NDim() != 3 {
		return nil, fmt.Errorf("expected an image of shape (channel, height, width), got shape %v", im.Shape)
	}
	c, h, w, _ := imageDims(im)
	// PIL: angle = -radians(degrees % 360); matrix [cos, sin, 0, -sin, cos, 0]
	// about the centre.
	deg := math.Mod(angle*180/math.Pi, 360)
	if deg < 0 {
		deg += 360
	}
	th := -deg * math.Pi / 180
	cos, sin := round15(math.Cos(th)), round15(math.Sin(th))
	cx, cy := float64(w)/2, float64(h)/2
	a, b, d, e := cos, sin, -sin, cos
	cc := a*(-cx) + b*(-cy) + cx
	f := d*(-cx) + e*(-cy) + cy
	out := nd.New(im.DType(), c, h, w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			xx, yy := float64(x)+0.5, float64(y)+0.5
			sx := int(math.Floor(a*xx + b*yy + cc))
			sy := int(math.Floor(d*xx + e*yy + f))
			if sx < 0 || sy < 0 || sx >= w || sy >= h {
				continue
			}
			for ch := 0; ch < c; ch++ {
				out.SetFlat((ch*h+y)*w+x, im.Flat((ch*h+sy)*w+sx))
			}
		}
	}
	return out, nil
}

// round15 rounds to 15 decimals, as PIL does with the rotation matrix.
func round15(v float64) float64 { return math.Round(v*1e15) / 1e15 }
