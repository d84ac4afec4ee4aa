package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Cost is one of Blocks' cost bricks (blocks.bricks.cost); apply(y, y_hat)
// gives the cost.
type Cost struct {
	*Base
	// TopK is MisclassificationRate's k: a target among the k best is not
	// an error (values below 1 read as 1).
	TopK int
}

// NewCost makes CategoricalCrossEntropy, MisclassificationRate (top_k,
// its attribute, read when the brick is applied), SquaredError,
// AbsoluteError or BinaryCrossEntropy.
func NewCost(cfg *Config, class, name string, topK int) (*Cost, error) {
	c := &Cost{Base: &Base{}}
	var fn ApplyFunc
	output := "cost"
	switch class {
	case "CategoricalCrossEntropy":
		fn = func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			ce, err := core.CategoricalCrossEntropy(in[1], in[0])
			if err != nil {
				return nil, err
			}
			return one(core.MeanAll(ce)), nil
		}
	case "MisclassificationRate":
		if topK < 1 {
			return nil, fmt.Errorf("MisclassificationRate: top_k must be at least 1, got %d", topK)
		}
		output = "error_rate"
		fn = func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			k := max(c.TopK, 1)
			return misclassification(cfg.FloatX, in[0], in[1], k)
		}
	case "SquaredError", "AbsoluteError", "BinaryCrossEntropy":
		fn = func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			m, err := costMatrix(class, in[0], in[1])
			if err != nil {
				return nil, err
			}
			s, err := core.Sum(m, []int{1}, false, nil)
			if err != nil {
				return nil, fmt.Errorf("the cost matrix must be 2-d (batch, dims): %v", err)
			}
			return one(core.MeanAll(s)), nil
		}
		c.addApplication(&Application{Name: "cost_matrix", Inputs: []string{"y", "y_hat"}, Outputs: []string{"cost"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			m, err := costMatrix(class, in[0], in[1])
			return one(m), err
		}})
	default:
		return nil, fmt.Errorf("unknown cost %s", class)
	}
	c.initBase(c, cfg, name, class)
	c.TopK = topK
	c.addApplication(&Application{Name: "apply", Inputs: []string{"y", "y_hat"}, Outputs: []string{output}, Fn: fn})
	return c, nil
}

func costMatrix(class string, y, yHat *core.Variable) (*core.Variable, error) {
	switch class {
	case "SquaredError":
		return core.Sqr(core.Sub(y, yHat)), nil
	case "AbsoluteError":
		return core.Abs(core.Sub(y, yHat)), nil
	}
	// binary_crossentropy(y_hat, y) = −(y log ŷ + (1−y) log(1−ŷ))
	one := core.Const(yHat.DType(), 1)
	return core.Neg(core.Add(core.Mul(y, core.Log(yHat)), core.Mul(core.Sub(one, y), core.Log(core.Sub(one, yHat))))), nil
}

// misclassification is Blocks' MisclassificationRate: the fraction of rows
// whose target is not the argmax (top_k 1), or not among the k best with
// ties at the k-th place counted as errors.
func misclassification(floatX nd.DType, y, yHat *core.Variable, topK int) ([]*core.Variable, error) {
	if y.NDim() != 1 || yHat.NDim() != 2 {
		return nil, fmt.Errorf("y must be a vector of class indices and y_hat a matrix, got %d-d and %d-d", y.NDim(), yHat.NDim())
	}
	var mistakes *core.Variable
	if topK == 1 {
		axis := 1
		am, err := core.Argmax(yHat, &axis, false)
		if err != nil {
			return nil, err
		}
		mistakes = core.NEQ(y, am)
	} else {
		truth, err := core.Pick(yHat, y)
		if err != nil {
			return nil, err
		}
		col, err := core.Dimshuffle(truth, []int{0, -1})
		if err != nil {
			return nil, err
		}
		higher, err := core.Sum(core.GE(yHat, col), []int{1}, false, nil)
		if err != nil {
			return nil, err
		}
		numHigher := core.Sub(higher, core.Const(nd.Int64, 1))
		mistakes = core.GE(numHigher, core.Const(nd.Int64, float64(topK)))
	}
	rate, err := core.Mean(mistakes, nil, false, &floatX)
	if err != nil {
		return nil, err
	}
	return one(rate), nil
}
