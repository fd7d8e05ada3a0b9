//go:build cgo || (js && wasm)

package wgpu

import "github.com/webtensor/webtensor/hal"

func init() {
	hal.Register(hal.Backend{Name: "webgpu", Adapters: Adapters, Open: Open})
}
