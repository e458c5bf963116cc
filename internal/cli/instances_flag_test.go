package cli

import (
	"strings"
	"testing"
)

// --instances counts servers: 0 (none), a negative count or more than
// calibra runs on one machine is refused as the flag is read, so that
// every command (run included, where a 0 would fall back to the study's
// count) says so in one sentence with exit 2.
func TestInstancesFlagBounds(t *testing.T) {
	for _, c := range []struct {
		value string
		want  string // "" accepted
	}{
		{"1", ""}, {"16", ""},
		{"0", "--instances 0 is not a number of instances; give 1 to 16"},
		{"-1", "--instances -1 is not a number of instances"},
		{"17", "--instances 17 is not a number of instances"},
		{"two", "not a whole number"},
	} {
		n := 1
		err := instancesValue{&n}.Set(c.value)
		switch {
		case c.want == "" && (err != nil || instancesValue{&n}.String() != c.value):
			t.Errorf("--instances %s: %v, read as %d", c.value, err, n)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || n != 1):
			t.Errorf("--instances %s: %v (read as %d), want %q", c.value, err, n, c.want)
		}
	}
}
