package hal

// ScanOp names an inclusive scan along the last axis (Device.Scan).
type ScanOp uint8

// Scans, as torch.cumsum, torch.cumprod and torch.logcumsumexp: element i
// of a row is the op over elements 0 … i. NaN and ±Inf propagate as the
// sequential fold does; LogCumSumExp of a prefix of −Inf only is −Inf.
const (
	Cumsum ScanOp = iota
	Cumprod
	LogCumSumExp
	numScanOps
)

// ScanOps lists every scan.
var ScanOps = enumerate[ScanOp](numScanOps)

func (op ScanOp) String() string { return name(scanNames, op, "ScanOp") }

// Kernel is the op's key in Capabilities, e.g. "scan.cumsum".
func (op ScanOp) Kernel() string { return kernelName(scanKernels, op, "scan.") }
