package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// TestDashboardPlantedLogServesAndStops: an SQLite file planted two
// levels down in the searched directory, its status a view over a
// recursive query that never ends, once kept `blocks-repl dashboard`
// from ever printing its URL and made it deaf to Ctrl-C. Now it serves
// the other logs' runs, says which file it skipped and why, and Ctrl-C
// ends it.
func TestDashboardPlantedLogServesAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	dir := t.TempDir()
	db, err := sqlitelog.Open(filepath.Join(dir, "runs.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	l := mainloop.NewTrainingLog()
	for i := 1; i <= 3; i++ {
		r, _ := l.Row(i)
		r["cost"] = float64(i)
		l.Status.IterationsDone = i
	}
	if err := db.Save(l); err != nil {
		t.Fatal(err)
	}
	db.Close()
	trap := filepath.Join(dir, "a", "b", "trap.sqlite")
	if err := os.MkdirAll(filepath.Dir(trap), 0o755); err != nil {
		t.Fatal(err)
	}
	tdb, err := sql.Open("sqlite", trap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tdb.Exec(`CREATE VIEW status AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
		SELECT 'u' AS uuid, 'k' AS "key", x AS value FROM c WHERE x < 0`); err != nil {
		t.Fatal(err)
	}
	tdb.Close()

	cmd := exec.Command(bin, "dashboard", "--port", "0", "--token", "tok", dir)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		re := regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+)/\?token=tok `)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		done <- cmd.Wait()
	}()
	defer func() { _ = cmd.Process.Kill() }()
	var url string
	select {
	case url = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatalf("no dashboard URL within 60 s (stderr: %s)", stderr.String())
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list struct{ Runs []struct{ ID string } }
		req, _ := http.NewRequest("GET", url+"/api/runs", nil)
		req.Header.Set("X-Blocks-Token", "tok")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
		}
		if len(list.Runs) == 1 && list.Runs[0].ID == l.UUID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of runs.sqlite is not listed within 60 s: %+v (stderr: %s)", list.Runs, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for !strings.Contains(stderr.String(), "dashboard: skipping "+trap+": its queries took over") {
		if time.Now().After(deadline) {
			t.Fatalf("the planted log is not reported: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after Ctrl-C: %v (stderr: %s)", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-C did not stop the dashboard within 20 s")
	}
}
