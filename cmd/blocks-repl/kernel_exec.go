//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/run"
)

// newKernelSession is the REPL's session with its output published on
// iopub and its displays shown inline.
func newKernelSession(k *kernel) (*session, error) {
	s := &session{
		out:         &streamWriter{k, "stdout"},
		errw:        &streamWriter{k, "stderr"},
		loopSignals: make(chan os.Signal, 4),
		sigint:      make(chan os.Signal, 4),
		display:     k.display,
		scriptPath:  os.Getenv("BLOCKS_KERNEL_SCRIPT"),
	}
	if err := s.reset(); err != nil {
		return nil, err
	}
	return s, nil
}

// execute runs a cell: execute_input, its stream output, its value as
// execute_result (or its error), a finished main loop's summary, and the
// execute_reply.
func (k *kernel) execute(sock kernelSocket, msg *jupyterMsg) {
	var c struct {
		Code         string `json:"code"`
		Silent       bool   `json:"silent"`
		StoreHistory *bool  `json:"store_history"`
	}
	if err := json.Unmarshal(msg.Content, &c); err != nil {
		k.reply(sock, msg, "execute_reply", map[string]any{"status": "error", "execution_count": k.count,
			"ename": "BadRequest", "evalue": err.Error(), "traceback": []string{err.Error()}})
		return
	}
	if !c.Silent {
		k.count++
		k.publish(&msg.Header, "execute_input", map[string]any{"code": c.Code, "execution_count": k.count})
	}
	k.mu.Lock()
	k.parent = &msg.Header
	k.shown = map[string]bool{}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.parent = nil
		k.mu.Unlock()
	}()

	ok := map[string]any{"status": "ok", "execution_count": k.count, "payload": []any{}, "user_expressions": map[string]any{}}
	code := c.Code
	if strings.TrimSpace(code) == "" {
		k.reply(sock, msg, "execute_reply", ok)
		return
	}
	if strings.HasPrefix(strings.TrimSpace(code), ":") {
		// The REPL's commands, one a line.
		for _, line := range strings.Split(strings.TrimSpace(code), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			if quit := k.s.command(line); quit {
				k.s.errw.Write([]byte("a notebook's kernel is shut down from the notebook (Kernel > Shut Down), not with :quit\n"))
			}
		}
		k.reply(sock, msg, "execute_reply", ok)
		return
	}
	k.s.recordScript(code)
	v, err := k.s.cell(code)
	runs := run.TakeLoopRuns(k.s.interp)
	if err != nil {
		tb := strings.Split(strings.TrimRight(starlib.Backtrace(err), "\n"), "\n")
		ename, evalue := errorName(tb[len(tb)-1])
		content := map[string]any{"ename": ename, "evalue": evalue, "traceback": tb}
		k.publish(&msg.Header, "error", content)
		content["status"] = "error"
		content["execution_count"] = k.count
		k.reply(sock, msg, "execute_reply", content)
		return
	}
	k.s.accept(code, runs)
	if v != nil && v != starlark.None && !c.Silent {
		k.publish(&msg.Header, "execute_result", map[string]any{
			"execution_count": k.count, "data": valueBundle(v), "metadata": map[string]any{},
		})
	}
	for _, r := range runs {
		if !r.Paused && r.Log != nil && !c.Silent {
			k.publish(&msg.Header, "display_data", map[string]any{"data": logSummaryBundle(r.Log), "metadata": map[string]any{}})
		}
	}
	k.reply(sock, msg, "execute_reply", ok)
}
