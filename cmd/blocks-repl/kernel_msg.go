package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// The Jupyter messaging protocol's wire format (version 5.3), without
// the sockets (kernel.go): a message is the routing identities, the
// delimiter "<IDS|MSG>", the HMAC-SHA256 signature of the next four
// frames in hex, the header, the parent header, the metadata and the
// content (JSON), then binary buffers.

// jupyterProtocol is the version of the messaging protocol the kernel
// speaks.
const jupyterProtocol = "5.3"

// wireDelimiter separates the routing identities from the message.
var wireDelimiter = []byte("<IDS|MSG>")

// msgHeader is a message's header (and a reply's parent header).
type msgHeader struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// jupyterMsg is one decoded message.
type jupyterMsg struct {
	Identities [][]byte
	Header     msgHeader
	// Parent is the raw parent header (a reply echoes the request's
	// header here).
	Parent   json.RawMessage
	Metadata json.RawMessage
	Content  json.RawMessage
	Buffers  [][]byte
}

// errBadSignature is a message whose signature is not the key's.
var errBadSignature = errors.New("wrong HMAC-SHA256 signature")

// maxJupyterFrame bounds each JSON frame of a message: a notebook cell is
// far smaller, and a frame larger than this is refused before it is
// parsed.
const maxJupyterFrame = 64 << 20

// signer signs and checks messages with the connection file's key.
type signer struct{ key []byte }

// sign is the hex HMAC-SHA256 of the frames.
func (s signer) sign(frames ...[]byte) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, f := range frames {
		m.Write(f)
	}
	sum := m.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// decodeMessage checks and decodes the frames of one message. The
// signature is checked before any JSON is parsed: a message signed with
// another key is refused (errBadSignature) and nothing of it is used.
func decodeMessage(s signer, frames [][]byte) (*jupyterMsg, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], wireDelimiter) {
		i++
	}
	if i == len(frames) {
		return nil, fmt.Errorf("no %s delimiter among %d frames", wireDelimiter, len(frames))
	}
	rest := frames[i+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%d frames after the delimiter, want at least 5 (signature, header, parent header, metadata, content)", len(rest))
	}
	for j, f := range rest[1:5] {
		if len(f) > maxJupyterFrame {
			return nil, fmt.Errorf("frame %d is %d bytes, more than %d", j+1, len(f), maxJupyterFrame)
		}
	}
	want := s.sign(rest[1], rest[2], rest[3], rest[4])
	if !hmac.Equal(want, bytes.ToLower(rest[0])) {
		return nil, errBadSignature
	}
	m := &jupyterMsg{Identities: frames[:i], Buffers: rest[5:]}
	if err := json.Unmarshal(rest[1], &m.Header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if m.Header.MsgType == "" {
		return nil, errors.New("header: no msg_type")
	}
	for _, p := range []struct {
		name string
		raw  []byte
		dst  *json.RawMessage
	}{{"parent header", rest[2], &m.Parent}, {"metadata", rest[3], &m.Metadata}, {"content", rest[4], &m.Content}} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(p.raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: want a JSON object: %w", p.name, err)
		}
		*p.dst = json.RawMessage(p.raw)
	}
	return m, nil
}

// encodeMessage builds the frames of a message of type msgType in reply
// to parent (nil for none), to the identities.
func encodeMessage(s signer, identities [][]byte, session, msgType string, parent *msgHeader, content any, metadata map[string]any) ([][]byte, error) {
	h := msgHeader{
		MsgID:    newMsgID(),
		Session:  session,
		Username: "kernel",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		MsgType:  msgType,
		Version:  jupyterProtocol,
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	pb := []byte("{}")
	if parent != nil {
		if pb, err = json.Marshal(parent); err != nil {
			return nil, err
		}
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	mb, err := json.Marshal(metadata)
	if err != nil {
		return nil, err
	}
	cb, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	frames := append([][]byte{}, identities...)
	frames = append(frames, wireDelimiter, s.sign(hb, pb, mb, cb), hb, pb, mb, cb)
	return frames, nil
}

// newMsgID is a random message id (a UUID's 32 hex digits).
func newMsgID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// connectionInfo is a kernel connection file (jupyter_client writes it).
type connectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// readConnectionFile reads and checks a connection file. A key is
// required: a kernel without one would run code from anyone who can
// reach its ports.
func readConnectionFile(path string) (*connectionInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c connectionInfo
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: not a Jupyter connection file: %w", path, err)
	}
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.Transport != "tcp" && c.Transport != "ipc" {
		return nil, fmt.Errorf("%s: transport %q, want tcp or ipc", path, c.Transport)
	}
	if c.SignatureScheme == "" {
		c.SignatureScheme = "hmac-sha256"
	}
	if c.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("%s: signature_scheme %q, want hmac-sha256", path, c.SignatureScheme)
	}
	if c.Key == "" {
		return nil, fmt.Errorf("%s: no key: the kernel signs and checks every message with it (an unsigned kernel would run code from anyone who reaches its ports)", path)
	}
	if c.IP == "" {
		c.IP = "127.0.0.1"
	}
	for _, p := range []struct {
		name string
		port int
	}{{"shell_port", c.ShellPort}, {"control_port", c.ControlPort}, {"iopub_port", c.IOPubPort}, {"stdin_port", c.StdinPort}, {"hb_port", c.HBPort}} {
		if c.Transport == "tcp" && (p.port <= 0 || p.port > 65535) {
			return nil, fmt.Errorf("%s: %s is %d, want a port (1-65535)", path, p.name, p.port)
		}
	}
	return &c, nil
}

// endpoint is the ZeroMQ address of a port.
func (c *connectionInfo) endpoint(port int) string {
	if c.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", c.IP, port)
	}
	return fmt.Sprintf("tcp://%s:%d", c.IP, port)
}
