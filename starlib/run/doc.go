// Package run is what a run of a script is to the training layer: how it
// relates to a checkpoint (resume, replay, a probe, the checkpoint added
// on the command line), its processes and microbatches, the main loops it
// ran and what its checkpoints store about it. cmd/blocks-repl sets it up
// (Locals) and starlib/blocks' main loop and Checkpoint extension use it.
//
// The Starlark runtime (package starlib) knows none of it, as
// go.starlark.net's runtime knows none of its modules: this package keeps
// its state in the run's locals (starlib.RunLocal) and calls the
// runtime's hooks (starlib.CheckSettings, starlib.StartTraining,
// starlib.RunRecordOf, starlib.ConfigRecord).
package run
