// Package datasets holds Fuel's datasets: IndexableDataset (sources held
// in memory), MNIST read from its idx files through the data path, and
// EmbeddedMNIST, a small subset of MNIST built into the binary.
//
// A dataset implements fuel.IndexableDataset: GetData takes a fuel.Request
// (a slice, a list of indices, or one example) and returns one new array
// per source, in the dataset's Sources order. Requests are checked as
// Fuel's Subset checks them, and a bad one is an error naming the dataset
// and its size, never a panic.
//
// Datasets with default transformers (MNIST: scale the uint8 pixels to
// [0, 1], then cast to floatX) implement DefaultTransformerer; see
// streams.DefaultStream.
//
// ReadIDX reads LeCun's idx format, the format of the MNIST distribution
// files.
package datasets
