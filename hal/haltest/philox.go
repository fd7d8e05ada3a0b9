package haltest

import "math/bits"

// philox4x32 is Philox4x32-10 (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC'11), written from the paper's definition: ten
// rounds of two 32×32→64-bit multiplications by M0 and M1, whose high
// halves are xored with the other two counter words and the round key,
// with the key bumped by the Weyl constants W0 and W1 between rounds.
func philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const (
		m0 = 0xD2511F53
		m1 = 0xCD9E8D57
		w0 = 0x9E3779B9
		w1 = 0xBB67AE85
	)
	for round := range 10 {
		if round > 0 {
			key[0] += w0
			key[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// philoxBlock is the block the contract assigns to element i of a Random
// call: counter offset+i in the low 64 bits (word 0 the least
// significant, as in Random123), key seed (word 0 its low half).
func philoxBlock(seed, offset uint64, i int) [4]uint32 {
	c := offset + uint64(i)
	return philox4x32([4]uint32{uint32(c), uint32(c >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

// philoxKAT are known-answer vectors for Philox4x32-10 from Random123's
// test suite (its kat_vectors file).
var philoxKAT = []struct {
	ctr  [4]uint32
	key  [2]uint32
	want [4]uint32
}{
	{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
		[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
		[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}
