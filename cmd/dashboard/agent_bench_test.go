package dashboard

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// BenchmarkSync is the cost of a main loop's sync after a batch (a row of
// four numbers), with the SQLite backend alone and wrapped by the Agent:
// go test -run X -bench Sync ./cmd/dashboard
func BenchmarkSync(b *testing.B) {
	for _, agent := range []bool{false, true} {
		name := "sqlite"
		if agent {
			name = "sqlite+agent"
		}
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.sqlite")
			var backend mainloop.LogBackend = &sqlitelog.Lazy{Path: path}
			if agent {
				backend = &Agent{Backend: backend, Path: path, Messages: io.Discard}
			}
			l := mainloop.NewTrainingLog()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				r, _ := l.Row(i)
				r["train_cost"], r["a"], r["b"], r["c"] = float64(i), 1.0, 2.0, 3.0
				l.Status.IterationsDone = i
				if err := backend.Sync(l); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			backend.(io.Closer).Close()
		})
	}
}
