package parallel

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// Communicator is the collective layer Distributed runs on: a group of
// Size processes (or goroutines) that call the same collectives in the
// same order. *mpi.Comm (package nn/parallel/mpi) is one; NewLocalGroup
// gives in-process ones.
type Communicator interface {
	Rank() int
	Size() int
	// AllReduceFloat32 and AllReduceFloat64 replace buf on every rank by
	// the elementwise sum over the ranks.
	AllReduceFloat32(buf []float32) error
	AllReduceFloat64(buf []float64) error
	// IAllReduceFloat32 and IAllReduceFloat64 start the same all-reduce
	// and return at once: buf must not be touched until the Request's
	// Wait has returned. Collectives, blocking or not, complete in the
	// order they were started, which must be the same on every rank.
	IAllReduceFloat32(buf []float32) (Request, error)
	IAllReduceFloat64(buf []float64) (Request, error)
	// BroadcastFloat64 replaces buf on every rank by root's.
	BroadcastFloat64(buf []float64, root int) error
}

// Request is a non-blocking collective in flight.
type Request interface {
	// Wait returns when the collective has completed (or failed).
	Wait() error
}

// Distributed is distributed data parallelism, as PyTorch's
// DistributedDataParallel: each rank of a Communicator holds the whole
// model, trains on its own shard of each batch, and the ranks' gradients
// are summed weighted by shard size before every optimizer step, so that
// every rank takes the step that one process would take on the whole
// batch. Its methods must not be called concurrently.
type Distributed struct {
	// BucketBytes caps the gradient buckets Backward all-reduces while
	// the backward pass is still running (see Backward); 0 or less
	// all-reduces every gradient in one buffer after the pass.
	// NewDistributed sets DefaultBucketBytes.
	BucketBytes int

	buckets   []*bucket // bucketsFor(bucketCap)
	bucketCap int

	model  nn.Module
	comm   Communicator
	dev    *tensor.Device
	params []nn.Named
}

// NewDistributed wraps m, whose parameters all live on one device, and
// replaces every rank's parameters and buffers by rank 0's (a collective:
// every rank must call it), as DDP does when it is built.
func NewDistributed(m nn.Module, comm Communicator) (*Distributed, error) {
	ps := m.Parameters()
	if len(ps) == 0 {
		return nil, errors.New("parallel.NewDistributed: the module has no parameters")
	}
	d := &Distributed{BucketBytes: DefaultBucketBytes, model: m, comm: comm, dev: ps[0].Value.Device(), params: ps}
	for _, p := range ps {
		if p.Value.Device() != d.dev {
			return nil, fmt.Errorf("parallel.NewDistributed: parameter %s is on %s, %s on %s", p.Name, p.Value.Device().Name(), ps[0].Name, d.dev.Name())
		}
	}
	if err := d.broadcast(append(m.Parameters(), m.Buffers()...)); err != nil {
		return nil, fmt.Errorf("parallel.NewDistributed: rank %d: %w", comm.Rank(), err)
	}
	return d, nil
}

// Module returns the wrapped model: build the optimizer over its
// Parameters.
func (d *Distributed) Module() nn.Module { return d.model }

// Communicator is the group d runs on, for the caller's own collectives
// (nn/train sums its epoch counts and shares rank 0's metrics over it).
func (d *Distributed) Communicator() Communicator { return d.comm }

// broadcast replaces the values of state by rank 0's, through one float64
// host buffer (exact for every dtype's values, integers below 2⁵³
// included).
func (d *Distributed) broadcast(state []nn.Named) error {
	if len(state) == 0 {
		return nil
	}
	var host []float64
	for _, n := range state {
		vs, err := n.Value.Float64s()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		host = append(host, vs...)
	}
	if err := d.comm.BroadcastFloat64(host, 0); err != nil {
		return err
	}
	if d.comm.Rank() == 0 {
		return nil
	}
	cpu, err := tensor.Open("cpu")
	if err != nil {
		return err
	}
	sd := make(map[string]*tensor.Tensor, len(state))
	defer func() {
		for _, t := range sd {
			t.Release()
		}
	}()
	err = catch(func() {
		off := 0
		for _, n := range state {
			k := n.Value.Len()
			t := tensor.FromFloat64(cpu, host[off:off+k], n.Value.Shape()...)
			off += k
			if n.Value.DType() != tensor.Float64 {
				c := t.Cast(n.Value.DType())
				t.Release()
				t = c
			}
			sd[n.Name] = t
		}
	})
	if err != nil {
		return err
	}
	// Parameters and buffers together are the whole state dict, so the
	// strict load applies; a subset (buffers alone) is set one by one.
	if len(sd) == len(nn.StateDict(d.model)) {
		return nn.LoadStateDict(d.model, sd)
	}
	for _, n := range state {
		var t *tensor.Tensor
		if err := catch(func() { t = sd[n.Name].To(n.Value.Device()) }); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		n.Value.SetTensor(t)
	}
	return nil
}

// Backward runs forward, loss and backward on this rank's shard x, y
// (copied to the model's device where they are elsewhere), then sums
// nᵣ·gᵣ and nᵣ over the ranks in one all-reduce and sets every
// parameter's gradient to Σ nᵣ·gᵣ / Σ nᵣ: the gradient of the mean loss
// over the whole batch. The loss must be the mean over the shard; shards
// may differ in size, and a rank may have an empty one (x nil). It returns
// the whole batch's mean loss, the same on every rank.
//
// With BucketBytes > 0 (the default) the gradients are all-reduced in
// buckets of at most BucketBytes, parameters in reverse order, each
// started (non-blocking) as soon as the backward pass has made its last
// gradient ready (graph's OnGradReady), so that communication overlaps
// the rest of the pass, as PyTorch's DDP; the result is the same as with
// BucketBytes 0, which sends one buffer after the pass.
//
// Backward is a collective: every rank must call it. The parameters must
// have no gradient before (Step drops them). A rank whose step fails
// still joins the all-reduce, with a failure flag, so that every rank
// returns an error (the failing rank its own, naming its rank) instead of
// waiting forever; the gradients are then dropped.
func (d *Distributed) Backward(x, y *tensor.Tensor, loss LossFunc) (float64, error) {
	if d.BucketBytes > 0 {
		return d.bucketedBackward(x, y, loss)
	}
	rank := d.comm.Rank()
	var n int
	var localLoss float64
	// Every failure before the all-reduce becomes localErr, so that this
	// rank still joins it and the others do not wait forever.
	localErr := catch(func() {
		for _, p := range d.params {
			if p.Value.Grad() != nil {
				panic(fmt.Errorf("%s already has a gradient (call Step, or ZeroGrad, first)", p.Name))
			}
		}
		if x == nil {
			return
		}
		n = x.Shape()[0]
		if n == 0 {
			return
		}
		localLoss = d.shardBackward(x, y, loss)
	})

	// One buffer: the gradients times n, then n, n·loss and the failure
	// flag. Float32 unless a parameter is Float64; n stays exact in
	// float32 below 2²⁴ samples.
	total := 0
	wide := false
	for _, p := range d.params {
		total += p.Value.Len()
		wide = wide || p.Value.DType() == tensor.Float64
	}
	buf := make([]float64, total+3)
	if localErr == nil && n > 0 {
		localErr = d.gatherGrads(buf[:total], float64(n))
		buf[total], buf[total+1] = float64(n), float64(n)*localLoss
	}
	if localErr != nil {
		clear(buf)
		buf[total+2] = 1
	}
	if err := d.allReduce(buf, wide); err != nil {
		nn.ZeroGrad(d.model)
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, err)
	}
	nn.ZeroGrad(d.model)
	switch failed := int(buf[total+2]); {
	case localErr != nil:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, localErr)
	case failed > 0:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %d of %d ranks failed this step", rank, failed, d.comm.Size())
	case buf[total] == 0:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: every shard is empty", rank)
	}
	samples := buf[total]
	err := catch(func() {
		off := 0
		for _, p := range d.params {
			k := p.Value.Len()
			g := make([]float64, k)
			for i, v := range buf[off : off+k] {
				g[i] = v / samples
			}
			off += k
			p.Value.SetGrad(onDevice(g, p.Value))
		}
	})
	if err != nil {
		nn.ZeroGrad(d.model)
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, err)
	}
	return buf[total+1] / samples, nil
}

// shardBackward runs the local forward and backward pass and returns the
// shard's loss.
func (d *Distributed) shardBackward(x, y *tensor.Tensor, loss LossFunc) float64 {
	s := graph.NewScope()
	defer s.Close()
	// To copies even onto the model's own device, so the scope may
	// release the copies.
	xv := s.Use(graph.Constant(x.To(d.dev)))
	yv := s.Use(graph.Constant(y.To(d.dev)))
	l := loss(d.model.Forward(xv), yv)
	if l.Len() != 1 {
		panic(fmt.Errorf("the loss has %d elements (shape %v), want a scalar", l.Len(), l.Shape()))
	}
	if err := graph.Backward(l); err != nil {
		panic(err)
	}
	v, err := l.Item()
	if err != nil {
		panic(err)
	}
	return v
}

// gatherGrads writes every parameter's gradient times n into buf (zeros
// for a parameter the loss did not reach).
func (d *Distributed) gatherGrads(buf []float64, n float64) error {
	off := 0
	for _, p := range d.params {
		k := p.Value.Len()
		if g := p.Value.Grad(); g != nil {
			vs, err := g.Float64s()
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			for i, v := range vs {
				buf[off+i] = n * v
			}
		}
		off += k
	}
	return nil
}

// allReduce sums buf over the ranks, in float32 unless wide.
func (d *Distributed) allReduce(buf []float64, wide bool) error {
	if wide {
		return d.comm.AllReduceFloat64(buf)
	}
	narrow := make([]float32, len(buf))
	for i, v := range buf {
		narrow[i] = float32(v)
	}
	if err := d.comm.AllReduceFloat32(narrow); err != nil {
		return err
	}
	for i, v := range narrow {
		buf[i] = float64(v)
	}
	return nil
}

// onDevice makes a tensor of v's shape, dtype and device from host values.
func onDevice(g []float64, v *graph.Value) *tensor.Tensor {
	if v.DType() == tensor.Float64 {
		return tensor.FromFloat64(v.Device(), g, v.Shape()...)
	}
	f := make([]float32, len(g))
	for i, x := range g {
		f[i] = float32(x)
	}
	t := tensor.FromFloat32(v.Device(), f, v.Shape()...)
	if v.DType() == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(v.DType())
}

// Step runs opt (built over Module().Parameters()), drops the gradients
// and, when the model has buffers, replaces every rank's by rank 0's (DDP's
// broadcast_buffers). Every rank must call it.
func (d *Distributed) Step(opt optim.Optimizer) error {
	if err := opt.Step(); err != nil {
		return fmt.Errorf("parallel.Distributed.Step: rank %d: %w", d.comm.Rank(), err)
	}
	opt.ZeroGrad()
	if err := d.broadcast(d.model.Buffers()); err != nil {
		return fmt.Errorf("parallel.Distributed.Step: rank %d: %w", d.comm.Rank(), err)
	}
	return nil
}
