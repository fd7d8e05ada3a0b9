//go:build cgo && linux

package mpi

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Open MPI's ABI, without its headers: every handle (MPI_Comm,
// MPI_Datatype, MPI_Op, MPI_Errhandler, MPI_Request) is a pointer, and the
// predefined ones are the addresses of exported globals (MPI_COMM_WORLD is
// &ompi_mpi_comm_world). MPICH's handles are integers instead, so the two
// cannot share a binding that is not compiled against the library's mpi.h.
typedef void* wt_handle;

enum {
	WT_MPI_SUCCESS = 0,
	WT_MPI_THREAD_FUNNELED = 1,      // MPI_THREAD_SINGLE is 0 in Open MPI's enum
	WT_MPI_MAX_ERROR_STRING = 256,   // OPAL_MAX_ERROR_STRING
	WT_MPI_MAX_LIBRARY_VERSION = 8192 // ≥ every implementation's MPI_MAX_LIBRARY_VERSION_STRING
};
#define WT_MPI_IN_PLACE ((void*)1)

// Every function the binding calls. Each is required: loading fails on the
// first one the library lacks.
#define WT_MPI_PROCS(X) \
	X(int, MPI_Init_thread, (int* argc, char*** argv, int required, int* provided)) \
	X(int, MPI_Comm_set_errhandler, (wt_handle comm, wt_handle handler)) \
	X(int, MPI_Comm_rank, (wt_handle comm, int* rank)) \
	X(int, MPI_Comm_size, (wt_handle comm, int* size)) \
	X(int, MPI_Iallreduce, (const void* send, void* recv, int n, wt_handle type, wt_handle op, wt_handle comm, wt_handle* req)) \
	X(int, MPI_Ibcast, (void* buf, int n, wt_handle type, int root, wt_handle comm, wt_handle* req)) \
	X(int, MPI_Ibarrier, (wt_handle comm, wt_handle* req)) \
	X(int, MPI_Test, (wt_handle* req, int* done, void* status)) \
	X(int, MPI_Abort, (wt_handle comm, int code)) \
	X(int, MPI_Finalize, (void)) \
	X(int, MPI_Error_string, (int code, char* buf, int* len)) \
	X(int, MPI_Get_library_version, (char* buf, int* len))

// Open MPI's predefined handles the binding uses: exported objects whose
// addresses are the handles.
#define WT_MPI_HANDLES(X) \
	X(ompi_mpi_comm_world) \
	X(ompi_mpi_float) \
	X(ompi_mpi_double) \
	X(ompi_mpi_op_sum) \
	X(ompi_mpi_errors_return)

#define WT_DECLARE_PROC(ret, name, params) ret(*name) params;
#define WT_DECLARE_HANDLE(name) wt_handle name;
static struct {
	WT_MPI_PROCS(WT_DECLARE_PROC)
	WT_MPI_HANDLES(WT_DECLARE_HANDLE)
} P;
#undef WT_DECLARE_PROC
#undef WT_DECLARE_HANDLE

static void* wt_mpi_library;

// wt_mpi_load opens path with RTLD_NOW | RTLD_GLOBAL (Open MPI's plugins,
// dlopened by libmpi, resolve libmpi's and libopen-pal's symbols from the
// global scope: RTLD_LOCAL makes MPI_Init fail) and resolves every
// function and handle. It returns 0, or 1 with the reason in why. A
// library that is not Open MPI is closed again; one MPI library stays
// loaded for the life of the process.
static int wt_mpi_load(const char* path, char* why, int cap) {
	if (wt_mpi_library != NULL) return 0;
	void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		const char* e = dlerror();
		snprintf(why, cap, "%s", e != NULL ? e : "dlopen failed");
		return 1;
	}
	if (dlsym(lib, "ompi_mpi_comm_world") == NULL) {
		// Another MPI (MPICH, Intel MPI, MVAPICH: integer handles) or no
		// MPI at all: say which, from the library itself when it can.
		int (*version)(char*, int*) = (int (*)(char*, int*))dlsym(lib, "MPI_Get_library_version");
		if (version != NULL) {
			char v[WT_MPI_MAX_LIBRARY_VERSION];
			int len = 0;
			v[0] = 0;
			version(v, &len);
			char* nl = strchr(v, '\n');
			if (nl != NULL) *nl = 0;
			snprintf(why, cap, "not Open MPI but \"%s\": the binding uses Open MPI's ABI; MPICH and its derivatives (Intel MPI, MVAPICH) are not supported", v);
		} else {
			snprintf(why, cap, "not an MPI library (no MPI_Get_library_version, no ompi_mpi_comm_world)");
		}
		dlclose(lib);
		return 1;
	}
#define WT_RESOLVE(sym)                                                   \
	if (dlsym(lib, #sym) == NULL) {                                       \
		snprintf(why, cap, "missing symbol %s (Open MPI older than 3.0?)", #sym); \
		dlclose(lib);                                                     \
		memset(&P, 0, sizeof P);                                          \
		return 1;                                                         \
	}
#define WT_RESOLVE_PROC(ret, name, params) WT_RESOLVE(name) *(void**)(&P.name) = dlsym(lib, #name);
#define WT_RESOLVE_HANDLE(name) WT_RESOLVE(name) P.name = dlsym(lib, #name);
	WT_MPI_PROCS(WT_RESOLVE_PROC)
	WT_MPI_HANDLES(WT_RESOLVE_HANDLE)
#undef WT_RESOLVE
#undef WT_RESOLVE_PROC
#undef WT_RESOLVE_HANDLE
	wt_mpi_library = lib;
	return 0;
}

static void wt_library_version(char* buf, int cap) {
	char v[WT_MPI_MAX_LIBRARY_VERSION];
	int len = 0;
	v[0] = 0;
	P.MPI_Get_library_version(v, &len);
	char* nl = strchr(v, '\n');
	if (nl != NULL) *nl = 0;
	snprintf(buf, cap, "%s", v);
}

static void wt_error_string(int code, char* buf, int cap) {
	char s[WT_MPI_MAX_ERROR_STRING + 1];
	int len = 0;
	if (P.MPI_Error_string(code, s, &len) != WT_MPI_SUCCESS) {
		snprintf(buf, cap, "MPI error %d", code);
		return;
	}
	s[len < WT_MPI_MAX_ERROR_STRING ? len : WT_MPI_MAX_ERROR_STRING] = 0;
	snprintf(buf, cap, "%s", s);
}

static int wt_init(int* rank, int* size) {
	int provided = 0;
	int rc = P.MPI_Init_thread(NULL, NULL, WT_MPI_THREAD_FUNNELED, &provided);
	if (rc != WT_MPI_SUCCESS) return rc;
	rc = P.MPI_Comm_set_errhandler(P.ompi_mpi_comm_world, P.ompi_mpi_errors_return);
	if (rc != WT_MPI_SUCCESS) return rc;
	rc = P.MPI_Comm_rank(P.ompi_mpi_comm_world, rank);
	if (rc != WT_MPI_SUCCESS) return rc;
	return P.MPI_Comm_size(P.ompi_mpi_comm_world, size);
}

static int wt_iallreduce(void* buf, int n, int f64, wt_handle* req) {
	return P.MPI_Iallreduce(WT_MPI_IN_PLACE, buf, n, f64 ? P.ompi_mpi_double : P.ompi_mpi_float, P.ompi_mpi_op_sum, P.ompi_mpi_comm_world, req);
}

static int wt_ibcast(void* buf, int n, int f64, int root, wt_handle* req) {
	return P.MPI_Ibcast(buf, n, f64 ? P.ompi_mpi_double : P.ompi_mpi_float, root, P.ompi_mpi_comm_world, req);
}

static int wt_ibarrier(wt_handle* req) { return P.MPI_Ibarrier(P.ompi_mpi_comm_world, req); }

// MPI_STATUS_IGNORE is NULL.
static int wt_test(wt_handle* req, int* done) { return P.MPI_Test(req, done, NULL); }

static void wt_abort(int code) { P.MPI_Abort(P.ompi_mpi_comm_world, code); }

static int wt_finalize(void) { return P.MPI_Finalize(); }
*/
import "C"

import (
	"errors"
	"math"
	"time"
	"unsafe"
)

// canLoad: this build can open an MPI library.
const canLoad = true

// noLibrary is unused where canLoad holds.
const noLibrary = ""

// request is an MPI request, a pointer in Open MPI's ABI, kept in Go
// memory: C writes it only during the call it is passed to.
type request = C.wt_handle

// openLibrary opens and resolves the MPI library at path (a file name the
// system loader searches, or a path).
func openLibrary(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var why [1024]C.char
	if C.wt_mpi_load(cpath, &why[0], C.int(len(why))) != 0 {
		return errors.New(C.GoString(&why[0]))
	}
	return nil
}

// libraryVersion is MPI_Get_library_version's first line; the library
// must be loaded.
func libraryVersion() string {
	var buf [512]C.char
	C.wt_library_version(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

func errorString(code C.int) (int, string) {
	if code == 0 {
		return 0, ""
	}
	var buf [C.WT_MPI_MAX_ERROR_STRING + 1]C.char
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

func cFinalize() (int, string) { return errorString(C.wt_finalize()) }

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
