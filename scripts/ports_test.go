package scripts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/internal/fixtures"
)

// The ports of third-party Blocks projects (scripts/ports, docs/porting.md)
// run here as their authors wrote them, edited only as the porting guide
// says. A test copies a port into a temporary directory, makes its data
// small there and shrinks the run by textual substitutions of the port's
// own settings (each must match exactly once, so a port and its test
// cannot drift apart), runs it from that directory, and checks that
// training lowers the cost.

// portCopy copies the .star files of scripts/ports/NAME (and its
// subdirectories) into a new temporary directory, applying the
// substitutions (old, new pairs) to the file of that base name, and makes
// it the working directory for the test.
func portCopy(t *testing.T, name string, subst map[string][][2]string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("ports", name)
	err := filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".star") {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s := string(b)
		for _, r := range subst[e.Name()] {
			if n := strings.Count(s, r[0]); n != 1 {
				return fmt.Errorf("%s: %q occurs %d times, want once", path, r[0], n)
			}
			s = strings.Replace(s, r[0], r[1], 1)
		}
		delete(subst, e.Name())
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range subst {
		t.Fatalf("no file %s in %s", f, src)
	}
	t.Chdir(dir)
	return dir
}

// printed returns the values Printing printed for a log record key, in
// order ("\t key: value" lines).
func printed(t *testing.T, out, key string) []float64 {
	t.Helper()
	var vs []float64
	re := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(key) + `: (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s: %q is not a number", key, m[1])
		}
		vs = append(vs, v)
	}
	return vs
}

// charRNNText is the training text of the char-rnn port: n lines of eight
// words drawn from a small vocabulary (a seeded generator, the same text
// at every run), written as the input_txt.star the port loads. It returns
// the number of distinct characters.
func charRNNText(t *testing.T, dir string, n int) int {
	t.Helper()
	words := strings.Fields("the cat sat on a mat and dog ran to big red hat in sun")
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range n {
		for j := range 8 {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	src := fmt.Sprintf("text = %q\n", b.String())
	if err := os.WriteFile(filepath.Join(dir, "input_txt.star"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	chars := map[rune]bool{}
	for _, c := range b.String() {
		chars[c] = true
	}
	return len(chars)
}

// TestPortCharRNN runs johnarevalo/blocks-char-rnn (scripts/ports/char_rnn):
// make_dataset.star writes the Fuel HDF5 file from a 300-line text (176
// sequences of 50 characters: 167 train, 9 dev), then train.star trains
// its two-layer GRU (hidden 32 instead of 128) for 2 epochs instead of 30.
// The dev cost falls from ln V (V characters, uniform) by more than 0.2
// nats (measured: 2.833 to 2.536), the parameter count is Blocks' (a
// lookup V*H, per layer a Fork to H and 2H and a GatedRecurrent with
// state_to_state, state_to_gates and initial_state, an output H*V+V), and
// each of the author's checkpoints is written.
func TestPortCharRNN(t *testing.T) {
	dir := portCopy(t, "char_rnn", map[string][][2]string{"config.star": {
		{"config['hidden_size'] = 128", "config['hidden_size'] = 32"},
		{"config['nepochs'] = 30", "config['nepochs'] = 2"},
	}})
	v := charRNNText(t, dir, 300)
	run(t, "make_dataset.star", nil)
	_, out := run(t, "train.star", nil)
	dev, tra := printed(t, out, "dev_cost"), printed(t, out, "tra_cost")
	t.Logf("dev_cost %v", dev)
	if len(dev) < 3 || len(tra) < 9 {
		t.Fatalf("dev_cost printed %d times, tra_cost %d times: want 3 and 9\n%s", len(dev), len(tra), out)
	}
	if lnV := math.Log(float64(v)); !(math.Abs(dev[0]-lnV) < 0.05 && dev[len(dev)-1] < dev[0]-0.2) {
		t.Errorf("dev_cost %v: want about ln %d = %.3f before training and 0.2 lower after 2 epochs", dev, v, lnV)
	}
	const h, layers = 32, 2
	n := v*h + layers*((h*h+h)+(2*h*h+2*h)+(h*h+2*h*h+h)) + h*v + v
	if want := fmt.Sprintf("number of parameters in the model: %d\n", n); !strings.Contains(out, want) {
		t.Errorf("output lacks %q", want)
	}
	for _, f := range []string{"gru_last.tar", "gru_best.tar"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the run left no %s: %v", f, err)
		}
	}
}

// TestAcceptPortCharRNN trains the char-rnn port with its author's own
// settings (a two-layer GRU of 128 units, 30 epochs, RMSProp 0.002 decayed
// by 0.97 an epoch, step clipping 1) on 3,000 lines of the test's text
// (1,760 sequences, 35 batches an epoch). The text's entropy is 8 ln 15
// nats a line of 29.3 characters on average, 0.739 nats a character: the
// dev cost must come within 0.21 of it (measured: 2.833 before training,
// 0.866 after, 0.86 from epoch 12 on; 5 minutes on 2 loaded cores). Run
// by make accept.
func TestAcceptPortCharRNN(t *testing.T) {
	acceptOnly(t)
	dir := portCopy(t, "char_rnn", map[string][][2]string{})
	charRNNText(t, dir, 3000)
	run(t, "make_dataset.star", nil)
	_, out := run(t, "train.star", nil)
	dev := printed(t, out, "dev_cost")
	t.Logf("dev_cost %v", dev)
	if len(dev) < 31 {
		t.Fatalf("dev_cost printed %d times, want 31 (before training and after each of 30 epochs)", len(dev))
	}
	if last := dev[len(dev)-1]; !(last > 0.70 && last < 0.95) {
		t.Errorf("dev_cost after 30 epochs %.4f, want within (0.70, 0.95): the text's entropy is 0.739 nats a character", last)
	}
}

// TestPortDRAWVAE runs jbornschein/draw's vae.py (scripts/ports/draw_vae)
// on MNIST-shaped files written from the embedded subset: 1,000 training
// images instead of 50,000, 500 validation and 500 test images, 2 epochs
// of 10 batches instead of 200 epochs. The bound on the negative
// log-likelihood falls from about 543 nats (784 * ln 2 less the
// all-zero pixels' share) to below 300 on all three sets.
func TestPortDRAWVAE(t *testing.T) {
	t.Setenv("FUEL_DATA_PATH", fixtures.MNISTDir(t, datasets.EmbeddedMNISTFiles()))
	portCopy(t, "draw_vae", map[string][][2]string{"vae.star": {
		{"subset=slice(0, 50000)", "subset=slice(0, 1000)"},
		{"subset=slice(50000, 60000)", "subset=slice(50000, 50500)"},
		{"MNIST(('test',), sources=('features',))", "MNIST(('test',), subset=slice(0, 500), sources=('features',))"},
		{"FinishAfter(after_n_epochs=200)", "FinishAfter(after_n_epochs=2)"},
	}})
	_, out := run(t, "vae.star", nil)
	for _, set := range []string{"train", "valid", "test"} {
		v := printed(t, out, set+"_nll_upper_bound")
		t.Logf("%s_nll_upper_bound %v", set, v)
		if len(v) < 3 {
			t.Fatalf("%s_nll_upper_bound printed %d times, want 3\n%s", set, len(v), out)
		}
		if !(v[0] > 500 && v[len(v)-1] < 300) {
			t.Errorf("%s_nll_upper_bound %v: want above 500 before training and below 300 after 2 epochs", set, v)
		}
	}
}

// TestAcceptPortDRAWVAE trains the VAE port on the real, full MNIST (make
// accept) for 10 epochs instead of 200, every other setting the author's.
// The bound on the test set's negative log-likelihood falls from 543 to
// below 105 nats (measured: 97.48; a VAE of this size on thresholded MNIST
// reaches the mid-90s; 2 minutes of CPU, 7 on 2 loaded cores).
func TestAcceptPortDRAWVAE(t *testing.T) {
	acceptOnly(t)
	t.Setenv("FUEL_DATA_PATH", fixtures.Shared(t, "data/mnist"))
	portCopy(t, "draw_vae", map[string][][2]string{"vae.star": {
		{"FinishAfter(after_n_epochs=200)", "FinishAfter(after_n_epochs=10)"},
	}})
	_, out := run(t, "vae.star", nil)
	v := printed(t, out, "test_nll_upper_bound")
	t.Logf("test_nll_upper_bound %v", v)
	if len(v) < 11 {
		t.Fatalf("test_nll_upper_bound printed %d times, want 11\n%s", len(v), out)
	}
	if last := v[len(v)-1]; !(v[0] > 500 && last < 105) {
		t.Errorf("test_nll_upper_bound %.2f before training and %.2f after 10 epochs: want above 500 and below 105", v[0], last)
	}
}

// TestPortALIGANMixture runs IshmaelBelghazi/ALI's experiments/gan_mixture.py
// (scripts/ports/ali) with its own bricks, algorithm, streams and Gaussian
// mixture dataset: the generator's hidden layers 50 instead of 200, the
// discriminator's 100 instead of 800, 5,000 examples instead of 100,000,
// 3 epochs of 50 batches instead of 200 epochs, and a learning rate of
// 1e-3 instead of 1e-5 so that 150 batches move it. Before training the
// discriminator outputs about 0 (its weights are small), so both losses
// are 2 ln 2 (softplus(0) twice); training lowers the discriminator's loss
// on the training batches (measured: 1.3852 to 1.3515).
func TestPortALIGANMixture(t *testing.T) {
	dir := portCopy(t, "ali", map[string][][2]string{
		"gan_mixture.star": {
			{"GEN_HIDDEN = 200", "GEN_HIDDEN = 50"},
			{"DISC_HIDDEN = 800", "DISC_HIDDEN = 100"},
			{"NUM_EPOCHS = 200", "NUM_EPOCHS = 3"},
			{"LEARNING_RATE = 1e-5", "LEARNING_RATE = 1e-3"},
		},
		"streams.star": {{"num_examples=100000,", "num_examples=5000,"}},
	})
	_, out := run(t, "gan_mixture.star", nil)
	d := printed(t, out, "train_gan_compute_losses_discriminator_loss")
	g := printed(t, out, "train_gan_compute_losses_generator_loss")
	t.Logf("discriminator loss %v\ngenerator loss %v", d, g)
	if len(d) < 4 || len(g) < 4 {
		t.Fatalf("the losses were printed %d and %d times, want 4 (before training and after each of 3 epochs)\n%s", len(d), len(g), out)
	}
	if math.Abs(d[0]-2*math.Ln2) > 0.01 || math.Abs(g[0]-2*math.Ln2) > 0.01 {
		t.Errorf("losses before training %.4f and %.4f, want 2 ln 2 = %.4f", d[0], g[0], 2*math.Ln2)
	}
	if !(d[len(d)-1] < d[0]-0.01) {
		t.Errorf("discriminator loss %v: want it lower after 3 epochs", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "gan_mixture_prime.tar")); err != nil {
		t.Errorf("the run left no checkpoint: %v", err)
	}
}
