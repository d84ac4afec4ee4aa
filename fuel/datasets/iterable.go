package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// Iterable is Fuel's iterable dataset interface: a dataset read in order,
// one example at a time, from an iterator its Open makes (Fuel's
// dataset.open() state and get_data(state)). IterableDataset and TextFile
// implement it; GetExampleStream wraps one in a stream.
type Iterable interface {
	fuel.Dataset
	// Open starts an iteration over the examples from the first.
	Open() (ExampleIterator, error)
}

// ExampleIterator gives a dataset's examples in order: one array per
// source, in Sources order, then io.EOF.
type ExampleIterator interface {
	Next() ([]*nd.Array, error)
	Close() error
}

// IterableDataset is Fuel's IterableDataset: sources given as sequences of
// examples (each an array, whose shapes may differ from one example to
// the next), iterated in order. NumExamples is the sequences' common
// length.
type IterableDataset struct {
	provides, sources []string
	examples          [][]*nd.Array // per source in sources order
	axisLabels        map[string][]string
}

// IterableSource is one source of an IterableDataset.
type IterableSource struct {
	Name     string
	Examples []*nd.Array
}

// NewIterableDataset is Fuel's IterableDataset(iterables, sources=,
// axis_labels=): every source must have the same number of examples.
func NewIterableDataset(srcs []IterableSource, sources []string, axisLabels map[string][]string) (*IterableDataset, error) {
	if len(srcs) == 0 {
		return nil, errors.New("datasets: IterableDataset: no sources")
	}
	d := &IterableDataset{axisLabels: axisLabels}
	byName := map[string][]*nd.Array{}
	for _, s := range srcs {
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("datasets: IterableDataset: source %q given twice", s.Name)
		}
		for i, e := range s.Examples {
			if e == nil {
				return nil, fmt.Errorf("datasets: IterableDataset: source %q: example %d is missing", s.Name, i)
			}
		}
		byName[s.Name] = s.Examples
		d.provides = append(d.provides, s.Name)
	}
	d.sources = d.provides
	if sources != nil {
		if err := checkSources("IterableDataset", sources, d.provides); err != nil {
			return nil, err
		}
		d.sources = slices.Clone(sources)
	}
	for _, s := range d.sources {
		if len(byName[s]) != len(byName[d.sources[0]]) {
			return nil, fmt.Errorf("datasets: IterableDataset: iterables are of different length (%s: %d, %s: %d)",
				d.sources[0], len(byName[d.sources[0]]), s, len(byName[s]))
		}
		d.examples = append(d.examples, byName[s])
	}
	return d, nil
}

// Sources are the sources returned, in order.
func (d *IterableDataset) Sources() []string { return slices.Clone(d.sources) }

// ProvidesSources are all the sources given.
func (d *IterableDataset) ProvidesSources() []string { return slices.Clone(d.provides) }

// AxisLabels are the labels given (may be nil).
func (d *IterableDataset) AxisLabels() map[string][]string { return fuel.CloneAxisLabels(d.axisLabels) }

// NumExamples is the number of examples.
func (d *IterableDataset) NumExamples() int { return len(d.examples[0]) }

// Open starts an iteration.
func (d *IterableDataset) Open() (ExampleIterator, error) { return &sliceIterator{d: d}, nil }

type sliceIterator struct {
	d    *IterableDataset
	next int
}

func (it *sliceIterator) Next() ([]*nd.Array, error) {
	if it.next >= it.d.NumExamples() {
		return nil, io.EOF
	}
	out := make([]*nd.Array, len(it.d.examples))
	for i, ex := range it.d.examples {
		out[i] = ex[it.next].Copy()
	}
	it.next++
	return out, nil
}

func (it *sliceIterator) Close() error { return nil }

// TextFileOptions are TextFile's optional arguments. The zero value is
// not Fuel's default (Fuel's tokens are '<S>', '</S>' and '<UNK>'): use
// DefaultTextFileOptions.
type TextFileOptions struct {
	// BOSToken, EOSToken, UNKToken are the tokens put before and after
	// each sentence and used for words not in the dictionary; nil for none
	// (Fuel's None).
	BOSToken, EOSToken, UNKToken *string
	// Level is "word" (split on white space) or "character".
	Level string
	// Preprocess, when set, is applied to each line first.
	Preprocess func(string) (string, error)
}

func str(s string) *string { return &s }

// DefaultTextFileOptions are Fuel's defaults.
func DefaultTextFileOptions() TextFileOptions {
	return TextFileOptions{BOSToken: str("<S>"), EOSToken: str("</S>"), UNKToken: str("<UNK>"), Level: "word"}
}

// TextFile is Fuel's TextFile: the lines of text files, in order, each
// turned into a sentence of token ids (int64 (length,), source
// "features"): the BOS id, each word's (or character's) id, the EOS id.
type TextFile struct {
	files      []string
	dictionary map[string]int64
	opts       TextFileOptions
}

// NewTextFile is Fuel's TextFile(files, dictionary, bos_token=,
// eos_token=, unk_token=, level=, preprocess=).
func NewTextFile(files []string, dictionary map[string]int64, opts TextFileOptions) (*TextFile, error) {
	for _, tok := range []struct {
		name string
		v    *string
	}{{"BOS", opts.BOSToken}, {"EOS", opts.EOSToken}, {"UNK", opts.UNKToken}} {
		if tok.v != nil {
			if _, ok := dictionary[*tok.v]; !ok {
				return nil, fmt.Errorf("datasets: TextFile: %s token '%s' is not in the dictionary", tok.name, *tok.v)
			}
		}
	}
	if opts.Level != "word" && opts.Level != "character" {
		return nil, fmt.Errorf("datasets: TextFile: level should be 'word' or 'character', not '%s'", opts.Level)
	}
	if len(files) == 0 {
		return nil, errors.New("datasets: TextFile: no files")
	}
	return &TextFile{files: slices.Clone(files), dictionary: dictionary, opts: opts}, nil
}

// Sources is ("features",).
func (d *TextFile) Sources() []string { return []string{"features"} }

// AxisLabels are none.
func (d *TextFile) AxisLabels() map[string][]string { return nil }

// NumExamples is unknown (-1), as Fuel's nan.
func (d *TextFile) NumExamples() int { return -1 }

// Open starts reading the first file.
func (d *TextFile) Open() (ExampleIterator, error) { return &textIterator{d: d}, nil }

type textIterator struct {
	d    *TextFile
	file int
	line int
	f    *os.File
	sc   *bufio.Scanner
}

func (it *textIterator) Next() ([]*nd.Array, error) {
	for {
		if it.sc == nil {
			if it.file >= len(it.d.files) {
				return nil, io.EOF
			}
			f, err := os.Open(it.d.files[it.file])
			if err != nil {
				return nil, fmt.Errorf("datasets: TextFile: %w", err)
			}
			it.f, it.sc, it.line = f, bufio.NewScanner(f), 0
			it.sc.Buffer(make([]byte, 64<<10), 64<<20)
		}
		if it.sc.Scan() {
			it.line++
			ids, err := it.d.sentence(it.sc.Text())
			if err != nil {
				return nil, fmt.Errorf("datasets: TextFile: %s:%d: %w", it.d.files[it.file], it.line, err)
			}
			return []*nd.Array{nd.FromSlice(ids)}, nil
		}
		err := it.sc.Err()
		it.f.Close()
		it.f, it.sc = nil, nil
		if err != nil {
			return nil, fmt.Errorf("datasets: TextFile: %s: %w", it.d.files[it.file], err)
		}
		it.file++
	}
}

func (it *textIterator) Close() error {
	if it.f != nil {
		it.f.Close()
		it.f, it.sc = nil, nil
	}
	it.file = len(it.d.files)
	return nil
}

// sentence is TextFile.get_data for one line.
func (d *TextFile) sentence(line string) ([]int64, error) {
	if d.opts.Preprocess != nil {
		var err error
		if line, err = d.opts.Preprocess(line); err != nil {
			return nil, err
		}
	}
	var ids []int64
	if d.opts.BOSToken != nil {
		ids = append(ids, d.dictionary[*d.opts.BOSToken])
	}
	var symbols []string
	if d.opts.Level == "word" {
		symbols = strings.Fields(line)
	} else {
		for _, r := range strings.TrimFunc(line, unicode.IsSpace) {
			symbols = append(symbols, string(r))
		}
	}
	for _, s := range symbols {
		id, ok := d.dictionary[s]
		if !ok {
			if d.opts.UNKToken == nil {
				return nil, fmt.Errorf("token '%s' not found in dictionary and no `unk_token` given", s)
			}
			id = d.dictionary[*d.opts.UNKToken]
		}
		ids = append(ids, id)
	}
	if d.opts.EOSToken != nil {
		ids = append(ids, d.dictionary[*d.opts.EOSToken])
	}
	if ids == nil {
		ids = []int64{}
	}
	return ids, nil
}

// GetExampleStream is Fuel's dataset.get_example_stream() for an iterable
// dataset: a stream of its examples, one epoch per Open. It is resumable:
// its position is the number of examples given in the epoch (a resumed
// iterator re-reads and skips them, as unpickling Fuel's file iterators
// does).
func GetExampleStream(d Iterable) fuel.ResumableStream { return &iterableStream{d: d} }

type iterableStream struct{ d Iterable }

func (s *iterableStream) Sources() []string               { return s.d.Sources() }
func (s *iterableStream) AxisLabels() map[string][]string { return s.d.AxisLabels() }
func (s *iterableStream) ProducesExamples() bool          { return true }

func (s *iterableStream) GetEpochIterator() (fuel.EpochIterator, error) {
	it, err := s.d.Open()
	if err != nil {
		return nil, err
	}
	return &iterableEpoch{it: it}, nil
}

func (s *iterableStream) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	if state.Requests == nil {
		return nil, errors.New("datasets: resuming an iterable dataset's stream: the state has no position")
	}
	it, err := s.d.Open()
	if err != nil {
		return nil, err
	}
	e := &iterableEpoch{it: it}
	for e.n < state.Requests.Next {
		if _, err := e.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("datasets: resuming an iterable dataset's stream at example %d: it has only %d", state.Requests.Next, e.n)
			}
			return nil, err
		}
	}
	return e, nil
}

type iterableEpoch struct {
	it ExampleIterator
	n  int
}

func (e *iterableEpoch) Next() ([]*nd.Array, error) {
	out, err := e.it.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			e.it.Close()
		}
		return nil, err
	}
	e.n++
	return out, nil
}

func (e *iterableEpoch) State() (fuel.IteratorState, error) {
	return fuel.IteratorState{Requests: &fuel.RequestPosition{Next: e.n}}, nil
}

// Iterable marks the dataset as one that takes no iteration scheme: a
// DataStream without a scheme walks its examples in order.
func (d *IterableDataset) Iterable() bool { return true }

// GetData returns one example (a single request), as a DataStream without
// a scheme asks for; its position is the example index, so it resumes
// like any stream.
func (d *IterableDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	if !req.Single || len(req.Indices) != 1 {
		return nil, fmt.Errorf("datasets: IterableDataset: only one example at a time, in order (no iteration scheme)")
	}
	i := req.Indices[0]
	if i < 0 || i >= d.NumExamples() {
		return nil, fmt.Errorf("datasets: IterableDataset: example %d past the end (%d examples)", i, d.NumExamples())
	}
	out := make([]*nd.Array, len(d.examples))
	for k, ex := range d.examples {
		out[k] = ex[i].Copy()
	}
	return out, nil
}
