// Package mainloop is Blocks' main loop (blocks/main_loop.py) and its
// training log (blocks/log/log.py): MainLoop feeds the batches of a Fuel
// stream to a training algorithm and calls extensions at each stage, in
// Blocks' order; TrainingLog keeps one row of records per iteration plus a
// status.
//
// The loop only knows the Algorithm interface, so it does not depend on
// any particular algorithm. Extensions implement Extension; embed
// TrainingExtension for no-op callbacks, or build on
// train/extensions.SimpleExtension for Blocks' trigger conditions.
//
// Interrupts: while Run runs, the first SIGINT (Ctrl+C) finishes the
// current epoch, a second one, or a SIGTERM, the current batch; the
// extensions' after_epoch/after_training still run. Tests inject signals
// through MainLoop.Signals instead of the process's.
package mainloop
