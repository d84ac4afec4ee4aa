package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pyClient is a Fuel client written from Fuel's protocol (recv_arrays),
// independently of the Go code: it reads EPOCHS epochs from a PULL
// socket, checks that each header frame is byte for byte what Fuel's
// send_arrays would send for the arrays it decoded, and prints the
// summary (descr, shape, sha256 of the bytes) of every array as JSON.
const pyClient = `
import hashlib, json, sys
import numpy, zmq
from numpy.lib.format import header_data_from_array_1_0
from zmq.utils import jsonapi

port, epochs, hwm = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ctx = zmq.Context()
sock = ctx.socket(zmq.PULL)
sock.set_hwm(hwm)
sock.RCVTIMEO = 20000
sock.connect("tcp://localhost:%d" % port)
out = []
for _ in range(epochs):
    batches = []
    while True:
        frames = sock.recv_multipart()
        headers = json.loads(frames[0])
        if "stop" in headers:
            assert frames == [b'{"stop": true}'], frames
            break
        assert len(frames) == len(headers) + 1
        arrays = []
        for h, f in zip(headers, frames[1:]):
            a = numpy.frombuffer(f, dtype=numpy.dtype(h["descr"]))
            a.shape = h["shape"]
            if h["fortran_order"]:
                a.shape = h["shape"][::-1]
                a = a.transpose()
            arrays.append(a)
        fuel = jsonapi.dumps([header_data_from_array_1_0(a) for a in arrays])
        assert frames[0] == fuel, (frames[0], fuel)
        batches.append([[a.dtype.str, list(a.shape), hashlib.sha256(a.tobytes()).hexdigest()] for a in arrays])
    out.append(batches)
sock.close(linger=0)
json.dump(out, sys.stdout)
`

// pyServer is Fuel's start_server written from its protocol
// (send_arrays), independently of the Go code, for EPOCHS epochs of
// arrays drawn from numpy's RandomState(1234): float32, uint8, int64,
// float64, bool, int32 (0-d), a big-endian float64 and a Fortran-ordered
// float32 (which Fuel makes C-contiguous before sending). It binds a free
// loopback port and prints it, then writes the summary of what it sent
// (descr and bytes in native order) to MANIFEST.
const pyServer = `
import hashlib, json, sys
import numpy, zmq
from numpy.lib.format import header_data_from_array_1_0

epochs, hwm, manifest = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = zmq.Context()
sock = ctx.socket(zmq.PUSH)
sock.set_hwm(hwm)
port = sock.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)

def send_arrays(arrays, stop=False):
    if stop:
        sock.send_json({"stop": True})
        return
    arrays = [numpy.ascontiguousarray(numpy.array(a)) for a in arrays]
    sock.send_json([header_data_from_array_1_0(a) for a in arrays], zmq.SNDMORE)
    for a in arrays[:-1]:
        sock.send(a, zmq.SNDMORE)
    sock.send(arrays[-1])

rng = numpy.random.RandomState(1234)
out = []
for e in range(epochs):
    batches = []
    for b in range(4 + e):
        n = 3 + b
        arrays = [
            rng.standard_normal((n, 2, 3)).astype("float32"),
            rng.randint(0, 256, size=(n, 1)).astype("uint8"),
            rng.randint(-2**40, 2**40, size=(n,)).astype("int64"),
            rng.uniform(size=(n, 4)),
            rng.uniform(size=(n,)) > 0.5,
            numpy.array(rng.randint(-1000, 1000), dtype="int32"),
            rng.uniform(size=(n, 2)).astype(">f8"),
            numpy.asfortranarray(rng.uniform(size=(n, 5)).astype("float32")),
        ]
        send_arrays(arrays)
        native = [numpy.ascontiguousarray(a.astype(a.dtype.newbyteorder("="))) for a in arrays]
        batches.append([[a.dtype.str, list(a.shape), hashlib.sha256(a.tobytes()).hexdigest()] for a in native])
    send_arrays(None, stop=True)
    out.append(batches)
with open(manifest, "w") as f:
    json.dump(out, f)
sock.close(linger=20000)
ctx.term()
`

func TestPythonClientReadsGoServer(t *testing.T) {
	py := python(t)
	const epochs = 3
	want := drainEpochs(t, mixedStream(t), epochs)
	srv := serve(t, mixedStream(t), Options{HWM: 3})
	script := writeScript(t, "client.py", pyClient)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, script, strconv.Itoa(srv.Port()), strconv.Itoa(epochs), "3")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python client: %v\n%s", err, stderr.String())
	}
	var got summary
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("python client output: %v\n%s", err, stdout.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("python received\n%v\nthe stream gives\n%v", got, want)
	}
}

func TestGoClientReadsPythonServer(t *testing.T) {
	py := python(t)
	const epochs = 3
	script := writeScript(t, "server.py", pyServer)
	manifest := script + ".json"
	var stderr bytes.Buffer
	cmd := exec.Command(py, script, strconv.Itoa(epochs), "4", manifest)
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("python server gave no port: %v\n%s", err, stderr.String())
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	c := must(NewServerDataStream([]string{"f32", "u8", "i64", "f64", "b", "i32", "be", "fortran"}, false,
		ClientOptions{Port: port, HWM: 4, Timeout: 20 * time.Second}))
	defer c.Close()
	got := drainEpochs(t, c, epochs)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("python server: %v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var want summary
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("received\n%v\npython sent\n%v", got, want)
	}
	if len(got) != epochs || len(got[2]) != 6 {
		t.Errorf("got %d epochs, the last of %d batches", len(got), len(got[len(got)-1]))
	}
}
