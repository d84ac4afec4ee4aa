package mainloop

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Profile holds the time the main loop has spent, summed over its runs:
// the totals Timing reports, and Blocks' profile of nested sections
// (blocks.utils.profile.Profile, filled by the loop's Timers): initialization,
// each callback's extension calls (by extension type), training, and
// within it before_epoch, epoch (read_data, before_batch, train,
// after_batch) and after_epoch. Report prints it as Blocks'
// Profile.report does, with an "Other" line under each section for the
// time none of its subsections took, so that every second of an epoch is
// accounted for.
type Profile struct {
	// Initialization is the time in Algorithm.Initialize.
	Initialization time.Duration
	// Train is the time in Algorithm.ProcessBatch.
	Train time.Duration
	// ReadData is the time spent getting batches from epoch iterators.
	ReadData time.Duration

	root *section // the top-level sections (nil until the first)
	cur  *section // the section being timed (nil: none)
}

// section is one node of the profile's tree: its total and its
// subsections in the order they were first entered.
type section struct {
	name     string
	total    time.Duration
	parent   *section
	children []*section
}

// enter starts timing the subsection name of the current section; exit
// with the returned start ends it. A subsection seen before is found
// again (nothing is allocated after the first time).
func (p *Profile) enter(name string) time.Time {
	if p.root == nil {
		p.root = &section{}
	}
	cur := p.cur
	if cur == nil {
		cur = p.root
	}
	var s *section
	for _, c := range cur.children {
		if c.name == name {
			s = c
			break
		}
	}
	if s == nil {
		s = &section{name: name, parent: cur}
		cur.children = append(cur.children, s)
	}
	p.cur = s
	return time.Now()
}

// exit ends the current section, started at t0, and returns its time.
func (p *Profile) exit(t0 time.Time) time.Duration {
	d := time.Since(t0)
	if p.cur == nil {
		return d
	}
	p.cur.total += d
	p.cur = p.cur.parent
	if p.cur == p.root {
		p.cur = nil
	}
	return d
}

// reset leaves any section a previous run left open (Blocks resets
// profile.current at the start of run).
func (p *Profile) reset() { p.cur = nil }

// Seconds is the total time of the section at path (e.g. "training",
// "epoch", "train"), 0 when it was never entered.
func (p *Profile) Seconds(path ...string) float64 {
	s := p.root
	if s == nil {
		return 0
	}
	for _, name := range path {
		var next *section
		for _, c := range s.children {
			if c.name == name {
				next = c
				break
			}
		}
		if next == nil {
			return 0
		}
		s = next
	}
	return s.total.Seconds()
}

// Report writes the profile as Blocks' Profile.report: one line per
// section (indented by depth) with its seconds and share of the total of
// the top-level sections, and under each section with subsections an
// "Other" line for the rest of its time.
func (p *Profile) Report(w io.Writer) {
	fmt.Fprintf(w, "%-30s%15s%15s\n", "Section", "Time", "% of total")
	fmt.Fprintln(w, strings.Repeat("-", 60))
	var total time.Duration
	if p.root != nil {
		for _, c := range p.root.children {
			total += c.total
		}
	}
	if total == 0 {
		fmt.Fprintln(w, "No profile information collected.")
		return
	}
	line := func(level int, name string, d time.Duration) {
		fmt.Fprintf(w, "%-30s%15.2f%14.2f%%\n", strings.Repeat("  ", level)+name, d.Seconds(), 100*d.Seconds()/total.Seconds())
	}
	var walk func(s *section, level int)
	walk = func(s *section, level int) {
		for _, c := range s.children {
			line(level, sectionTitle(c.name), c.total)
			if len(c.children) == 0 {
				continue
			}
			walk(c, level+1)
			rest := c.total
			for _, cc := range c.children {
				rest -= cc.total
			}
			line(level+1, "Other", rest)
		}
	}
	walk(p.root, 0)
}

// sectionTitle is Blocks' title of a section: underscores as spaces, the
// first letter upper-case.
func sectionTitle(name string) string {
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
