#!/usr/bin/python3
"""Golden safetensors files for package nn/checkpoint, written by the spec.

Debian has no `safetensors` package, so this implements the format
(https://github.com/huggingface/safetensors, "Format") with the standard
library and torch tensors:

    8 bytes   N, little-endian u64
    N bytes   UTF-8 JSON: {"NAME": {"dtype", "shape", "data_offsets": [begin, end]},
                           "__metadata__": {str: str}}
    the rest  the tensors' little-endian row-major bytes, offsets relative
              to the buffer's start, tiling it with no gaps or overlaps

Usage (Debian's python3-torch 1.13; no numpy needed):

    /usr/bin/python3 testdata/golden/gen_safetensors.py
        writes testdata/golden/nn/python_written.safetensors from the fixed
        tensors below, and testdata/golden/nn/safetensors.json with their
        expected values as bit patterns, which the Go test compares against
        (CI has no torch).

    /usr/bin/python3 testdata/golden/gen_safetensors.py verify FILE
        parses FILE (written by Go's checkpoint.Write from the same tensors:
        WEBTENSOR_SAFETENSORS_OUT=FILE go test ./nn/checkpoint -run
        TestGoldenWriteMatchesPython), checks every tensor bit for bit against
        the fixed tensors and the metadata, and that the bytes equal what this
        script writes; exits 1 on any mismatch.

Both writers follow the same conventions, so their files are byte-identical:
compact JSON; "__metadata__" first (left out when empty), keys sorted;
tensors in ascending (UTF-8 byte / code point) order of name, data laid out
in that order; fields "dtype", "shape", "data_offsets" in that order; strings
escape only '"', '\\' and characters below U+0020 (as \\u00xx); the header is
padded with spaces to a multiple of 8 bytes.
"""

import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_FILE = os.path.join(HERE, "nn", "python_written.safetensors")
OUT_JSON = os.path.join(HERE, "nn", "safetensors.json")

# dtype name -> (torch float dtype, same-width integer dtype for bit views,
# struct code of that integer, element size)
DTYPES = {
    "F32": (torch.float32, torch.int32, "i", 4),
    "F64": (torch.float64, torch.int64, "q", 8),
    "I32": (torch.int32, torch.int32, "i", 4),
    "F16": (torch.float16, torch.int16, "h", 2),
}
BY_TORCH = {v[0]: k for k, v in DTYPES.items()}


def from_bits(dtype, bits, shape):
    """A tensor whose elements have the given (unsigned) bit patterns."""
    _, itype, code, size = DTYPES[dtype]
    raw = struct.pack("<%d%s" % (len(bits), code.upper()), *bits)
    ints = struct.unpack("<%d%s" % (len(bits), code), raw)
    return torch.tensor(ints, dtype=itype).view(DTYPES[dtype][0]).reshape(shape)


def fixed_tensors():
    """The tensors of the golden file, chosen for edge cases: −0, ±Inf,
    quiet NaN (F16's canonical 0x7E00), subnormals, extreme integers, a
    scalar, an empty tensor, a non-ASCII name."""
    t = {}
    t["a.scalar"] = from_bits("F32", [0x422A0000], [])  # 42.5
    t["empty"] = torch.zeros((2, 0), dtype=torch.float32)
    t["f16"] = from_bits("F16", [0x3C00, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x3555], [2, 4])
    t["f32"] = from_bits("F32", [0x3EAAAAAB, 0x80000000, 0x00000001, 0x7F800000, 0x7FC00000, 0xFF7FFFFF], [2, 3])
    t["f64"] = from_bits("F64", [0x400921FB54442D18, 0x0000000000000001, 0xFFF0000000000000, 0x8000000000000000], [2, 2])
    t["i32"] = torch.tensor([-2147483648, 2147483647, -1, 0, 7], dtype=torch.int32)
    t["layer.0.weight"] = (torch.arange(6, dtype=torch.float32) - 2.5).div(4).reshape(3, 2)
    t["\u00fcn\u00efcode"] = torch.tensor([1.0], dtype=torch.float32)
    return t


METADATA = {
    "format": "pt",
    "note": 'quote " backslash \\ newline \n tab \t caf\u00e9',
    "ctrl\u0001": "",
}


def bits_of(t):
    """The elements' bit patterns as unsigned ints, row-major."""
    dtype = BY_TORCH[t.dtype]
    _, itype, code, size = DTYPES[dtype]
    ints = t.contiguous().view(itype).reshape(-1).tolist()
    return list(struct.unpack("<%d%s" % (len(ints), code.upper()), struct.pack("<%d%s" % (len(ints), code), *ints)))


def to_bytes(t):
    dtype = BY_TORCH[t.dtype]
    _, itype, code, _ = DTYPES[dtype]
    ints = t.contiguous().view(itype).reshape(-1).tolist()
    return struct.pack("<%d%s" % (len(ints), code), *ints)


def json_string(s):
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def serialize(tensors, metadata):
    names = sorted(tensors)  # code-point order = UTF-8 byte order
    parts = []
    if metadata:
        items = ",".join(json_string(k) + ":" + json_string(metadata[k]) for k in sorted(metadata))
        parts.append(json_string("__metadata__") + ":{" + items + "}")
    data = []
    offset = 0
    for name in names:
        t = tensors[name]
        raw = to_bytes(t)
        shape = ",".join(str(d) for d in t.shape)
        parts.append('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                     % (json_string(name), BY_TORCH[t.dtype], shape, offset, offset + len(raw)))
        data.append(raw)
        offset += len(raw)
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + b"".join(data)


def parse(blob):
    """Reads a safetensors file, validating it by the specification."""
    if len(blob) < 8:
        raise ValueError("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError("header length %d beyond the file" % n)
    text = blob[8:8 + n].decode("utf-8")
    if not text.startswith("{"):
        raise ValueError("header does not start with '{'")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate keys in %r" % keys)
        return dict(pairs)

    header = json.loads(text, object_pairs_hook=no_duplicates)
    buf = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError("metadata is not str -> str")
    spans = []
    tensors = {}
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError("%s: fields %s" % (name, sorted(info)))
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        _, itype, code, size = DTYPES[dtype]
        count = 1
        for d in shape:
            count *= d
        if end - begin != count * size:
            raise ValueError("%s: offsets [%d, %d] for %s%s" % (name, begin, end, dtype, shape))
        spans.append((begin, end, name))
        ints = struct.unpack("<%d%s" % (count, code), buf[begin:end])
        tensors[name] = torch.tensor(ints, dtype=itype).view(DTYPES[dtype][0]).reshape(shape)
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            raise ValueError("%s: starts at %d, expected %d (gap or overlap)" % (name, begin, pos))
        pos = end
    if pos != len(buf):
        raise ValueError("data is %d bytes, tensors cover %d" % (len(buf), pos))
    return tensors, metadata


def bit_equal(a, b):
    if a.dtype != b.dtype or list(a.shape) != list(b.shape):
        return False
    itype = DTYPES[BY_TORCH[a.dtype]][1]
    return torch.equal(a.contiguous().view(itype), b.contiguous().view(itype))


def generate():
    tensors = fixed_tensors()
    blob = serialize(tensors, METADATA)
    parsed, meta = parse(blob)  # the writer's output must pass our own reader
    assert meta == METADATA and all(bit_equal(parsed[k], tensors[k]) for k in tensors)
    with open(OUT_FILE, "wb") as f:
        f.write(blob)
    expected = {
        "torch": torch.__version__,
        "file": os.path.basename(OUT_FILE),
        "metadata": METADATA,
        "tensors": [
            {"name": name, "dtype": BY_TORCH[t.dtype], "shape": list(t.shape), "bits": bits_of(t)}
            for name, t in sorted(tensors.items())
        ],
    }
    with open(OUT_JSON, "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote %s (%d bytes) and %s" % (OUT_FILE, len(blob), OUT_JSON))


def verify(path):
    with open(path, "rb") as f:
        blob = f.read()
    want = fixed_tensors()
    try:
        got, meta = parse(blob)
    except (ValueError, KeyError, UnicodeDecodeError, struct.error) as e:
        print("FAIL: %s is not a valid safetensors file: %s" % (path, e))
        return 1
    failures = []
    if sorted(got) != sorted(want):
        failures.append("tensor names %s, want %s" % (sorted(got), sorted(want)))
    for name in sorted(set(got) & set(want)):
        if not bit_equal(got[name], want[name]):
            failures.append("%s: got %s %s %s, want %s %s %s" % (
                name, got[name].dtype, list(got[name].shape), bits_of(got[name]),
                want[name].dtype, list(want[name].shape), bits_of(want[name])))
    if meta != METADATA:
        failures.append("metadata %r, want %r" % (meta, METADATA))
    if not failures and blob != serialize(want, METADATA):
        failures.append("values match, but the bytes differ from this script's file")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("OK: %s: %d tensors and %d metadata entries bit-exact with torch %s; bytes identical to the Python writer's"
          % (path, len(got), len(meta), torch.__version__))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "verify":
        sys.exit(verify(sys.argv[2]))
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    generate()
