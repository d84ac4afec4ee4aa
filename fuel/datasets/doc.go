// Package datasets holds Fuel's datasets: IndexableDataset (sources held
// in memory), MNIST read from Fuel's mnist.hdf5 or its idx files through
// the data path, EmbeddedMNIST, a small subset of MNIST built into the
// binary, the other built-ins that read their Fuel-converted HDF5 file
// from the data path (BinarizedMNIST, CIFAR10, CIFAR100, SVHN, Iris,
// CalTech101Silhouettes: FileDataset, over fuel/h5), and the iterable
// datasets IterableDataset and TextFile. The toy generators Spiral and
// SwissRoll are in the subpackage toy.
//
// An indexable dataset implements fuel.IndexableDataset: GetData takes a
// fuel.Request (a slice, a list of indices, or one example) and returns
// one new array per source, in the dataset's Sources order. Requests are
// checked as Fuel's Subset checks them, and a bad one is an error naming
// the dataset and its size, never a panic. An iterable dataset implements
// Iterable (Open gives its examples in order); GetExampleStream makes a
// resumable stream of it.
//
// Datasets with default transformers (MNIST, CIFAR10, CIFAR100, SVHN:
// scale the uint8 pixels to [0, 1], then cast to floatX) implement
// transformers.DefaultTransformerer; see streams.DefaultStream.
//
// ReadIDX reads LeCun's idx format, the format of the MNIST distribution
// files.
package datasets
