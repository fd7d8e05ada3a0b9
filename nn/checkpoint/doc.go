// Package checkpoint saves and loads tensors, modules and optimizer state
// as safetensors files (https://github.com/huggingface/safetensors), the
// format PyTorch's ecosystem uses to exchange weights without pickle.
//
// # The format
//
// A file is an 8-byte little-endian unsigned header length N, N bytes of
// UTF-8 JSON, then the data buffer. The JSON object maps each tensor name
// to {"dtype", "shape", "data_offsets": [begin, end]}, offsets relative to
// the start of the buffer; the optional "__metadata__" key holds a
// string-to-string map. Tensors are little-endian and row-major, and
// their byte ranges tile the buffer exactly: no gaps, no overlaps, nothing
// left over.
//
// Read accepts any file that follows the specification and holds dtypes
// webtensor has (F32, F64, I32, I64, F16) or converts exactly (BF16, read
// as Float32: a bfloat16 is the top half of a float32), and rejects
// everything else with an error that names the offending tensor: it validates the header length
// against the data actually present, the JSON (UTF-8, no duplicate keys,
// no unknown fields), every dtype and shape, and the offsets (each
// tensor's span equals its element count times its dtype size; the spans
// tile the buffer). It never panics on corrupt input (FuzzRead checks).
//
// # What Write produces
//
// Write is deterministic, so the same tensors give the same bytes on every
// run and device, and the Python generator of the golden test
// (testdata/golden/gen_safetensors.py) follows the same conventions and
// produces byte-identical files:
//
//   - the JSON is compact (no whitespace) and the header is padded with
//     spaces to a multiple of 8 bytes, so the buffer starts 8-aligned;
//   - "__metadata__" comes first, when there is metadata, with its keys
//     sorted; it is left out when the map is empty;
//   - tensors follow in ascending byte order of their names, and their
//     data is laid out in that same order;
//   - each entry's fields are "dtype", "shape", "data_offsets", in that
//     order;
//   - strings escape only '"', '\' and control characters below U+0020
//     (as \u00XX, lower-case hex); everything else is written as raw UTF-8.
//
// Float16 NaNs come back as the canonical quiet NaN (0x7E00 with the
// sign), since tensors convert through float32; every other value,
// including −0, infinities and subnormals, round-trips bit for bit.
//
// # Int64 and WebGPU
//
// I64 tensors (PyTorch's long: BatchNorm's num_batches_tracked, token ids)
// read as Int64 where the device holds it; read onto a WebGPU device they
// are Int32 with the same values, and a value outside the int32 range is
// an error naming the tensor (see "Int64 on WebGPU" in package tensor).
// Reading a dtype a device cannot hold at all (F64 on WebGPU) is an error
// naming the tensor and the device. Load lets integers of either width
// fill each other, so a counter saved from WebGPU (I32) loads into a CPU
// model (Int64), and the reverse.
//
// # Modules and optimizers
//
// Save writes a module's parameters and buffers under their state-dict
// names ("0.weight", "1.running_mean", "1.num_batches_tracked"), so the
// file lines up with a PyTorch model of the same shape and a PyTorch
// state_dict loads strictly (testdata/golden/gen_int64.py), plus an optimizer's state under
// "optim."-prefixed names and metadata keys. Load checks names, shapes and
// dtypes before it changes anything, so a mismatched checkpoint leaves the
// model as it was. Save writes to a temporary file in the same directory
// and renames it, so a crash never leaves a torn checkpoint behind.
//
// # Model and optimizer apart, to and from streams, with metadata
//
// WriteModule and ReadModule move a module through any io.Writer and
// io.Reader (a bytes.Buffer, a network connection, an object store's
// stream); WriteOptimizer and ReadOptimizer do the same for an
// optimizer's state, in a stream of its own. A model stream holds the
// state dict and nothing else, so PyTorch's safetensors.torch.load_file
// reads it as a plain state_dict. Both carry user metadata, a
// string-to-string map in the header's "__metadata__" (an epoch, metrics,
// a configuration's JSON), of at most MaxMetadataBytes (1 MiB) of keys
// and values together; keys starting with OptimPrefix are the optimizer's
// own. SaveModule, LoadModule, SaveOptimizer and LoadOptimizer are the
// same for files, written atomically as Save is. ReadModule and
// ReadOptimizer also read the combined files Save writes, each taking
// its part, so older checkpoints keep loading; new code should prefer the
// separate forms to Save.
package checkpoint
