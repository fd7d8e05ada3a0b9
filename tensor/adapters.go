package tensor

import (
	"maps"
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Adapter is one openable device of a registered backend.
type Adapter struct {
	Name string // the name to pass to Open: "cpu", "webgpu:0", …
	Info hal.Info
}

type enumeration struct {
	adapters []Adapter
	errs     map[string]error // backend name → why it listed nothing
}

// enumerate lists the backends once per process: creating a GPU instance
// to ask for adapters is slow, and the answer does not change while we run.
var enumerate = sync.OnceValue(func() enumeration {
	e := enumeration{errs: make(map[string]error)}
	for _, b := range hal.Backends() {
		infos, err := b.Adapters()
		if err != nil {
			e.errs[b.Name] = err
			continue
		}
		for i, info := range infos {
			e.adapters = append(e.adapters, Adapter{Name: deviceName(b.Name, i), Info: info})
		}
	}
	return e
})

// Adapters lists every adapter of every registered backend, in
// registration order, without opening any of them.
func Adapters() []Adapter {
	return append([]Adapter(nil), enumerate().adapters...)
}

// BackendErrors reports, per backend name, why a backend listed no
// adapters: hal.ErrLibraryNotFound when the WebGPU library is not
// installed, hal.ErrUnavailable for a build without cgo, and so on.
func BackendErrors() map[string]error {
	return maps.Clone(enumerate().errs)
}

// backendAdapters returns the adapter infos of one backend in index order.
func backendAdapters(backend string) []hal.Info {
	var infos []hal.Info
	for _, a := range enumerate().adapters {
		if b, _, _ := parseDeviceName(a.Name); b == backend {
			infos = append(infos, a.Info)
		}
	}
	return infos
}
