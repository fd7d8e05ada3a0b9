package checkpoint

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// MaxMetadataBytes bounds the user metadata WriteModule and
// WriteOptimizer accept: the bytes of every key and value together. The
// metadata lives in the JSON header, which readers load whole before any
// tensor (and which the reference implementation caps at 100 MB), so it
// is meant for an epoch, metrics and a configuration's JSON, not data.
const MaxMetadataBytes = 1 << 20

// WriteModule writes m's parameters and buffers, under their state-dict
// names ("0.weight", "1.running_mean"), and metadata to w as one
// safetensors stream. The stream holds the model and nothing else, so
// PyTorch's safetensors.torch.load_file reads it as a plain state_dict
// and safe_open(...).metadata() gives the metadata back.
//
// Names, dtypes and metadata are checked before the first byte is
// written; an error from w or from reading a tensor off its device can
// still leave part of a stream behind, which is why SaveModule writes to
// a temporary file and renames it.
func WriteModule(w io.Writer, m nn.Module, metadata map[string]string) error {
	if m == nil {
		return fmt.Errorf("checkpoint: WriteModule: nil module")
	}
	if err := checkUserMetadata(metadata); err != nil {
		return err
	}
	return Write(w, nn.StateDict(m), metadata)
}

// ReadModule reads a stream written by WriteModule into m and returns its
// metadata (empty, not nil, when there is none). It is strict as Load is:
// every parameter and buffer of m must be in the stream with its shape
// and dtype, nothing else may be, and m changes only when everything
// matches. Tensors are read onto the device of m's first parameter.
// Optimizer state in a combined file written by Save is skipped, with
// its metadata, so that such files keep loading.
func ReadModule(r io.Reader, m nn.Module) (map[string]string, error) {
	if m == nil {
		return nil, fmt.Errorf("checkpoint: ReadModule: nil module")
	}
	dev, err := moduleDevice(m)
	if err != nil {
		return nil, err
	}
	tensors, metadata, err := Read(r, dev)
	if err != nil {
		return nil, err
	}
	defer releaseTensors(tensors)
	params := nn.StateDict(m)
	modTensors := map[string]*tensor.Tensor{}
	for name, t := range tensors {
		if _, ok := strings.CutPrefix(name, OptimPrefix); ok && params[name] == nil {
			continue // a combined file's optimizer state
		}
		modTensors[name] = t
	}
	if err := checkDTypes(params, modTensors, "stream"); err != nil {
		return nil, fmt.Errorf("checkpoint: stream does not match the module: %w", err)
	}
	if err := nn.CheckStateDict(m, modTensors); err != nil {
		return nil, fmt.Errorf("checkpoint: stream does not match the module: %w", err)
	}
	if err := nn.LoadStateDict(m, modTensors); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return userMetadata(metadata), nil
}

// WriteOptimizer writes opt's state and metadata to w as one safetensors
// stream, apart from the model: tensor names and the optimizer's own
// metadata keys carry OptimPrefix, as in a combined file, so user keys
// cannot collide with them. The same caveat about partial output as for
// WriteModule applies; SaveOptimizer is atomic.
func WriteOptimizer(w io.Writer, opt OptimizerState, metadata map[string]string) error {
	if opt == nil {
		return fmt.Errorf("checkpoint: WriteOptimizer: nil optimizer")
	}
	if err := checkUserMetadata(metadata); err != nil {
		return err
	}
	state, optMeta := opt.State()
	tensors := make(map[string]*tensor.Tensor, len(state))
	for k, t := range state {
		tensors[OptimPrefix+k] = t
	}
	all := make(map[string]string, len(optMeta)+len(metadata))
	for k, v := range metadata {
		all[k] = v
	}
	for k, v := range optMeta {
		all[OptimPrefix+k] = v
	}
	return Write(w, tensors, all)
}

// ReadOptimizer reads a stream written by WriteOptimizer (or the
// optimizer part of a combined file written by Save) into opt and returns
// the user metadata. The tensors are read on the CPU; LoadState copies
// them to each parameter's device. opt is unchanged on an error.
func ReadOptimizer(r io.Reader, opt OptimizerState) (map[string]string, error) {
	if opt == nil {
		return nil, fmt.Errorf("checkpoint: ReadOptimizer: nil optimizer")
	}
	cpu, err := tensor.Open("cpu")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	tensors, metadata, err := Read(r, cpu)
	if err != nil {
		return nil, err
	}
	defer releaseTensors(tensors)
	optTensors := map[string]*tensor.Tensor{}
	for name, t := range tensors {
		if k, ok := strings.CutPrefix(name, OptimPrefix); ok {
			optTensors[k] = t
		}
	}
	optMeta := map[string]string{}
	for k, v := range metadata {
		if rest, ok := strings.CutPrefix(k, OptimPrefix); ok {
			optMeta[rest] = v
		}
	}
	if len(optMeta) == 0 {
		return nil, fmt.Errorf("checkpoint: the stream holds no optimizer state (no %q metadata)", OptimPrefix+"optimizer")
	}
	if err := opt.LoadState(optTensors, optMeta); err != nil {
		return nil, fmt.Errorf("checkpoint: loading optimizer state: %w", err)
	}
	return userMetadata(metadata), nil
}

// SaveModule writes m and metadata to the file at path (see WriteModule),
// replacing it atomically: a failed or interrupted SaveModule leaves any
// previous file at path intact.
func SaveModule(path string, m nn.Module, metadata map[string]string) error {
	return writeAtomic(path, func(w io.Writer) error { return WriteModule(w, m, metadata) })
}

// LoadModule reads the file at path into m; see ReadModule. Errors name
// the file.
func LoadModule(path string, m nn.Module) (map[string]string, error) {
	return readFile(path, func(r io.Reader) (map[string]string, error) { return ReadModule(r, m) })
}

// SaveOptimizer writes opt's state and metadata to the file at path (see
// WriteOptimizer), replacing it atomically.
func SaveOptimizer(path string, opt OptimizerState, metadata map[string]string) error {
	return writeAtomic(path, func(w io.Writer) error { return WriteOptimizer(w, opt, metadata) })
}

// LoadOptimizer reads the file at path into opt; see ReadOptimizer.
func LoadOptimizer(path string, opt OptimizerState) (map[string]string, error) {
	return readFile(path, func(r io.Reader) (map[string]string, error) { return ReadOptimizer(r, opt) })
}

func readFile(path string, read func(io.Reader) (map[string]string, error)) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	meta, err := read(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return meta, nil
}

// checkUserMetadata enforces MaxMetadataBytes and keeps OptimPrefix for
// the optimizer's own keys.
func checkUserMetadata(metadata map[string]string) error {
	size := 0
	for k, v := range metadata {
		if strings.HasPrefix(k, OptimPrefix) {
			return fmt.Errorf("checkpoint: metadata key %q: the prefix %q is reserved for optimizer state", k, OptimPrefix)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("checkpoint: metadata %q: %q is not valid UTF-8", k, v)
		}
		size += len(k) + len(v)
	}
	if size > MaxMetadataBytes {
		return fmt.Errorf("checkpoint: metadata of %d bytes exceeds the limit of %d (MaxMetadataBytes)", size, MaxMetadataBytes)
	}
	return nil
}

// userMetadata drops the optimizer's keys from a stream's metadata.
func userMetadata(metadata map[string]string) map[string]string {
	out := make(map[string]string, len(metadata))
	for k, v := range metadata {
		if !strings.HasPrefix(k, OptimPrefix) {
			out[k] = v
		}
	}
	return out
}

// moduleDevice is the device of m's first parameter or buffer, or the CPU
// for a module without any.
func moduleDevice(m nn.Module) (*tensor.Device, error) {
	for _, n := range append(m.Parameters(), m.Buffers()...) {
		return n.Value.Device(), nil
	}
	dev, err := tensor.Open("cpu")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return dev, nil
}

func releaseTensors(tensors map[string]*tensor.Tensor) {
	for _, t := range tensors {
		t.Release()
	}
}
