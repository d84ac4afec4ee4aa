package scripts

import "testing"

// TestBatchNormSpiral: blocks-examples' batch-normalization example and
// its test's thresholds: with batch normalization the test misclassification
// is below 0.62 and the training one below 0.6; without, both are above
// 0.65 (2 epochs).
func TestBatchNormSpiral(t *testing.T) {
	for _, bn := range []bool{true, false} {
		g, out := run(t, "batch_norm_spiral.star", map[string]string{"batch_normalized": map[bool]string{true: "True", false: "False"}[bn], "verbose": "False"})
		t.Log(out)
		train, test := global(t, g, "train_misclass"), global(t, g, "test_misclass")
		if bn && (test >= 0.62 || train >= 0.6) {
			t.Errorf("with batch normalization: train %.4f (want < 0.6), test %.4f (want < 0.62)", train, test)
		}
		if !bn && (test <= 0.65 || train <= 0.65) {
			t.Errorf("without: train %.4f, test %.4f (want both > 0.65)", train, test)
		}
	}
}
