//go:build cgo

package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"
)

// The CURVE mode: an authenticated, encrypted server.
//
// Fuel's protocol has no authentication: any process that can reach the
// port takes batches. With ZeroMQ's CURVE mechanism (RFC 26, built into
// libzmq) the server has a key pair, each client has its own, and the
// server admits only the clients whose public keys it was given; the
// messages are encrypted. A client must also know the server's public
// key. A client without an admitted key, or without CURVE, gets nothing:
// its handshake is refused (ZeroMQ's authenticator, ZAP, answers 400) and
// ServerDataStream says so at once.
//
// Keys are the Z85 text of ZeroMQ (40 characters). Key files are those
// of pyzmq's zmq.auth (create_certificates / load_certificate, the CZMQ
// certificate format): NAME.key holds the public key, NAME.key_secret
// both, so Python Fuel peers can use the same files.

// zapDomain is the ZAP domain the server's socket asks its authenticator
// about.
const zapDomain = "fuel"

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Decode decodes Z85 text (ZeroMQ's RFC 32); ok is false for text that
// is not Z85.
func z85Decode(s string) (out []byte, ok bool) {
	if len(s)%5 != 0 {
		return nil, false
	}
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for _, c := range []byte(s[i : i+5]) {
			d := strings.IndexByte(z85Alphabet, c)
			if d < 0 {
				return nil, false
			}
			v = v*85 + uint64(d)
		}
		if v > 0xffffffff {
			return nil, false
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, true
}

// checkKey reports whether k is a Z85 CURVE key.
func checkKey(what, k string) error {
	if b, ok := z85Decode(k); !ok || len(b) != 32 {
		return fmt.Errorf("%s is not a CURVE key (40 characters of Z85 text): %q", what, clipString(k))
	}
	return nil
}

func clipString(s string) string {
	if len(s) > 48 {
		return s[:48] + "..."
	}
	return s
}

// startCurve makes sock a CURVE server and starts its authenticator (a
// ZAP handler in the socket's own ZeroMQ context, so no state is shared
// between servers). The returned channel is closed once the authenticator
// has stopped, which it does when the context is terminated.
func startCurve(zctx *zmq.Context, sock *zmq.Socket, c *CurveServer) (chan struct{}, error) {
	if err := checkKey("the server's secret key", c.SecretKey); err != nil {
		return nil, err
	}
	if len(c.ClientKeys) == 0 {
		return nil, errors.New("CURVE: no client keys given, so no client could connect")
	}
	allowed := map[string]bool{}
	for i, k := range c.ClientKeys {
		if err := checkKey(fmt.Sprintf("client key %d", i+1), k); err != nil {
			return nil, err
		}
		b, _ := z85Decode(k)
		allowed[string(b)] = true
	}
	handler, err := zctx.NewSocket(zmq.REP)
	if err == nil {
		err = handler.SetLinger(0)
	}
	if err == nil {
		err = handler.Bind("inproc://zeromq.zap.01")
	}
	if err != nil {
		if handler != nil {
			handler.Close()
		}
		return nil, fmt.Errorf("CURVE authenticator: %w", err)
	}
	err = sock.SetCurveServer(1)
	if err == nil {
		err = sock.SetCurveSecretkey(c.SecretKey)
	}
	if err == nil {
		err = sock.SetZapDomain(zapDomain)
	}
	if err != nil {
		handler.Close()
		return nil, fmt.Errorf("CURVE: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer handler.Close()
		for {
			msg, err := handler.RecvMessageBytes(0)
			if err != nil {
				return // the context was terminated
			}
			// ZAP 1.0 (RFC 27): version, request id, domain, address,
			// identity, mechanism, credentials.
			status, text := "400", "NO ACCESS"
			if len(msg) >= 7 && string(msg[0]) == "1.0" && string(msg[5]) == "CURVE" && allowed[string(msg[6])] {
				status, text = "200", "OK"
			}
			id := []byte{}
			if len(msg) > 1 {
				id = msg[1]
			}
			if _, err := handler.SendMessage("1.0", id, status, text, "", ""); err != nil {
				return
			}
		}
	}()
	return done, nil
}

// setCurveClient makes sock a CURVE client.
func setCurveClient(sock *zmq.Socket, c *CurveClient) error {
	for _, k := range []struct{ what, key string }{
		{"the server's public key", c.ServerKey}, {"the client's public key", c.PublicKey}, {"the client's secret key", c.SecretKey},
	} {
		if err := checkKey(k.what, k.key); err != nil {
			return err
		}
	}
	if pub, err := zmq.AuthCurvePublic(c.SecretKey); err == nil && pub != c.PublicKey {
		return errors.New("CURVE: the client's public key is not that of its secret key")
	}
	err := sock.SetCurveServerkey(c.ServerKey)
	if err == nil {
		err = sock.SetCurvePublickey(c.PublicKey)
	}
	if err == nil {
		err = sock.SetCurveSecretkey(c.SecretKey)
	}
	return err
}

// NewCurveKeypair draws a CURVE key pair (libzmq's zmq_curve_keypair).
func NewCurveKeypair() (public, secret string, err error) {
	public, secret, err = zmq.NewCurveKeypair()
	if err != nil {
		return "", "", fmt.Errorf("CURVE: making a key pair: %w", err)
	}
	return public, secret, nil
}

// WriteCertificates writes a new key pair as pyzmq's
// zmq.auth.create_certificates does: DIR/NAME.key with the public key
// (0644) and DIR/NAME.key_secret with both (0600). It refuses to replace
// existing files. It returns the two paths.
func WriteCertificates(dir, name string) (publicFile, secretFile string, err error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return "", "", fmt.Errorf("CURVE: certificate name %q must be a plain file name", name)
	}
	public, secret, err := NewCurveKeypair()
	if err != nil {
		return "", "", err
	}
	publicFile = filepath.Join(dir, name+".key")
	secretFile = filepath.Join(dir, name+".key_secret")
	stamp := time.Now().UTC().Format("2006-01-02 15:04:05")
	write := func(path, kind string, mode os.FileMode, keys string) error {
		text := "#   ****  Generated on " + stamp + " by blocks-repl fuel keygen  ****\n" +
			"#   ZeroMQ CURVE " + kind + " Certificate\n" +
			"#   Exchange securely, or use a secure mechanism to verify the contents\n" +
			"#   of this file after exchange. Store public certificates in your home\n" +
			"#   directory, in the .curve subdirectory.\n\n" +
			"metadata\ncurve\n" + keys
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return fmt.Errorf("CURVE: %w", err)
		}
		if _, err := f.WriteString(text); err != nil {
			f.Close()
			return fmt.Errorf("CURVE: writing %s: %w", path, err)
		}
		return f.Close()
	}
	if err := write(publicFile, "Public", 0o644, "    public-key = \""+public+"\"\n"); err != nil {
		return "", "", err
	}
	if err := write(secretFile, "**Secret**", 0o600, "    public-key = \""+public+"\"\n    secret-key = \""+secret+"\"\n"); err != nil {
		os.Remove(publicFile)
		return "", "", err
	}
	return publicFile, secretFile, nil
}

// ReadCertificate reads a key file in pyzmq's zmq.auth format (also
// written by WriteCertificates): its public key, and its secret key when
// the file holds one ("" otherwise).
//
// The file must be a regular file of at most 64 KiB (a key symlinked to
// /dev/zero is not read without end, a FIFO does not block the server),
// and a file holding a secret key must not be readable by every user.
func ReadCertificate(path string) (public, secret string, err error) {
	// O_NONBLOCK: opening a FIFO does not wait for a writer (it is
	// refused below); a regular file reads as without it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", "", fmt.Errorf("CURVE: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("CURVE: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("CURVE: %s is %s, not a key file", path, fileKind(st.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", "", fmt.Errorf("CURVE: %w", err)
	}
	if len(b) > maxKeyFile {
		return "", "", fmt.Errorf("CURVE: %s is larger than %d KiB, not a key file", path, maxKeyFile>>10)
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		value = strings.Trim(strings.TrimSpace(value), `"`)
		switch strings.TrimSpace(key) {
		case "public-key":
			public = value
		case "secret-key":
			secret = value
		}
	}
	if public == "" {
		return "", "", fmt.Errorf("CURVE: %s has no public-key line (want a key file as pyzmq's zmq.auth.create_certificates or blocks-repl fuel keygen writes)", path)
	}
	if err := checkKey(path+": public-key", public); err != nil {
		return "", "", err
	}
	if secret != "" {
		if perm := st.Mode().Perm(); perm&0o004 != 0 {
			return "", "", fmt.Errorf("CURVE: %s holds a secret key, and every user of this machine can read it (mode %04o): anyone could act as its owner; make it private (chmod 600 %s)", path, perm, path)
		}
		if err := checkKey(path+": secret-key", secret); err != nil {
			return "", "", err
		}
		if pub, err := zmq.AuthCurvePublic(secret); err == nil && pub != public {
			return "", "", fmt.Errorf("CURVE: %s: the public key is not that of the secret key", path)
		}
	}
	return public, secret, nil
}

// maxKeyFile is the most bytes a key file may hold.
const maxKeyFile = 64 << 10

// fileKind names what a file that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// ReadClientKeys reads the public keys of the admitted clients: every
// *.key file in a directory (as pyzmq's zmq.auth configure_curve
// location), or one key file.
func ReadClientKeys(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("CURVE: client keys: %w", err)
	}
	files := []string{path}
	if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.key"))
		if err != nil {
			return nil, fmt.Errorf("CURVE: client keys: %w", err)
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("CURVE: %s holds no *.key file: no client could connect", path)
		}
	}
	var keys []string
	for _, f := range files {
		public, _, err := ReadCertificate(f)
		if err != nil {
			return nil, err
		}
		keys = append(keys, public)
	}
	return keys, nil
}
