// Package onnx runs ONNX models (as PyTorch's torch.onnx.export writes
// them) on any webtensor device: the CPU and every WebGPU adapter.
//
// Load, Read or LoadFile decode a model (ONNX's protobuf schema, with Go
// types generated from Debian python3-onnx 1.12's onnx.proto by a pinned
// protoc-gen-go, in internal/onnxpb). Initializers may live in external
// data files, which are read only from the model's folder: absolute
// paths, ".." and symbolic links that leave it are refused
// (ErrExternalPath). The default domain's opset must be 13 to 17.
//
// At load time every node is checked: one *UnsupportedError lists every
// node whose operator (or optional output, or attribute) the importer
// cannot run, so a model either loads completely or names all it lacks;
// nothing is discovered at run time. Ops returns the operator list.
//
// # Host shape arithmetic
//
// PyTorch's exporter computes shapes in the graph: Shape, Gather, Concat,
// Unsqueeze, Slice, Cast, Range, ConstantOfShape, Reshape and integer
// arithmetic on them. The importer keeps such values on the host as int64
// (and float64): chains of constants are folded at load time, and the
// rest, which depend on an input's dynamic dimensions, run on the host at
// each call, reading the device tensors' shapes. So int64 never has to
// exist on a device; where a device op needs integers (Gather indices,
// Equal/Where masks) they become Int32, and a value that does not fit is
// an error naming it.
//
// # Running
//
// Model.Run takes and returns tensors by graph input and output name and
// runs on the device of its inputs. Floating-point values run as Float32
// (or Float16 with RunWith and RunOptions.DType, where the device has it);
// integer graph inputs (token ids) take Int32 or Int64 tensors (Int64,
// which only the CPU holds, is narrowed to Int32, and a value out of
// range is an error). Negative Gather indices count from the end of the
// axis, on the host and on the device. Any batch size the model's shapes
// allow runs; Run is safe for concurrent use. Weights are
// uploaded once per device and cached until Close; intermediate tensors
// are released as soon as their last reader ran. Misuse (a wrong input
// name, rank, fixed dimension or dtype, or a shape an op rejects) is a
// returned error naming the input or the node, never a panic.
//
// Beyond the three families' operators the importer runs what PyTorch's
// exporter emits for activations, detection heads and U-Nets: LeakyRelu,
// Elu, HardSigmoid, HardSwish, Softplus, Sigmoid, variadic Min/Max/Sum,
// ReduceSum/ReduceMax/ReduceMin, ArgMax, Tile, Split, Slice with negative
// steps, and Resize: nearest and linear in every coordinate
// transformation opsets 13–17 define but tf_crop_and_resize (half_pixel,
// pytorch_half_pixel, align_corners, asymmetric, and for nearest all four
// rounding modes), by scales or sizes on any axes, each resized axis one
// Resample kernel (tensor.ResampleAlong) with taps computed on the host by
// ONNX's formulas, so modes PyTorch lacks are exact too; cubic with
// half_pixel or align_corners and PyTorch's A = −0.75, through
// tensor.Interpolate. Other Resize attributes fail at load, naming the
// node and the attribute.
// Conv takes one, two or three spatial axes; three run tensor.Conv3d (any
// pads, auto_pad, strides, dilations and groups). ConvTranspose takes one
// or two spatial axes (tensor.ConvTranspose2d; three are refused at load)
// with strides, dilations, group, pads, output_padding, output_shape and
// auto_pad by the operator's formulas (total padding = stride·(in−1) +
// output_padding + (kernel−1)·dilation + 1 − output, its odd element at
// the end for SAME_UPPER, at the start otherwise); pads that differ at the
// two ends, or an output padding PyTorch would refuse, crop or extend the
// unpadded result.
// torch.topk, cumsum, einsum, triu/tril and flip export as TopK (K an
// input, folded on the host; Int32 indices as ArgMax's), CumSum (with
// ONNX's exclusive and reverse, which torch never sets), Einsum, Trilu
// and Slice with negative steps, and torch.argmin as ArgMin, all run on
// the device.
//
// Test models are exported by testdata/golden/gen_onnx.py (`make golden`)
// with PyTorch 1.13 and torchvision 0.14; cmd/onnxrun is the command-line
// runner.
package onnx
