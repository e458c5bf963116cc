package tpcc

import "strconv"

var pow10 = [...]int{1, 10, 100, 1000, 10000}

// appendFixed appends v/10^scale with exactly scale decimals (scale 1 to 4),
// so money and rates are exact: v is the integer count of cents or basis
// points, and no float is ever rounded.
func appendFixed(dst []byte, v, scale int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	p := pow10[scale]
	dst = strconv.AppendInt(dst, int64(v/p), 10)
	dst = append(dst, '.')
	frac := v % p
	for p /= 10; p > 0; p /= 10 {
		dst = append(dst, byte('0'+frac/p))
		frac %= p
	}
	return dst
}

// appendInt appends v in decimal.
func appendInt(dst []byte, v int) []byte {
	return strconv.AppendInt(dst, int64(v), 10)
}
