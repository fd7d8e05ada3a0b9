package parallel

import (
	"errors"
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// Factory builds a fresh instance of the model on dev. DataParallel calls
// it once per device and then loads every replica with the primary's state,
// so the factory need not be deterministic (a random initialization is
// overwritten), but it must build the same architecture each time.
type Factory func(dev *tensor.Device) (nn.Module, error)

// LossFunc maps a shard's output and targets to its mean loss, a
// single-element value (nn.CrossEntropy, nn.MSELoss).
type LossFunc func(output, target *graph.Value) *graph.Value

// DataParallel trains one model on several devices of one process: one
// replica per device, replica 0 (the primary) holding the parameters the
// optimizer updates. Its methods must not be called concurrently.
type DataParallel struct {
	replicas []replica
}

type replica struct {
	dev   *tensor.Device
	model nn.Module
	// params lists model's parameters, in the primary's order.
	params []nn.Named
}

// New builds a replica of the model on each device with factory and
// copies the first replica's parameters and buffers into the others, as
// DistributedDataParallel broadcasts rank 0's state when it is built. A
// device may appear more than once (two replicas sharing the CPU). Every
// replica must have the primary's state-dict names and shapes; otherwise,
// or when factory fails, New releases what it built and returns an error
// naming the device.
func New(devices []*tensor.Device, factory Factory) (*DataParallel, error) {
	if len(devices) == 0 {
		return nil, errors.New("parallel.New: no devices")
	}
	d := &DataParallel{}
	for i, dev := range devices {
		if dev == nil {
			d.Release()
			return nil, fmt.Errorf("parallel.New: device %d is nil", i)
		}
		var m nn.Module
		var err error
		if perr := catch(func() { m, err = factory(dev) }); perr != nil {
			err = perr
		}
		if err == nil && m == nil {
			err = errors.New("the factory returned a nil module")
		}
		if err == nil && i > 0 {
			if err = nn.LoadStateDict(m, nn.StateDict(d.replicas[0].model)); err != nil {
				nn.Release(m)
			}
		}
		if err != nil {
			d.Release()
			return nil, fmt.Errorf("parallel.New: replica %d on %s: %w", i, dev.Name(), err)
		}
		d.replicas = append(d.replicas, replica{dev: dev, model: m, params: m.Parameters()})
	}
	return d, nil
}

// Module returns the primary replica: build the optimizer over its
// Parameters, evaluate it, save it.
func (d *DataParallel) Module() nn.Module { return d.replicas[0].model }

// Replicas returns the replicas, the primary first, for inspection.
func (d *DataParallel) Replicas() []nn.Module {
	out := make([]nn.Module, len(d.replicas))
	for i, r := range d.replicas {
		out[i] = r.model
	}
	return out
}

// Devices returns the replicas' devices, the primary's first.
func (d *DataParallel) Devices() []*tensor.Device {
	out := make([]*tensor.Device, len(d.replicas))
	for i, r := range d.replicas {
		out[i] = r.dev
	}
	return out
}

// SetTraining sets the mode of every replica.
func (d *DataParallel) SetTraining(training bool) {
	for _, r := range d.replicas {
		r.model.SetTraining(training)
	}
}

// Release frees every replica, the primary included.
func (d *DataParallel) Release() {
	for _, r := range d.replicas {
		nn.Release(r.model)
	}
	d.replicas = nil
}

// Shards splits n samples over k replicas as evenly as possible: the first
// n mod k replicas get one more. It returns each replica's [start, end)
// along the batch axis; a replica may get an empty range when n < k.
func Shards(n, k int) [][2]int {
	out := make([][2]int, k)
	start := 0
	for i := range k {
		size := n / k
		if i < n%k {
			size++
		}
		out[i] = [2]int{start, start + size}
		start += size
	}
	return out
}

// Backward splits the batch x, y along axis 0 over the replicas (Shards),
// runs forward, loss and backward on every replica concurrently, one
// goroutine each, and adds to the primary's parameter gradients the
// average of the replicas' gradients weighted by shard size, Σᵢ (nᵢ/N)·gᵢ:
// the gradient of the mean loss over the whole batch, as one device would
// compute it, up to float32 rounding. Gradients already on the primary
// (accumulation over several batches) are kept and added to; the other
// replicas' gradients are dropped.
//
// The loss must be the mean over the shard's samples, so that weighting
// by shard size makes uneven shards exact. Backward returns the
// whole-batch loss Σᵢ (nᵢ/N)·lossᵢ as a single-element tensor on the
// primary's device, owned by the caller and not read.
//
// x and y may be on any device; each shard is copied to its replica's.
// When a replica fails (a device error, a misused op, a failed backward
// pass), Backward waits for the others, releases everything the step made,
// leaves the primary's gradients as they were and returns an error naming
// the replica and its device (all of them, joined, when several fail).
func (d *DataParallel) Backward(x, y *tensor.Tensor, loss LossFunc) (*tensor.Tensor, error) {
	if len(d.replicas) == 0 {
		return nil, errors.New("parallel.Backward: released")
	}
	if x == nil || y == nil || x.Rank() == 0 || y.Rank() == 0 {
		return nil, fmt.Errorf("parallel.Backward: want a batch of inputs and of targets, got %v and %v", x, y)
	}
	n := x.Shape()[0]
	if y.Shape()[0] != n {
		return nil, fmt.Errorf("parallel.Backward: %d inputs but %d targets (shapes %v and %v)", n, y.Shape()[0], x.Shape(), y.Shape())
	}
	if n == 0 {
		return nil, errors.New("parallel.Backward: empty batch")
	}
	primary := d.replicas[0]
	// Hold the gradients accumulated so far aside, so that the primary's
	// own backward pass starts from zero like the others'.
	prev := make([]*graph.Value, len(primary.params))
	for j, p := range primary.params {
		if g := p.Value.Grad(); g != nil {
			prev[j] = g.Detach()
			p.Value.SetGrad(nil)
		}
	}
	defer func() {
		for _, g := range prev {
			if g != nil {
				g.Release()
			}
		}
	}()
	for _, r := range d.replicas[1:] {
		nn.ZeroGrad(r.model)
	}

	shards := Shards(n, len(d.replicas))
	losses := make([]*tensor.Tensor, len(d.replicas))
	errs := make([]error, len(d.replicas))
	var wg sync.WaitGroup
	for i, r := range d.replicas {
		lo, hi := shards[i][0], shards[i][1]
		if lo == hi {
			continue
		}
		weight := float64(hi-lo) / float64(n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = catch(func() {
				losses[i] = r.shardBackward(x, y, lo, hi, weight, loss)
			})
		}()
	}
	wg.Wait()

	var failures []error
	for i, err := range errs {
		if err != nil {
			failures = append(failures, fmt.Errorf("replica %d on %s: %w", i, d.replicas[i].dev.Name(), err))
		}
	}
	var total *tensor.Tensor
	if len(failures) == 0 {
		err := catch(func() { total = d.reduce(prev, shards, n, losses) })
		if err != nil {
			failures = append(failures, err)
		}
	}
	for _, l := range losses {
		if l != nil {
			l.Release()
		}
	}
	for _, r := range d.replicas[1:] {
		nn.ZeroGrad(r.model)
	}
	if len(failures) > 0 {
		// Put the gradients back as they were before this batch.
		for j, p := range primary.params {
			p.Value.SetGrad(nil)
			if prev[j] != nil {
				p.Value.SetGrad(prev[j].Tensor().MulScalar(1))
			}
		}
		if total != nil {
			total.Release()
		}
		return nil, fmt.Errorf("parallel.Backward: %w", errors.Join(failures...))
	}
	return total, nil
}

// shardBackward runs forward, loss and backward on samples [lo, hi) and
// returns the shard's loss times weight, on the replica's device. The
// gradients stay on the replica's parameters.
func (r replica) shardBackward(x, y *tensor.Tensor, lo, hi int, weight float64, loss LossFunc) *tensor.Tensor {
	s := graph.NewScope()
	defer s.Close()
	xv := s.Use(graph.Constant(shardOn(x, lo, hi, r.dev)))
	yv := s.Use(graph.Constant(shardOn(y, lo, hi, r.dev)))
	l := loss(r.model.Forward(xv), yv)
	if l.Len() != 1 {
		panic(fmt.Errorf("the loss has %d elements (shape %v), want a scalar", l.Len(), l.Shape()))
	}
	if err := graph.Backward(l); err != nil {
		panic(err)
	}
	return l.Tensor().MulScalar(weight)
}

// shardOn copies rows [lo, hi) of t to dev.
func shardOn(t *tensor.Tensor, lo, hi int, dev *tensor.Device) *tensor.Tensor {
	view := t.Slice(0, lo, hi, 1)
	defer view.Release()
	return view.To(dev)
}

// reduce sets each primary parameter's gradient to prev + Σᵢ wᵢ·gᵢ and
// returns Σᵢ lossesᵢ (already weighted) on the primary's device.
func (d *DataParallel) reduce(prev []*graph.Value, shards [][2]int, n int, losses []*tensor.Tensor) *tensor.Tensor {
	primary := d.replicas[0]
	for j, p := range primary.params {
		var acc *tensor.Tensor
		if prev[j] != nil {
			acc = prev[j].Tensor().MulScalar(1)
		}
		for i, r := range d.replicas {
			g := r.params[j].Value.Grad()
			if g == nil || shards[i][0] == shards[i][1] {
				continue
			}
			w := float64(shards[i][1]-shards[i][0]) / float64(n)
			acc = accumulate(acc, g.Tensor().MulScalar(w), primary.dev)
		}
		p.Value.SetGrad(acc) // nil when no replica reached the parameter
	}
	var total *tensor.Tensor
	for _, l := range losses {
		if l != nil {
			total = accumulate(total, l.MulScalar(1), primary.dev)
		}
	}
	return total
}

// accumulate returns acc + t on dev, taking over both references.
func accumulate(acc, t *tensor.Tensor, dev *tensor.Device) *tensor.Tensor {
	if t.Device() != dev {
		moved := t.To(dev)
		t.Release()
		t = moved
	}
	if acc == nil {
		return t
	}
	sum := acc.Add(t)
	acc.Release()
	t.Release()
	return sum
}

// Sync copies the primary's parameters and buffers into every other
// replica: call it after each optimizer step (Step does). Buffers follow
// PyTorch DDP's broadcast_buffers: the primary's (BatchNorm running
// statistics computed from its own shard) replace the replicas'.
func (d *DataParallel) Sync() error {
	if len(d.replicas) == 0 {
		return errors.New("parallel.Sync: released")
	}
	sd := nn.StateDict(d.replicas[0].model)
	for i, r := range d.replicas[1:] {
		if err := nn.LoadStateDict(r.model, sd); err != nil {
			return fmt.Errorf("parallel.Sync: replica %d on %s: %w", i+1, r.dev.Name(), err)
		}
	}
	return nil
}

// Step runs opt (built over Module().Parameters()), drops the gradients
// and copies the updated parameters and buffers to the replicas.
func (d *DataParallel) Step(opt optim.Optimizer) error {
	if err := opt.Step(); err != nil {
		return err
	}
	opt.ZeroGrad()
	return d.Sync()
}

// catch runs f and returns what it panicked with as an error: a
// *tensor.Error from a misused op, an error a step raised, or any other
// value, so that a failing replica goroutine cannot take the process down.
func catch(f func()) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case error:
			err = r
		default:
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f()
	return nil
}
