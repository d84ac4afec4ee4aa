package algorithms

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The values of GradientDescent's OnUnusedSources (Blocks'
// on_unused_sources): what to do with a batch source that no input
// variable of the graph is named after.
const (
	UnusedSourcesRaise  = "raise"
	UnusedSourcesWarn   = "warn"
	UnusedSourcesIgnore = "ignore"
)

func checkUnusedSourcesPolicy(p string) error {
	switch p {
	case UnusedSourcesRaise, UnusedSourcesWarn, UnusedSourcesIgnore:
		return nil
	}
	return fmt.Errorf("wrong value of on_unused_sources: %q (want 'raise', 'warn' or 'ignore')", p)
}

// SourcesError says that the sources of a batch do not match the names of
// the input variables of a graph: some input has no source (Missing), or,
// under on_unused_sources='raise', some source feeds no input (Unused).
type SourcesError struct {
	// Sources are the batch's source names, sorted.
	Sources []string
	// Inputs are the names of the graph's input variables, in argument
	// order.
	Inputs []string
	// Missing are the inputs no source is named after.
	Missing []string
	// Unused are the sources no input is named after.
	Unused []string
	// Context says who matched ("the training algorithm", "monitoring").
	Context string
}

func (e *SourcesError) Error() string {
	var b strings.Builder
	if len(e.Missing) > 0 && e.Context == "monitoring" {
		// Blocks' DatasetEvaluator.process_batch words it so.
		fmt.Fprintf(&b, "%s: Not all data sources required for monitoring were provided. The list of required data sources: %s "+
			"(no source for %s; the batch has the sources %s)", e.Context, quoteList(e.Inputs), quoteList(e.Missing), quoteList(e.Sources))
		return b.String()
	}
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "%s: no data source for the input variable", e.Context)
		if len(e.Missing) > 1 {
			b.WriteString("s")
		}
		fmt.Fprintf(&b, " %s: the batch has the sources %s and the graph's input variables are %s",
			quoteList(e.Missing), quoteList(e.Sources), quoteList(e.Inputs))
		return b.String()
	}
	fmt.Fprintf(&b, "%s: mismatch of variable names and data sources: the batch has the sources %s but the graph's input variables are %s (unused: %s). "+
		"To train on a subset of the sources a dataset provides, pass `sources` to the dataset, use Fuel's FilterSources transformer, "+
		"or set on_unused_sources to 'warn' or 'ignore'",
		e.Context, quoteList(e.Sources), quoteList(e.Inputs), quoteList(e.Unused))
	return b.String()
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// MatchSources orders a batch for a function whose inputs are inputs: the
// argument for each input is the batch source of the same name (Blocks'
// process_batch). An input without a source is a *SourcesError; a source
// without an input is one too when policy is "raise", and is passed to warn
// when it is "warn" (a nil warn skips the check, for callers that have
// already warned). args, when large enough, is reused for the result.
func MatchSources(inputs []*core.Variable, batch map[string]*nd.Array, policy, context string, args []*nd.Array, warn func(string)) ([]*nd.Array, error) {
	args = args[:0]
	var missing []string
	for _, in := range inputs {
		a, ok := batch[in.Name]
		if !ok {
			missing = append(missing, in.Name)
		}
		args = append(args, a)
	}
	if missing == nil && (policy == UnusedSourcesIgnore || policy == UnusedSourcesWarn && warn == nil) {
		return args, nil
	}
	if missing != nil || len(batch) > countNamed(inputs, batch) {
		e := &SourcesError{Sources: sortedKeys(batch), Inputs: inputNames(inputs), Missing: missing, Context: context}
		if missing == nil {
			for _, s := range e.Sources {
				if !slices.Contains(e.Inputs, s) {
					e.Unused = append(e.Unused, s)
				}
			}
			if policy == UnusedSourcesWarn {
				if warn != nil {
					warn(e.Error())
				}
				return args, nil
			}
		}
		return nil, e
	}
	return args, nil
}

// countNamed is the number of batch sources some input is named after.
func countNamed(inputs []*core.Variable, batch map[string]*nd.Array) int {
	n := 0
	for s := range batch {
		for _, in := range inputs {
			if in.Name == s {
				n++
				break
			}
		}
	}
	return n
}

func sortedKeys(m map[string]*nd.Array) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func inputNames(inputs []*core.Variable) []string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
	}
	return names
}

// CheckInputNames returns an error when an input variable has no name (no
// source can feed it).
func CheckInputNames(inputs []*core.Variable) error {
	for _, in := range inputs {
		if in.Name == "" {
			return fmt.Errorf("the graph has an input variable with no name (%s): no data source can feed it; give it the name of a source", in.TypeString())
		}
	}
	return nil
}

// SourceError is data that cannot feed the input variable its source was
// matched to: a wrong number of dimensions or a dtype that does not convert
// without loss.
type SourceError struct {
	Source string
	Input  *core.Variable
	// Shape and DType are the data's.
	Shape []int
	DType nd.DType
	// Err is core's error.
	Err error
}

func (e *SourceError) Error() string {
	if len(e.Shape) != e.Input.NDim() {
		return fmt.Sprintf("source %q has shape %s but the input variable %s is %s (%d-d)",
			e.Source, nd.ShapeString(e.Shape), e.Input, kindOfNDim(e.Input.NDim()), e.Input.NDim())
	}
	hint := "convert the source first (e.g. with Fuel's Cast transformer) or declare the variable with the data's type"
	switch {
	case e.DType.IsFloat() && !e.Input.DType().IsFloat():
		hint = "float data cannot feed an integer variable; " + hint
	case !e.DType.IsFloat() && e.Input.DType().IsFloat():
		hint = "integer data cannot feed a float variable; " + hint
	default:
		hint = e.DType.String() + " data does not convert to " + e.Input.DType().String() + " without loss; " + hint
	}
	return fmt.Sprintf("source %q has dtype %s (shape %s) but the input variable %s is %s: %s",
		e.Source, e.DType, nd.ShapeString(e.Shape), e.Input, e.Input.TypeString(), hint)
}

func (e *SourceError) Unwrap() error { return e.Err }

// ExplainInputError turns core's *InputError from calling a function with
// args (ordered by MatchSources) into a *SourceError naming the source and
// both types; other errors come back unchanged.
func ExplainInputError(err error, inputs []*core.Variable, args []*nd.Array) error {
	var ie *core.InputError
	if !errors.As(err, &ie) {
		return err
	}
	for i, in := range inputs {
		if in == ie.Input && i < len(args) && args[i] != nil {
			return &SourceError{Source: in.Name, Input: in, Shape: args[i].Shape, DType: args[i].DType(), Err: err}
		}
	}
	return err
}

func kindOfNDim(n int) string {
	switch n {
	case 0:
		return "a scalar"
	case 1:
		return "a vector"
	case 2:
		return "a matrix"
	}
	return fmt.Sprintf("a tensor%d", n)
}
