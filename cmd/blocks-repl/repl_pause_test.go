package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalPauseAndSave: Ctrl-C during main_loop.run() at the prompt
// pauses training with one message (no Blocks interrupt warnings, no
// finished banner, training_finished unset); run() continues it; :save
// writes a script (mode 0644) that replays the paused and continued run
// as one uninterrupted run, ends, and gives the session's parameters bit
// for bit.
func TestTerminalPauseAndSave(t *testing.T) {
	const total = 600
	dir := t.TempDir()
	saved := filepath.Join(dir, "session.star")
	script := writeScript(t, "train.star", fmt.Sprintf(trainingScript, total))
	tm, _ := pauseTraining(t, func() *terminal {
		return startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")}, "repl", script)
	}, "iterations_done: 20", total)
	pause := tm.seen
	tm.line(`print("PAUSED", main_loop.log.current_row.get("training_finished"), main_loop.status["iterations_done"] < 600)`)
	tm.expect("PAUSED None True")
	tm.line("main_loop.run()")
	tm.expect(">>> ")
	tm.line(`print("W0", mlp.children[0].W.get_value().tolist()[3][:5])`)
	tm.expect("W0 ")
	tm.expect(">>> ")
	tm.line(":save " + saved)
	tm.expect("saved")
	tm.exit()

	screen := tm.screen()
	paused := screen[:pause]
	for _, bad := range []string{"press CTRL + C again", "Received batch interrupt", "TRAINING HAS BEEN FINISHED", "training_finished: True"} {
		if strings.Contains(paused, bad) {
			t.Errorf("the pause printed %q:\n%s", bad, paused)
		}
	}
	if n := strings.Count(screen, "TRAINING HAS BEEN FINISHED"); n != 1 {
		t.Errorf("the finished banner appears %d times, want once (at the real end)", n)
	}
	want := paramLines(screen)
	if len(want) < 1 {
		t.Fatalf("no parameters on the screen:\n%s", screen)
	}
	st, err := os.Stat(saved)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m&0o044 == 0 {
		t.Errorf(":save made the script %v, want readable by others as other outputs are (0644 less the umask)", m)
	}
	src, _ := os.ReadFile(saved)
	if !strings.Contains(string(src), "# main_loop.run()") {
		t.Errorf("the continuing main_loop.run() is not a comment in the saved script:\n%s", src)
	}
	w := startWatched(t, dir, nil, "run", saved)
	if code := w.exitCode(t, 120e9); code != 0 {
		t.Fatalf("blocks-repl run %s: exit %d\n%s", saved, code, w.stderr())
	}
	got := paramLines(w.stdout())
	if len(got) != 1 || strings.TrimSpace(got[0]) != strings.TrimSpace(want[len(want)-1]) {
		t.Errorf("the saved script's parameters differ from the session's:\nsession: %v\nscript:  %v", want, got)
	}
}
