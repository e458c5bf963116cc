package tpcc

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// AppendLastName appends the customer last name of num in [0, 999]: the
// syllables of its three decimal digits (clause 4.3.2.3).
func AppendLastName(dst []byte, num int) []byte {
	if num < 0 || num > 999 {
		panic("tpcc: last name number outside [0, 999]")
	}
	dst = append(dst, syllables[num/100]...)
	dst = append(dst, syllables[num/10%10]...)
	return append(dst, syllables[num%10]...)
}

// LastName returns the last name of num in [0, 999].
func LastName(num int) string {
	var buf [15]byte // the longest name is three 5-byte syllables
	return string(AppendLastName(buf[:0], num))
}
