package parallel

import (
	"fmt"
	"unsafe"
)

// Reduce makes out the sum of the step's K microbatch vectors along the
// canonical tree, on every process of comm: parts are this process's
// microbatches [plan.Lo, plan.Hi), in order, each as long as out. parts
// are clobbered. Every process gets the same bits, and the same bits as
// one process summing all K (see the package documentation).
func Reduce[T Float](comm Comm, plan Plan, parts [][]T, out []T) error {
	if len(parts) != plan.Hi-plan.Lo {
		return fmt.Errorf("parallel: %d microbatch vectors for the block [%d, %d)", len(parts), plan.Lo, plan.Hi)
	}
	for i, p := range parts {
		if len(p) != len(out) {
			return fmt.Errorf("parallel: microbatch vector %d has %d elements, want %d", plan.Lo+i, len(p), len(out))
		}
	}
	TreeSum(parts)
	n := comm.Size()
	if n == 1 {
		copy(out, parts[0])
		return nil
	}
	if plan.N != n {
		return fmt.Errorf("parallel: a plan for %d processes used by %d", plan.N, n)
	}
	l := len(out)
	c := (l + n - 1) / n // chunk length; the last chunks are padded
	send := make([]T, n*c)
	copy(send, parts[0])
	recv := make([]T, n*c)
	if err := comm.Alltoall(asBytes(send), asBytes(recv)); err != nil {
		return fmt.Errorf("parallel: exchanging partial sums: %w", err)
	}
	chunks := make([][]T, n)
	for r := range n {
		chunks[r] = recv[r*c : (r+1)*c]
	}
	blockSum(chunks, 0, plan.K, plan.K/n)
	if err := comm.Allgather(asBytes(chunks[0]), asBytes(send)); err != nil {
		return fmt.Errorf("parallel: gathering the sums: %w", err)
	}
	copy(out, send[:l])
	return nil
}

func asBytes[T Float](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(z)))
}

// ExchangedBytes is the number of bytes one process sends in Reduce of
// vectors of l elements of size bytes each among n processes (its
// Alltoall and its Allgather; the chunk kept for itself not counted):
// 2(n-1)/n of the vector, as in a ring all-reduce.
func ExchangedBytes(l, size, n int) int {
	if n == 1 {
		return 0
	}
	c := (l + n - 1) / n
	return 2 * (n - 1) * c * size
}
