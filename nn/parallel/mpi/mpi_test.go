package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/nn/parallel/mpi"
	"github.com/webtensor/webtensor/nn/train"
	"github.com/webtensor/webtensor/tensor"
)

// The test starts itself under mpirun: the parent (no OMPI_COMM_WORLD_SIZE
// in the environment) runs mpirun on this test binary, and each rank runs
// the scenario named by WT_MPI_SCENARIO. It runs under WEBTENSOR_TEST_MPI=1
// (make test-mpi, which installs Open MPI), where a missing Open MPI is a
// failure; elsewhere it is skipped, so that make test neither needs Open
// MPI nor spends minutes of mpirun jobs.

const (
	scenarioEnv = "WT_MPI_SCENARIO"
	dirEnv      = "WT_MPI_DIR" // the fit scenario's checkpoints, rank-N below it
	testMPIEnv  = "WEBTENSOR_TEST_MPI"
)

func mpirun(t *testing.T, np int, scenario string, timeout time.Duration) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev, or make test-mpi): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--allow-run-as-root", "--oversubscribe",
		"--mca", "btl_vader_single_copy_mechanism", "none", "--mca", "opal_signal", "",
		"-np", strconv.Itoa(np), os.Args[0], "-test.run=^TestMPI$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), scenarioEnv+"="+scenario)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d (%s) did not finish within %v:\n%s", np, scenario, timeout, out)
	}
	// The ranks' subtest results (every rank prints its own), for -v.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "--- ") {
			t.Log(strings.TrimSpace(line))
		}
	}
	return string(out), err
}

func TestMPI(t *testing.T) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		rank(t, os.Getenv(scenarioEnv))
		return
	}
	if os.Getenv(testMPIEnv) != "1" {
		t.Skipf("the mpirun jobs run under %s=1 (make test-mpi)", testMPIEnv)
	}
	_, err := mpi.Load()
	require.NoError(t, err)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out, err := mpirun(t, np, "train", 2*time.Minute)
			require.NoError(t, err, out)
		})
	}
	t.Run("train.Run, np=2", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv(dirEnv, dir)
		out, err := mpirun(t, 2, "fit", 2*time.Minute)
		require.NoError(t, err, out)
		// Rank 0 alone wrote checkpoints; rank 1 resumed from them all
		// the same (ResumeDistributed broadcasts rank 0's files).
		for _, f := range []string{train.LastFile, train.LastOptimFile, train.BestFile} {
			require.FileExists(t, filepath.Join(dir, "rank-0", f))
		}
		_, err = os.Stat(filepath.Join(dir, "rank-1"))
		require.True(t, os.IsNotExist(err), "rank 1 wrote %s: %v", filepath.Join(dir, "rank-1"), err)
	})
	t.Run("timeout", func(t *testing.T) {
		out, err := mpirun(t, 2, "timeout", time.Minute)
		require.Error(t, err, out) // rank 0 aborts the job
		require.Contains(t, out, "mpi: AllReduce on rank 0: not complete after 1s")
	})
	t.Run("timeout, non-blocking", func(t *testing.T) {
		t.Setenv("WT_MPI_NONBLOCKING", "1")
		out, err := mpirun(t, 2, "timeout", time.Minute)
		require.Error(t, err, out)
		require.Contains(t, out, "mpi: AllReduce on rank 0: not complete after 1s")
	})
	t.Run("killed rank", func(t *testing.T) {
		out, err := mpirun(t, 2, "kill", time.Minute)
		require.Error(t, err, out) // mpirun ends the job, it does not hang
		require.Contains(t, out, "process rank 1")
	})
}

// rank runs one scenario as one rank of the job.
func rank(t *testing.T, scenario string) {
	comm, err := mpi.Init()
	require.NoError(t, err)
	comm.Timeout = 30 * time.Second
	require.Equal(t, os.Getenv("OMPI_COMM_WORLD_RANK"), strconv.Itoa(comm.Rank()))
	require.Equal(t, os.Getenv("OMPI_COMM_WORLD_SIZE"), strconv.Itoa(comm.Size()))
	switch scenario {
	case "train":
		collectives(t, comm)
		// Every rank runs the same subtests in the same order (a
		// collective's ranks must): the model on the CPU, then on each
		// WebGPU adapter, its gradients going through host memory to the
		// all-reduce and back.
		// Three ranks run on the CPU alone: three processes on each
		// software adapter take minutes on two cores.
		each := testdevice.ForEach
		if comm.Size() > 2 {
			each = func(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
				t.Run("cpu", func(t *testing.T) { f(t, testdevice.CPU(t)) })
			}
		}
		each(t, func(t *testing.T, dev *tensor.Device) {
			buckets := []int{0, 1, 200, parallel.DefaultBucketBytes}
			if dev.Name() != "cpu" {
				buckets = []int{0, 200} // the software adapters are slow; both paths still run
			}
			for _, bucketBytes := range buckets {
				trainDistributed(t, comm, dev, bucketBytes)
			}
		})
		require.NoError(t, comm.Finalize())
	case "fit":
		fit(t, comm)
		require.NoError(t, comm.Finalize())
	case "timeout":
		comm.Timeout = time.Second
		if comm.Rank() == 1 {
			time.Sleep(20 * time.Second) // never joins in time; the abort ends it
		}
		var err error
		if os.Getenv("WT_MPI_NONBLOCKING") != "" {
			var req parallel.Request
			req, err = comm.IAllReduceFloat32(make([]float32, 4))
			require.NoError(t, err)
			err = req.Wait()
		} else {
			err = comm.AllReduceFloat32(make([]float32, 4))
		}
		var e *mpi.Error
		if errors.As(err, &e) && e.Timeout {
			fmt.Println(err)
			require.ErrorContains(t, comm.Barrier(), "unusable")
			comm.Abort(3)
		}
		t.Fatalf("want a timeout, got %v", err)
	case "kill":
		require.NoError(t, comm.Barrier())
		if comm.Rank() == 1 {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
		}
		err := comm.AllReduceFloat64(make([]float64, 4))
		t.Fatalf("rank %d: the job went on after rank 1 was killed: %v", comm.Rank(), err)
	default:
		t.Fatalf("unknown scenario %q", scenario)
	}
}

// collectives checks all-reduce, broadcast and barrier against their
// definitions.
func collectives(t *testing.T, comm *mpi.Comm) {
	r, n := comm.Rank(), comm.Size()
	f32 := make([]float32, 5)
	f64 := make([]float64, 7)
	for i := range f32 {
		f32[i] = float32(r*10 + i)
	}
	for i := range f64 {
		f64[i] = float64(r) + float64(i)/8
	}
	require.NoError(t, comm.AllReduceFloat32(f32))
	require.NoError(t, comm.AllReduceFloat64(f64))
	for i := range f32 {
		require.Equal(t, float32(10*n*(n-1)/2+n*i), f32[i])
	}
	for i := range f64 {
		require.Equal(t, float64(n*(n-1)/2)+float64(n*i)/8, f64[i])
	}
	b := []float64{float64(r), -float64(r)}
	require.NoError(t, comm.BroadcastFloat64(b, n-1))
	require.Equal(t, []float64{float64(n - 1), -float64(n - 1)}, b)
	require.Error(t, comm.BroadcastFloat64(b, n))
	require.NoError(t, comm.Barrier())

	// Non-blocking all-reduces, with a blocking one issued after them,
	// complete with the same sums.
	a, c := make([]float32, 3), make([]float64, 1000)
	for i := range a {
		a[i] = float32(r + i)
	}
	for i := range c {
		c[i] = float64(r*i) / 4
	}
	qa, err := comm.IAllReduceFloat32(a)
	require.NoError(t, err)
	qc, err := comm.IAllReduceFloat64(c)
	require.NoError(t, err)
	d := []float64{float64(r)}
	require.NoError(t, comm.AllReduceFloat64(d))
	require.NoError(t, qc.Wait())
	require.NoError(t, qa.Wait())
	require.Equal(t, []float64{float64(n * (n - 1) / 2)}, d)
	for i := range a {
		require.Equal(t, float32(n*(n-1)/2+n*i), a[i])
	}
	for i := range c {
		require.Equal(t, float64(n*(n-1)/2*i)/4, c[i])
	}
}

// trainDistributed runs Distributed over MPI and one process on the whole batch, in
// every rank, and compares them as TestDistributedMatchesSingleProcess of
// package parallel does, with gradients all-reduced in buckets of at most
// bucketBytes during the backward pass (0: in one buffer after it).
func trainDistributed(t *testing.T, comm *mpi.Comm, dev *tensor.Device, bucketBytes int) {
	const steps, lr, n, in, hidden, classes = 4, 0.2, 11, 5, 9, 3
	newModel := func(seed uint64) nn.Module {
		gen := tensor.NewGenerator(seed)
		return nn.NewSequential(nn.NewLinear(dev, in, hidden, true, gen), nn.Tanh{}, nn.NewLinear(dev, hidden, classes, true, gen))
	}
	batch := func(step int) (*tensor.Tensor, *tensor.Tensor) {
		x := tensor.NewGenerator(uint64(step+1)).Randn(dev, n, in)
		labels := make([]int32, n)
		for i := range labels {
			labels[i] = int32((i*7 + step) % classes)
		}
		return x, tensor.FromInt32(dev, labels, n)
	}
	loss := func(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) }

	ref := newModel(7)
	defer nn.Release(ref)
	refOpt := optim.NewSGD(ref.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
	m := newModel(uint64(7 + comm.Rank())) // rank 0's weights are broadcast
	defer nn.Release(m)
	d, err := parallel.NewDistributed(m, comm)
	require.NoError(t, err)
	d.BucketBytes = bucketBytes
	opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
	for step := range steps {
		x, y := batch(step)
		xv, yv := graph.Constant(x), graph.Constant(y)
		out := ref.Forward(xv)
		l := loss(out, yv)
		require.NoError(t, graph.Backward(l))
		want, err := l.Item()
		require.NoError(t, err)
		require.NoError(t, refOpt.Step())
		refOpt.ZeroGrad()

		sh := parallel.Shards(n, comm.Size())[comm.Rank()]
		xs, ys := x.Slice(0, sh[0], sh[1], 1), y.Slice(0, sh[0], sh[1], 1)
		got, err := d.Backward(xs, ys, loss)
		require.NoError(t, err)
		require.InDelta(t, want, got, 64*0x1p-23*math.Abs(want), "step %d loss", step)
		require.NoError(t, d.Step(opt))
		for _, r := range []interface{ Release() }{xv, yv, out, l, xs, ys} {
			r.Release()
		}
	}
	refParams := ref.Parameters()
	for j, p := range m.Parameters() {
		want := testdevice.Float64s(t, refParams[j].Value.Tensor())
		got := testdevice.Float64s(t, p.Value.Tensor())
		for k := range got {
			require.InDelta(t, want[k], got[k], steps*64*0x1p-23*(math.Abs(want[k])+1), "rank %d on %s, BucketBytes %d: %s[%d]", comm.Rank(), dev.Name(), bucketBytes, p.Name, k)
		}
	}
}

// fit runs nn/train's Run with Distributed over MPI on every rank, and
// one process's Run (no MPI) beside it, and compares their parameters;
// then it resumes fresh models from rank 0's checkpoint with
// ResumeDistributed (rank 1's own directory stays empty), trains one more
// epoch, and compares with one process's uninterrupted run.
func fit(t *testing.T, comm *mpi.Comm) {
	dev := testdevice.CPU(t)
	dataset := func(n int, seed uint64) *data.Dataset {
		rng := rand.New(rand.NewPCG(seed, 3))
		d := &data.Dataset{Shape: []int{4}}
		for range n {
			c := rng.IntN(3)
			for j := range 4 {
				d.X = append(d.X, float32(rng.NormFloat64()+float64((c+j)%3)-1))
			}
			d.Y = append(d.Y, int32(c))
		}
		return d
	}
	trainSet, valSet := dataset(37, 1), dataset(11, 2)
	newModel := func(seed uint64) nn.Module {
		gen := tensor.NewGenerator(seed)
		return nn.NewSequential(nn.NewLinear(dev, 4, 7, true, gen), nn.Tanh{}, nn.NewLinear(dev, 7, 3, true, gen))
	}
	config := func(m nn.Module, opt optim.Optimizer, dir string, epochs int) train.Config {
		return train.Config{
			Model: m, Optimizer: opt, Train: trainSet, Val: valSet,
			Loss:   func(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) },
			Epochs: epochs, BatchSize: 8, Seed: 5, Silent: true,
			Checkpoints: train.Checkpoints{Dir: dir, Best: train.Monitor{Metric: "val_loss"}},
		}
	}
	sgd := func(m nn.Module) optim.Optimizer {
		return optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	}
	ctx := context.Background()
	oneProcess := func(epochs int) nn.Module {
		m := newModel(7)
		_, err := train.Run(ctx, config(m, sgd(m), t.TempDir(), epochs))
		require.NoError(t, err)
		return m
	}
	requireClose := func(want, got nn.Module, steps int, what string) {
		wp := want.Parameters()
		for j, p := range got.Parameters() {
			w := testdevice.Float64s(t, wp[j].Value.Tensor())
			g := testdevice.Float64s(t, p.Value.Tensor())
			for k := range g {
				require.InDelta(t, w[k], g[k], float64(steps)*64*0x1p-23*(math.Abs(w[k])+1), "rank %d, %s: %s[%d]", comm.Rank(), what, p.Name, k)
			}
		}
	}
	const epochs, perEpoch = 2, 5 // 37 samples in batches of 8
	dir := filepath.Join(os.Getenv(dirEnv), fmt.Sprintf("rank-%d", comm.Rank()))

	m := newModel(uint64(7 + comm.Rank())) // rank 0's weights are broadcast
	defer nn.Release(m)
	d, err := parallel.NewDistributed(m, comm)
	require.NoError(t, err)
	d.BucketBytes = 64
	opt := sgd(m)
	c := config(m, opt, dir, epochs)
	c.Distributed = d
	hist, err := train.Run(ctx, c)
	require.NoError(t, err)
	require.Len(t, hist.Epochs, epochs)
	want := oneProcess(epochs)
	defer nn.Release(want)
	requireClose(want, m, epochs*perEpoch, "train.Run")

	m2 := newModel(uint64(99 + comm.Rank()))
	defer nn.Release(m2)
	d2, err := parallel.NewDistributed(m2, comm)
	require.NoError(t, err)
	opt2 := sgd(m2)
	epoch, step, err := train.ResumeDistributed(dir, d2, opt2)
	require.NoError(t, err)
	require.Equal(t, []int{epochs, epochs * perEpoch}, []int{epoch, step})
	c = config(m2, opt2, dir, epochs+1)
	c.Distributed, c.StartEpoch, c.StartStep = d2, epoch, step
	_, err = train.Run(ctx, c)
	require.NoError(t, err)
	want3 := oneProcess(epochs + 1)
	defer nn.Release(want3)
	requireClose(want3, m2, (epochs+1)*perEpoch, "resumed")
}
