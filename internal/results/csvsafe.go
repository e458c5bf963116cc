package results

import (
	"strconv"
	"strings"
)

// CSVCell makes a cell safe for a spreadsheet: a text cell that starts
// with = + - @ (or a tab or a carriage return, escaped below) would be read as a formula
// (CSV injection), so it gets a leading ' as OWASP advises. Numbers, such
// as -1.5 or +Inf, stay as they are: they are data, not formulas.
//
// Its control characters are escaped too, newlines included (TerminalLine):
// a CSV is printed on a terminal as often as it is opened in a spreadsheet,
// and a reader that splits lines must find one record a line.
func CSVCell(s string) string {
	s = TerminalLine(s)
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// CSVRecord makes every cell of rec safe in place (CSVCell) and returns it.
func CSVRecord(rec []string) []string {
	for i, c := range rec {
		rec[i] = CSVCell(c)
	}
	return rec
}
