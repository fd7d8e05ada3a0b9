//go:build cgo

package webgpu

/*
#include "query.h"
*/
import "C"

import "errors"

// UsageQueryResolve is the usage of a buffer that queries resolve into.
const UsageQueryResolve = uint64(C.WT_BUFFER_USAGE_QUERY_RESOLVE)

// QuerySet is a set of timestamp queries; the zero QuerySet is none.
type QuerySet struct{ c C.WGPUQuerySet }

// CreateTimestampQuerySet creates count timestamp queries. The device must
// have been created with timestamp-query; a library without the query
// entry points gives an error.
func (d *Device) CreateTimestampQuerySet(count uint32) (QuerySet, error) {
	if C.wt_query_available() == 0 {
		return QuerySet{}, errors.New("webgpu: the library has no timestamp-query entry points")
	}
	s := C.wt_query_set_create(d.c, C.uint32_t(count))
	if s == nil {
		return QuerySet{}, errors.New("webgpu: creating a timestamp query set failed")
	}
	return QuerySet{s}, nil
}

// Release destroys the query set.
func (q QuerySet) Release() { C.wt_query_set_release(q.c) }

// BeginTimedPass opens a compute pass that writes a timestamp into q at
// index begin when it starts and at index end when it ends.
func (e Encoder) BeginTimedPass(q QuerySet, begin, end uint32) Pass {
	return Pass{C.wt_pass_begin_timed(e.c, q.c, C.uint32_t(begin), C.uint32_t(end))}
}

// Resolve records the resolution of queries [first, first+count) of q into
// dst at offset (a multiple of 256): one uint64 per query, in nanoseconds.
func (e Encoder) Resolve(q QuerySet, first, count uint32, dst Buffer, offset uint64) {
	C.wt_encoder_resolve(e.c, q.c, C.uint32_t(first), C.uint32_t(count), dst.c, C.uint64_t(offset))
}
