// Package tensor is the Starlark modules of Theano's namespace: tensor
// (also theano.tensor), tensor.nnet, and theano's scan. Module and
// NnetModule list their builtins; the values are starlib's (Variable,
// Function).
package tensor
