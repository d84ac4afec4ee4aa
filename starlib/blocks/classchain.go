package blocks

import (
	"slices"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core/graph"
)

// Blocks' class hierarchy of the bricks, as scripts see it (isinstance,
// issubclass, VariableFilter(bricks=[Class])): the Go bricks know their
// own Python class (Base.TypeClass) and stand for the rest with Go
// interfaces; the chains of classes above them are here.

// typeClassChain is the Python class chain, most specific first, of a
// brick whose type's constructor made the class (Base.TypeClass).
func typeClassChain(class string) []string {
	switch class {
	case "Linear", "Convolutional":
		return []string{class, "LinearLike", "Initializable", "Feedforward", "Brick"}
	case "ConvolutionalTranspose":
		return []string{class, "Convolutional", "LinearLike", "Initializable", "Feedforward", "Brick"}
	case "Bias", "LinearMaxout", "LookupTable":
		return []string{class, "Initializable", "Feedforward", "Brick"}
	case "Identity", "Tanh", "Logistic", "Softplus", "Rectifier", "LeakyRectifier":
		return []string{class, "Activation", "Feedforward", "Brick"}
	case "MaxPooling", "AveragePooling":
		return []string{class, "Pooling", "Initializable", "Feedforward", "Brick"}
	case "Sequence":
		return []string{class, "Brick"}
	case "FeedforwardSequence":
		return []string{class, "Sequence", "Feedforward", "Brick"}
	case "MLP":
		return []string{class, "Sequence", "Initializable", "FeedforwardSequence", "Feedforward", "Brick"}
	case "BatchNormalizedMLP":
		return []string{class, "MLP", "Sequence", "Initializable", "FeedforwardSequence", "Feedforward", "Brick"}
	case "ConvolutionalSequence":
		return []string{class, "Sequence", "Initializable", "Feedforward", "Brick"}
	case "BatchNormalization":
		return []string{class, "RNGMixin", "Feedforward", "Brick"}
	case "SpatialBatchNormalization":
		return []string{class, "BatchNormalization", "RNGMixin", "Feedforward", "Brick"}
	case "CategoricalCrossEntropy", "MisclassificationRate":
		return []string{class, "Cost", "Brick"}
	case "SquaredError", "AbsoluteError", "BinaryCrossEntropy":
		return []string{class, "CostMatrix", "Cost", "Brick"}
	case "Parallel":
		return []string{class, "Initializable", "Brick"}
	case "Fork", "Merge":
		return []string{class, "Parallel", "Initializable", "Brick"}
	case "Distribute":
		return []string{class, "Fork", "Parallel", "Initializable", "Brick"}
	case "SimpleRecurrent", "LSTM", "GatedRecurrent", "RecurrentStack", "AttentionRecurrent":
		return []string{class, "BaseRecurrent", "Initializable", "Brick"}
	case "Bidirectional":
		return []string{class, "Initializable", "Brick"}
	case "Initializable": // a Container
		return []string{class, "Brick"}
	case "SequenceContentAttention":
		return []string{class, "GenericSequenceAttention", "AbstractAttention", "Initializable", "Brick"}
	case "SoftmaxEmitter":
		return []string{class, "AbstractEmitter", "Initializable", "Random", "Brick"}
	case "TrivialEmitter":
		return []string{class, "AbstractEmitter", "Brick"}
	case "LookupFeedback":
		return []string{class, "AbstractFeedback", "Initializable", "Brick"}
	case "TrivialFeedback":
		return []string{class, "AbstractFeedback", "Brick"}
	case "Readout":
		return []string{class, "AbstractReadout", "Initializable", "Brick"}
	case "SequenceGenerator":
		return []string{class, "BaseSequenceGenerator", "Initializable", "Brick"}
	case "Brick": // a Container
		return []string{class}
	}
	return []string{class, "Brick"} // Flattener, Maxout, Softmax
}

// abstractChain is the class chain of a brick of Blocks' abstract classes
// (a ScriptBrick): classes, its script class's brick bases, in Blocks'
// order, ending with Brick.
func abstractChain(classes []string) []string {
	order := []string{"BaseRecurrent", "LinearLike", "Initializable", "Feedforward", "Activation", "CostMatrix", "Cost", "Random", "Brick"}
	var chain []string
	for _, k := range order {
		if slices.Contains(classes, k) {
			chain = append(chain, k)
		}
	}
	if slices.Contains(chain, "CostMatrix") && !slices.Contains(chain, "Cost") {
		chain = append(chain[:len(chain)-1], "Cost", "Brick")
	}
	if slices.Contains(chain, "LinearLike") && !slices.Contains(chain, "Initializable") {
		chain = append([]string{"LinearLike", "Initializable"}, chain[1:]...)
	}
	if chain[len(chain)-1] != "Brick" {
		chain = append(chain, "Brick")
	}
	return chain
}

// brickChain is br's Python class chain, most specific first: a script
// subclass's classes (or a WithExtraDims class), then those of the brick
// type's class.
func brickChain(br bricks.Brick) []string {
	b := br.BaseBrick()
	x := brickExtra(br)
	var native []string
	if _, ok := br.(*bricks.ScriptBrick); ok && x != nil && x.abstract != nil {
		native = x.abstract
	} else {
		native = typeClassChain(b.TypeClass())
	}
	var out []string
	switch {
	case x != nil && !x.pending:
		for _, n := range scriptClassNames(x.st.Class) {
			if !slices.Contains(native, n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	case b.Class() != b.TypeClass():
		out = append(out, b.Class()) // WithExtraDims
	}
	return append(out, native...)
}

// isInstance reports whether br is of the class or a subclass of it
// (Python's isinstance).
func isInstance(br bricks.Brick, class string) bool {
	return slices.Contains(brickChain(br), class)
}

// classSelector selects the bricks of the class and its subclasses.
func classSelector(class string) func(graph.Brick) bool {
	return func(b graph.Brick) bool {
		br, ok := b.(bricks.Brick)
		return ok && isInstance(br, class)
	}
}
