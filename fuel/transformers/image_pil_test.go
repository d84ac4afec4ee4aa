package transformers

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os/exec"
	"reflect"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// pilScript does with Debian's PIL (python3-pil) what Fuel's image
// transformers do: rotations (Random2DRotation's per-channel
// Image.rotate(degrees, NEAREST)), a nearest resize
// (MinimumImageDimensions) and PNG decoding with RGB and L conversion
// (ImagesFromBytes).
const pilScript = `
import json, math, numpy, io
from PIL import Image
rng = numpy.random.RandomState(0)
out = {}
img = rng.randint(0, 256, size=(7, 9)).astype('uint8')
out['img'] = img.tolist()
rots = []
for a in [0.3, -1.2, 2.9, math.pi, -math.pi/2, 0.0001, 1.0]:
    r = numpy.array(Image.fromarray(img).rotate(math.degrees(a), resample=Image.NEAREST))
    rots.append(r.tolist())
out['rot'] = rots
out['resize'] = numpy.array(Image.fromarray(img).resize((13, 10), Image.NEAREST)).tolist()
rgb = rng.randint(0, 256, size=(4, 5, 3)).astype('uint8')
b = io.BytesIO(); Image.fromarray(rgb).save(b, format='PNG')
out['png'] = list(b.getvalue())
out['L'] = numpy.array(Image.open(io.BytesIO(b.getvalue())).convert('L')).tolist()
out['RGB'] = numpy.array(Image.open(io.BytesIO(b.getvalue())).convert('RGB')).transpose(2, 0, 1).tolist()
print(json.dumps(out))
`

var pilAngles = []float64{0.3, -1.2, 2.9, math.Pi, -math.Pi / 2, 0.0001, 1.0}

func TestImageOpsAgainstPIL(t *testing.T) {
	raw, err := exec.Command("/usr/bin/python3", "-c", pilScript).Output()
	if err != nil {
		t.Skipf("Debian's python3-pil and python3-numpy are needed (%v)", err)
	}
	var ref struct {
		Img    [][]uint8
		Rot    [][][]uint8
		Resize [][]uint8
		PNG    []int `json:"png"`
		L      [][]uint8
		RGB    [][][]uint8
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	h, w := len(ref.Img), len(ref.Img[0])
	var px []uint8
	for _, r := range ref.Img {
		px = append(px, r...)
	}
	img := nd.FromSlice(px, 1, h, w)
	toRows := func(a *nd.Array) [][]uint8 {
		hh, ww := a.Shape[len(a.Shape)-2], a.Shape[len(a.Shape)-1]
		out := make([][]uint8, hh)
		d := a.Data.([]uint8)
		for y := range out {
			out[y] = d[y*ww : (y+1)*ww]
		}
		return out
	}
	for i, a := range pilAngles {
		got, err := rotate(img, a)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(toRows(got), ref.Rot[i]) {
			t.Errorf("rotation by %v rad:\n got %v\nwant %v", a, toRows(got), ref.Rot[i])
		}
	}
	if got := toRows(resizeNearest(img, 10, 13)); !reflect.DeepEqual(got, ref.Resize) {
		t.Errorf("nearest resize:\n got %v\nwant %v", got, ref.Resize)
	}
	png := make([]uint8, len(ref.PNG))
	for i, b := range ref.PNG {
		png[i] = uint8(b)
	}
	l, err := decodeImage(nd.FromSlice(png), "L")
	if err != nil {
		t.Fatal(err)
	}
	if got := toRows(l); !reflect.DeepEqual(got, ref.L) {
		t.Errorf("L conversion:\n got %v\nwant %v", got, ref.L)
	}
	rgb, err := decodeImage(nd.FromSlice(png), "RGB")
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 3; c++ {
		if got := toRows(rgb.Slice(c, c+1)); !reflect.DeepEqual(got, ref.RGB[c]) {
			t.Errorf("RGB channel %d:\n got %v\nwant %v", c, got, ref.RGB[c])
		}
	}
}

func TestDecodeJPEGAndModes(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 6, 4))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 10)
	}
	var pngBuf, jpgBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpgBuf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, mode string
		data       []byte
		shape      []int
	}{
		// Fuel gives every image channels first: a grey one (1, h, w).
		{"png gray None", "", pngBuf.Bytes(), []int{1, 4, 6}},
		{"png gray RGB", "RGB", pngBuf.Bytes(), []int{3, 4, 6}},
		{"jpeg gray L", "L", jpgBuf.Bytes(), []int{1, 4, 6}},
		{"jpeg gray RGB", "RGB", jpgBuf.Bytes(), []int{3, 4, 6}},
	} {
		a, err := decodeImage(nd.FromSlice(c.data), c.mode)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(a.Shape, c.shape) {
			t.Errorf("%s: shape %v, want %v", c.name, a.Shape, c.shape)
		}
	}
	a, _ := decodeImage(nd.FromSlice(pngBuf.Bytes()), "")
	if a.Flat(7) != 70 {
		t.Errorf("grey pixel 7 = %v, want 70", a.Flat(7))
	}
}
