package converters

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // the converters decode JPEG (celeba, dogs_vs_cats, ilsvrc)
	_ "image/png"  // and PNG (svhn format 1)
	"math"

	"github.com/blocks-go/blocks/nd"
)

// decodeRGB decodes a PNG or JPEG file's bytes to its pixels as
// numpy.asarray(Image.open(f).convert('RGB')).transpose(2, 0, 1) gives
// them: uint8 (3, height, width). Go's decoders do the work (a JPEG's
// pixels may differ from PIL's by a rounding step).
func decodeRGB(b []byte) (*nd.Array, error) {
	im, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decoding an image: %w", err)
	}
	r := im.Bounds()
	h, w := r.Dy(), r.Dx()
	out := make([]uint8, 3*h*w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBAModel.Convert(im.At(r.Min.X+x, r.Min.Y+y)).(color.NRGBA)
			out[y*w+x] = c.R
			out[h*w+y*w+x] = c.G
			out[2*h*w+y*w+x] = c.B
		}
	}
	return nd.FromSlice(out, 3, h, w), nil
}

// resizeLanczos resizes a uint8 (channels, height, width) image to (nh,
// nw) as PIL's Image.resize((nw, nh), Image.ANTIALIAS) does (Pillow's
// separable Lanczos-3 resampling: support scaled by the reduction factor,
// 22-bit fixed-point coefficients, the horizontal pass first and its
// result rounded to 8 bits, then the vertical pass).
func resizeLanczos(im *nd.Array, nh, nw int) *nd.Array {
	c, h, w := im.Shape[0], im.Shape[1], im.Shape[2]
	src := im.Data.([]uint8)
	xb, xk, xn := pilCoeffs(w, nw)
	yb, yk, yn := pilCoeffs(h, nh)
	mid := make([]uint8, c*h*nw)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < h; y++ {
			row := src[ch*h*w+y*w:]
			for x := 0; x < nw; x++ {
				ss := int64(1) << (pilPrecision - 1)
				k := xk[x*xn:]
				for i := 0; i < xb[2*x+1]; i++ {
					ss += int64(row[xb[2*x]+i]) * int64(k[i])
				}
				mid[ch*h*nw+y*nw+x] = clip8(ss)
			}
		}
	}
	out := make([]uint8, c*nh*nw)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < nh; y++ {
			k := yk[y*yn:]
			for x := 0; x < nw; x++ {
				ss := int64(1) << (pilPrecision - 1)
				for i := 0; i < yb[2*y+1]; i++ {
					ss += int64(mid[ch*h*nw+(yb[2*y]+i)*nw+x]) * int64(k[i])
				}
				out[ch*nh*nw+y*nw+x] = clip8(ss)
			}
		}
	}
	return nd.FromSlice(out, c, nh, nw)
}

// pilPrecision is Pillow's PRECISION_BITS (32 - 8 - 2).
const pilPrecision = 22

func clip8(ss int64) uint8 {
	v := ss >> pilPrecision
	switch {
	case v < 0:
		return 0
	case v > 255:
		return 255
	}
	return uint8(v)
}

func lanczos3(x float64) float64 {
	sinc := func(x float64) float64 {
		if x == 0 {
			return 1
		}
		x *= math.Pi
		return math.Sin(x) / x
	}
	if x > -3 && x < 3 {
		return sinc(x) * sinc(x/3)
	}
	return 0
}

// pilCoeffs is Pillow's precompute_coeffs and normalize_coeffs_8bpc for
// resizing inSize pixels to outSize: bounds (first input pixel and count
// of each output pixel) and the fixed-point weights, ksize per output.
func pilCoeffs(inSize, outSize int) (bounds []int, kk []int32, ksize int) {
	scale := float64(inSize) / float64(outSize)
	filterscale := max(scale, 1)
	support := 3 * filterscale
	ksize = int(math.Ceil(support))*2 + 1
	bounds = make([]int, 2*outSize)
	kk = make([]int32, outSize*ksize)
	k := make([]float64, ksize)
	for xx := 0; xx < outSize; xx++ {
		center := (float64(xx) + 0.5) * scale
		ss := 1 / filterscale
		xmin := int(center - support + 0.5) // C's truncation
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			k[x] = lanczos3((float64(x+xmin) - center + 0.5) * ss)
			ww += k[x]
		}
		for x := 0; x < xmax; x++ {
			v := k[x]
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				kk[xx*ksize+x] = int32(math.Trunc(-0.5 + v*(1<<pilPrecision)))
			} else {
				kk[xx*ksize+x] = int32(math.Trunc(0.5 + v*(1<<pilPrecision)))
			}
		}
		bounds[2*xx], bounds[2*xx+1] = xmin, xmax
	}
	return bounds, kk, ksize
}
