// Command calibra measures how a database performs on a storage
// configuration, layer by layer, and writes the evidence to a run directory.
package main

import (
	"os"

	"github.com/calibra-bench/calibra/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
