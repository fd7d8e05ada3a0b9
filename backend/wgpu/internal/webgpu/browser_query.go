//go:build js && wasm

package webgpu

// UsageQueryResolve is GPUBufferUsage.QUERY_RESOLVE.
const UsageQueryResolve = uint64(0x200)

// QuerySet is a GPUQuerySet of timestamp queries; the zero QuerySet is none.
type QuerySet struct{ h *handle }

// CreateTimestampQuerySet creates count timestamp queries. The device must
// have been created with timestamp-query.
func (d *Device) CreateTimestampQuerySet(count uint32) (QuerySet, error) {
	d.pushScopes()
	q := d.c.Call("createQuerySet", map[string]any{"type": "timestamp", "count": count})
	if err := d.popScopes(); err != nil {
		q.Call("destroy")
		return QuerySet{}, err
	}
	return QuerySet{&handle{q}}, nil
}

// Release destroys the query set.
func (q QuerySet) Release() {
	if q.h != nil {
		q.h.v.Call("destroy")
	}
}

// BeginTimedPass opens a compute pass that writes a timestamp into q at
// index begin when it starts and at index end when it ends.
func (e Encoder) BeginTimedPass(q QuerySet, begin, end uint32) Pass {
	return Pass{&handle{e.h.v.Call("beginComputePass", map[string]any{
		"timestampWrites": map[string]any{"querySet": q.h.v, "beginningOfPassWriteIndex": begin, "endOfPassWriteIndex": end},
	})}}
}

// Resolve records the resolution of queries [first, first+count) of q into
// dst at offset (a multiple of 256): one uint64 per query, in nanoseconds.
func (e Encoder) Resolve(q QuerySet, first, count uint32, dst Buffer, offset uint64) {
	e.h.v.Call("resolveQuerySet", q.h.v, first, count, dst.value(), float64(offset))
}
