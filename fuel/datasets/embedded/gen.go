//go:build ignore

// gen.go writes EmbeddedMNIST's files: the first 5000 training and the
// first 1000 test examples of MNIST, as gzipped idx files. Run it from
// this directory with the directory holding the four standard MNIST files
// (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
// t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz):
//
//	go run gen.go -src ../../../../shared/data/mnist
//
// Each output is its input's idx file with the example count in the
// header set to the new count and the data cut after that many examples,
// compressed by compress/gzip at BestCompression with an empty header (no
// name, zero time), so the output depends only on the input data.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
)

var counts = map[string]int{
	"train-images-idx3-ubyte": 5000,
	"train-labels-idx1-ubyte": 5000,
	"t10k-images-idx3-ubyte":  1000,
	"t10k-labels-idx1-ubyte":  1000,
}

func main() {
	src := flag.String("src", "", "directory holding the four MNIST .gz files")
	out := flag.String("out", ".", "directory to write the subset files to")
	flag.Parse()
	if *src == "" {
		log.Fatal("give -src")
	}
	for base, n := range counts {
		if err := cut(filepath.Join(*src, base+".gz"), filepath.Join(*out, base+".gz"), n); err != nil {
			log.Fatal(err)
		}
	}
}

func cut(in, out string, n int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(raw) < 4 || raw[0] != 0 || raw[1] != 0 || raw[2] != 0x08 {
		return fmt.Errorf("%s: not a ubyte idx file", in)
	}
	ndim := int(raw[3])
	head := 4 + 4*ndim
	if len(raw) < head {
		return fmt.Errorf("%s: truncated header", in)
	}
	total := int(binary.BigEndian.Uint32(raw[4:]))
	row := 1
	for i := 1; i < ndim; i++ {
		row *= int(binary.BigEndian.Uint32(raw[4+4*i:]))
	}
	if n > total || len(raw) != head+total*row {
		return fmt.Errorf("%s: %d examples of %d bytes in %d bytes; cannot take %d", in, total, row, len(raw)-head, n)
	}
	sub := bytes.Clone(raw[:head+n*row])
	binary.BigEndian.PutUint32(sub[4:], uint32(n))

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(sub); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
