package hal

import (
	"fmt"
	"sync"
)

// Backend is a registered family of devices.
type Backend struct {
	// Name selects the backend in device names ("cpu", "webgpu").
	Name string
	// Adapters lists the adapters this backend can open, in index order.
	// It returns an error wrapping ErrUnavailable, ErrLibraryNotFound or
	// ErrNoAdapter when there is nothing to open.
	Adapters func() ([]Info, error)
	// Open opens the adapter at index (an index into Adapters' result).
	Open func(index int) (Device, error)
}

var registry struct {
	sync.Mutex
	backends []Backend
}

// Register makes a backend available by name. Backends call it from init.
// Registering a name twice panics.
func Register(b Backend) {
	registry.Lock()
	defer registry.Unlock()
	for _, have := range registry.backends {
		if have.Name == b.Name {
			panic(fmt.Sprintf("hal: backend %q registered twice", b.Name))
		}
	}
	registry.backends = append(registry.backends, b)
}

// Lookup returns the backend registered under name.
func Lookup(name string) (Backend, bool) {
	registry.Lock()
	defer registry.Unlock()
	for _, b := range registry.backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Backends returns every registered backend in registration order.
func Backends() []Backend {
	registry.Lock()
	defer registry.Unlock()
	return append([]Backend(nil), registry.backends...)
}
