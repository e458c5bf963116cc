package engines

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/secret"
)

// Every engine registered here teaches secret its DSN forms; each form
// comes out with its password hidden.
func TestRedactDSNHidesEveryPassword(t *testing.T) {
	cases := []struct{ dsn, want string }{
		{"postgres://bench:s3cret@db1:5432/bench", "postgres://bench:xxxxx@db1:5432/bench"},
		{"postgresql://bench@db1/bench?password=s3cret&sslmode=disable", "postgresql://bench@db1/bench?password=xxxxx&sslmode=disable"},
		{"host=db1 user=bench password=s3cret dbname=bench", "host=db1 user=bench password=xxxxx dbname=bench"},
		{"host=db1 password='s3 cret' dbname=bench", "host=db1 password=xxxxx dbname=bench"},
		{"postgres://bench@db1/bench", "postgres://bench@db1/bench"},
		{"postgres://bench:s3cret@[::1/bench", "postgres://bench:xxxxx@[::1/bench"},
		{"mysql://bench:s3cret@db1:3306/bench", "mysql://bench:xxxxx@db1:3306/bench"},
		{"mariadb://bench:s3cret@db1/bench?socket=%2Frun%2Fmysqld.sock", "mariadb://bench:xxxxx@db1/bench?socket=%2Frun%2Fmysqld.sock"},
		{"bench:s3cret@tcp(db1:3306)/bench", "bench:xxxxx@tcp(db1:3306)/bench"},
		{"bench:s3cret@unix(/run/mysqld/mysqld.sock)/bench", "bench:xxxxx@unix(/run/mysqld/mysqld.sock)/bench"},
		{"bench:s3cret@/bench", "bench:xxxxx@/bench"},
	}
	for _, c := range cases {
		got := secret.RedactDSN(c.dsn)
		if got != c.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.dsn, got, c.want)
		}
		if strings.Contains(got, "s3cret") || strings.Contains(got, "s3 cret") {
			t.Errorf("RedactDSN(%q) leaks the password", c.dsn)
		}
	}
}
