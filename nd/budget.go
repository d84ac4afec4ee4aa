package nd

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
)

// The process's memory budget: the one accounting point that every array
// and buffer the program allocates goes through. New, the Recycler and
// CheckBudget (for the buffers a builtin makes itself, before make) refuse
// a size that exceeds the budget, or that the live heap plus the size
// would exceed, before allocating: the error names the budget instead of
// Go's fatal "runtime: out of memory", which no recover catches.
//
// The budget is the machine's memory unless a command sets it
// (blocks-repl's --max-memory, and the confined default of resume and
// replay): one run per process, so the budget is the process's. Go has no
// per-goroutine context that New, called from thousands of places, could
// read a run's own budget from.

// budget is the process's budget (nil: the machine's memory).
var budget atomic.Pointer[memoryBudget]

type memoryBudget struct {
	limit uint64
	what  string
}

// heapCheckBytes is the size from which an allocation is also checked
// against the live heap: reading the heap's size costs about a
// microsecond, nothing next to allocating a mebibyte.
const heapCheckBytes = 1 << 20

// SetMemoryBudget makes limit bytes (0: the machine's memory) the
// process's memory budget, named what in errors ("the run's memory budget
// (--max-memory)"). It returns a function restoring the previous budget.
func SetMemoryBudget(limit uint64, what string) (restore func()) {
	var b *memoryBudget
	if limit > 0 {
		b = &memoryBudget{limit: limit, what: what}
	}
	old := budget.Swap(b)
	return func() { budget.Store(old) }
}

// MemoryBudget is the process's memory budget and the words naming it.
func MemoryBudget() (uint64, string) {
	if b := budget.Load(); b != nil {
		return b.limit, b.what
	}
	return PhysicalMemory(), "the machine's memory"
}

// BudgetSet reports whether a command set the process's budget
// (SetMemoryBudget) rather than leaving it at the machine's memory.
func BudgetSet() bool { return budget.Load() != nil }

// HeapBytes is the size of the heap's objects now (live ones, and garbage
// not yet swept).
func HeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// OverBudget returns an error when the live heap exceeds the process's
// budget (after a collection, so garbage does not count). A script's
// thread asks it between steps: strings and lists grow in
// go.starlark.net's own code, which no array check sees.
func OverBudget() error {
	limit, what := MemoryBudget()
	if HeapBytes() <= limit {
		return nil
	}
	runtime.GC()
	if h := HeapBytes(); h > limit {
		return &BudgetError{Heap: h, Limit: limit, What: what}
	}
	return nil
}

// BudgetError is an allocation refused because the live heap would
// exceed the process's budget.
type BudgetError struct {
	// Bytes is the refused allocation (0: the heap itself is over).
	Bytes, Heap, Limit uint64
	What               string
}

func (e *BudgetError) Error() string {
	if e.Bytes == 0 {
		return fmt.Sprintf("the program's memory (%s in use) exceeds %s (%s)", FormatBytes(e.Heap), e.What, FormatBytes(e.Limit))
	}
	return fmt.Sprintf("allocating %s more (with %s in use) exceeds %s (%s)",
		FormatBytes(e.Bytes), FormatBytes(e.Heap), e.What, FormatBytes(e.Limit))
}

// CheckBudget returns an error when an array (or a Go buffer of the same
// bytes) of dtype dt and the given shape may not be allocated: its size
// overflows, exceeds the process's budget, or would take the live heap
// past it. Call it before a make whose length comes from a script, a file
// or the network; New calls it itself.
func CheckBudget(dt DType, shape []int) error {
	limit, what := MemoryBudget()
	if err := CheckAlloc(dt, shape, limit, what); err != nil {
		return err
	}
	b, _ := Bytes(dt, shape)
	return checkHeap(b, limit, what)
}

// checkHeap refuses b bytes more when the live heap plus b exceeds limit
// (after a collection).
func checkHeap(b, limit uint64, what string) error {
	if b < heapCheckBytes {
		return nil
	}
	h := HeapBytes()
	if h+b <= limit {
		return nil
	}
	runtime.GC()
	if h = HeapBytes(); h+b > limit {
		return &BudgetError{Bytes: b, Heap: h, Limit: limit, What: what}
	}
	return nil
}

// CheckBytes is CheckBudget for n bytes that are not one array: C
// buffers a library allocates for a read, a decompressed file, a table
// built row by row.
func CheckBytes(n uint64) error {
	limit, what := MemoryBudget()
	if n > limit {
		return &BudgetError{Bytes: n, Heap: HeapBytes(), Limit: limit, What: what}
	}
	return checkHeap(n, limit, what)
}
