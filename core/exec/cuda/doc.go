// Package cuda is the CUDA backend (build tag cuda; make build-cuda): it
// runs core's graphs on an NVIDIA GPU through the driver API of
// gorgonia.org/cu (a context, device memory, a module of kernels, launches
// on a stream).
//
// The kernels (kernels/kernels.cu) are CUDA C, compiled to PTX when the
// binary is built (nvcc from Debian's CUDA toolkit) and embedded in it, so
// that the driver JITs them for whatever GPU is present. Products go
// through cuBLAS when the machine has it (libcublas loaded at run time, by
// whichever soname is installed), else through a tiled kernel of the
// backend's own.
//
// The device is the function's (core.CompileFor): the backend opens the
// GPU of the first function compiled for it and keeps it. One process
// uses one GPU; a function compiled for another index is refused with an
// error that names both.
//
// A function is planned once per input-shape signature, as on the CPU:
// every value gets a device buffer; the batch goes up once per call; the
// outputs come down; shared variables (parameters, step-rule state) stay
// on the device between calls and come back to the host only when
// something reads them (core.Variable.Value: checkpoints, monitoring of
// parameters), so checkpoints hold host arrays and a run resumes on either
// device.
//
// The backend consumes the lowered graph every backend does
// (core.Function.LowerForDevice: core.Lowered with the shared variables'
// slots). Each op's kernel is a function registered for the kind
// core.Spec gives the op (opKernels, opkernel.go), looked up once when
// the function is lowered; it plans the op's launches for each shape
// signature. An op whose kind has no kernel (the CPU route route.go
// declares), or whose dtypes or shapes its kernel does not take, runs its
// CPU kernel on host copies of its inputs, and Function.Program marks it
// "on the CPU".
//
// Every reduction runs in a fixed order (one block per output, a fixed
// tree), so two runs on the same GPU give the same bits.
//
// Without the cuda tag this package is empty: the CPU build refuses
// --device cuda, naming the build.
package cuda
