package report

func cells(texts ...string) []Cell {
	out := make([]Cell, len(texts))
	for i, t := range texts {
		out[i] = Cell{Text: t}
	}
	out[0].Class = "t"
	return out
}

func verdictCell(ok bool, yes, no string) Cell {
	if ok {
		return Cell{Text: yes, Class: "good"}
	}
	return Cell{Text: no, Class: "bad"}
}
