package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The kernel's pure parts, without sockets or Jupyter.

func TestInputStatus(t *testing.T) {
	for code, want := range map[string]string{
		"x = 1":                          "complete",
		"x = 1\ny = 2\n":                 "complete",
		"def f(x):\n    return x":        "incomplete",
		"def f(x):\n    return x\n\n":    "complete",
		"x = [1,\n 2":                    "incomplete",
		"x = (1,\n 2)\nif x:":            "incomplete",
		"x = )":                          "invalid",
		"":                               "complete",
		"for i in range(3):\n  print(i)": "incomplete",
	} {
		if got := inputStatus(code); got != want {
			t.Errorf("inputStatus(%q) = %s, want %s", code, got, want)
		}
	}
}

func TestNameAt(t *testing.T) {
	for _, c := range []struct {
		code string
		off  int
		want string
	}{
		{"MLP(", 4, "MLP"},
		{"MLP", 2, "MLP"},
		{"x = mlp.children", 10, "mlp.children"},
		{"f(a, Rectifier(), ", 18, "f"},
		{"Rectifier(x", 11, "x"},
		{"  ", 1, ""},
	} {
		if got := nameAt(c.code, c.off); got != c.want {
			t.Errorf("nameAt(%q, %d) = %q, want %q", c.code, c.off, got, c.want)
		}
	}
}

func TestErrorName(t *testing.T) {
	for last, want := range map[string][2]string{
		"Error: index 3 out of range":      {"Error", "index 3 out of range"},
		"Error in append: got 2 arguments": {"Error in append", "got 2 arguments"},
		"<cell>:1:1: undefined: missing":   {"Error", "<cell>:1:1: undefined: missing"},
		"interrupted (Ctrl-C)":             {"Error", "interrupted (Ctrl-C)"},
	} {
		n, v := errorName(last)
		if n != want[0] || v != want[1] {
			t.Errorf("errorName(%q) = %q, %q, want %q, %q", last, n, v, want[0], want[1])
		}
	}
}

// A cell's last expression is its value; its errors keep the cell's line
// numbers; the session keeps what the cell defined.
func TestSessionCell(t *testing.T) {
	var out, errb bytes.Buffer
	s, err := newSession(&out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.cell("a = 20\nb = 1\na + b + 1\n")
	if err != nil || v.String() != "22" {
		t.Fatalf("cell value %v, %v; want 22", v, err)
	}
	if v, err := s.cell("a = 1; a"); err != nil || v.String() != "None" {
		t.Errorf("one line of two statements: %v, %v; want None (as the REPL)", v, err)
	}
	_, err = s.cell("c = 1\n\nc + missing\n")
	if err == nil || !strings.Contains(err.Error(), "<cell>:3:5") {
		t.Errorf("the error %v does not name the cell's line 3", err)
	}
}

func TestNotebookScriptOrderAndErrors(t *testing.T) {
	nb := `{"nbformat": 4, "metadata": {"language_info": {"name": "starlark"}}, "cells": [
	 {"cell_type": "code", "execution_count": 3, "source": ["b = a + 1\n"], "outputs": []},
	 {"cell_type": "markdown", "source": "text"},
	 {"cell_type": "code", "execution_count": 1, "source": "a = 1", "outputs": []},
	 {"cell_type": "code", "execution_count": 2, "source": "oops", "outputs": [{"output_type": "error"}]},
	 {"cell_type": "code", "execution_count": null, "source": "never = 1", "outputs": []},
	 {"cell_type": "code", "execution_count": 4, "source": ":help MLP\n:type b", "outputs": []}]}`
	got, err := notebookScript("nb.ipynb", []byte(nb))
	if err != nil {
		t.Fatal(err)
	}
	want := "\n# In[1]:\na = 1\n\n# In[3]:\nb = a + 1\n\n# In[4]:\n# :help MLP\n# :type b\n"
	if !strings.HasSuffix(got, want) || strings.Contains(got, "oops") || strings.Contains(got, "never") {
		t.Errorf("nbexport:\n%s\nwant it to end with:\n%s", got, want)
	}
	for _, bad := range []string{`{"nbformat": 3, "cells": []}`, `not json`, `{"nbformat": 4, "metadata": {"language_info": {"name": "python"}}, "cells": []}`} {
		if _, err := notebookScript("x.ipynb", []byte(bad)); err == nil {
			t.Errorf("nbexport accepted %s", bad)
		}
	}
}

func TestConnectionFileNeedsAKey(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"nokey.json":  `{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 1, "control_port": 2, "iopub_port": 3, "stdin_port": 4, "hb_port": 5, "key": "", "signature_scheme": "hmac-sha256"}`,
		"md5.json":    `{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 1, "control_port": 2, "iopub_port": 3, "stdin_port": 4, "hb_port": 5, "key": "k", "signature_scheme": "hmac-md5"}`,
		"noport.json": `{"transport": "tcp", "ip": "127.0.0.1", "key": "k"}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := readConnectionFile(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	code, _, errs := runBinary(t, "", "kernel", filepath.Join(dir, "nokey.json"))
	if code != 1 || !strings.Contains(errs, "no key") {
		t.Errorf("kernel with a keyless connection file: exit %d, %q", code, errs)
	}
}
