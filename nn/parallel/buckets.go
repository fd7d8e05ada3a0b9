package parallel

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// DefaultBucketBytes is a new Distributed's BucketBytes: PyTorch DDP's
// bucket_cap_mb default, 25 MiB.
const DefaultBucketBytes = 25 << 20

// bucket is a group of parameters whose gradients are all-reduced
// together, flattened into one buffer, as soon as the last of them is
// ready.
type bucket struct {
	params []int // indices into Distributed.params
	offs   []int // each one's offset in the buffer
	f32    []float32
	f64    []float64 // instead of f32 when a parameter is Float64
	ready  int       // parameters whose gradient is in the buffer
	req    Request
}

// bucketsFor splits the parameters, in reverse order (the order in which
// the backward pass makes their gradients ready, roughly), into buckets
// of at most capBytes each (a parameter larger than capBytes is a bucket
// of its own). Gradients travel as float32 unless a parameter is Float64.
func (d *Distributed) bucketsFor(capBytes int) []*bucket {
	wide := false
	for _, p := range d.params {
		wide = wide || p.Value.DType() == tensor.Float64
	}
	elem := 4
	if wide {
		elem = 8
	}
	var bs []*bucket
	var cur *bucket
	size := 0
	for i := len(d.params) - 1; i >= 0; i-- {
		k := d.params[i].Value.Len()
		if cur == nil || (size > 0 && (size+k)*elem > capBytes) {
			cur = &bucket{}
			bs = append(bs, cur)
			size = 0
		}
		cur.params = append(cur.params, i)
		cur.offs = append(cur.offs, size)
		size += k
	}
	for _, b := range bs {
		last := len(b.params) - 1
		n := b.offs[last] + d.params[b.params[last]].Value.Len()
		if wide {
			b.f64 = make([]float64, n)
		} else {
			b.f32 = make([]float32, n)
		}
	}
	return bs
}

// start starts b's all-reduce.
func (b *bucket) start(comm Communicator) (err error) {
	if b.f64 != nil {
		b.req, err = comm.IAllReduceFloat64(b.f64)
	} else {
		b.req, err = comm.IAllReduceFloat32(b.f32)
	}
	return err
}

// put writes n·g, parameter j's gradient weighted by the shard size, at
// off.
func (b *bucket) put(off int, g []float64, n float64) {
	for i, v := range g {
		if b.f64 != nil {
			b.f64[off+i] = n * v
		} else {
			b.f32[off+i] = float32(n * v)
		}
	}
}

// get returns the k values at off divided by samples.
func (b *bucket) get(off, k int, samples float64) []float64 {
	g := make([]float64, k)
	for i := range g {
		if b.f64 != nil {
			g[i] = b.f64[off+i] / samples
		} else {
			g[i] = float64(b.f32[off+i]) / samples
		}
	}
	return g
}

// bucketedBackward is Backward with the gradients all-reduced in buckets
// that start while the backward pass is still running: a gradient-ready
// hook (graph's OnGradReady) on every parameter copies n·g into its
// bucket, and a full bucket is all-reduced at once, in bucket order (the
// same on every rank, as MPI needs). Parameters the pass did not reach,
// and every bucket of a rank whose shard is empty or whose step failed,
// are sent as zeros after the pass; the shard sizes, n·loss and the
// failure flag follow in a last, small all-reduce.
func (d *Distributed) bucketedBackward(x, y *tensor.Tensor, loss LossFunc) (float64, error) {
	rank := d.comm.Rank()
	if d.buckets == nil || d.bucketCap != d.BucketBytes {
		d.buckets, d.bucketCap = d.bucketsFor(d.BucketBytes), d.BucketBytes
	}
	bs := d.buckets
	type slot struct {
		b   *bucket
		off int
	}
	slots := make([]slot, len(d.params))
	for _, b := range bs {
		clear(b.f32)
		clear(b.f64)
		b.ready, b.req = 0, nil
		for k, i := range b.params {
			slots[i] = slot{b, b.offs[k]}
		}
	}
	done := make([]bool, len(d.params))
	next := 0 // the next bucket to start
	var commErr error
	startReady := func() {
		for commErr == nil && next < len(bs) && bs[next].ready == len(bs[next].params) {
			commErr = bs[next].start(d.comm)
			next++
		}
	}
	markReady := func(i int) {
		if !done[i] {
			done[i] = true
			slots[i].b.ready++
		}
	}

	var n int
	var localLoss float64
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
		for i, p := range d.params {
			remove := p.Value.OnGradReady(func(g *graph.Value) error {
				vs, err := g.Float64s()
				if err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				slots[i].b.put(slots[i].off, vs, float64(n))
				markReady(i)
				startReady()
				return nil
			})
			defer remove()
		}
		localLoss = d.shardBackward(x, y, loss)
	})
	if localErr != nil {
		// Whatever was sent is discarded by every rank (the flag below).
		n, localLoss = 0, 0
	}
	// Unused parameters (and all of them on an empty or failed shard):
	// zeros.
	for i := range d.params {
		markReady(i)
	}
	startReady()
	trailer := []float64{float64(n), float64(n) * localLoss, 0}
	if localErr != nil {
		trailer[2] = 1
	}
	if commErr == nil {
		commErr = d.comm.AllReduceFloat64(trailer)
	}
	for _, b := range bs {
		if b.req != nil {
			if err := b.req.Wait(); err != nil && commErr == nil {
				commErr = err
			}
		}
	}
	nn.ZeroGrad(d.model)
	if commErr != nil {
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, commErr)
	}
	switch failed := int(trailer[2]); {
	case localErr != nil:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, localErr)
	case failed > 0:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %d of %d ranks failed this step", rank, failed, d.comm.Size())
	case trailer[0] == 0:
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: every shard is empty", rank)
	}
	samples := trailer[0]
	err := catch(func() {
		for i, p := range d.params {
			s := slots[i]
			p.Value.SetGrad(onDevice(s.b.get(s.off, p.Value.Len(), samples), p.Value))
		}
	})
	if err != nil {
		nn.ZeroGrad(d.model)
		return 0, fmt.Errorf("parallel.Distributed.Backward: rank %d: %w", rank, err)
	}
	return trailer[1] / samples, nil
}
