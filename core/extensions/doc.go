// Package extensions holds Blocks' main-loop extensions
// (blocks/extensions): the SimpleExtension machinery with Blocks' triggers
// and conditions, FinishAfter, Printing, Timing, ProgressBar, and the
// monitoring extensions DataStreamMonitoring and TrainingDataMonitoring.
//
// Triggers are passed by Blocks' keyword names, so a wrapper can hand its
// keyword arguments through:
//
//	finish, _ := extensions.NewFinishAfter(extensions.Triggers{"after_n_epochs": 2})
//	monitor, _ := extensions.NewDataStreamMonitoring(vars, testStream, nil, "test", "", nil)
//
// A trigger left out takes the extension's Blocks default (Printing:
// before_first_epoch, on_resumption, after_epoch, after_training,
// on_interrupt; DataStreamMonitoring and Timing: before_first_epoch and
// after_epoch; TrainingDataMonitoring: before_training).
package extensions
