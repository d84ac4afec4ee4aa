// Package algorithms holds Blocks' training algorithms and step rules
// (blocks/algorithms/__init__.py): GradientDescent, UpdatesAlgorithm, the
// StepRule interface and Blocks' step rules with their defaults: Scale,
// BasicMomentum, Momentum, AdaDelta, BasicRMSProp, RMSProp, AdaGrad, Adam,
// StepClipping, VariableClipping, RemoveNotFinite, Restrict and
// CompositeRule.
//
// The stateful rules (momentum, AdaDelta, RMSProp, AdaGrad, Adam) compute
// each parameter's step and the new values of its buffers in one fused
// pass over the data (core.Fused, kernels.go) instead of a chain of
// elementwise graph ops; the scalar part of a rule (Adam's bias-corrected
// rate) stays symbolic. GradientDescent.Buffers lists the rule's
// ALGORITHM_BUFFER variables under unique, deterministic names
// ("<parameter path>_<buffer>"), which is what a checkpoint saves.
//
// A step rule turns the gradients (or the steps of an earlier rule) into
// steps, symbolically; GradientDescent subtracts the steps from the
// parameters. The whole training step (the cost, the gradients, the steps,
// every update and any extra outputs monitoring asked for) is one compiled
// core.Function, called once per batch.
//
// Hyperparameters of step rules are shared floatX variables tagged
// ALGORITHM_HYPERPARAMETER (so schedules can change them), and the state of
// stateful rules lives in shared variables tagged ALGORITHM_BUFFER (see
// NewBuffer).
//
// Batches reach the compiled function by name, as in Blocks: each data
// input variable of the graph is fed the batch source of the same name.
package algorithms
