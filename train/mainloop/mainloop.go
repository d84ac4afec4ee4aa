package mainloop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// Algorithm is a training algorithm (Blocks' TrainingAlgorithm): it is
// initialized once, then given the batches.
type Algorithm interface {
	Initialize() error
	ProcessBatch(batch map[string]*nd.Array) error
}

// MainLoop is Blocks' MainLoop: it feeds the batches of a data stream to
// a training algorithm, epoch after epoch, calling the extensions at each
// stage, until an extension asks it to finish (the record
// training_finish_requested in the current row) or it is interrupted.
//
// Set the fields, then call Run. Run may be called again after it returns
// to continue training (Blocks' resumption).
//
// The loop is done with a batch once the algorithm's step and the
// extensions' after_batch have run, so it asks its epoch iterators to lend
// (fuel.Lender) and releases each batch then: the pipeline may reuse its
// buffers for the next batches. An Algorithm or Extension that holds on to
// an array of a batch past its call keeps it (nd.Array.Keep) or copies
// it.
type MainLoop struct {
	Algorithm  Algorithm
	DataStream fuel.Stream
	// Model is for extensions; the loop only calls its
	// CheckSanity(Algorithm) error method when it has one.
	Model any
	// Log is the training log; Run makes one when nil.
	Log *TrainingLog
	// Mirror, when set, is the log that is the truth, which Log mirrors
	// during Run (mirror.go).
	Mirror LogMirror
	// Extensions are called in this order.
	Extensions []Extension

	// Signals, when not nil, replaces the process's SIGINT and SIGTERM
	// during Run: an os.Interrupt received on it is a Ctrl+C, a
	// syscall.SIGTERM a termination request. When nil, Run listens to
	// the real signals (os/signal) while it runs, and only then.
	//
	// The first interrupt finishes the current epoch, a second one (or a
	// SIGTERM) the current batch; after that, the real signals get their
	// default behaviour back, so a third Ctrl+C ends the process.
	Signals <-chan os.Signal
	// Messages receives the loop's warnings (interrupts, errors); nil
	// means os.Stderr.
	Messages io.Writer
	// Profile accumulates timings.
	Profile Profile
	// ReportProfile prints the profile (Profile.Report) to Messages when
	// Run returns, however it ended (Blocks' config.profile, which
	// BLOCKS_PROFILE sets).
	ReportProfile bool
	// Agree, when set, makes the processes of a data-parallel job take
	// the same decision at every finish check (agree.go).
	Agree func(flags []int64) error

	// LogBackend, when set, receives the log after every batch, after
	// every epoch and when Run returns (Blocks' log_backend, e.g. an
	// SQLite database); an error from it stops training.
	LogBackend LogBackend

	// Front is what a front end shows for this loop when that is not the
	// loop's own face (a script's object standing for it, a subclass's
	// instance); the loop does not use it.
	Front any

	epochIterator fuel.EpochIterator

	sigs        <-chan os.Signal
	stopSignals func()
	interrupted bool
	// pauseRequested is set by Pause; paused reports that the last Run
	// stopped on it (finish.go).
	pauseRequested, paused bool
	// running is set while Run runs.
	running bool
}

// Running reports whether Run is running: an extension may leave work in
// flight (BackgroundWriter) only then, since Run waits for it.
func (m *MainLoop) Running() bool { return m.running }

var errTrainingFinish = errors.New("training finish")

// Messages printed on interrupts and errors (Blocks' wording).
const (
	errorMessage = "Error occured during training.\n\nBlocks will attempt to run `on_error` extensions, potentially saving data, " +
		"before exiting and reraising the error. Note that the usual `after_training` extensions will *not* be run. " +
		"The original error will be re-raised and also stored in the training log. Press CTRL + C to halt Blocks immediately."
	errorInErrorHandlingMessage = "Error occured when running extensions.\n\nBlocks will now exit. The remaining `on_error` extensions will not be run."
	epochInterruptMessage       = "Received epoch interrupt signal.\n\nBlocks will complete this epoch of training and run extensions " +
		"before exiting. If you do not want to complete this epoch, press CTRL + C again to stop training after the current batch."
	batchInterruptMessage = "Received batch interrupt signal.\n\nBlocks will complete the current batch and run extensions before exiting. " +
		"If you do not want to complete this batch, press CTRL + C again. WARNING: Note that this will end training immediately, " +
		"and extensions that e.g. save your training progress won't be run."
)

// New returns a main loop; log may be nil.
func New(algorithm Algorithm, dataStream fuel.Stream, model any, log *TrainingLog, extensions []Extension) *MainLoop {
	if log == nil {
		log = NewTrainingLog()
	}
	return &MainLoop{Algorithm: algorithm, DataStream: dataStream, Model: model, Log: log, Extensions: extensions}
}

// LogBackend stores a training log as it grows.
type LogBackend interface {
	// Sync stores what changed in the log since the last call.
	Sync(log *TrainingLog) error
}

func (m *MainLoop) syncLog() error {
	if m.LogBackend == nil {
		return nil
	}
	if err := m.LogBackend.Sync(m.Log); err != nil {
		return fmt.Errorf("log backend: %w", err)
	}
	return nil
}

// Status is the log's status.
func (m *MainLoop) Status() *Status { return &m.Log.Status }

// EpochIterator is the iterator of the epoch in progress (nil before the
// first epoch); with DataStream it is Blocks' iteration_state.
func (m *MainLoop) EpochIterator() fuel.EpochIterator { return m.epochIterator }

// SetEpochIterator replaces the iterator of the epoch in progress (used
// when restoring a checkpoint taken mid-epoch). The loop asks it to lend,
// as its own (see MainLoop).
func (m *MainLoop) SetEpochIterator(it fuel.EpochIterator) {
	m.epochIterator = it
	if it != nil {
		fuel.Lend(it)
	}
}

// FindExtension returns the one extension with the given name.
func (m *MainLoop) FindExtension(name string) (Extension, error) {
	var found []Extension
	for _, e := range m.Extensions {
		if ExtensionName(e) == name {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("expected one extension named %q, found %d", name, len(found))
	}
	return found[0], nil
}

func (m *MainLoop) warn(msg string) { m.Warn("blocks.main_loop", msg) }

// Warn prints a warning as Python's logging does for Blocks' loggers
// ("WARNING:blocks.extensions.saveload:No dump found") to Messages.
func (m *MainLoop) Warn(logger, msg string) {
	w := m.Messages
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintln(w, "WARNING:"+logger+":"+msg)
}

// Run trains until an extension requests the end (the row record
// training_finish_requested), an interrupt, the data stream running out
// of epochs, or an error.
//
// The order of events is Blocks': before_training and the algorithm's
// initialization (first run only); on_resumption when iterations were
// already done; then per epoch a new epoch iterator, before_epoch, per
// batch before_batch, process_batch, iterations_done+1, after_batch and
// a finish check, then epochs_done+1, _epoch_ends, after_epoch and a
// finish check. A finish sets training_finished in the current row and
// calls after_training. An error writes got_exception to the current row,
// calls on_error of each extension (stopping at the first that fails)
// and is returned; after_training is not called.
func (m *MainLoop) Run() error {
	if m.Log == nil {
		m.Log = NewTrainingLog()
	}
	if m.Algorithm == nil || m.DataStream == nil {
		return errors.New("main loop: Algorithm and DataStream must be set")
	}
	if err := m.pullLog(); err != nil {
		return err
	}
	err := m.runAndFinish()
	if perr := m.pushLog(); err == nil {
		err = perr
	}
	return err
}

// runAndFinish is Run after its checks: the training, then what ends it.
func (m *MainLoop) runAndFinish() error {
	if c, ok := m.Model.(interface{ CheckSanity(Algorithm) error }); ok {
		if err := c.CheckSanity(m.Algorithm); err != nil {
			return err
		}
	}
	if m.ReportProfile {
		defer func() {
			w := m.Messages
			if w == nil {
				w = os.Stderr
			}
			m.Profile.Report(w)
		}()
	}
	m.installSignals()
	defer m.restoreSignals()
	m.running = true
	defer func() { m.running = false }()

	finished, err := m.run()
	if IsRefused(err) {
		return err // nothing ran, nothing was written
	}
	if err != nil {
		m.restoreSignals()
		m.Log.CurrentRow()[RecordGotException] = err.Error()
		m.warn(errorMessage)
		for _, ext := range m.Extensions {
			e2 := m.pushLog()
			if e2 == nil {
				e2 = ext.OnError(err)
			}
			if e2 == nil {
				e2 = m.pullLog()
			}
			if e2 != nil {
				m.warn(e2.Error() + "\n" + errorInErrorHandlingMessage)
				break
			}
		}
		if Truthy(m.Log.CurrentRow()[RecordTrainingFinished]) {
			_ = m.runExtensions(AfterTraining, nil)
		}
		if e2 := m.waitWriters(); e2 != nil {
			m.warn(e2.Error())
		}
		if e2 := m.syncLog(); e2 != nil {
			m.warn(e2.Error())
		}
		return err
	}
	m.restoreSignals()
	if finished {
		m.Log.CurrentRow()[RecordTrainingFinished] = true
	}
	if Truthy(m.Log.CurrentRow()[RecordTrainingFinished]) {
		if err := m.runExtensions(AfterTraining, nil); err != nil {
			_ = m.waitWriters()
			_ = m.syncLog()
			return err
		}
	}
	if err := m.waitWriters(); err != nil {
		_ = m.syncLog()
		return err
	}
	return m.syncLog()
}

// A BackgroundWriter is an extension whose callbacks leave work running
// after they return (Checkpoint's background writes). Run waits for it
// before it returns, however the run ends (finished, interrupted, paused
// or failed), so that what a run wrote is on disk when Run returns.
type BackgroundWriter interface {
	// WaitWrites waits for the work in flight and returns its error.
	WaitWrites() error
}

// waitWriters waits for every BackgroundWriter extension; the first
// error is returned (as the extension's).
func (m *MainLoop) waitWriters() error {
	var first error
	for _, ext := range m.Extensions {
		if w, ok := ext.(BackgroundWriter); ok {
			if err := w.WaitWrites(); err != nil && first == nil {
				first = fmt.Errorf("extension %s: %w", ExtensionName(ext), err)
			}
		}
	}
	return first
}

func (m *MainLoop) run() (finished bool, err error) {
	st := &m.Log.Status
	m.Profile.reset()
	for _, ext := range m.Extensions {
		ext.SetMainLoop(m)
	}
	// After SetMainLoop: a resumed run has restored its checkpoint there,
	// or found that it does not fit.
	if err := m.setupError(); err != nil {
		return false, err
	}
	if err := m.nothingToTrain(); err != nil {
		return false, err
	}
	if !st.TrainingStarted {
		if err := m.runExtensions(BeforeTraining, nil); err != nil {
			return false, err
		}
		if err := m.pushLog(); err != nil {
			return false, err
		}
		t := m.Profile.enter("initialization")
		err := m.Algorithm.Initialize()
		m.Profile.Initialization += m.Profile.exit(t)
		if err == nil {
			err = m.pullLog()
		}
		if err != nil {
			return false, err
		}
		st.TrainingStarted = true
	}
	// Not an else: before_training extensions may have changed the status
	// (loading a checkpoint).
	if st.IterationsDone > 0 {
		m.Log.Resume()
		if err := m.runExtensions(OnResumption, nil); err != nil {
			return false, err
		}
		st.EpochInterruptReceived = false
		st.BatchInterruptReceived = false
	}
	tt := m.Profile.enter("training")
	defer m.Profile.exit(tt)
	for {
		more, err := m.runEpoch()
		if errors.Is(err, errTrainingFinish) {
			return true, nil
		}
		if errors.Is(err, errPaused) {
			m.paused = true
			return false, nil
		}
		if err != nil || !more {
			return false, err
		}
	}
}

func (m *MainLoop) runEpoch() (bool, error) {
	st := &m.Log.Status
	if !st.EpochStarted {
		st.ReceivedFirstBatch = false
		it, err := m.DataStream.GetEpochIterator()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		m.SetEpochIterator(it)
		st.EpochStarted = true
		if err := m.runExtensions(BeforeEpoch, nil); err != nil {
			return false, err
		}
	}
	if m.epochIterator == nil {
		return false, errors.New("main loop: an epoch is in progress but there is no epoch iterator to continue it (restore it with SetEpochIterator)")
	}
	te := m.Profile.enter("epoch")
	for {
		more, err := m.runIteration()
		if err != nil {
			m.Profile.exit(te)
			return false, err
		}
		if !more {
			break
		}
	}
	m.Profile.exit(te)
	if err := m.epochEnded(); err != nil {
		return false, err
	}
	st.EpochStarted = false
	st.EpochsDone++
	st.EpochEnds = append(st.EpochEnds, st.IterationsDone)
	if err := m.runExtensions(AfterEpoch, nil); err != nil {
		return false, err
	}
	if err := m.syncLog(); err != nil {
		return false, err
	}
	if err := m.checkFinishTraining(false); err != nil {
		return false, err
	}
	return true, nil
}

func (m *MainLoop) runIteration() (bool, error) {
	st := &m.Log.Status
	t := m.Profile.enter("read_data")
	data, err := m.epochIterator.Next()
	m.Profile.ReadData += m.Profile.exit(t)
	if err == io.EOF {
		if !st.ReceivedFirstBatch {
			return false, errors.New("epoch iterator yielded zero batches")
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st.ReceivedFirstBatch = true
	sources := m.DataStream.Sources()
	if len(data) != len(sources) {
		return false, fmt.Errorf("the data stream gave %d arrays for its %d sources %v", len(data), len(sources), sources)
	}
	batch := make(Batch, len(sources))
	for i, s := range sources {
		batch[s] = data[i]
	}
	if err := m.runExtensions(BeforeBatch, batch); err != nil {
		return false, err
	}
	if err := m.pushLog(); err != nil {
		return false, err
	}
	t = m.Profile.enter("train")
	err = m.Algorithm.ProcessBatch(batch)
	m.Profile.Train += m.Profile.exit(t)
	if err != nil {
		return false, m.batchError(err)
	}
	if err := m.pullLog(); err != nil {
		return false, err
	}
	st.IterationsDone++
	if err := m.runExtensions(AfterBatch, batch); err != nil {
		return false, err
	}
	// Nothing reads the batch after its step and extensions (what keeps
	// an array has kept it: a script's callback), so buffers the stream
	// lent go back to it for the next batches.
	for _, a := range data {
		a.Release()
	}
	if err := m.syncLog(); err != nil {
		return false, err
	}
	if err := m.checkFinishTraining(true); err != nil {
		return false, err
	}
	return true, nil
}

// RunExtensions calls callback cb of every extension, in order, as the
// loop does (Blocks' _run_extensions); batch is for the batch callbacks.
func (m *MainLoop) RunExtensions(cb Callback, batch Batch) error {
	if !cb.Valid() {
		return fmt.Errorf("%s is not a callback", string(cb))
	}
	return m.runExtensions(cb, batch)
}

func (m *MainLoop) runExtensions(cb Callback, batch Batch) error {
	t := m.Profile.enter(string(cb))
	defer m.Profile.exit(t)
	for _, ext := range m.Extensions {
		if err := m.pushLog(); err != nil {
			return err
		}
		te := m.Profile.enter(typeName(ext))
		err := Dispatch(ext, cb, batch, nil)
		m.Profile.exit(te)
		if err == nil {
			err = m.pullLog()
		}
		if err != nil {
			return &ExtensionError{Extension: ExtensionName(ext), Callback: cb, Err: err}
		}
	}
	return nil
}

// ExtensionError is an error raised by an extension's callback: it names
// the extension and the callback.
type ExtensionError struct {
	Extension string
	Callback  Callback
	Err       error
}

func (e *ExtensionError) Error() string {
	return fmt.Sprintf("extension %s failed in %s: %v", e.Extension, e.Callback, e.Err)
}

func (e *ExtensionError) Unwrap() error { return e.Err }

// checkFinishTraining returns errTrainingFinish when training should end
// here: on a finish request or a batch interrupt, and at the end of an
// epoch on an epoch interrupt.
func (m *MainLoop) checkFinishTraining(batchLevel bool) error {
	m.pollSignals()
	if err := m.agree(); err != nil {
		return err
	}
	st := &m.Log.Status
	if m.pauseRequested {
		return errPaused
	}
	if Truthy(m.Log.CurrentRow()[RecordTrainingFinishRequested]) || st.BatchInterruptReceived {
		return errTrainingFinish
	}
	if !batchLevel && st.EpochInterruptReceived {
		return errTrainingFinish
	}
	return nil
}

func (m *MainLoop) installSignals() {
	m.interrupted = false
	m.pauseRequested, m.paused = false, false
	if m.Signals != nil {
		m.sigs = m.Signals
		m.stopSignals = nil
		return
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	m.sigs = ch
	m.stopSignals = func() { signal.Stop(ch) }
}

// restoreSignals stops listening (the process's default handling of
// SIGINT and SIGTERM comes back). Idempotent.
func (m *MainLoop) restoreSignals() {
	if m.stopSignals != nil {
		m.stopSignals()
		m.stopSignals = nil
	}
	m.sigs = nil
}

// pollSignals handles the signals received since the last poll. Signals
// are only looked at between batches, from the loop's own goroutine, so
// the log is never written concurrently.
func (m *MainLoop) pollSignals() {
	for m.sigs != nil {
		select {
		case s, ok := <-m.sigs:
			if !ok {
				m.sigs = nil
				return
			}
			m.handleSignal(s)
		default:
			return
		}
	}
}

func (m *MainLoop) handleSignal(s os.Signal) {
	st := &m.Log.Status
	if s == Pause {
		m.pauseRequested = true
		return
	}
	if s == syscall.SIGTERM || m.interrupted {
		m.restoreSignals()
		m.warn(batchInterruptMessage)
		m.Log.CurrentRow()[RecordBatchInterruptReceived] = true
		st.BatchInterruptReceived = true
		return
	}
	m.interrupted = true
	m.warn(epochInterruptMessage)
	m.Log.CurrentRow()[RecordEpochInterruptReceived] = true
	st.EpochInterruptReceived = true
}
