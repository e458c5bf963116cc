package dss

import (
	"embed"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// Queries is how many queries a stream runs.
const Queries = 22

// Params are one query's substitution parameters, by the specification's
// names (clause 2.4.n.3): DELTA, DATE, NATION...
type Params map[string]string

// Text is query q (1..22) with its parameters substituted, in PostgreSQL's
// dialect, the reference text each engine's Dialect.Query adapts.
func Text(q int, p Params) string {
	b, err := queryFiles.ReadFile(fmt.Sprintf("queries/%d.sql", q))
	if err != nil {
		panic(err) // the 22 files are embedded; a miss is a build error
	}
	pairs := make([]string, 0, 2*len(p))
	for k, v := range p {
		pairs = append(pairs, "["+k+"]", v)
	}
	return strings.NewReplacer(pairs...).Replace(string(b))
}

// The specification's value lists (clause 4.2.2.13 and 4.2.3), as dbgen's
// dists.dss holds them.
var (
	regions  = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	nations  = []struct{ name, region string }{{"ALGERIA", "AFRICA"}, {"ARGENTINA", "AMERICA"}, {"BRAZIL", "AMERICA"}, {"CANADA", "AMERICA"}, {"EGYPT", "MIDDLE EAST"}, {"ETHIOPIA", "AFRICA"}, {"FRANCE", "EUROPE"}, {"GERMANY", "EUROPE"}, {"INDIA", "ASIA"}, {"INDONESIA", "ASIA"}, {"IRAN", "MIDDLE EAST"}, {"IRAQ", "MIDDLE EAST"}, {"JAPAN", "ASIA"}, {"JORDAN", "MIDDLE EAST"}, {"KENYA", "AFRICA"}, {"MOROCCO", "AFRICA"}, {"MOZAMBIQUE", "AFRICA"}, {"PERU", "AMERICA"}, {"CHINA", "ASIA"}, {"ROMANIA", "EUROPE"}, {"SAUDI ARABIA", "MIDDLE EAST"}, {"VIETNAM", "ASIA"}, {"RUSSIA", "EUROPE"}, {"UNITED KINGDOM", "EUROPE"}, {"UNITED STATES", "AMERICA"}}
	segments = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	typeS1   = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeS2   = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeS3   = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	contS1   = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	contS2   = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}
	modes    = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	words1   = []string{"special", "pending", "unusual", "express"}
	words2   = []string{"packages", "requests", "accounts", "deposits"}
	colors   = strings.Fields(`almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood
		burnished chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick
		floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn
		lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin navajo navy olive orange
		orchid pale papaya peach peru pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell
		sienna sky slate smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow`)
)

// qgen draws the parameters as the specification's qgen rules say.
type qgen struct{ r *rand.Rand }

// NewParams draws query q's parameters for a stream of a run: each (seed,
// stream, query) has its own generator, so a query's parameters do not
// depend on the order the stream runs them in.
func NewParams(seed uint64, stream, q int, sf float64) Params {
	g := qgen{rand.New(rand.NewPCG(seed, uint64(stream)<<8|uint64(q)))}
	return g.params(q, sf)
}

func (g qgen) between(lo, hi int) int    { return lo + g.r.IntN(hi-lo+1) }
func (g qgen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// distinct picks n different indexes below size.
func (g qgen) distinct(n, size int) []int {
	return g.r.Perm(size)[:n]
}

// month is the first day of a random month counted from January 1993.
func (g qgen) month(first, last int) string {
	return time.Date(1993, time.Month(1+g.between(first, last)), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

func (g qgen) year() string { return strconv.Itoa(g.between(1993, 1997)) + "-01-01" }

func (g qgen) brand() string { return fmt.Sprintf("Brand#%d%d", g.between(1, 5), g.between(1, 5)) }

func (g qgen) params(q int, sf float64) Params {
	switch q {
	case 1:
		return Params{"DELTA": strconv.Itoa(g.between(60, 120))}
	case 2:
		return Params{"SIZE": strconv.Itoa(g.between(1, 50)), "TYPE": g.pick(typeS3), "REGION": g.pick(regions)}
	case 3:
		return Params{"SEGMENT": g.pick(segments), "DATE": fmt.Sprintf("1995-03-%02d", g.between(1, 31))}
	case 4:
		return Params{"DATE": g.month(0, 57)} // January 1993 to October 1997
	case 5:
		return Params{"REGION": g.pick(regions), "DATE": g.year()}
	case 6:
		return Params{"DATE": g.year(), "DISCOUNT": fmt.Sprintf("0.0%d", g.between(2, 9)), "QUANTITY": strconv.Itoa(g.between(24, 25))}
	case 7:
		n := g.distinct(2, len(nations))
		return Params{"NATION1": nations[n[0]].name, "NATION2": nations[n[1]].name}
	case 8:
		n := nations[g.r.IntN(len(nations))]
		return Params{"NATION": n.name, "REGION": n.region, "TYPE": g.pick(typeS1) + " " + g.pick(typeS2) + " " + g.pick(typeS3)}
	case 9:
		return Params{"COLOR": g.pick(colors)}
	case 10:
		return Params{"DATE": g.month(1, 24)} // February 1993 to January 1995
	case 11:
		return Params{"NATION": nations[g.r.IntN(len(nations))].name, "FRACTION": strconv.FormatFloat(0.0001/sf, 'f', -1, 64)}
	case 12:
		m := g.distinct(2, len(modes))
		return Params{"SHIPMODE1": modes[m[0]], "SHIPMODE2": modes[m[1]], "DATE": g.year()}
	case 13:
		return Params{"WORD1": g.pick(words1), "WORD2": g.pick(words2)}
	case 14:
		return Params{"DATE": g.month(0, 59)}
	case 15:
		return Params{"DATE": g.month(0, 57)}
	case 16:
		p := Params{"BRAND": g.brand(), "TYPE": g.pick(typeS1) + " " + g.pick(typeS2)}
		for i, s := range g.distinct(8, 50) {
			p[fmt.Sprintf("SIZE%d", i+1)] = strconv.Itoa(s + 1)
		}
		return p
	case 17:
		return Params{"BRAND": g.brand(), "CONTAINER": g.pick(contS1) + " " + g.pick(contS2)}
	case 18:
		return Params{"QUANTITY": strconv.Itoa(g.between(312, 315))}
	case 19:
		return Params{"QUANTITY1": strconv.Itoa(g.between(1, 10)), "QUANTITY2": strconv.Itoa(g.between(10, 20)),
			"QUANTITY3": strconv.Itoa(g.between(20, 30)), "BRAND1": g.brand(), "BRAND2": g.brand(), "BRAND3": g.brand()}
	case 20:
		return Params{"COLOR": g.pick(colors), "DATE": g.year(), "NATION": nations[g.r.IntN(len(nations))].name}
	case 21:
		return Params{"NATION": nations[g.r.IntN(len(nations))].name}
	case 22:
		p := Params{}
		for i, c := range g.distinct(7, len(nations)) {
			p[fmt.Sprintf("I%d", i+1)] = strconv.Itoa(c + 10)
		}
		return p
	}
	panic(fmt.Sprintf("query %d is not one of the 22", q))
}

// ValidationParams are the specification's validation parameters (clause
// 2.4.n.4), with which the answers published for each scale factor hold.
func ValidationParams(q int) Params {
	return validation[q-1]
}

var validation = [Queries]Params{
	{"DELTA": "90"},
	{"SIZE": "15", "TYPE": "BRASS", "REGION": "EUROPE"},
	{"SEGMENT": "BUILDING", "DATE": "1995-03-15"},
	{"DATE": "1993-07-01"},
	{"REGION": "ASIA", "DATE": "1994-01-01"},
	{"DATE": "1994-01-01", "DISCOUNT": "0.06", "QUANTITY": "24"},
	{"NATION1": "FRANCE", "NATION2": "GERMANY"},
	{"NATION": "BRAZIL", "REGION": "AMERICA", "TYPE": "ECONOMY ANODIZED STEEL"},
	{"COLOR": "green"},
	{"DATE": "1993-10-01"},
	{"NATION": "GERMANY", "FRACTION": "0.0001"},
	{"SHIPMODE1": "MAIL", "SHIPMODE2": "SHIP", "DATE": "1994-01-01"},
	{"WORD1": "special", "WORD2": "requests"},
	{"DATE": "1995-09-01"},
	{"DATE": "1996-01-01"},
	{"BRAND": "Brand#45", "TYPE": "MEDIUM POLISHED", "SIZE1": "49", "SIZE2": "14", "SIZE3": "23", "SIZE4": "45",
		"SIZE5": "19", "SIZE6": "3", "SIZE7": "36", "SIZE8": "9"},
	{"BRAND": "Brand#23", "CONTAINER": "MED BOX"},
	{"QUANTITY": "300"},
	{"QUANTITY1": "1", "QUANTITY2": "10", "QUANTITY3": "20", "BRAND1": "Brand#12", "BRAND2": "Brand#23", "BRAND3": "Brand#34"},
	{"COLOR": "forest", "DATE": "1994-01-01", "NATION": "CANADA"},
	{"NATION": "SAUDI ARABIA"},
	{"I1": "13", "I2": "31", "I3": "23", "I4": "29", "I5": "30", "I6": "18", "I7": "17"},
}

// Order is the sequence in which stream s runs the 22 queries: the
// specification's Appendix A table, stream 0 being the power test's. Streams
// beyond 40 start the table's throughput rows again.
func Order(s int) []int {
	if s > 40 {
		s = 1 + (s-1)%40
	}
	return streamOrders[s][:]
}

var streamOrders = [41][Queries]int{
	{14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12},
	{21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4},
	{6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21},
	{8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3},
	{5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20},
	{21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9},
	{10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21},
	{18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12},
	{19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11},
	{8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16},
	{6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5},
	{15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7},
	{1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15},
	{21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19},
	{2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6},
	{16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18},
	{1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21},
	{3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12},
	{14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16},
	{4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1},
	{16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8},
	{20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2},
	{16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17},
	{18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7},
	{7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16},
	{18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9},
	{13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16},
	{14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19},
	{10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11},
	{10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4},
	{7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2},
	{2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22},
	{15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2},
	{15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1},
	{1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2},
	{14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11},
	{9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19},
	{13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20},
	{20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9},
	{3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2},
	{13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19},
}

// MinStreams is the specification's minimum number of query streams of the
// throughput test for a scale factor (clause 5.3.4).
func MinStreams(sf float64) int {
	for _, s := range []struct {
		sf      float64
		streams int
	}{{1, 2}, {10, 3}, {30, 4}, {100, 5}, {300, 6}, {1000, 7}, {3000, 8}, {10000, 9}, {30000, 10}} {
		if sf <= s.sf {
			return s.streams
		}
	}
	return 11
}
