// Package server is Fuel's data server: a stream served over ZeroMQ from
// one process (Serve, Fuel's start_server) and read in another
// (ServerDataStream, Fuel's fuel.streams.ServerDataStream), so that
// preprocessing runs outside the training process, or on another machine.
//
// The wire protocol is Fuel's, byte for byte, so either end can be Python
// Fuel (fuel/server.py send_arrays and recv_arrays):
//
//   - a ZeroMQ PUSH socket (the server, which binds) feeds a PULL socket
//     (the client, which connects); both set their high-water mark (HWM)
//     to hwm, as pyzmq's set_hwm does;
//   - a batch is one multipart message: first a JSON list of the arrays'
//     numpy .npy headers, [{"shape": [256, 784], "fortran_order": false,
//     "descr": "<f4"}, ...] (json.dumps's spacing, numpy's key order), then
//     one frame per source holding the array's raw C-order bytes;
//   - the single frame {"stop": true} ends an epoch; the server then
//     starts the next epoch of its stream by itself.
//
// Faults: the client waits at most its Timeout for a message and then
// fails with an error naming the address (Fuel's client would wait
// forever); ZeroMQ reconnects by itself to a server restarted within that
// time, and the batches then continue from the new server's first epoch.
// A malformed message (bad JSON, an unknown dtype, a frame whose size
// disagrees with its header, a frame count that disagrees with the
// headers or with the stream's sources) is an error that says what came.
// A slow consumer throttles the server: once HWM messages are queued at
// each end (plus what the kernel's socket buffers hold), the server's send
// blocks, so its memory stays bounded.
//
// The server binds the loopback address (127.0.0.1) unless told
// otherwise; Fuel's bound every interface.
package server
