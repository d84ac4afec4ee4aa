package core

// Knobs for the external tests (fuse_test.go).
var (
	NoFuse      = &noFuse
	SerialParts = &par.serial
)
