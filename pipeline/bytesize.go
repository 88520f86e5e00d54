package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes as flags and docgraph.yaml write it: a
// number with an optional unit, decimal (kB, MB, GB, TB: powers of 1000)
// or binary (KiB, MiB, GiB, TiB, and K, M, G, T: powers of 1024), so
// "64MiB", "200MB", "1.5G" and "67108864" all work.
type ByteSize int64

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseByteSize reads a size such as "64MiB", "200MB" or "1048576".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult, ok := byteUnits[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || num == "" || n < 0 || math.IsInf(n*mult, 0) || n*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q (want a number of bytes, or one with a unit such as 64MiB or 200MB)", s)
	}
	return ByteSize(math.Round(n * mult)), nil
}

// String writes the size in the largest binary unit that holds it exactly
// ("64MiB"), else in bytes.
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// Set implements pflag.Value.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type implements pflag.Value; checkRanges compares values of this type as sizes.
func (b *ByteSize) Type() string { return "size" }
