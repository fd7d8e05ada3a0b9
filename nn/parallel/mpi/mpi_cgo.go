//go:build mpi && cgo

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int wt_error_string(int code, char *buf, int cap) {
	int len = 0;
	if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) {
		snprintf(buf, cap, "MPI error %d", code);
	}
	return code;
}

static int wt_init(int *rank, int *size) {
	int provided = 0;
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int wt_iallreduce(void *buf, int n, int f64, MPI_Request *req) {
	return MPI_Iallreduce(MPI_IN_PLACE, buf, n, f64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, req);
}

static int wt_ibcast(void *buf, int n, int f64, int root, MPI_Request *req) {
	return MPI_Ibcast(buf, n, f64 ? MPI_DOUBLE : MPI_FLOAT, root, MPI_COMM_WORLD, req);
}

static int wt_ibarrier(MPI_Request *req) { return MPI_Ibarrier(MPI_COMM_WORLD, req); }

static int wt_test(MPI_Request *req, int *done) { return MPI_Test(req, done, MPI_STATUS_IGNORE); }

static void wt_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
*/
import "C"

import (
	"math"
	"time"
	"unsafe"
)

const built = true

// request is an MPI request, a C value (a pointer in Open MPI) kept in Go
// memory: C only writes it during the call it is passed to.
type request = C.MPI_Request

func errorString(code C.int) (int, string) {
	if code == C.MPI_SUCCESS {
		return 0, ""
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	C.wt_error_string(code, &buf[0], C.int(len(buf)))
	return int(code), C.GoString(&buf[0])
}

func cInit() (rank, size, code int, msg string) {
	var r, s C.int
	code, msg = errorString(C.wt_init(&r, &s))
	return int(r), int(s), code, msg
}

func cTest(req *request) (bool, int, string) {
	var done C.int
	code, msg := errorString(C.wt_test(req, &done))
	return done != 0, code, msg
}

func cIbarrier() (request, int, string) {
	var req request
	code, msg := errorString(C.wt_ibarrier(&req))
	return req, code, msg
}

func cAbort(code int) { C.wt_abort(C.int(code)) }

func cFinalize() (int, string) { return errorString(C.MPI_Finalize()) }

// staged is a C copy of a host buffer, which MPI's non-blocking calls
// may write until they complete.
type staged struct {
	mem     unsafe.Pointer
	n, size int
	f64     C.int
	b       hostBuffer
}

// stage copies b into C memory; nil (and no error) for an empty b.
func (c *Comm) stage(op string, b hostBuffer) (*staged, error) {
	s := &staged{n: len(b.f32), size: 4, b: b}
	if b.f64 != nil {
		s.n, s.size, s.f64 = len(b.f64), 8, 1
	}
	if s.n == 0 {
		return nil, nil
	}
	if s.n > math.MaxInt32 {
		return nil, &Error{Op: op, Rank: c.rank, Msg: "more than 2³¹−1 elements"}
	}
	s.mem = C.malloc(C.size_t(s.n * s.size))
	if s.mem == nil {
		return nil, &Error{Op: op, Rank: c.rank, Msg: "out of host memory"}
	}
	copy(s.c(), s.host())
	return s, nil
}

func (s *staged) c() []byte { return unsafe.Slice((*byte)(s.mem), s.n*s.size) }

func (s *staged) host() []byte {
	if s.f64 != 0 {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.b.f64))), s.n*s.size)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.b.f32))), s.n*s.size)
}

func (s *staged) copyBack() { copy(s.host(), s.c()) }
func (s *staged) free()     { C.free(s.mem) }

// run runs an all-reduce (root < 0) or a broadcast from root over a C copy
// of b, and copies the result back into b. After a timeout the copy is
// left allocated: the pending request may still write it.
func (c *Comm) run(op string, b hostBuffer, root int) error {
	s, err := c.stage(op, b)
	if s == nil {
		return err
	}
	start := func() (request, int, string) {
		var req request
		var rc C.int
		if root < 0 {
			rc = C.wt_iallreduce(s.mem, C.int(s.n), s.f64, &req)
		} else {
			rc = C.wt_ibcast(s.mem, C.int(s.n), s.f64, C.int(root), &req)
		}
		code, msg := errorString(rc)
		return req, code, msg
	}
	err = c.collective(op, start, s.copyBack)
	if e, ok := err.(*Error); !ok || !e.Timeout {
		s.free()
	}
	return err
}

// startAllReduce starts an all-reduce over a C copy of b, which the MPI
// thread then polls (pending). It runs on the MPI thread.
func (c *Comm) startAllReduce(b hostBuffer, q *Request) error {
	s, err := c.stage("AllReduce", b)
	if s == nil {
		if err == nil {
			close(q.done)
		}
		return err
	}
	req := new(request)
	if code, msg := errorString(C.wt_iallreduce(s.mem, C.int(s.n), s.f64, req)); code != 0 {
		s.free()
		return &Error{Op: "AllReduce", Rank: c.rank, Code: code, Msg: msg}
	}
	c.pending = append(c.pending, &pending{
		op: "AllReduce", req: req, began: time.Now(), q: q,
		finish: func() { s.copyBack(); s.free() },
		drop:   s.free,
	})
	return nil
}
