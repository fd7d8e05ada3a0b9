package cpu

// bytesOf is exported to the external tests, which compare raw buffers.
var BytesOf = bytesOf
