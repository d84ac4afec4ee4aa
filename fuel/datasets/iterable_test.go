package datasets

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

func drain(t *testing.T, it fuel.EpochIterator) [][]*nd.Array {
	t.Helper()
	var out [][]*nd.Array
	for {
		b, err := it.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
}

func TestIterableDataset(t *testing.T) {
	seqs := []*nd.Array{nd.FromSlice([]int64{1, 2}), nd.FromSlice([]int64{3}), nd.FromSlice([]int64{4, 5, 6})}
	labels := []*nd.Array{nd.FromSlice([]int64{0}), nd.FromSlice([]int64{1}), nd.FromSlice([]int64{0})}
	d, err := NewIterableDataset([]IterableSource{{"words", seqs}, {"label", labels}}, []string{"label", "words"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumExamples() != 3 || !slices.Equal(d.Sources(), []string{"label", "words"}) {
		t.Errorf("%d examples, sources %v", d.NumExamples(), d.Sources())
	}
	s := GetExampleStream(d)
	it, _ := s.GetEpochIterator()
	first, _ := it.Next()
	state, _ := it.(fuel.StatefulIterator).State()
	rest := drain(t, it)
	if len(rest) != 2 || !nd.Equal(first[1], seqs[0]) || !nd.Equal(rest[1][1], seqs[2]) {
		t.Errorf("examples %v %v", first, rest)
	}
	resumed, err := s.ResumeEpochIterator(state)
	if err != nil {
		t.Fatal(err)
	}
	again := drain(t, resumed)
	if len(again) != 2 || !nd.Equal(again[0][1], rest[0][1]) {
		t.Errorf("resumed %v, want %v", again, rest)
	}
	if _, err := NewIterableDataset([]IterableSource{{"a", seqs}, {"b", labels[:2]}}, nil, nil); err == nil || !strings.Contains(err.Error(), "different length") {
		t.Errorf("unequal: %v", err)
	}
}

func TestTextFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("the cat sat\n\nthe dog\n"), 0o644)
	os.WriteFile(b, []byte("  ab c \n"), 0o644)
	dict := map[string]int64{"<S>": 0, "</S>": 1, "<UNK>": 2, "the": 3, "cat": 4, "a": 5, "b": 6}
	d, err := NewTextFile([]string{a, b}, dict, DefaultTextFileOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, mustIter(t, GetExampleStream(d)))
	want := [][]int64{{0, 3, 4, 2, 1}, {0, 1}, {0, 3, 2, 1}, {0, 2, 2, 1}}
	if len(got) != len(want) {
		t.Fatalf("%d sentences, want %d", len(got), len(want))
	}
	for i, w := range want {
		if !slices.Equal(got[i][0].I64(), w) {
			t.Errorf("sentence %d = %v, want %v", i, got[i][0].I64(), w)
		}
	}
	o := DefaultTextFileOptions()
	o.Level, o.BOSToken, o.EOSToken = "character", nil, nil
	d, _ = NewTextFile([]string{b}, dict, o)
	got = drain(t, mustIter(t, GetExampleStream(d)))
	if !slices.Equal(got[0][0].I64(), []int64{5, 6, 2, 2}) { // "ab c": a, b, ' ' -> UNK, c -> UNK
		t.Errorf("characters %v", got[0][0].I64())
	}
	o.UNKToken = nil
	d, _ = NewTextFile([]string{b}, dict, o)
	if _, err := mustIter(t, GetExampleStream(d)).Next(); err == nil || !strings.Contains(err.Error(), "b.txt:1") {
		t.Errorf("unknown token without unk: %v", err)
	}
	if _, err := NewTextFile([]string{a}, map[string]int64{}, DefaultTextFileOptions()); err == nil || !strings.Contains(err.Error(), "BOS token") {
		t.Errorf("no BOS: %v", err)
	}
}

func mustIter(t *testing.T, s fuel.Stream) fuel.EpochIterator {
	t.Helper()
	it, err := s.GetEpochIterator()
	if err != nil {
		t.Fatal(err)
	}
	return it
}
