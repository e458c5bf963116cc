package postgres

import (
	"testing"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		out, version string
		major        int
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", "15.18", 15},
		{"postgres (PostgreSQL) 17.2\n", "17.2", 17},
		{"postgres (PostgreSQL) 18beta1\n", "18", 18},
	}
	for _, c := range cases {
		v, major, err := parseVersion([]byte(c.out))
		if err != nil || v != c.version || major != c.major {
			t.Errorf("parseVersion(%q) = %q, %d, %v; want %q, %d", c.out, v, major, err, c.version, c.major)
		}
	}
	if _, _, err := parseVersion([]byte("mysqld 8.0")); err == nil {
		t.Error("parseVersion accepted a non-PostgreSQL version line")
	}
}
