package device

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSpecs(t *testing.T) {
	oltp := Spec{Name: "oltp16k", BlockSize: 16 << 10, ReadPct: 70, RandomPct: 100, Align: 4 << 10}
	tests := []struct {
		in      string
		want    []string // names, when it parses
		custom  *Spec    // the one custom spec, when there is one
		wantErr string   // a piece of the error, when it does not
	}{
		{in: DefaultSpecs, want: []string{"4k-randread", "8k-randrw70", "1m-seqread", "1m-seqwrite"}},
		{in: "8k-randread, 8k-randwrite,8k-randrw60", want: []string{"8k-randread", "8k-randwrite", "8k-randrw60"}},
		{in: "oltp16k:bs=16k,read=70,random=100", want: []string{"oltp16k"}, custom: &oltp},
		{in: "4k-randread,oltp16k:bs=16k,read=70,1m-seqread", want: []string{"4k-randread", "oltp16k", "1m-seqread"}, custom: &oltp},
		{in: "w:bs=512,read=0,random=0", want: []string{"w"}, custom: &Spec{Name: "w", BlockSize: 512, ReadPct: 0, RandomPct: 0, Align: 512}},
		{in: "a:bs=64k,align=8k,random=50", want: []string{"a"}, custom: &Spec{Name: "a", BlockSize: 64 << 10, ReadPct: 100, RandomPct: 50, Align: 8 << 10}},
		{in: "4k-randrite", wantErr: `"4k-randrite" is not a known access spec; use one of 4k-randread`},
		{in: "4k-randread,4k-randread", wantErr: "--specs names 4k-randread twice"},
		{in: "4k-randread,,1m-seqread", wantErr: "--specs has an empty entry"},
		{in: "x:read=70", wantErr: `the custom spec "x:read=70" has no bs`},
		{in: "x:bs=1000", wantErr: "bs 1000, not a multiple of 512 bytes"},
		{in: "x:bs=8k,read=170", wantErr: `has a bad read: "170" is not a whole percentage`},
		{in: "x:bs=8k,depth=4", wantErr: `has an unknown option "depth=4"`},
		{in: "x:bs=lots", wantErr: `has a bad bs: "lots" is not a size`},
		{in: "4k-randread:bs=8k", wantErr: "reuses the built-in name 4k-randread"},
		{in: "bad/name:bs=8k", wantErr: "needs a name of letters, digits"},
		{in: "nope,x:bs=3", wantErr: "\n"}, // both problems, one per line
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			specs, err := ParseSpecs(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range specs {
				names = append(names, s.Name)
				if tt.custom != nil && s.Name == tt.custom.Name && s != *tt.custom {
					t.Errorf("custom spec %+v, want %+v", s, *tt.custom)
				}
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Errorf("names %v, want %v", names, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true}, {"512b", 512, true}, {"4k", 4096, true}, {"4K", 4096, true}, {"4KiB", 4096, true},
		{"8kb", 8192, true}, {"256MiB", 256 << 20, true}, {"256m", 256 << 20, true}, {"1g", 1 << 30, true},
		{"2 GiB", 2 << 30, true}, {"1t", 1 << 40, true}, {"0", 0, true},
		{"", 0, false}, {"-1k", 0, false}, {"1.5g", 0, false}, {"4x", 0, false}, {"5iB", 0, false},
		{"99999999999t", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for b, want := range map[int64]string{512: "512 B", 4096: "4 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB"} {
		if got := FormatSize(b); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestParseQDs(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: DefaultQDs, want: []int{1, 2, 4, 8, 16, 32}},
		{in: "4, 1", want: []int{4, 1}},
		{in: "1,0", wantErr: `--qd "1,0" holds 0, which is not positive`},
		{in: "-2", wantErr: "holds -2, which is not positive"},
		{in: "1,x", wantErr: `holds "x", not a whole number`},
		{in: "", wantErr: "not a whole number"},
		{in: "2,2", wantErr: "lists 2 twice"},
	}
	for _, tt := range tests {
		got, err := ParseQDs(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseQDs(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseQDs(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestPlan(t *testing.T) {
	a, b := Spec{Name: "a"}, Spec{Name: "b"}
	tests := []struct {
		name    string
		specs   []Spec
		qds     []int
		repeats int
		want    []string // Name() of each run
		points  []int
	}{
		{"one spec", []Spec{a}, []int{1, 4}, 1, []string{"001-a-qd1", "002-a-qd4"}, []int{0, 1}},
		{"specs outer, depths inner", []Spec{a, b}, []int{2, 1}, 1,
			[]string{"001-a-qd2", "002-a-qd1", "003-b-qd2", "004-b-qd1"}, []int{0, 1, 2, 3}},
		{"repeats back to back", []Spec{a, b}, []int{1}, 2,
			[]string{"001-a-qd1-r1", "002-a-qd1-r2", "003-b-qd1-r1", "004-b-qd1-r2"}, []int{0, 0, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := Plan(tt.specs, tt.qds, tt.repeats)
			var names []string
			var points []int
			for i, r := range runs {
				if r.Index != i || r.Repeats != tt.repeats {
					t.Errorf("run %d: %+v", i, r)
				}
				names = append(names, r.Name())
				points = append(points, r.Point)
			}
			if !reflect.DeepEqual(names, tt.want) || !reflect.DeepEqual(points, tt.points) {
				t.Errorf("runs %v points %v, want %v %v", names, points, tt.want, tt.points)
			}
		})
	}
}
