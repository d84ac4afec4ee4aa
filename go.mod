module github.com/blocks-go/blocks

go 1.26.8

require (
	github.com/creack/pty v1.1.24
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
	golang.org/x/sys v0.42.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/hdf5 v0.0.0-20210714002203-8c5d23bc6946
	gonum.org/v1/netlib v0.0.0-20220323200511-14de99971b2d
)
