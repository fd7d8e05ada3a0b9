package mpi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// LibraryEnv names the environment variable that gives the MPI library
// to open (a path, or a file name for the system loader) instead of
// searching for one.
const LibraryEnv = "WEBTENSOR_MPI_LIB"

// libraryNames are the file names tried, in order, when LibraryEnv is
// unset: Open MPI 3 to 5's libmpi (Debian's libopenmpi3 ships
// libmpi.so.40), then the development link (libopenmpi-dev).
var libraryNames = []string{"libmpi.so.40", "libmpi.so"}

// ErrUnavailable is what every error saying that this process cannot go
// distributed matches (errors.Is): no Open MPI library could be opened,
// or the program was built without cgo.
var ErrUnavailable = errors.New("mpi: unavailable")

// LoadError says why no MPI library could be opened: each candidate
// tried, with the reason it was refused.
type LoadError struct {
	Tried []string // "name: reason", in the order tried
	// Unbuilt says why this program cannot open any library (no cgo, not
	// Linux); Tried is then empty.
	Unbuilt string
}

func (e *LoadError) Error() string {
	if e.Unbuilt != "" {
		return "mpi: this process cannot go distributed: " + e.Unbuilt + "; rebuild it with cgo on Linux, with Open MPI 4 installed (Debian, Ubuntu: apt-get install libopenmpi3 openmpi-bin)"
	}
	return fmt.Sprintf("mpi: this process cannot go distributed: no usable Open MPI library (tried %s); install Open MPI 4 (Debian, Ubuntu: apt-get install libopenmpi3 openmpi-bin) or set %s to its libmpi.so",
		strings.Join(e.Tried, "; "), LibraryEnv)
}

// Is makes a LoadError match ErrUnavailable.
func (e *LoadError) Is(target error) bool { return target == ErrUnavailable }

var loaded struct {
	sync.Mutex
	path string // "" until a library loads
}

// Load opens the Open MPI library, once per process: the one LibraryEnv
// names, else the first of libmpi.so.40 and libmpi.so that the system
// loader finds and that is Open MPI. It returns the name it opened, or a
// *LoadError (matching ErrUnavailable) naming what was tried and how to
// install Open MPI. A failure is not remembered: a later call searches
// again. Init calls it; call it first to learn whether the process can go
// distributed without initializing MPI.
func Load() (string, error) {
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.path != "" {
		return loaded.path, nil
	}
	if !canLoad {
		return "", &LoadError{Unbuilt: noLibrary}
	}
	names := libraryNames
	if p := os.Getenv(LibraryEnv); p != "" {
		names = []string{p}
	}
	e := &LoadError{}
	for _, name := range names {
		if err := openLibrary(name); err != nil {
			e.Tried = append(e.Tried, name+": "+err.Error())
			continue
		}
		loaded.path = name
		return name, nil
	}
	return "", e
}

// LibraryVersion is the loaded library's MPI_Get_library_version ("Open
// MPI v4.1.4, package: …", first line), loading it if need be.
func LibraryVersion() (string, error) {
	if _, err := Load(); err != nil {
		return "", err
	}
	return libraryVersion(), nil
}
