package ann

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// rotator applies a fixed random orthogonal transform to vectors: zero-pad
// to a power of two, then twice a random sign flip followed by a normalised
// Walsh-Hadamard transform. One round leaves sparse inputs (the hash
// embedder's 56 of 384 non-zeros) with too little mixing for their signs to
// carry the angle; two rounds spread every input coordinate over all outputs.
type rotator struct {
	dim, pdim int
	// s1, s2 are the random signs, each times 1/sqrt(pdim): the
	// transforms themselves are left unnormalised, which saves two passes.
	s1, s2 []float32
}

// paddedDim is the size of the rotated space: the next power of two, at
// least 64 so that a code is a whole number of 64-bit words.
func paddedDim(dim int) int {
	p := 64
	for p < dim {
		p *= 2
	}
	return p
}

func newRotator(dim int, seed uint64) *rotator {
	p := paddedDim(dim)
	r := &rotator{dim: dim, pdim: p, s1: make([]float32, p), s2: make([]float32, p)}
	norm := float32(1 / math.Sqrt(float64(p)))
	src := rand.New(rand.NewPCG(seed, 0x616e6e726f74)) // "annrot"
	for i := range p {
		r.s1[i] = norm * float32(1-2*int(src.Uint64()&1))
		r.s2[i] = norm * float32(1-2*int(src.Uint64()&1))
	}
	return r
}

// rotate writes the rotation of v, scaled to unit length, into dst (len
// pdim). It reports false for a zero (or non-finite) vector.
func (r *rotator) rotate(dst, v []float32) bool {
	var ss float64
	for _, x := range v[:r.dim] {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		clear(dst)
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	dst = dst[:r.pdim]
	s1 := r.s1[:len(v[:r.dim])]
	for i, x := range v[:r.dim] {
		dst[i] = x * inv * s1[i]
	}
	clear(dst[r.dim:])
	fwht(dst)
	s2 := r.s2[:len(dst)]
	for i := range dst {
		dst[i] *= s2[i]
	}
	fwht(dst)
	return true
}

// fwht is the in-place, unnormalised fast Walsh-Hadamard transform of a
// slice whose length is a power of two, at least 4.
func fwht(a []float32) {
	n := len(a)
	// The first two butterflies in one pass over blocks of four.
	for i := 0; i+4 <= n; i += 4 {
		b := a[i : i+4 : i+4]
		x0, x1, x2, x3 := b[0]+b[1], b[0]-b[1], b[2]+b[3], b[2]-b[3]
		b[0], b[1], b[2], b[3] = x0+x2, x1+x3, x0-x2, x1-x3
	}
	for h := 4; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			x := a[i : i+h : i+h]
			y := a[i+h : i+2*h : i+2*h]
			for j := range x {
				u, v := x[j], y[j]
				x[j], y[j] = u+v, u-v
			}
		}
	}
}

// encode stores the signs of a rotated unit vector as bits (1 for a
// positive coordinate) and returns the vector's estimator scale,
// 1/||rot||_1. With it, <q, o> is estimated without bias as
// <rot(q), sign(rot(o))> / ||rot(o)||_1 (RaBitQ's correction: the sign code
// has inner product ||rot(o)||_1/sqrt(D) with the vector it codes).
func encode(dst []uint64, rot []float32) float32 {
	var l1 float32
	for w := range dst {
		var word uint64
		for j, x := range rot[w*64 : w*64+64 : w*64+64] {
			b := math.Float32bits(x)
			// Branch-free: the sign bit, inverted, is the code bit (a
			// coordinate of exactly +0 counts as positive: either is fine).
			word |= uint64(b>>31^1) << uint(j)
			l1 += math.Float32frombits(b &^ (1 << 31))
		}
		dst[w] = word
	}
	if l1 == 0 {
		return 0
	}
	return 1 / l1
}

// hamming counts the differing bits of two codes of the same length.
func hamming(a, b []uint64) int {
	if len(a) == 8 && len(b) == 8 {
		// 384 to 512 dimensions, the common case, unrolled.
		x, y := (*[8]uint64)(a), (*[8]uint64)(b)
		return bits.OnesCount64(x[0]^y[0]) + bits.OnesCount64(x[1]^y[1]) + bits.OnesCount64(x[2]^y[2]) + bits.OnesCount64(x[3]^y[3]) +
			bits.OnesCount64(x[4]^y[4]) + bits.OnesCount64(x[5]^y[5]) + bits.OnesCount64(x[6]^y[6]) + bits.OnesCount64(x[7]^y[7])
	}
	b = b[:len(a)]
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}

// lutWord is the part of a query's lookup table for one 64-bit code word:
// for each of its 8 bytes, the query's signed sum over those 8 coordinates
// for each of the 256 sign patterns.
type lutWord [8][256]float32

// fillLUT builds the asymmetric lookup table of a rotated query.
func fillLUT(lut []lutWord, rot []float32) {
	for w := range lut {
		for b := range 8 {
			q := rot[w*64+b*8 : w*64+b*8+8 : w*64+b*8+8]
			t := &lut[w][b]
			t[0] = -(q[0] + q[1] + q[2] + q[3] + q[4] + q[5] + q[6] + q[7])
			for p := 1; p < 256; p++ {
				low := bits.TrailingZeros(uint(p))
				t[p] = t[p&(p-1)] + 2*q[low]
			}
		}
	}
}

// dotLUT is <rot(q), sign(code)> through the query's table. (Two sums
// whose terms are added in fours: measured faster than eight independent
// sums, which the compiler serialises worse.)
func dotLUT(lut []lutWord, code []uint64) float32 {
	lut = lut[:len(code)]
	var a, b float32
	for w, x := range code {
		t := &lut[w]
		a += t[0][byte(x)] + t[1][byte(x>>8)] + t[2][byte(x>>16)] + t[3][byte(x>>24)]
		b += t[4][byte(x>>32)] + t[5][byte(x>>40)] + t[6][byte(x>>48)] + t[7][byte(x>>56)]
	}
	return a + b
}
