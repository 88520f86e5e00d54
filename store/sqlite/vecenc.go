package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Vectors are kept once, in the vectors table, each in the smaller of two
// exact encodings: dense (every float32) or sparse (the non-zero ones with
// their positions). The offline hashing embedder's vectors are sparse (a
// relation's has about 56 non-zero values of 384), so the sparse form is
// about a fifth of the dense one; a provider's dense vectors stay dense.
// Both decode to exactly the floats written.
//
//	dense:  0x01, uvarint(dim), dim float32 little-endian
//	sparse: 0x02, uvarint(dim), uvarint(count), count x (uvarint(gap), float32)
//	        where gap is the distance from the previous non-zero position
//	        (the first from -1), so positions cost a byte each.
const (
	vecDense  = 1
	vecSparse = 2
)

// encodeVec returns the compact encoding of v; nil for nil.
func encodeVec(v []float32) []byte {
	if v == nil {
		return nil
	}
	nz := 0
	for _, x := range v {
		if x != 0 {
			nz++
		}
	}
	// A sparse entry costs its gap (1-2 bytes) and the float.
	if nz*6 < len(v)*4 {
		b := make([]byte, 0, 2+2*binary.MaxVarintLen32+nz*6)
		b = append(b, vecSparse)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = binary.AppendUvarint(b, uint64(nz))
		last := -1
		for i, x := range v {
			if x == 0 {
				continue
			}
			b = binary.AppendUvarint(b, uint64(i-last))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			last = i
		}
		return b
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen32+4*len(v))
	b = append(b, vecDense)
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

var errBadVector = errors.New("damaged vector encoding")

// decodeVec is encodeVec's inverse.
func decodeVec(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	v, err := decodeVecInto(nil, b)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// decodeVecInto decodes b into dst (grown as needed) and returns it.
func decodeVecInto(dst []float32, b []byte) ([]float32, error) {
	if len(b) < 2 {
		return nil, errBadVector
	}
	kind := b[0]
	dim, n := binary.Uvarint(b[1:])
	if n <= 0 || dim > 1<<16 {
		return nil, errBadVector
	}
	b = b[1+n:]
	if cap(dst) < int(dim) {
		dst = make([]float32, dim)
	}
	dst = dst[:dim]
	switch kind {
	case vecDense:
		if len(b) != 4*int(dim) {
			return nil, errBadVector
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case vecSparse:
		clear(dst)
		count, n := binary.Uvarint(b)
		if n <= 0 || count > dim {
			return nil, errBadVector
		}
		b = b[n:]
		pos := -1
		for range count {
			gap, n := binary.Uvarint(b)
			if n <= 0 || gap == 0 || len(b) < n+4 {
				return nil, errBadVector
			}
			pos += int(gap)
			if pos >= int(dim) {
				return nil, errBadVector
			}
			dst[pos] = math.Float32frombits(binary.LittleEndian.Uint32(b[n:]))
			b = b[n+4:]
		}
		if len(b) != 0 {
			return nil, errBadVector
		}
	default:
		return nil, fmt.Errorf("%w: kind %d", errBadVector, kind)
	}
	return dst, nil
}

// cosineEncoded is the cosine of q (of norm qn) and the encoded vector b,
// read in place; 0 for a vector of another dimension, zero, or damaged.
func cosineEncoded(q []float32, qn float64, b []byte) float64 {
	if len(b) < 2 || qn == 0 {
		return 0
	}
	dim, n := binary.Uvarint(b[1:])
	if n <= 0 || int(dim) != len(q) {
		return 0
	}
	kind := b[0]
	b = b[1+n:]
	var dot, vn float64
	switch kind {
	case vecDense:
		if len(b) != 4*len(q) {
			return 0
		}
		for i, x := range q {
			y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			dot += float64(x) * y
			vn += y * y
		}
	case vecSparse:
		count, n := binary.Uvarint(b)
		if n <= 0 {
			return 0
		}
		b = b[n:]
		pos := -1
		for range count {
			gap, n := binary.Uvarint(b)
			if n <= 0 || len(b) < n+4 {
				return 0
			}
			pos += int(gap)
			if pos < 0 || pos >= len(q) {
				return 0
			}
			y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[n:])))
			dot += float64(q[pos]) * y
			vn += y * y
			b = b[n+4:]
		}
	default:
		return 0
	}
	if vn == 0 {
		return 0
	}
	return dot / (qn * math.Sqrt(vn))
}

// norm is the Euclidean norm of v.
func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
