// Package train runs the training loop that every model needs and nobody
// should write twice: epochs over a data.Dataset in seeded batches, one
// optimizer step per batch, evaluation on a validation set after each
// epoch, metrics, a progress display, checkpoints, early stopping,
// cancellation and a chart of the run.
//
// The caller supplies the model, the loss function, the optimizer and the
// datasets in a Config and calls Run:
//
//	hist, err := train.Run(ctx, train.Config{
//		Model: model, Optimizer: opt, Train: trainSet, Val: valSet,
//		Loss:   func(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) },
//		Epochs: 20, BatchSize: 32,
//		Checkpoints: train.Checkpoints{Dir: "ckpt", Best: train.Monitor{Metric: "val_accuracy", Maximize: true}},
//		EarlyStop:   &train.EarlyStopping{Monitor: train.Monitor{Metric: "val_loss"}, Patience: 3},
//	})
//
// # Metrics
//
// Each epoch records, under these names in History:
//
//   - "loss": the mean training loss over the epoch's samples (each
//     batch's loss weighted by its size);
//   - "accuracy": the fraction of training samples whose arg-max output
//     is their label, when the dataset has class labels and the model
//     gives [batch, classes] outputs;
//   - "samples_per_second": the training throughput;
//   - "lr": the learning rate of the epoch's last step;
//   - "val_loss", "val_accuracy" and "val_<name>" for each user Metric,
//     on the validation set, when Config.Val is set.
//
// The training loss and accuracy are summed on the device and read once
// per epoch, so the loop does not wait for the device after every step
// (the progress bar reads the loss a few times a second when it is shown).
//
// # Checkpoints
//
// With Checkpoints.Dir set, Run writes, through package nn/checkpoint,
// model files that PyTorch loads as a plain state_dict and optimizer
// files beside them:
//
//   - last.safetensors and last.optim.safetensors after every epoch, and
//     when a cancelled context stops the run between two batches;
//   - epoch-NNNN.safetensors and epoch-NNNN.optim.safetensors every
//     Checkpoints.Every epochs;
//   - best.safetensors whenever the Checkpoints.Best metric improves.
//
// Every file is replaced atomically, and its metadata holds "epoch" (the
// epochs completed), "step" (the optimizer steps taken), "interrupted"
// ("true" when written on cancellation, mid-epoch) and each metric of the
// last completed epoch as "metric.<name>", besides Config.Metadata.
//
// # Cancellation
//
// Run checks its context before every training and validation batch.
// When it is done, Run writes the last checkpoint (if Checkpoints.Dir is
// set), so that model and optimizer state agree with each other as of the
// last step, and returns the history of the completed epochs with
// ctx.Err(). An epoch whose validation was cut short is not recorded; the
// checkpoint's "step" still counts its steps. Resume loads that checkpoint
// and gives the StartEpoch and StartStep with which Run goes on exactly
// where it stopped. (The best value seen so far is not carried over: the
// first epoch after a resume writes best.safetensors afresh.)
//
// # Evaluation and gradients
//
// Validation runs the model in evaluation mode (SetTraining(false))
// without recording a graph: each batch enters a no-grad scope
// (graph.NewScope(graph.NoGrad)), which stops recording for that
// computation alone, so another goroutine may train or evaluate beside it.
//
// # Distributed
//
// With Config.Distributed (a parallel.Distributed over the model, on MPI
// or a local group) every rank calls Run with the same Config: each draws
// the same batches and trains on its shard of each (parallel.Shards), and
// the gradients are all-reduced, so every rank takes the step that one
// process takes on the whole batch, up to float32 rounding. The training
// loss and accuracy are the whole batches' (the accuracy's counts are
// summed over the ranks once per epoch). Rank 0 alone evaluates the
// validation set, writes checkpoints and writes output; its epoch metrics
// are broadcast, so that every rank's History, early stopping and best
// epoch are the same and the ranks stop together. OnEpoch runs on every
// rank. ResumeDistributed has rank 0 read the last checkpoint and
// broadcast its two files, so that every rank resumes from the same state
// without a shared file system. Cancellation should reach every rank (as
// mpirun's signals do): a rank that stops alone leaves the others waiting
// in the next collective until the Communicator's timeout.
//
// # Mixed precision
//
// With Config.Autocast each training batch enters a graph.Autocast scope
// (and each validation batch a no-grad autocast one): float16 products and
// convolutions where the device runs them. Config.Scaler (an
// amp.GradScaler over the model's parameters) scales the loss, skips the
// steps whose gradients overflowed and adapts the scale; its state is
// written into every checkpoint's metadata ("amp.scale",
// "amp.growth_tracker"), which GradScaler.LoadState reads back.
package train
