// Package extensions holds Blocks' main-loop extensions
// (blocks/extensions): the SimpleExtension machinery with Blocks' triggers
// and conditions (AddCondition, OnLogRecord), FinishAfter, Printing, Timing,
// Timestamp, ProgressBar, CompositeExtension, TrackTheBest,
// FinishIfNoImprovementAfter, EarlyStopping, SharedVariableModifier, and
// the monitoring extensions DataStreamMonitoring and
// TrainingDataMonitoring.
//
// Extensions keep the state a resumed run needs in the log's status
// (TrackTheBest's best_<record>, FinishIfNoImprovementAfter's
// _<patience record>_last_best), so saving the log saves them.
//
// Triggers are passed by Blocks' keyword names, so a wrapper can hand its
// keyword arguments through:
//
//	finish, _ := extensions.NewFinishAfter(extensions.Triggers{"after_n_epochs": 2})
//	monitor, _ := extensions.NewDataStreamMonitoring(device.Device{}, vars, testStream, nil, "test", "", nil)
//
// A trigger left out takes the extension's Blocks default (Printing:
// before_first_epoch, on_resumption, after_epoch, after_training,
// on_interrupt; DataStreamMonitoring and Timing: before_first_epoch and
// after_epoch; TrainingDataMonitoring: before_training).
package extensions
