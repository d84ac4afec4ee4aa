// Package core is the symbolic layer: Theano-like immutable variables (an op,
// its inputs, a dtype, a number of dimensions, a name and annotations), the
// roles Blocks tags them with, symbolic differentiation, and the compiler
// that turns requested outputs and updates into a Function.
//
// Variables have a dtype and a number of dimensions, never a fixed shape:
// the same graph takes a batch of 256 in training and of 1024 in
// monitoring. A Function is planned once per concrete input-shape signature
// (shapes inferred, every intermediate buffer allocated) and the plan is
// cached, so a training step allocates nothing. Shared variables
// (parameters, step-rule buffers) hold one array that every plan reads, so
// an update made by one function is seen by all.
//
// Elementwise operations broadcast as numpy does. Integer and float
// variables mix by numpy's promotion rules, except that a Go or Starlark
// number (a Constant made by Const) takes the dtype of the variable it meets,
// as Theano's autocasting does.
//
// Running a Function is a backend's business (backend.go): a backend
// imports core, consumes the function's lowered graph (Function.Lower,
// lowered.go) and registers itself; core imports no backend's executor.
// The CPU backend is core/exec/cpu, linked by importing it; it holds every
// op's CPU kernel, with its scratch (docs/backends.md). An op here is its
// definition: shape inference, gradient, and the attributes a kernel reads
// through exported accessors.
//
// Nothing here knows about Starlark; bricks and the training loop build on
// this package.
package core
