package h5

import "github.com/blocks-go/blocks/nd"

// VlenLayout names the auxiliary datasets of a variable-length source
// made by CreateVlenSource. Fuel's converters differ here: the documented
// recipe (and dogs_vs_cats) stores int32 shapes in `<name>_shapes` and the
// labels in `<name>_shape_labels`; svhn format 1 stores uint16 shapes and
// calls the labels `<name>_vlen_axis_labels`. H5PYDataset finds both
// through the dimension scales `shapes` and `shape_labels`.
type VlenLayout struct {
	// ShapesDType is the dtype of the shapes dataset: Int32 (the default
	// when zero) or Uint16.
	ShapesDType nd.DType
	// LabelsName is the name of the shape-labels dataset; "" means
	// `<name>_shape_labels`.
	LabelsName string
	// Flat makes a bare 1-D vlen dataset with no shapes or shape-labels
	// datasets, as Fuel's ILSVRC converters store `encoded_images` (each
	// example a flat run of bytes; h5py reads it as a 1-D object array).
	// axisLabels is then just the batch axis's label ("" for none), and
	// each example given to WriteVlenExample is 1-D.
	Flat bool
}

// DigitBoxes are the bounding boxes of one image of SVHN's digitStruct.mat
// (ReadDigitStruct): one entry per box in each field.
type DigitBoxes struct {
	Labels, Heights, Widths, Lefts, Tops []float64
}
