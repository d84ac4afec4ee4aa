package mainloop_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// TestProfileReport: after a run, the profile has Blocks' sections
// (blocks/main_loop.py's Timers) in the order they were first entered,
// Report prints them as Blocks' Profile.report (name, seconds, share of
// the top-level total; an Other line under each section with
// subsections), and every section's subsections and Other add up to it:
// the epoch's time is all accounted for.
func TestProfileReport(t *testing.T) {
	alg := &mockAlgorithm{}
	m := mainloop.New(alg, &exampleStream{n: 10}, nil, nil,
		[]mainloop.Extension{&writeBatch{alg: alg}, mustFinishAfter(t, extensions.Triggers{"after_n_epochs": 2})})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	m.Profile.Report(&b)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if lines[0] != "Section                                  Time     % of total" || lines[1] != strings.Repeat("-", 60) {
		t.Fatalf("header:\n%s", b.String())
	}
	want := []string{
		"Before training", "  WriteBatch", "  FinishAfter", "  Other",
		"Initialization",
		"Training",
		"  Before epoch", "    WriteBatch", "    FinishAfter", "    Other",
		"  Epoch",
		"    Read data",
		"    Before batch", "      WriteBatch", "      FinishAfter", "      Other",
		"    Train",
		"    After batch", "      WriteBatch", "      FinishAfter", "      Other",
		"    Other",
		"  After epoch", "    WriteBatch", "    FinishAfter", "    Other",
		"  Other",
		"After training", "  WriteBatch", "  FinishAfter", "  Other",
	}
	re := regexp.MustCompile(`^(.{30})\s*(-?\d+\.\d\d)\s*(-?\d+\.\d\d)%$`)
	type row struct {
		name   string
		secs   float64
		indent int
	}
	var rows []row
	for _, l := range lines[2:] {
		mm := re.FindStringSubmatch(l)
		if mm == nil || len(l) != 60 {
			t.Fatalf("line %q is not Blocks' {:30}{:15.2f}{:15.2%%}", l)
		}
		secs, _ := strconv.ParseFloat(mm[2], 64)
		name := strings.TrimRight(mm[1], " ")
		rows = append(rows, row{strings.TrimLeft(name, " "), secs, (len(name) - len(strings.TrimLeft(name, " "))) / 2})
	}
	var got []string
	for _, r := range rows {
		got = append(got, strings.Repeat("  ", r.indent)+r.name)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sections:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Exact sums, from the profile's own totals.
	for _, path := range [][]string{{"training"}, {"training", "epoch"}, {"training", "epoch", "after_batch"}} {
		total := m.Profile.Seconds(path...)
		if total <= 0 {
			t.Errorf("%v: %v s", path, total)
		}
	}
	epoch := m.Profile.Seconds("training", "epoch")
	parts := m.Profile.Seconds("training", "epoch", "read_data") + m.Profile.Seconds("training", "epoch", "before_batch") +
		m.Profile.Seconds("training", "epoch", "train") + m.Profile.Seconds("training", "epoch", "after_batch")
	if parts > epoch {
		t.Errorf("the epoch's sections sum to %v s, more than the epoch's %v s", parts, epoch)
	}
	if m.Profile.Seconds("training", "epoch", "train") != m.Profile.Train.Seconds() ||
		m.Profile.Seconds("training", "epoch", "read_data") != m.Profile.ReadData.Seconds() ||
		m.Profile.Seconds("initialization") != m.Profile.Initialization.Seconds() {
		t.Errorf("Timing's totals differ from the profile's sections")
	}
	if m.Profile.Seconds("training", "no such section") != 0 {
		t.Errorf("an unknown section has time")
	}
}

// An empty profile reports as Blocks' does.
func TestProfileEmpty(t *testing.T) {
	var p mainloop.Profile
	var b strings.Builder
	p.Report(&b)
	if !strings.HasSuffix(b.String(), "No profile information collected.\n") {
		t.Errorf("%q", b.String())
	}
}
