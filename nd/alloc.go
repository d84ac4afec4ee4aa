package nd

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// SizeError is a shape refused before anything was allocated: its element
// count overflows an int, or its bytes exceed what may be allocated.
type SizeError struct {
	Shape []int
	DType DType
	// Bytes is the size the shape needs (0 when it overflows).
	Bytes uint64
	// Limit is the budget it exceeds (0 when it overflows).
	Limit uint64
	// What names the limit ("the machine's memory", "the --max-memory budget").
	What string
}

func (e *SizeError) Error() string {
	for _, d := range e.Shape {
		if d < 0 {
			return fmt.Sprintf("shape %s has a negative dimension", ShapeString(e.Shape))
		}
	}
	if e.Bytes == 0 {
		return fmt.Sprintf("shape %s has more elements than any array can hold (the element count overflows a 64-bit int)", ShapeString(e.Shape))
	}
	return fmt.Sprintf("shape %s of %s needs %s, more than %s (%s)", ShapeString(e.Shape), e.DType, FormatBytes(e.Bytes), e.What, FormatBytes(e.Limit))
}

// FormatBytes writes n in binary units (12.0 GiB).
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// PhysicalMemory is the machine's RAM in bytes (math.MaxUint64 when it
// cannot be read). No array larger than it can be allocated.
func PhysicalMemory() uint64 { return physicalMemory() }

// physicalMemory reads the machine's RAM once (a cache).
var physicalMemory = sync.OnceValue(func() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return math.MaxUint64
	}
	return uint64(si.Totalram) * uint64(si.Unit)
})

// AvailableMemory is the memory the kernel says can be allocated without
// swapping now (MemAvailable in /proc/meminfo), or PhysicalMemory when it
// cannot be read.
func AvailableMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return PhysicalMemory()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return PhysicalMemory()
}

// Bytes is the size of an array of dtype dt and the given shape, with ok
// false when the element count or the byte count overflows.
func Bytes(dt DType, shape []int) (n uint64, ok bool) {
	elems, ok := ProdChecked(shape)
	if !ok {
		return 0, false
	}
	size := dt.Size()
	if dt == Object {
		size = 8
	}
	if size > 0 && elems > math.MaxInt/size {
		return 0, false
	}
	return uint64(elems * size), true
}

// CheckAlloc returns a *SizeError when an array of dtype dt and the given
// shape cannot be allocated: its size overflows, or exceeds limit bytes
// (0: the machine's memory). Check shapes that come from scripts, files
// or the network with it before New.
func CheckAlloc(dt DType, shape []int, limit uint64, what string) error {
	b, ok := Bytes(dt, shape)
	if !ok {
		return &SizeError{Shape: append([]int(nil), shape...), DType: dt}
	}
	if limit == 0 {
		limit, what = PhysicalMemory(), "the machine's memory"
	}
	if b > limit {
		return &SizeError{Shape: append([]int(nil), shape...), DType: dt, Bytes: b, Limit: limit, What: what}
	}
	return nil
}

// NewChecked is New for a shape that comes from outside the program: an
// error instead of an overflowing or impossible allocation.
func NewChecked(dt DType, shape ...int) (*Array, error) {
	if err := CheckAlloc(dt, shape, 0, ""); err != nil {
		return nil, err
	}
	return New(dt, shape...), nil
}

// Consistent returns an error when a's data does not hold exactly the
// elements its shape says (an array built by hand with an overflowing
// shape). An array without data (a shape for planning) passes when its
// shape's element count fits an int. Code handing an array's buffer to C
// checks it first.
func (a *Array) Consistent() error {
	n, ok := ProdChecked(a.Shape)
	if !ok {
		return &SizeError{Shape: append([]int(nil), a.Shape...), DType: a.DType()}
	}
	l := dataLen(a.Data)
	if l <= 0 {
		return nil // a shape alone, for planning (its data is bound later)
	}
	if l != n {
		return fmt.Errorf("nd: array of shape %s holds %d elements, not %d", ShapeString(a.Shape), l, n)
	}
	return nil
}

func dataLen(d any) int {
	if d == nil {
		return 0
	}
	v := reflect.ValueOf(d)
	if v.Kind() != reflect.Slice {
		return -1
	}
	return v.Len()
}
