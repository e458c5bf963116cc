package mariadb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/secret"
)

func TestParseDSN(t *testing.T) {
	cfg, err := ParseDSN("mysql://bench:p%40ss%3Aw%2Frd@db1:3307/tpcc?tls=skip-verify&timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "bench" || cfg.Passwd != "p@ss:w/rd" || cfg.Net != "tcp" || cfg.Addr != "db1:3307" || cfg.DBName != "tpcc" ||
		cfg.TLSConfig != "skip-verify" || cfg.Timeout != 5*time.Second {
		t.Errorf("parsed %+v", cfg)
	}
	cfg, err = ParseDSN("mariadb://bench@db1/tpcc")
	if err != nil || cfg.Addr != "db1:3306" || cfg.Timeout != defaultConnectTimeout {
		t.Errorf("default port and timeout: %+v, %v", cfg, err)
	}
	cfg, err = ParseDSN("mysql://bench@localhost/tpcc?socket=%2Frun%2Fmysqld%2Fmysqld.sock")
	if err != nil || cfg.Net != "unix" || cfg.Addr != "/run/mysqld/mysqld.sock" {
		t.Errorf("a socket: %+v, %v", cfg, err)
	}
	for _, bad := range []string{
		"postgres://bench:s3cret@db1/tpcc",
		"mysql://bench:s3cret@db1:3306",
		"bench:s3cret@tcp(db1:3306)/tpcc",
		"mysql://bench:s3cret@db1/tpcc?tls=nosuchconfig",
	} {
		_, err := ParseDSN(bad)
		if fault.Code(err) != fault.ExitInput || strings.Contains(fmt.Sprint(err), "s3cret") {
			t.Errorf("%s: %v", secret.RedactDSN(bad), err)
		}
	}
}

// A server that cannot be reached is one sentence, the password not in it.
func TestConnectToNothing(t *testing.T) {
	cfg, err := ParseDSN("mysql://bench:s3cret@127.0.0.1:1/tpcc")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Connect(context.Background(), cfg)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(fmt.Sprint(err), "connection refused") ||
		strings.Contains(fmt.Sprint(err), "s3cret") || strings.Contains(fmt.Sprint(err), "\n") {
		t.Errorf("%v", err)
	}
}

func TestSizeBytes(t *testing.T) {
	for in, want := range map[string]int64{"1GB": 1 << 30, "256MB": 256 << 20, "128kB": 128 << 10, "2G": 2 << 30, "512MiB": 512 << 20, "1048576": 1 << 20} {
		if got, err := sizeBytes(in); err != nil || got != want {
			t.Errorf("sizeBytes(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "1.5GB", "-1GB", "99999999999TB"} {
		if _, err := sizeBytes(bad); fault.Code(err) != fault.ExitInput {
			t.Errorf("sizeBytes(%q): %v", bad, err)
		}
	}
}
