package datasets

import "github.com/blocks-go/blocks/fuel/transformers"

// DefaultTransformerer is a dataset with default transformers (Fuel's
// Dataset.default_transformers): the pipeline streams.DefaultStream puts
// on its data stream, in order.
type DefaultTransformerer interface {
	DefaultTransformers() []transformers.Spec
}
