//go:build cgo

package h5

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
)

// h5Builder is a Python (h5py) process that writes Fuel HDF5 files from
// the JSON parameters it reads, one a line, answering "ok" or the error.
const h5Builder = `
import sys, json, traceback
import h5py, numpy
for line in sys.stdin:
    try:
        p = json.loads(line)
        dt = numpy.dtype(p['dtype'])
        with h5py.File(p['path'], 'w') as f:
            rows, cols = p['rows'], p['cols']
            ext = p.get('external')
            if ext:
                with open(ext['file'], 'wb') as e:
                    e.write(bytes(range(256)) * (ext['length'] // 256) + bytes(ext['length'] % 256))
                d = f.create_dataset('features', shape=(rows, cols), dtype=dt,
                                     external=[(ext['file'], ext['offset'], ext['size'])])
            else:
                d = f.create_dataset('features', data=(numpy.arange(rows * cols) % 97).astype(dt).reshape(rows, cols))
            d.dims[0].label = p['label0']
            d.dims[1].label = 'feature'
            sources = ['features']
            if p.get('vlen') is not None:
                v = f.create_dataset('vlen', shape=(len(p['vlen']),), dtype=h5py.vlen_dtype(dt))
                for i, n in enumerate(p['vlen']):
                    v[i] = (numpy.arange(n) % 89).astype(dt)
                s = f.create_dataset('vlen_shapes', data=numpy.array(p['shapes'], dtype='int64'))
                s.make_scale('shapes')
                v.dims[0].attach_scale(s)
                sl = f.create_dataset('vlen_shape_labels', data=numpy.array([b'height', b'width'], dtype='S6'))
                sl.make_scale('shape_labels')
                v.dims[0].attach_scale(sl)
                v.dims[0].label = 'batch'
                sources.append('vlen')
            for k, val in p.get('attrs', {}).items():
                d.attrs[k] = val
            rows_ = p['split']
            arr = numpy.empty(len(rows_), dtype=numpy.dtype([
                ('split', 'a', 8), ('source', 'a', 8), ('start', numpy.int64), ('stop', numpy.int64),
                ('indices', h5py.ref_dtype), ('available', numpy.bool_), ('comment', 'a', 4)]))
            for i, r in enumerate(rows_):
                ref = h5py.Reference()
                if r[6] is not None:
                    ref = f.create_dataset('idx%d' % i, data=numpy.array(r[6], dtype='int64')).ref
                arr[i] = (r[0].encode(), r[1].encode(), r[2], r[3], ref, r[4], r[5].encode())
            f.attrs['split'] = arr
        print('ok', flush=True)
    except Exception as e:
        print('error ' + repr(e).replace('\n', ' '), flush=True)
`

// FuzzH5Files writes Fuel HDF5 files with h5py from fuzzed parameters: a
// source's shape and dtype, a split attribute whose rows have fuzzed
// names, starts, stops, index lists, availability and comments, a
// variable-length source whose shapes disagree with its rows, extra
// attributes, and external storage with fuzzed offsets and sizes. Each
// file is opened in every split it names, in memory and out of core,
// and read whole: an error or data of the shape the file declares, never
// a panic.
func FuzzH5Files(f *testing.F) {
	const py = "/usr/bin/python3" // Debian's, with python3-h5py
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		f.Skip("no h5py for /usr/bin/python3 (Debian's python3-h5py)")
	}
	f.Add(uint8(4), uint8(3), uint8(0), "train", int64(0), int64(3), "valid", int64(3), int64(4), true, "", []byte{}, []byte{}, uint16(0), uint16(0), uint16(0), uint16(0), "batch")
	f.Add(uint8(4), uint8(3), uint8(1), "train", int64(0), int64(4), "test", int64(0), int64(0), true, "x", []byte{3, 1}, []byte{2, 3, 4, 5}, uint16(0), uint16(0), uint16(0), uint16(0), "batch")
	f.Add(uint8(2), uint8(2), uint8(2), "train", int64(0), int64(2), "test", int64(1), int64(2), false, "", []byte{}, []byte{1, 2}, uint16(0), uint16(64), uint16(8), uint16(32), "batch")
	f.Add(uint8(3), uint8(1), uint8(0), "all", int64(-1), int64(1<<40), "part", int64(2), int64(1), true, "", []byte{255}, []byte{0, 0, 9}, uint16(0), uint16(16), uint16(100), uint16(3), "")
	var (
		cmd *exec.Cmd
		in  io.WriteCloser
		out *bufio.Reader
	)
	f.Cleanup(func() {
		if cmd != nil {
			in.Close()
			_ = cmd.Wait()
		}
	})
	dir := f.TempDir()
	count := 0
	f.Fuzz(func(t *testing.T, rows, cols, dtype uint8, s1 string, start1, stop1 int64, s2 string, start2, stop2 int64,
		avail bool, comment string, indices, vlen []byte, attrs, extLen, extOff, extSize uint16, label0 string) {
		if cmd == nil {
			cmd = exec.Command(py, "-c", h5Builder)
			var err error
			if in, err = cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			pipe, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out = bufio.NewReader(pipe)
		}
		rows, cols = rows%16, cols%8+1
		count++
		path := filepath.Join(dir, fmt.Sprintf("f%d.hdf5", count%4))
		p := map[string]any{"path": path, "rows": int(rows), "cols": int(cols), "label0": label0,
			"dtype": []string{"uint8", "float32", "int64", "int16"}[dtype%4]}
		var idx []int64
		for _, b := range indices {
			idx = append(idx, int64(int8(b)))
		}
		row := func(split string, start, stop int64, withIdx bool) []any {
			var ix any
			if withIdx && len(idx) > 0 {
				ix = idx
			}
			return []any{split, "features", start, stop, avail, comment, ix}
		}
		split := []any{row(s1, start1, stop1, false), row(s2, start2, stop2, true)}
		if len(vlen) > 0 {
			var lens []int
			var shapes [][]int64
			for i, b := range vlen {
				lens = append(lens, int(b%32))
				shapes = append(shapes, []int64{int64(int8(b)), int64(i%3) + 1})
			}
			p["vlen"], p["shapes"] = lens, shapes
			split = append(split, []any{s1, "vlen", start1, stop1, avail, comment, nil})
		}
		p["split"] = split
		if attrs%2 == 1 {
			p["attrs"] = map[string]any{"split": "not a table", "shapes": []int{int(attrs)}}
		}
		if extLen > 0 {
			p["external"] = map[string]any{"file": filepath.Join(dir, "ext.bin"), "length": int(extLen), "offset": int(extOff), "size": int(extSize) + int(rows)*int(cols)*8}
		}
		line, err := json.Marshal(p)
		if err != nil {
			return // a string that JSON cannot carry
		}
		if _, err := fmt.Fprintf(in, "%s\n", line); err != nil {
			t.Fatal(err)
		}
		ans, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ans, "ok") {
			return // h5py refused the parameters
		}
		sp, err := ReadSplit(path)
		if err != nil {
			return
		}
		for _, name := range sp.Splits() {
			for _, inMem := range []bool{false, true} {
				d, err := Open(path, []string{name}, Options{LoadInMemory: inMem})
				if err != nil {
					continue
				}
				n := d.NumExamples()
				data, err := d.GetData(fuel.Request{Start: 0, Stop: n})
				if err == nil {
					for i, a := range data {
						if a.NDim() == 0 || a.Shape[0] != n {
							t.Errorf("split %s: source %d has shape %v for %d examples", name, i, a.Shape, n)
						}
					}
				}
				d.Close()
			}
		}
	})
}
