//go:build cgo || (js && wasm)

package wgpu

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Oversize operands. A kernel can bind at most maxStorageBufferBindingSize
// bytes of a buffer, while a buffer may hold up to maxBufferSize. The
// elementwise kernels, Reduce and MatMul accept views that reach past the
// binding limit and run them in pieces: each piece binds a window of each
// buffer, [base, base+size) with base a multiple of
// minStorageBufferOffsetAlignment, and sees its views rebased into it
// (chunk_*.go). The other kernels refuse such views with hal.ErrTooLarge,
// and so do these where no split fits (a single matrix row of MatMul wider
// than a window, or more than maxChunkPieces pieces).
//
// Above maxBufferSize there is no buffer at all: Alloc fails with
// hal.ErrTooLarge. Spreading one tensor over several buffers would change
// every kernel's addressing, for sizes (maxBufferSize is 256 MiB at the
// least, several GiB on most GPUs) where the CPU backend is the better
// place anyway.

// Environment variables that lower a device's limits when it opens, so
// that tests (and users reproducing a small GPU) make small tensors take
// the oversize paths. Values are byte counts; they only ever lower the
// adapter's own limits.
const (
	MaxBindingEnv = "WEBTENSOR_WEBGPU_MAX_BINDING"
	MaxBufferEnv  = "WEBTENSOR_WEBGPU_MAX_BUFFER"
)

// minWindow is the smallest binding limit the overrides accept: a window
// must hold a few alignment units for pieces to make progress.
const minWindow = 4096

// maxChunkPieces bounds the dispatches one op may split into; beyond it
// (views whose every row spans most of a buffer, such as a transposed copy
// much larger than a window) the op fails with hal.ErrTooLarge rather than
// record a quarter of a million dispatches.
const maxChunkPieces = 1 << 16

// applyLimitEnv lowers l (and the Info copy) by the environment overrides.
func applyLimitEnv(l *webgpu.Limits, info *hal.Limits) error {
	for _, v := range []struct {
		env   string
		limit *uint64
		info  *uint64
	}{
		{MaxBufferEnv, &l.MaxBufferSize, &info.MaxBufferSize},
		{MaxBindingEnv, &l.MaxStorageBufferBindingSize, &info.MaxStorageBufferBindingSize},
	} {
		s := strings.TrimSpace(os.Getenv(v.env))
		if s == "" {
			continue
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n < minWindow {
			return fmt.Errorf("webgpu: %s=%q: want a byte count ≥ %d: %w", v.env, s, minWindow, hal.ErrInvalid)
		}
		*v.limit = min(*v.limit, n)
		*v.info = *v.limit
	}
	// A binding never exceeds its buffer.
	l.MaxStorageBufferBindingSize = min(l.MaxStorageBufferBindingSize, l.MaxBufferSize)
	info.MaxStorageBufferBindingSize = l.MaxStorageBufferBindingSize
	return nil
}

// viewEnd is the byte just past the last element v reaches.
func viewEnd(v hal.View) uint64 {
	return (uint64(v.Offset) + uint64(v.Span())) * uint64(v.DType.Size())
}

// withinBinding reports whether every operand lies within what one binding of its
// buffer covers, so that the op needs no windows.
func (d *Device) withinBinding(ops ...operand) bool {
	for _, o := range ops {
		if viewEnd(o.View) > d.rt.BindSize(o.alloc) {
			return false
		}
	}
	return true
}

// chunkableOperands validates views like operands, but lets them reach
// past the binding limit (up to the end of their buffer): the caller runs
// them in windows.
func (d *Device) chunkableOperands(op string, vs ...hal.View) ([]operand, error) {
	out := make([]operand, len(vs))
	for i, v := range vs {
		o, err := d.operand(op, v)
		if errors.Is(err, errBeyondBinding) {
			o, err = operand{View: v, alloc: v.Buf.(*device.Buffer).Allocation()}, nil
		}
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// errBeyondBinding marks operand's refusal of a view that reaches past the
// binding limit, the one refusal chunkableOperands overrides.
var errBeyondBinding = fmt.Errorf("larger than one binding: %w", hal.ErrTooLarge)

// tooLarge is the error of an op that cannot be split into windows.
func (d *Device) tooLarge(op, why string, views ...hal.View) error {
	var b strings.Builder
	for i, v := range views {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	return fmt.Errorf("webgpu: %s of %s on %s: %s (maxStorageBufferBindingSize %d, maxBufferSize %d): %w",
		op, b.String(), d.info.Name, why, d.limits.MaxStorageBufferBindingSize, d.limits.MaxBufferSize, hal.ErrTooLarge)
}

// chunkView is an operand as the piece planner sees it: a buffer, an
// element offset and strides over the op's common axes, and tail: elements
// every piece reaches past its last indexed one (the columns of a MatMul
// row the axes do not index).
type chunkView struct {
	alloc   *device.Allocation // never a window
	offset  int
	strides []int
	tail    int
	esize   int
}

// chunkPiece is a box of the common index space: the axes before axis
// fixed, count indices of axis from the box's start, every index of the
// axes after it. Its elements are consecutive in row-major order from
// linear index base. offsets are each view's element offset at its start.
type chunkPiece struct {
	axis, count int
	base        int64
	offsets     []int
}

// shape is the piece's shape: count, then the full axes after axis.
func (p chunkPiece) shape(full []int) []int {
	if len(full) == 0 {
		return nil // a scalar
	}
	return append([]int{p.count}, full[p.axis+1:]...)
}

// window is the byte range a piece binds of one buffer.
type window struct {
	root       *device.Allocation
	base, size int64
}

// chunker splits an index space into pieces whose every view fits a
// window of the device.
type chunker struct {
	d     *Device
	shape []int
	views []chunkView
	limit int64 // bytes one window may span
	align int64 // bind offsets are multiples of it
	out   []chunkPiece
}

func (d *Device) newChunker(shape []int, views []chunkView) *chunker {
	align := max(int64(d.limits.MinStorageBufferOffsetAlignment), 16)
	// Windows are multiples of 16 bytes, so that vec4 loads stay possible.
	limit := int64(d.limits.MaxStorageBufferBindingSize) &^ 15
	return &chunker{d: d, shape: shape, views: views, limit: limit, align: align}
}

// windows returns the window each view binds for count indices of axis
// from offsets (the views' element offsets), and whether all fit. Views
// bind windows of their own, so that two far-apart views of one buffer
// (both read-only: no kernel writes a buffer it also reads through another
// view) each fit; identical views, such as an in-place operand and its
// dst, share one.
func (c *chunker) windows(axis, count int, offsets []int) ([]window, bool) {
	ws := make([]window, len(c.views))
	ok := true
	for i, v := range c.views {
		if j := c.sameAs(i, offsets); j >= 0 {
			ws[i] = ws[j]
			continue
		}
		lo := int64(offsets[i])
		hi := lo + int64(v.tail)
		if axis < len(c.shape) {
			hi += int64(count-1) * int64(v.strides[axis])
			for a := axis + 1; a < len(c.shape); a++ {
				hi += int64(c.shape[a]-1) * int64(v.strides[a])
			}
		}
		lo, hi = lo*int64(v.esize), (hi+1)*int64(v.esize)
		base := lo - lo%c.align
		need := (hi - base + 15) &^ 15
		size := min(need, v.alloc.Capacity()-base) &^ 3
		ws[i] = window{root: v.alloc, base: base, size: size}
		ok = ok && need <= c.limit && size >= hi-base
	}
	return ws, ok
}

// sameAs is the first view before i that addresses exactly what view i
// does, or -1.
func (c *chunker) sameAs(i int, offsets []int) int {
	v := c.views[i]
	for j, w := range c.views[:i] {
		if w.alloc == v.alloc && offsets[j] == offsets[i] && w.esize == v.esize && w.tail == v.tail && slices.Equal(w.strides, v.strides) {
			return j
		}
	}
	return -1
}

// plan splits the whole index space into pieces.
func (c *chunker) plan() error {
	offsets := make([]int, len(c.views))
	for i, v := range c.views {
		offsets[i] = v.offset
	}
	if len(c.shape) == 0 {
		return c.emit(0, 1, 0, offsets)
	}
	return c.split(0, 0, offsets)
}

// errNoFit is split's failure when a single element does not fit.
var errNoFit = errors.New("a single index does not fit one window")

// split covers axis from offsets (the box's start, linear index base):
// runs of as many indices as fit, and where not even one does, each index
// split along the next axis.
func (c *chunker) split(axis int, base int64, offsets []int) error {
	extent := c.shape[axis]
	inner := int64(1) // linear indices per index of axis
	for _, s := range c.shape[axis+1:] {
		inner *= int64(s)
	}
	at := func(t int) []int {
		o := make([]int, len(offsets))
		for i, v := range c.views {
			o[i] = offsets[i] + t*v.strides[axis]
		}
		return o
	}
	for t := 0; t < extent; {
		from := at(t)
		if _, ok := c.windows(axis, 1, from); !ok {
			if axis == len(c.shape)-1 {
				return errNoFit
			}
			if err := c.split(axis+1, base+int64(t)*inner, from); err != nil {
				return err
			}
			t++
			continue
		}
		// The largest run that fits: the windows grow with the count.
		lo, hi := 1, extent-t
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if _, ok := c.windows(axis, mid, from); ok {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if err := c.emit(axis, lo, base+int64(t)*inner, from); err != nil {
			return err
		}
		t += lo
	}
	return nil
}

func (c *chunker) emit(axis, count int, base int64, offsets []int) error {
	if len(c.out) >= maxChunkPieces {
		return fmt.Errorf("more than %d pieces", maxChunkPieces)
	}
	c.out = append(c.out, chunkPiece{axis: axis, count: count, base: base, offsets: offsets})
	return nil
}

// bind returns the window of each view for piece p, as transient
// allocations (one per distinct window).
func (c *chunker) bind(p chunkPiece) []*device.Allocation {
	ws, _ := c.windows(p.axis, p.count, p.offsets)
	out := make([]*device.Allocation, len(ws))
	for i, w := range ws {
		if j := c.sameAs(i, p.offsets); j >= 0 {
			out[i] = out[j]
			continue
		}
		out[i] = w.root.Window(w.base, w.size)
	}
	return out
}

// rebase is view v's offset inside window w.
func rebase(offset int, w *device.Allocation, esize int) int {
	return offset - int(w.Base())/esize
}

// viewOf is a chunkView of operand o over strides.
func viewOf(o operand, strides []int) chunkView {
	return chunkView{alloc: o.alloc.Origin(), offset: o.Offset, strides: strides, esize: o.DType.Size()}
}
