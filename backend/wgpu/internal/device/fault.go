//go:build cgo || (js && wasm)

package device

import (
	"encoding/binary"

	"github.com/webtensor/webtensor/hal"
)

// The fault word lets a kernel report bad data it met (an index out of
// range) without a host round trip: the kernel writes a defined result and
// records the first fault in a small device buffer, and the next Read or
// Sync reads the buffer back and turns a fault into an error.
//
// Layout, four u32 (bind as array<atomic<u32>, 4>, read-write):
//
//	[0] fault code, 0 for none; a kernel claims it with
//	    atomicCompareExchangeWeak(&fault[0], 0u, code) and only the
//	    winner writes the other words
//	[1] the bad value (an i32, bitcast)
//	[2] the size of the axis it indexes
//	[3] the axis
const faultBytes = 16

// Fault codes, one per kernel that can fault: the FAULT_ constants of
// shaders/fault.wgsl, which TestFaultCodesMatchTheShaders keeps equal.
const (
	faultGather     = 1
	faultScatterAdd = 2
)

var faultOps = map[uint32]string{faultGather: "gather", faultScatterAdd: "scatter_add"}

// FaultWord is the fault word's allocation, which a kernel that can fault
// binds read-write.
func (d *Device) FaultWord() *Allocation { return d.fault }

// checkFault reads the fault word if a kernel that binds it ran since the
// last check, clears it, and returns the fault as an error. Worker only;
// all submitted work must be complete.
func (d *Device) checkFault() error {
	if !d.faultArmed {
		return nil
	}
	d.faultArmed = false
	staging, err := d.stagingBuffer(faultBytes)
	if err != nil {
		return err
	}
	var word [faultBytes]byte
	if err := d.native.Read(d.fault.handle, staging, word[:]); err != nil {
		return classify(err)
	}
	code := binary.LittleEndian.Uint32(word[0:])
	if code == 0 {
		return nil
	}
	d.native.WriteBuffer(d.fault.handle, 0, make([]byte, faultBytes))
	value := int32(binary.LittleEndian.Uint32(word[4:]))
	size := binary.LittleEndian.Uint32(word[8:])
	axis := binary.LittleEndian.Uint32(word[12:])
	// The element was given a defined value (0 for gather, skipped for
	// scatter_add), as hal.Device.Gather promises; the wording is
	// hal.IndexError's, the same as every backend's.
	return &hal.IndexError{Op: faultOps[code], Index: int(value), Axis: int(axis), Size: int(size)}
}
