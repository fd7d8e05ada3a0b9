//go:build !cgo || !linux

package mpi

import (
	"errors"
	"runtime"
)

// Without cgo (CGO_ENABLED=0, js/wasm) or off Linux, no MPI library can be
// opened: Load fails with a LoadError saying so (Unbuilt) before any of
// the calls below runs.

const canLoad = false

const noLibrary = "the MPI binding needs cgo on Linux, and this program was built for " + runtime.GOOS + "/" + runtime.GOARCH + " with CGO_ENABLED=0 or for another system"

type request struct{}

func openLibrary(string) error                            { return errors.New(noLibrary) }
func libraryVersion() string                              { return "" }
func cInit() (rank, size, code int, msg string)           { panic(noLibrary) }
func cTest(*request) (bool, int, string)                  { panic(noLibrary) }
func cIbarrier() (request, int, string)                   { panic(noLibrary) }
func cAbort(int)                                          { panic(noLibrary) }
func cFinalize() (int, string)                            { panic(noLibrary) }
func (c *Comm) run(string, hostBuffer, int) error         { return errors.New(noLibrary) }
func (c *Comm) startAllReduce(hostBuffer, *Request) error { return errors.New(noLibrary) }
