//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/pebbe/zmq4"
)

// The Jupyter kernel (docs/jupyter.md): blocks-repl kernel
// CONNECTION_FILE runs the REPL's session (repl.go) behind the Jupyter
// messaging protocol over ZeroMQ. One goroutine owns the shell, control,
// stdin and iopub sockets: it polls them and sends what the others queue
// (ZeroMQ sockets are not safe for concurrent use); the heartbeat echoes
// on its own; the session runs the shell's requests one at a time on
// another goroutine, so that the control channel (interrupt, shutdown)
// is answered while a cell trains.

func kernelCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return badUsage(stderr, "kernel", fmt.Errorf("want CONNECTION_FILE (or install, uninstall), got %q", strings.Join(args, " ")))
	}
	conn, err := readConnectionFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel: %v\n", err)
		return 1
	}
	k, err := newKernel(conn, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel: %v\n", err)
		return 1
	}
	return k.serve()
}

// A kernelSocket names one of the sockets for the outgoing queue.
type kernelSocket int

const (
	sockShell kernelSocket = iota
	sockControl
	sockIOPub
	sockStdin
)

var kernelSocketNames = [...]string{"shell", "control", "iopub", "stdin"}

type outgoing struct {
	sock   kernelSocket
	frames [][]byte
}

type kernel struct {
	conn   *connectionInfo
	signer signer
	id     string // the kernel's session id in the headers it sends
	logw   io.Writer

	socks [4]*zmq4.Socket
	hb    *zmq4.Socket
	out   chan outgoing
	shell chan *jupyterMsg
	done  chan int // the exit status, once shut down

	s     *session
	count int // execution_count

	mu     sync.Mutex
	parent *msgHeader      // the request whose outputs are being published
	shown  map[string]bool // the displays shown in the current cell
}

func newKernel(conn *connectionInfo, logw io.Writer) (*kernel, error) {
	k := &kernel{
		conn:   conn,
		signer: signer{[]byte(conn.Key)},
		id:     newMsgID(),
		logw:   logw,
		out:    make(chan outgoing, 1024),
		shell:  make(chan *jupyterMsg, 64),
		done:   make(chan int, 1),
		shown:  map[string]bool{},
	}
	types := [...]zmq4.Type{zmq4.ROUTER, zmq4.ROUTER, zmq4.PUB, zmq4.ROUTER}
	ports := [...]int{conn.ShellPort, conn.ControlPort, conn.IOPubPort, conn.StdinPort}
	for i, t := range types {
		sock, err := zmq4.NewSocket(t)
		if err != nil {
			return nil, err
		}
		_ = sock.SetLinger(time.Second)
		if err := sock.Bind(conn.endpoint(ports[i])); err != nil {
			return nil, fmt.Errorf("%s socket on %s: %w", kernelSocketNames[i], conn.endpoint(ports[i]), err)
		}
		k.socks[i] = sock
	}
	hb, err := zmq4.NewSocket(zmq4.REP)
	if err != nil {
		return nil, err
	}
	if err := hb.Bind(conn.endpoint(conn.HBPort)); err != nil {
		return nil, fmt.Errorf("heartbeat socket on %s: %w", conn.endpoint(conn.HBPort), err)
	}
	k.hb = hb
	return k, nil
}

// serve answers requests until a shutdown_request.
func (k *kernel) serve() int {
	s, err := newKernelSession(k)
	if err != nil {
		fmt.Fprintf(k.logw, "blocks-repl kernel: %v\n", err)
		return 1
	}
	k.s = s
	// SIGINT (the notebook's Interrupt: jupyter_client signals the
	// kernel) and interrupt_request both reach the session as Ctrl-C
	// does at the prompt.
	signal.Notify(s.sigint, os.Interrupt)
	defer signal.Stop(s.sigint)

	go k.heartbeat()
	go k.runShell()
	k.publish(nil, "status", map[string]any{"execution_state": "starting"})
	return k.io()
}

// heartbeat echoes every ping.
func (k *kernel) heartbeat() {
	for {
		msg, err := k.hb.RecvMessageBytes(0)
		if err != nil {
			continue
		}
		parts := make([]any, len(msg))
		for i, p := range msg {
			parts[i] = p
		}
		_, _ = k.hb.SendMessage(parts...)
	}
}

// io is the sockets' goroutine: it receives requests (control ones are
// answered here, shell ones queued for the session) and sends what was
// queued, until shutdown.
func (k *kernel) io() int {
	poller := zmq4.NewPoller()
	for _, i := range []kernelSocket{sockShell, sockControl, sockStdin} {
		poller.Add(k.socks[i], zmq4.POLLIN)
	}
	for {
		// Send what is queued first, then wait a little for requests.
		k.flush()
		select {
		case code := <-k.done:
			k.flush()
			time.Sleep(50 * time.Millisecond) // let the last replies leave
			return code
		default:
		}
		polled, err := poller.Poll(10 * time.Millisecond)
		if err != nil {
			continue
		}
		for _, p := range polled {
			frames, err := p.Socket.RecvMessageBytes(0)
			if err != nil {
				continue
			}
			var which kernelSocket
			for i, sck := range k.socks {
				if sck == p.Socket {
					which = kernelSocket(i)
				}
			}
			msg, err := decodeMessage(k.signer, frames)
			if err != nil {
				// Never executed, never answered: logged only.
				fmt.Fprintf(k.logw, "blocks-repl kernel: dropped a message on the %s channel: %v\n", kernelSocketNames[which], err)
				continue
			}
			switch which {
			case sockControl:
				k.control(msg)
			case sockShell:
				select {
				case k.shell <- msg:
				default:
					fmt.Fprintf(k.logw, "blocks-repl kernel: dropped a %s request: %d requests are waiting\n", msg.Header.MsgType, cap(k.shell))
				}
			case sockStdin:
				// input() does not exist in Starlark: nothing asks for input.
			}
		}
	}
}

// flush sends the queued messages.
func (k *kernel) flush() {
	for {
		select {
		case o := <-k.out:
			parts := make([]any, len(o.frames))
			for i, f := range o.frames {
				parts[i] = f
			}
			if _, err := k.socks[o.sock].SendMessage(parts...); err != nil {
				fmt.Fprintf(k.logw, "blocks-repl kernel: sending on %s: %v\n", kernelSocketNames[o.sock], err)
			}
		default:
			return
		}
	}
}

// send queues a message for a socket.
func (k *kernel) send(sock kernelSocket, identities [][]byte, msgType string, parent *msgHeader, content any) {
	frames, err := encodeMessage(k.signer, identities, k.id, msgType, parent, content, nil)
	if err != nil {
		fmt.Fprintf(k.logw, "blocks-repl kernel: encoding %s: %v\n", msgType, err)
		return
	}
	k.out <- outgoing{sock, frames}
}

// publish queues an iopub message (the topic is its type).
func (k *kernel) publish(parent *msgHeader, msgType string, content any) {
	k.send(sockIOPub, [][]byte{[]byte("kernel." + k.id + "." + msgType)}, msgType, parent, content)
}

// reply answers a request on its socket, to its sender.
func (k *kernel) reply(sock kernelSocket, req *jupyterMsg, msgType string, content any) {
	k.send(sock, req.Identities, msgType, &req.Header, content)
}

// control answers the control channel at once, even while a cell runs.
func (k *kernel) control(msg *jupyterMsg) {
	switch msg.Header.MsgType {
	case "interrupt_request":
		select {
		case k.s.sigint <- os.Interrupt:
		default:
		}
		k.reply(sockControl, msg, "interrupt_reply", map[string]any{"status": "ok"})
	case "shutdown_request":
		k.shutdown(sockControl, msg)
	case "kernel_info_request":
		k.publish(&msg.Header, "status", map[string]any{"execution_state": "busy"})
		k.reply(sockControl, msg, "kernel_info_reply", kernelInfo())
		k.publish(&msg.Header, "status", map[string]any{"execution_state": "idle"})
	default:
		// Code runs from the shell channel only (this goroutine owns the
		// sockets and must not block).
		fmt.Fprintf(k.logw, "blocks-repl kernel: %s on the control channel ignored\n", msg.Header.MsgType)
	}
}

// shutdown replies and ends the kernel.
func (k *kernel) shutdown(sock kernelSocket, msg *jupyterMsg) {
	var c struct {
		Restart bool `json:"restart"`
	}
	_ = json.Unmarshal(msg.Content, &c)
	k.reply(sock, msg, "shutdown_reply", map[string]any{"status": "ok", "restart": c.Restart})
	select {
	case k.done <- 0:
	default:
	}
}

// runShell answers the shell's requests in order, each between a busy
// and an idle status.
func (k *kernel) runShell() {
	for msg := range k.shell {
		if msg.Header.MsgType == "shutdown_request" {
			k.shutdown(sockShell, msg)
			continue
		}
		k.publish(&msg.Header, "status", map[string]any{"execution_state": "busy"})
		k.answer(sockShell, msg)
		k.publish(&msg.Header, "status", map[string]any{"execution_state": "idle"})
	}
}

// answer handles one request of the shell (or control) channel.
func (k *kernel) answer(sock kernelSocket, msg *jupyterMsg) {
	switch t := msg.Header.MsgType; t {
	case "kernel_info_request":
		k.reply(sock, msg, "kernel_info_reply", kernelInfo())
	case "execute_request":
		k.execute(sock, msg)
	case "complete_request":
		k.reply(sock, msg, "complete_reply", k.s.completeReply(msg.Content))
	case "inspect_request":
		k.reply(sock, msg, "inspect_reply", k.s.inspectReply(msg.Content))
	case "is_complete_request":
		k.reply(sock, msg, "is_complete_reply", k.s.isCompleteReply(msg.Content))
	case "comm_info_request":
		k.reply(sock, msg, "comm_info_reply", map[string]any{"status": "ok", "comms": map[string]any{}})
	case "history_request":
		k.reply(sock, msg, "history_reply", map[string]any{"status": "ok", "history": []any{}})
	case "comm_open", "comm_msg", "comm_close":
		// No comms (widgets) in this kernel: a comm_open is closed at once.
		if t == "comm_open" {
			var c struct {
				CommID string `json:"comm_id"`
			}
			_ = json.Unmarshal(msg.Content, &c)
			k.publish(&msg.Header, "comm_close", map[string]any{"comm_id": c.CommID, "data": map[string]any{}})
		}
	default:
		fmt.Fprintf(k.logw, "blocks-repl kernel: unknown request %q ignored\n", t)
	}
}

// streamWriter publishes what is written to it as stream output of the
// request being answered.
type streamWriter struct {
	k    *kernel
	name string // stdout or stderr
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.k.mu.Lock()
	parent := w.k.parent
	w.k.mu.Unlock()
	if len(p) > 0 {
		w.k.publish(parent, "stream", map[string]any{"name": w.name, "text": string(bytes.ToValidUTF8(p, []byte("\uFFFD")))})
	}
	return len(p), nil
}

// display shows data as the output id: the first time in a cell as
// display_data, later as update_display_data (the Plot extension's
// image, redrawn every epoch).
func (k *kernel) display(id string, data map[string][]byte) {
	k.mu.Lock()
	parent := k.parent
	msgType := "display_data"
	if k.shown[id] {
		msgType = "update_display_data"
	}
	k.shown[id] = true
	k.mu.Unlock()
	k.publish(parent, msgType, map[string]any{
		"data":      mimeBundle(data),
		"metadata":  map[string]any{},
		"transient": map[string]any{"display_id": id},
	})
}
