package transformers

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
)

// Spec describes one transformer and its arguments as data, as the
// entries of Fuel's Dataset.default_transformers do ((class, args,
// kwargs) tuples). Name is the Fuel class: "ScaleAndShift" (Scale,
// Shift), "Cast" (DType, a numpy dtype name or "floatX"), "ForceFloatX"
// or "Flatten". WhichSources is which_sources (nil for all).
type Spec struct {
	Name         string
	Scale, Shift float64
	DType        string
	WhichSources []string
	// ColorMode is ImagesFromBytes' color_mode.
	ColorMode string
}

// RGBImagesFromEncodedBytes is Fuel's
// rgb_images_from_encoded_bytes(which_sources): ImagesFromBytes with
// color_mode 'RGB' on the given sources.
func RGBImagesFromEncodedBytes(whichSources []string) []Spec {
	return []Spec{{Name: "ImagesFromBytes", ColorMode: "RGB", WhichSources: slices.Clone(whichSources)}}
}

// Uint8PixelsToFloatX is Fuel's uint8_pixels_to_floatX(which_sources):
// ScaleAndShift(1/255.0, 0) then Cast('floatX') on the given sources.
func Uint8PixelsToFloatX(whichSources []string) []Spec {
	return []Spec{
		{Name: "ScaleAndShift", Scale: 1 / 255.0, Shift: 0, WhichSources: slices.Clone(whichSources)},
		{Name: "Cast", DType: "floatX", WhichSources: slices.Clone(whichSources)},
	}
}

// DefaultTransformerer is a dataset with default transformers (Fuel's
// Dataset.default_transformers): the pipeline streams.DefaultStream puts
// on its data stream, in order. It lives here, beside Spec, so that
// streams need not import the datasets (and with them libhdf5).
type DefaultTransformerer interface {
	DefaultTransformers() []Spec
}

// Apply wraps stream in the transformers specs describe, in order (Fuel's
// Dataset.apply_default_transformers). With no specs it returns stream.
func Apply(stream fuel.Stream, specs []Spec) (fuel.Stream, error) {
	for _, s := range specs {
		var t *Transformer
		var err error
		switch s.Name {
		case "ScaleAndShift":
			t, err = ScaleAndShift(stream, s.Scale, s.Shift, s.WhichSources)
		case "Cast":
			t, err = Cast(stream, s.DType, s.WhichSources)
		case "ForceFloatX":
			t, err = ForceFloatX(stream, s.WhichSources)
		case "Flatten":
			t, err = Flatten(stream, s.WhichSources)
		case "ImagesFromBytes":
			t, err = ImagesFromBytes(stream, s.WhichSources, s.ColorMode)
		default:
			return nil, fmt.Errorf("transformers: no transformer %q to apply", s.Name)
		}
		if err != nil {
			return nil, err
		}
		stream = t
	}
	return stream, nil
}
