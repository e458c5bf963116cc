// Command nullpg runs the null PostgreSQL server (package nullserver) on a
// Unix socket in a directory until it is signalled: calibra oltp run
// --dsn 'host=DIR port=5432 user=calibra dbname=calibra sslmode=disable'
// against it measures the driver alone (bench/driver-null.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/calibra-bench/calibra/internal/oltp/nullserver"
)

func main() {
	dir := flag.String("dir", "", "the directory of the socket .s.PGSQL.5432")
	warehouses := flag.Int("warehouses", 4, "the warehouses the schema claims")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: nullpg -dir DIR [-warehouses N]")
		os.Exit(2)
	}
	s, err := nullserver.Listen(*dir, *warehouses)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nullpg:", err)
		os.Exit(1)
	}
	fmt.Println(s.DSN())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	s.Close()
}
