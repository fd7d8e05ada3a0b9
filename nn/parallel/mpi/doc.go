// Package mpi is a thin binding to MPI (Open MPI 4.1 as Debian ships it:
// libopenmpi3, openmpi-bin) for the distributed training of package
// nn/parallel: initialization and finalization, rank and size, in-place
// sum all-reduce (blocking, or non-blocking: IAllReduceFloat32, which the
// MPI thread polls with MPI_Test between other calls so that it progresses
// while the caller computes, under the same Timeout) and broadcast of
// float32 and float64 host buffers, and a barrier, on MPI_COMM_WORLD. A
// *Comm is a parallel.Communicator.
//
// # Loading Open MPI
//
// Nothing links against MPI: the binding opens Open MPI's libmpi at run
// time (dlopen, as backend/wgpu opens Dawn), so a plain go build with cgo
// includes MPI support, and a machine without Open MPI still builds and
// runs the program, which fails only when it tries to go distributed.
// Load (which Init calls) opens the library that WEBTENSOR_MPI_LIB names,
// else the first of libmpi.so.40 and libmpi.so that the system loader
// finds (Debian's libopenmpi3 and libopenmpi-dev), with RTLD_NOW |
// RTLD_GLOBAL: Open MPI's plugins resolve libmpi's symbols from the global
// scope and fail to load under RTLD_LOCAL. It resolves each MPI function
// the binding calls and Open MPI's predefined handles, which are the
// addresses of exported globals in Open MPI's ABI (MPI_COMM_WORLD is
// &ompi_mpi_comm_world, MPI_FLOAT &ompi_mpi_float, MPI_SUM
// &ompi_mpi_op_sum). Only Open MPI (3.0 and later) is supported: MPICH and
// its derivatives use integer handles, and a library that lacks Open MPI's
// globals is refused with its MPI_Get_library_version. A failure is a
// *LoadError (errors.Is ErrUnavailable) naming each library tried, why it
// was refused and how to install Open MPI; without cgo, or off Linux, the
// error says that instead. Processes are started by mpirun, which gives
// each its rank:
//
//	go build -o train ./cmd/mytrainer
//	mpirun -np 2 ./train                         # two processes on this machine
//	mpirun -np 16 --hostfile hosts ./train       # sixteen over the machines listed
//
// (as root, add --allow-run-as-root; in a container whose shared-memory
// transport cannot use cross-memory attach, Init already sets
// btl_vader_single_copy_mechanism to none unless the environment sets it).
//
// # Open MPI under Go
//
// Open MPI installs signal handlers without SA_ONSTACK, which crash the Go
// runtime: Init sets the MCA parameter opal_signal to "" (no handlers)
// unless OMPI_MCA_opal_signal is set. MPI is initialized with
// MPI_THREAD_FUNNELED and every MPI call runs on one goroutine locked to
// its OS thread, so a Comm may be used from any goroutine (calls are
// serialized). Errors return (MPI_ERRORS_RETURN) and become *Error values
// naming the operation, the rank and MPI's message.
//
// # Timeouts
//
// MPI collectives have no timeout: a rank that never joins one hangs the
// others. Every collective here is started non-blocking (MPI_Iallreduce,
// MPI_Ibcast, MPI_Ibarrier) and polled until Comm.Timeout; past it the call
// returns an *Error with Timeout set and the Comm refuses further calls
// (the pending request still owns its buffer), so that the program can
// report the failure and call Abort, which ends every rank. A rank that
// dies is noticed by mpirun, which ends the job.
//
// # Memory
//
// C never keeps a Go pointer: each collective copies the caller's slice
// into a buffer allocated with C.malloc, runs on that, and copies the
// result back.
package mpi
