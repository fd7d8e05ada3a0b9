// Package parallel trains one model on several devices at once by data
// parallelism, as PyTorch's DataParallel and DistributedDataParallel: each
// device holds a replica of the model, each batch is split over the
// replicas, and the replicas' gradients are averaged before the optimizer
// step, so that training equals training on one device with the whole
// batch, up to float32 rounding.
//
// # Replicas
//
// A module cannot be copied generically (its fields are the caller's
// types), and nn.To moves rather than copies. New therefore takes a
// Factory that builds the model on a given device, calls it once per
// device, and loads every replica with the first one's parameters and
// buffers (nn.LoadStateDict), as DDP broadcasts rank 0's state at
// construction. The devices may be any mix of WebGPU adapters and the
// CPU; a device may appear twice (two replicas on the CPU run
// concurrently).
//
// # A step
//
//	dp, err := parallel.New([]*tensor.Device{gpu0, gpu1, cpu}, newModel)
//	opt := optim.NewSGD(dp.Module().Parameters(), optim.SGDConfig{LR: 0.1})
//	for _, idx := range batches {
//		x, y := set.Batch(cpu, idx)
//		loss, err := dp.Backward(x, y, lossFn) // forward+backward on every replica, gradients averaged onto the primary
//		err = dp.Step(opt)                     // opt.Step, ZeroGrad, copy parameters and buffers to the replicas
//		loss.Release(); x.Release(); y.Release()
//	}
//
// Backward splits the batch along axis 0 into contiguous shards whose
// sizes differ by at most one (Shards), runs forward, loss and backward
// on each replica in its own goroutine, and sets the primary's gradients
// to Σᵢ (nᵢ/N)·gᵢ: the loss must be a mean over the shard, and weighting
// by shard size makes batches that do not divide evenly exact. The
// replicas' gradients travel to the primary's device through host memory
// (hal has no device-to-device copy).
//
// # Buffers
//
// BatchNorm's running statistics are buffers, not parameters: each
// replica updates its own from its shard, and Sync (which Step calls)
// overwrites them with the primary's, as DDP's broadcast_buffers does from
// rank 0. The running statistics therefore come from the primary's shard
// alone, and the batch statistics of training-mode BatchNorm are per
// shard (not SyncBatchNorm): a model with BatchNorm trains as PyTorch DDP
// does, not exactly as one device with the whole batch.
//
// # Distributed: buckets
//
// Distributed (one process per rank, over a Communicator such as
// nn/parallel/mpi's) all-reduces the gradients in buckets, as PyTorch's
// DDP: the parameters, in reverse order, are grouped into buckets of at
// most BucketBytes (DefaultBucketBytes, 25 MiB, as DDP's bucket_cap_mb),
// and a gradient-ready hook (graph's OnGradReady) copies each gradient
// into its bucket's flat buffer; a full bucket starts a non-blocking
// all-reduce (IAllReduceFloat32) at once, while the backward pass goes on
// to the first layers. Buckets start in index order on every rank (MPI
// matches collectives by order); parameters the pass did not reach count
// as zero gradients (DDP's find_unused_parameters) and go after the pass.
// The result equals BucketBytes 0, one all-reduce after the pass.
//
// # Errors
//
// A replica that fails (a device error, a misused op, a failed backward
// pass) makes Backward return an error naming the replica's index and
// device, after every goroutine has finished and every tensor the step
// made is released; the primary's gradients are left as they were.
//
// # MPI
//
// Package nn/parallel/mpi is the Communicator over Open MPI: it opens
// libmpi at run time (no build tag; without Open MPI, mpi.Init returns an
// error matching mpi.ErrUnavailable that says what it tried and how to
// install it), and processes started by mpirun are its ranks.
//
// # With nn/train
//
// train.Run drives one model's Forward and Backward itself, so it does
// not run a DataParallel; write the loop above instead (or evaluate
// dp.Module() with train's evaluation after training). It does run a
// Distributed: with train.Config.Distributed set, every rank trains on its
// shard of each batch through Distributed.Backward and Step, rank 0 alone
// evaluates, writes checkpoints and output, and train.ResumeDistributed
// loads rank 0's checkpoint into every rank.
package parallel
