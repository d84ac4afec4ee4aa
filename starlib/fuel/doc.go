// Package fuel is the Starlark modules of Fuel: fuel.datasets (and toy,
// billion), fuel.schemes, fuel.streams, fuel.transformers (and image,
// sequences, defaults), fuel.server, fuel.converters, fuel.utils and
// fuel.config, and the Python modules Fuel's tests and documentation use,
// hashlib and h5py. Each file declares the modules it adds to, with a doc
// comment listing their builtins; Modules returns them all, for package
// starlib/all. The values (Dataset, Stream, Scheme, ...) are this
// package's; arrays, random generators and the run are starlib's.
package fuel
