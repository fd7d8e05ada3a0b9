package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/nn/parallel/mpi"
	"github.com/webtensor/webtensor/nn/train"
)

// TestOneProcess runs the command as one process (the build without MPI
// the tests use): it learns the digits. The MPI runs are in package
// nn/parallel/mpi's test and `make ddp`.
func TestOneProcess(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	var out bytes.Buffer
	dir := t.TempDir()
	err := run([]string{"-digits", filepath.Join("..", "..", "testdata", "digits", "digits.csv.gz"), "-epochs", "3", "-want", "0.85", "-checkpoints", dir}, &out)
	require.NoError(t, err, out.String())
	require.FileExists(t, filepath.Join(dir, train.LastFile))
	require.FileExists(t, filepath.Join(dir, train.BestFile))
	require.Contains(t, out.String(), "1 process(es) on cpu")
	require.Contains(t, out.String(), "38464 bytes per step") // 9,610 float32 gradients in buckets, 3 float64 counters
}

// TestOneBuffer: -bucket 0 all-reduces the gradients and the counters in
// one float32 buffer after the backward pass, and learns the same.
func TestOneBuffer(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	var out bytes.Buffer
	err := run([]string{"-digits", filepath.Join("..", "..", "testdata", "digits", "digits.csv.gz"), "-epochs", "3", "-want", "0.85", "-bucket", "0"}, &out)
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), "held-out accuracy 0.942  loss 0.1959") // as with buckets (TestResume, make test-mpi)
	require.Contains(t, out.String(), "38452 bytes per step")                 // 9,610 gradients and 3 counters, float32
}

// TestResume: three epochs in two runs, the second resumed from the
// first's checkpoint, end where three epochs in one run end (TestOneBuffer).
func TestResume(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	digits := filepath.Join("..", "..", "testdata", "digits", "digits.csv.gz")
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run([]string{"-digits", digits, "-epochs", "2", "-want", "0", "-checkpoints", dir}, &out), out.String())
	out.Reset()
	require.NoError(t, run([]string{"-digits", digits, "-epochs", "3", "-want", "0.85", "-checkpoints", dir, "-resume"}, &out), out.String())
	require.Contains(t, out.String(), "resumed from "+dir+" after epoch 2 (step 46)")
	require.Contains(t, out.String(), "epoch  3/3  loss 0.1959")
	require.Contains(t, out.String(), "held-out accuracy 0.942  loss 0.1959")
}

// TestCNN: -model cnn trains cmd/demo's CNN on the 8×8 digits.
func TestCNN(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	var out bytes.Buffer
	err := run([]string{"-digits", filepath.Join("..", "..", "testdata", "digits", "digits.csv.gz"), "-epochs", "3", "-want", "0.85", "-model", "cnn", "-bucket", "4096"}, &out)
	require.NoError(t, err, out.String())
}

// TestUnderMPIWithoutMPI: under mpirun, a process that cannot open Open
// MPI fails, naming what it tried and how to install it, instead of
// training alone.
func TestUnderMPIWithoutMPI(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	missing := filepath.Join(t.TempDir(), "libmpi.so.40")
	t.Setenv(mpi.LibraryEnv, missing)
	err := run([]string{"-epochs", "1"}, &bytes.Buffer{})
	require.ErrorIs(t, err, mpi.ErrUnavailable)
	require.ErrorContains(t, err, missing+": ")
	require.ErrorContains(t, err, "apt-get install libopenmpi3 openmpi-bin")
}
