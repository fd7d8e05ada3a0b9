package tensor

// The package's tests name the device each test runs on and expect
// operands on different devices to be misuse, so they run under Explicit;
// the placement tests switch policies themselves and restore this one.
func init() { SetPlacement(Explicit) }
