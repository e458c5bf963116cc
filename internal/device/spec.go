// Package device is layer 1 of the study: the storage under test driven by
// fio through the access specifications of the published studies, swept over
// queue depth, with fio's JSON read back into results.
package device

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
)

// Spec is an access specification: what every worker does.
type Spec struct {
	Name      string
	BlockSize int64 // bytes per I/O
	ReadPct   int   // share of reads, the rest are writes
	RandomPct int   // share of random offsets, the rest are sequential
	Align     int64 // random offsets are multiples of this
}

// Writes says whether the spec writes to its target.
func (s Spec) Writes() bool { return s.ReadPct < 100 }

// Builtin are the studies' access specifications (METHODOLOGY.md, layer 1):
// the Iometer study's four, aligned at 4 KiB as its Table 4 says, then the
// fio study's three, at fio's default alignment (the block size).
var Builtin = []Spec{
	{Name: "4k-randread", BlockSize: 4 << 10, ReadPct: 100, RandomPct: 100, Align: 4 << 10},
	{Name: "8k-randrw70", BlockSize: 8 << 10, ReadPct: 70, RandomPct: 100, Align: 4 << 10},
	{Name: "1m-seqread", BlockSize: 1 << 20, ReadPct: 100, RandomPct: 0, Align: 4 << 10},
	{Name: "1m-seqwrite", BlockSize: 1 << 20, ReadPct: 0, RandomPct: 0, Align: 4 << 10},
	{Name: "8k-randread", BlockSize: 8 << 10, ReadPct: 100, RandomPct: 100, Align: 8 << 10},
	{Name: "8k-randwrite", BlockSize: 8 << 10, ReadPct: 0, RandomPct: 100, Align: 8 << 10},
	{Name: "8k-randrw60", BlockSize: 8 << 10, ReadPct: 60, RandomPct: 100, Align: 8 << 10},
}

// DefaultSpecs are the Iometer study's four.
const DefaultSpecs = "4k-randread,8k-randrw70,1m-seqread,1m-seqwrite"

// SpecSyntax is the custom spec syntax, for help and error text.
const SpecSyntax = "NAME:bs=SIZE[,read=PCT][,random=PCT][,align=SIZE]"

func builtin(name string) (Spec, bool) {
	for _, s := range Builtin {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

func builtinNames() string {
	names := make([]string, len(Builtin))
	for i, s := range Builtin {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// specName keeps names safe in raw/ file names and job sections.
var specName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseSpecs reads a comma-separated list of built-in spec names and custom
// specs (SpecSyntax). A custom spec's own options are comma-separated too: a
// token with "=" and no ":" continues the custom spec before it, which is
// unambiguous because no built-in name holds "=". Every problem is reported.
func ParseSpecs(list string) ([]Spec, error) {
	var tokens []string
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		if n := len(tokens); n > 0 && strings.Contains(tok, "=") && !strings.Contains(tok, ":") && strings.Contains(tokens[n-1], ":") {
			tokens[n-1] += "," + tok
			continue
		}
		tokens = append(tokens, tok)
	}
	var specs []Spec
	var errs []error
	seen := map[string]bool{}
	for _, tok := range tokens {
		s, err := parseSpec(tok)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[s.Name] {
			errs = append(errs, fault.Input("list each spec once", "--specs names %s twice", s.Name))
			continue
		}
		seen[s.Name] = true
		specs = append(specs, s)
	}
	return specs, errors.Join(errs...)
}

func parseSpec(tok string) (Spec, error) {
	if tok == "" {
		return Spec{}, fault.Input("separate spec names with single commas", "--specs has an empty entry")
	}
	name, opts, custom := strings.Cut(tok, ":")
	if !custom {
		if s, ok := builtin(tok); ok {
			return s, nil
		}
		return Spec{}, fault.Input(fmt.Sprintf("use one of %s, or define one as %s", builtinNames(), SpecSyntax),
			"%q is not a known access spec", tok)
	}
	fix := "write it as " + SpecSyntax + ", e.g. oltp16k:bs=16k,read=70,random=100"
	if !specName.MatchString(name) {
		return Spec{}, fault.Input(fix, "the custom spec %q needs a name of letters, digits, '.', '_' or '-'", tok)
	}
	if _, ok := builtin(name); ok {
		return Spec{}, fault.Input("give the custom spec another name", "the custom spec %q reuses the built-in name %s", tok, name)
	}
	s := Spec{Name: name, ReadPct: 100, RandomPct: 100}
	for _, opt := range strings.Split(opts, ",") {
		key, val, _ := strings.Cut(opt, "=")
		var err error
		switch strings.TrimSpace(key) {
		case "bs":
			s.BlockSize, err = ParseSize(val)
		case "align":
			s.Align, err = ParseSize(val)
		case "read":
			s.ReadPct, err = parsePct(val)
		case "random":
			s.RandomPct, err = parsePct(val)
		default:
			return Spec{}, fault.Input(fix, "the custom spec %q has an unknown option %q", tok, opt)
		}
		if err != nil {
			return Spec{}, fault.Input(fix, "the custom spec %q has a bad %s: %v", tok, key, err)
		}
	}
	if s.BlockSize == 0 {
		return Spec{}, fault.Input(fix, "the custom spec %q has no bs", tok)
	}
	if s.Align == 0 {
		s.Align = min(s.BlockSize, 4<<10)
	}
	// Direct I/O needs sizes and offsets in whole 512-byte sectors.
	for _, v := range []struct {
		what string
		n    int64
	}{{"bs", s.BlockSize}, {"align", s.Align}} {
		if v.n%512 != 0 {
			return Spec{}, fault.Input(fix+" with a multiple of 512 bytes", "the custom spec %q has %s %d, not a multiple of 512 bytes", tok, v.what, v.n)
		}
	}
	return s, nil
}

func parsePct(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 100 {
		return 0, fmt.Errorf("%q is not a whole percentage from 0 to 100", s)
	}
	return n, nil
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*(?:([kKmMgGtT])(?:i?[bB])?|[bB])?$`)

// ParseSize reads a size in bytes with an optional suffix k, m, g or t
// (also KiB, MB...). Every suffix is a power of 1024, as in fio.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size such as 4k, 256MiB or 1g", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	shift := 0
	if m[2] != "" {
		shift = strings.Index("kmgt", strings.ToLower(m[2])) + 1
	}
	if n > (1<<62)>>(10*shift) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << (10 * shift), nil
}

// FormatSize writes bytes for people: 256 MiB, 1.5 GiB.
func FormatSize(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
