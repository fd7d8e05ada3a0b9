// Command ddp trains a classifier of handwritten digits with distributed
// data parallelism (package nn/parallel over MPI): every process holds the
// model, trains on its share of each batch, and the processes' gradients
// are all-reduced before every step, so two processes reach what one
// reaches, step for step.
//
// Usage:
//
//	go build -o ddp ./cmd/ddp
//	mpirun -np 2 ./ddp [-epochs 10] [-batch 64] [-device cpu] [-checkpoints DIR [-resume]]   # as root: mpirun --allow-run-as-root
//	./ddp                                                         # one process
//	make ddp NP=2                                                 # builds and runs it under mpirun
//
// It trains a 64-128-10 perceptron on the UCI optical digits committed
// under testdata/digits (a seeded fifth held out) with nn/train's Run
// (Config.Distributed) and prints, from rank 0, each epoch's metrics and
// the final held-out accuracy, then the share of the step time spent in
// the gradient all-reduce and its bytes per step. With -checkpoints, rank
// 0 writes the last and best checkpoints there; -resume goes on from the
// last one, which rank 0 reads and every rank loads. Started
// without mpirun it runs as one process, without MPI; under mpirun it
// opens Open MPI's libmpi at run time (package nn/parallel/mpi) and fails,
// saying what it tried and how to install it, when it cannot. The exit
// status is 1 when the held-out accuracy is below -want.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ddp:", err)
		os.Exit(1)
	}
}
