"""Drives the Blocks (Starlark) Jupyter kernel for blocks-repl's Go tests
(kernel_test.go) with Debian's jupyter_client and nbclient.

    driver.py notebook IN.ipynb OUT.ipynb DIR   execute IN headless (cwd DIR), write OUT
    driver.py interrupt SETUP_FILE TOTAL DIR    train, interrupt at the first print, continue
    driver.py session DIR                       completion, inspection, is_complete, errors,
                                                wrong signatures and malformed messages

The kernelspec named "blocks" is found through JUPYTER_PATH (the test
installs it). Results go to stdout as one JSON object.
"""
import json
import os
import sys
import time

import jupyter_client
import zmq


def start(cwd, stderr_path=None):
    km = jupyter_client.KernelManager(kernel_name="blocks")
    kw = {"cwd": cwd}
    if stderr_path:
        kw["stderr"] = open(stderr_path, "w")
    km.start_kernel(**kw)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def run(kc, code, on_output=None, timeout=120):
    """Executes code; returns (iopub messages of it, reply content)."""
    msg_id = kc.execute(code)
    outs = []
    deadline = time.time() + timeout
    while True:
        m = kc.get_iopub_msg(timeout=max(1, deadline - time.time()))
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t = m["msg_type"]
        if t == "status":
            if m["content"]["execution_state"] == "idle":
                break
            continue
        outs.append({"type": t, "content": m["content"]})
        if on_output:
            on_output(t, m["content"])
    return outs, shell_reply(kc, msg_id, deadline)


def shell_reply(kc, msg_id, deadline=None):
    """The shell reply to msg_id, skipping others (wait_for_ready's
    kernel_info requests may have left replies behind)."""
    deadline = deadline or time.time() + 60
    while True:
        reply = kc.get_shell_msg(timeout=max(1, deadline - time.time()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def stream_text(outs, name=None):
    return "".join(o["content"]["text"] for o in outs
                   if o["type"] == "stream" and (name is None or o["content"]["name"] == name))


def notebook(src, dst, cwd):
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(src, as_version=4)
    client = NotebookClient(nb, kernel_name="blocks", timeout=300, allow_errors=True,
                            resources={"metadata": {"path": cwd}})
    client.execute()
    nbformat.write(nb, dst)
    return {"ok": True}


def paused_before(stderr, done, total):
    """Whether a run's stderr says it paused and done ("DONE n ...")
    shows it paused before its last batch (n < total)."""
    parts = done.split()
    return ("training pauses after this batch" in stderr and len(parts) > 1 and parts[0] == "DONE"
            and parts[1].isdigit() and int(parts[1]) < int(total))


def interrupt(setup_file, total, cwd):
    km = None
    try:
        sent = []

        def on_output(t, c):
            # The first progress line: interrupt while the loop trains.
            if not sent and t == "stream" and "iterations_done" in c.get("text", ""):
                km.interrupt_kernel()
                sent.append(time.time())

        # The signal races the training: on a loaded machine the loop can
        # finish before this process gets to send it (CI saw that once).
        # Such a late signal proves nothing, so a fresh kernel (the same
        # seeds: the same model) runs the setup and is interrupted again,
        # a few times at most.
        for attempt in range(1, 6):
            if km is not None:
                km.shutdown_kernel(now=True)
            km, kc = start(cwd)
            setup, reply = run(kc, open(setup_file).read())
            assert reply["status"] == "ok", reply
            sent.clear()
            outs, reply = run(kc, "main_loop.run()", on_output)
            first = {"status": reply["status"], "stderr": stream_text(outs, "stderr"),
                     "interrupted": bool(sent), "attempts": attempt}
            outs, _ = run(kc, 'print("DONE", main_loop.status["iterations_done"], main_loop.log.current_row.get("training_finished"))')
            paused_at = stream_text(outs)
            # A pause taken after the last batch came too late as well.
            if reply["status"] != "ok" or paused_before(first["stderr"], paused_at, total):
                break
        outs, reply = run(kc, "main_loop.run()")
        second = {"status": reply["status"], "stdout": stream_text(outs), "stderr": stream_text(outs, "stderr")}
        outs, _ = run(kc, 'print("DONE", main_loop.status["iterations_done"], main_loop.log.current_row.get("training_finished"))\n'
                          'load("hashlib", "sha256")\n'
                          'print("PARAMS", sha256(mlp.children[0].W.get_value()).hexdigest(), sha256(mlp.children[-2].W.get_value()).hexdigest())')
        final = stream_text(outs)
        # interrupt_request on the control channel (interrupt_mode
        # "message") pauses the same way.
        def on_output2(t, c):
            if not sent and t == "stream" and "iterations_done" in c.get("text", ""):
                msg = kc.session.msg("interrupt_request", {})
                kc.control_channel.send(msg)
                sent.append(time.time())

        for attempt in range(1, 6):
            outs, _ = run(kc, "main_loop = MainLoop(algorithm, stream, extensions = [FinishAfter(after_n_batches = %d), Printing(every_n_batches = 20, after_epoch = False)])" % int(total))
            sent.clear()
            outs, reply = run(kc, "main_loop.run()", on_output2)
            by_message = {"status": reply["status"], "stderr": stream_text(outs, "stderr"), "attempts": attempt}
            outs, _ = run(kc, 'print("DONE", main_loop.status["iterations_done"])')
            by_message["after"] = stream_text(outs)
            if reply["status"] != "ok" or paused_before(by_message["stderr"], by_message["after"], total):
                break
        return {"first": first, "paused_at": paused_at, "second": second, "final": final, "by_message": by_message}
    finally:
        if km is not None:
            km.shutdown_kernel(now=False)


def session(cwd):
    log = os.path.join(cwd, "kernel.stderr")
    km, kc = start(cwd, log)
    res = {}
    try:
        outs, reply = run(kc, 'load("blocks.bricks", "MLP", "Rectifier", "Softmax")\n'
                              'mlp = MLP([Rectifier(), Softmax()], [4, 3, 2])\nmain_value = 42\n')
        assert reply["status"] == "ok", reply
        res["info"] = kc.kernel_info(reply=True, timeout=30)["content"]
        res["complete_global"] = kc.complete("x = main_v", reply=True, timeout=30)["content"]
        res["complete_attr"] = kc.complete("mlp.chil", reply=True, timeout=30)["content"]
        res["complete_load"] = kc.complete('load("blocks.bri', reply=True, timeout=30)["content"]
        res["inspect_call"] = kc.inspect("MLP(", 4, reply=True, timeout=30)["content"]
        res["inspect_name"] = kc.inspect("Rectifier", 3, reply=True, timeout=30)["content"]
        res["inspect_unknown"] = kc.inspect("nothing_here", 5, reply=True, timeout=30)["content"]
        for name, code in [("def", "def f(x):\n    return x"), ("bracket", "y = [1,\n 2"), ("simple", "y = 1"),
                           ("done_def", "def f(x):\n    return x\n\n"), ("invalid", "y = )")]:
            res["is_complete_" + name] = shell_reply(kc, kc.is_complete(code))
        res["comm_info"] = shell_reply(kc, kc.comm_info())
        outs, reply = run(kc, "a = 1\nb = [2]\nb[3]\n")
        res["error_reply"] = reply
        res["error_outputs"] = outs
        outs, reply = run(kc, ":type mlp\n:shape mlp")
        res["commands"] = stream_text(outs)

        # A well-formed execute_request signed with another key: it must
        # not run.
        import hmac, hashlib
        ctx = zmq.Context.instance()
        raw = ctx.socket(zmq.DEALER)
        raw.connect("%s://%s:%d" % (km.transport, km.ip, km.shell_port))
        hdr = json.dumps({"msg_id": "bad1", "session": "s", "username": "u", "date": "", "msg_type": "execute_request", "version": "5.3"}).encode()
        content = json.dumps({"code": "stolen = 1", "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False}).encode()
        frames = [hdr, b"{}", b"{}", content]
        sig = hmac.new(b"not-the-key", b"".join(frames), hashlib.sha256).hexdigest().encode()
        raw.send_multipart([b"<IDS|MSG>", sig] + frames)
        # Wait for the kernel to log that it dropped it (connections are
        # served fairly, not in the order they were made).
        deadline = time.time() + 60
        while "wrong HMAC-SHA256 signature" not in open(log).read():
            if time.time() > deadline:
                raise SystemExit("the kernel did not log the wrong signature")
            time.sleep(0.05)
        # Malformed messages straight to the shell socket: no delimiter,
        # too few frames, a valid signature over non-JSON frames.
        raw.send_multipart([b"garbage"])
        raw.send_multipart([b"<IDS|MSG>", b"00"])
        frames = [b"{not json", b"{}", b"{}", b"{}"]
        sig = hmac.new(km.session.key, b"".join(frames), hashlib.sha256).hexdigest().encode()
        raw.send_multipart([b"<IDS|MSG>", sig] + frames)
        hdr = json.dumps({"msg_id": "x", "session": "s", "username": "u", "date": "", "msg_type": "execute_request", "version": "5.3"}).encode()
        frames = [hdr, b"{}", b"{}", b"[1, 2]"]
        sig = hmac.new(km.session.key, b"".join(frames), hashlib.sha256).hexdigest().encode()
        raw.send_multipart([b"<IDS|MSG>", sig] + frames)
        # Sent after them on the same kernel: it must not see stolen.
        deadline = time.time() + 60
        while open(log).read().count("dropped a message") < 5:
            if time.time() > deadline:
                raise SystemExit("the kernel did not log the malformed messages:\n" + open(log).read())
            time.sleep(0.05)
        outs, reply = run(kc, "stolen")
        res["after_bad"] = {"reply": reply, "outputs": outs}
        # Nothing came back to the sender of the bad messages.
        res["bad_reply"] = None
        if raw.poll(0):
            res["bad_reply"] = [f.decode("utf-8", "replace") for f in raw.recv_multipart()]
        raw.close(0)
        outs, reply = run(kc, "print(main_value + 1)")
        res["alive"] = stream_text(outs)
    finally:
        km.shutdown_kernel(now=False)
    res["stderr"] = open(log).read()
    return res


def main():
    cmd = sys.argv[1]
    if cmd == "notebook":
        out = notebook(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "interrupt":
        out = interrupt(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "session":
        out = session(sys.argv[2])
    else:
        raise SystemExit("unknown command " + cmd)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
