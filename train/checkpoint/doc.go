// Package checkpoint saves and restores training runs: one tar file with
// the experiment script and the .star files it loaded, how it was run
// (overrides, tunables, default_seed, floatX), a manifest with checksums,
// the parameters as an .npz under Blocks' member name _parameters (keys
// "|mlp|linear_0.W"), the algorithm state (step-rule buffers,
// hyperparameters), the iteration state (the epoch iterator's position,
// the generators of the data pipeline and of every core.RandomOp of the
// training graph) and the log.
//
// Capture and Restore move the state between a main loop and a
// Checkpoint; Encode, Decode, Read and Write are the file format (Decode
// checks every checksum before returning anything; Write is atomic).
// CheckpointExtension and LoadExtension are Blocks' Checkpoint and Load.
// Nothing here knows Starlark: re-running a script is the caller's part
// (starlib and blocks-repl resume/replay). See docs/checkpoints.md.
package checkpoint
