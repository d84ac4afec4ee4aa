package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/cmd/dashboard"
)

// TestDashboardCheckpointDir: a directory holding only a checkpoint shows
// its run, from the checkpoint's log, config and script.
func TestDashboardCheckpointDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(dashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	runToEnd(t, bin, dir, "run", "--set", "epochs=2", "exp.star")
	s, err := dashboard.New(dashboard.Options{Paths: []string{dir}, Token: "tok", Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	var list struct{ Runs []dashboard.Run }
	getJSON(t, ts.URL+"/api/runs", &list)
	if len(list.Runs) != 1 || list.Runs[0].Kind != "checkpoint" || list.Runs[0].Status != "checkpoint" || list.Runs[0].Iterations != 40 {
		t.Fatalf("runs: %+v", list.Runs)
	}
	id := list.Runs[0].ID
	var d dashboard.Data
	getJSON(t, ts.URL+"/api/runs/"+id+"/data", &d)
	if n := len(d.Channels["train_cost"]); n != 40 || len(d.Channels["epoch_cost"]) != 2 || len(d.EpochEnds) != 2 || d.EpochEnds[1] != 40 {
		t.Errorf("data: %d train_cost points, epoch ends %v", n, d.EpochEnds)
	}
	var det dashboard.Detail
	getJSON(t, ts.URL+"/api/runs/"+id, &det)
	sum := sha256.Sum256([]byte(dashScript))
	if det.ScriptSHA256 != hex.EncodeToString(sum[:]) || det.ScriptText != dashScript {
		t.Errorf("script %s, want the sha256 of exp.star", det.ScriptSHA256)
	}
	want := []dashboard.ConfigItem{{Name: "epochs", Value: "2", Override: "2"}, {Name: "batch_size", Value: "20"}}
	if len(det.Config) < 2 || det.Config[0] != want[0] || det.Config[1] != want[1] {
		t.Errorf("config %+v", det.Config)
	}
	if len(det.Checkpoints) != 1 || det.Checkpoints[0].Path != filepath.Join(dir, "exp.tar") || !det.Checkpoints[0].Exists || det.Checkpoints[0].Iterations != 40 {
		t.Errorf("checkpoints %+v", det.Checkpoints)
	}
}

// getJSON GETs url with the token the tests give their dashboards, tok.
func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Blocks-Token", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// TestRunDashboard: run --dashboard serves the run's log while it trains
// (here on a free port) and stops with it; a log that is written only at
// the end is refused.
func TestRunDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(dashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, bin, dir, []string{"BLOCKS_DASHBOARD_TOKEN=tok"}, "run", "--dashboard", "--dashboard-port", "0", "--set", "epochs=100000", "exp.star")
	defer func() { _ = c.cmd.Process.Kill() }()
	var url string
	re := regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+)/\?token=tok `)
	timeout := time.After(20 * time.Second)
	for url == "" {
		select {
		case line := <-c.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
		case <-timeout:
			t.Fatalf("no dashboard URL:\n%s", c.stderr)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	var live dashboard.Run
	for live.ID == "" && time.Now().Before(deadline) {
		var list struct{ Runs []dashboard.Run }
		getJSON(t, url+"/api/runs", &list)
		for _, r := range list.Runs {
			if r.Live && r.Source == "exp.sqlite" {
				live = r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if live.ID == "" {
		t.Fatal("the run never showed as live")
	}
	req, _ := http.NewRequest("POST", url+"/api/runs/"+live.ID+"/stop", nil)
	req.Header.Set("X-Blocks-Token", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("stop: %s", resp.Status)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, c.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not stop")
	}
	if _, err := http.Get(url + "/api/runs"); err == nil {
		t.Error("the dashboard still serves after the run ended")
	}
	var out, errb bytes.Buffer
	code := Main([]string{"run", "--dashboard", "--log", filepath.Join(dir, "x.jsonl"), filepath.Join(dir, "exp.star")}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "give an SQLite log") {
		t.Errorf("run --dashboard --log x.jsonl: exit %d, %s", code, errb.String())
	}
}
