//go:build cgo

package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func keypair(t *testing.T) (string, string) {
	t.Helper()
	pub, sec, err := NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	return pub, sec
}

// TestCurveAdmitsOnlyListedClients (issue 24 item 11): in the CURVE mode a
// client with a listed key reads the stream; a client with another key,
// one with the wrong server key and one without CURVE get nothing, and
// the first two are told at once.
func TestCurveAdmitsOnlyListedClients(t *testing.T) {
	serverPub, serverSec := keypair(t)
	clientPub, clientSec := keypair(t)
	otherPub, otherSec := keypair(t)
	wrongServerPub, _ := keypair(t)
	want := drainEpochs(t, mixedStream(t), 2)
	src := mixedStream(t)
	srv := serve(t, src, Options{HWM: 4, Curve: &CurveServer{SecretKey: serverSec, ClientKeys: []string{clientPub}}})

	refused := func(name string, opts ClientOptions, wantErr string) {
		t.Helper()
		opts.Port, opts.Timeout = srv.Port(), 3*time.Second
		c := must(NewServerDataStream(src.Sources(), false, opts))
		defer c.Close()
		start := time.Now()
		_, err := c.Receive()
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want %q", name, err, wantErr)
		}
		t.Logf("%s: refused after %v: %v", name, time.Since(start).Round(time.Millisecond), err)
	}
	refused("unlisted key", ClientOptions{Curve: &CurveClient{ServerKey: serverPub, PublicKey: otherPub, SecretKey: otherSec}}, "refused this client")
	// ZeroMQ reports the no-keys client's failed handshake either as a
	// protocol error (at once) or, when the server closes the connection
	// before the client reads its greeting, without detail (then after the
	// timeout, if every retry goes that way): under load both happen, and
	// both name the cause.
	refused("no CURVE", ClientOptions{}, "CURVE mode and this client gave no keys")
	refused("wrong server key", ClientOptions{Curve: &CurveClient{ServerKey: wrongServerPub, PublicKey: clientPub, SecretKey: clientSec}}, "no data from")

	c := must(NewServerDataStream(src.Sources(), false, ClientOptions{Port: srv.Port(), HWM: 4, Timeout: 10 * time.Second,
		Curve: &CurveClient{ServerKey: serverPub, PublicKey: clientPub, SecretKey: clientSec}}))
	defer c.Close()
	if got := drainEpochs(t, c, 2); !reflect.DeepEqual(got, want) {
		t.Fatal("the CURVE client's epochs differ from the in-process stream")
	}
	if c.seq.last == nil {
		t.Error("the CURVE mode sent no sequence markers")
	}
}

func TestCurveBadKeys(t *testing.T) {
	_, sec := keypair(t)
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Curve: &CurveServer{SecretKey: "short", ClientKeys: []string{}}}, "the server's secret key is not a CURVE key"},
		{Options{Curve: &CurveServer{SecretKey: sec}}, "no client keys given"},
		{Options{Curve: &CurveServer{SecretKey: sec, ClientKeys: []string{strings.Repeat(",", 40)}}}, "client key 1 is not a CURVE key"},
	} {
		c.opts.Port = -1
		srv, err := Listen(mixedStream(t), c.opts)
		if err == nil {
			srv.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// Key files: ours read by pyzmq's zmq.auth.load_certificate, pyzmq's
// create_certificates read by ReadCertificate; then a pyzmq CURVE client
// with its own certificate reads from a Go server in the CURVE mode, and
// a pyzmq client that the server does not list gets nothing.
func TestCurvePythonInterop(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	pubFile, secFile, err := WriteCertificates(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(secFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file %v %v", fi.Mode(), err)
	}
	if _, _, err := WriteCertificates(dir, "server"); err == nil {
		t.Error("WriteCertificates replaced existing files")
	}
	serverPub, serverSec, err := ReadCertificate(secFile)
	if err != nil {
		t.Fatal(err)
	}
	script := `
import sys, zmq, zmq.auth, json
d, server_pub_file, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
pub, sec = zmq.auth.load_certificate(d + "/server.key_secret")
assert zmq.auth.load_certificate(server_pub_file)[0] == pub
print(json.dumps([pub.decode(), sec.decode()]), flush=True)
if port == 0:
    zmq.auth.create_certificates(d, "client")
    zmq.auth.create_certificates(d, "stranger")
    sys.exit(0)
def read(name):
    cpub, csec = zmq.auth.load_certificate(d + "/" + name + ".key_secret")
    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    s.curve_secretkey, s.curve_publickey, s.curve_serverkey = csec, cpub, pub
    s.RCVTIMEO = 3000
    s.linger = 0
    s.connect("tcp://127.0.0.1:%d" % port)
    try:
        frames = s.recv_multipart()
        return json.loads(frames[0])
    except zmq.Again:
        return None
    finally:
        s.close()
        ctx.term()
print(json.dumps([read("client"), read("stranger")]), flush=True)
`
	out, err := exec.Command(py, "-c", script, dir, pubFile, "0").CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	if want := `["` + serverPub + `", "` + serverSec + `"]`; strings.TrimSpace(string(out)) != want {
		t.Fatalf("pyzmq read our certificate as %s, want %s", out, want)
	}
	clientKeys, err := ReadClientKeys(filepath.Join(dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	src := mixedStream(t)
	srv := serve(t, src, Options{HWM: 4, Curve: &CurveServer{SecretKey: serverSec, ClientKeys: clientKeys}})
	out, err = exec.Command(py, "-c", script, dir, pubFile, strconv.Itoa(srv.Port())).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	got := lines[len(lines)-1]
	if !strings.HasPrefix(got, `[[{"shape": [5, 3, 4], "fortran_order": false, "descr": "<f4", "seq": 0, "epoch": 1, "batch": 0, "server": "`) || !strings.HasSuffix(got, `, null]`) {
		t.Errorf("pyzmq clients (listed, stranger) got %s", got)
	}
	// Every *.key file of a directory is admitted (pyzmq's configure_curve).
	keys, err := ReadClientKeys(dir)
	if err != nil || len(keys) != 3 {
		t.Errorf("keys of the directory: %v %v", keys, err)
	}
}
