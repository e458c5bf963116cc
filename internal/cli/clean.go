package cli

import (
	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) cleanCommand() *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Stop and remove the managed instance under --path",
		Long: `Remove PATH/calibra-pg, the managed PostgreSQL instance calibra created on the
storage under test, stopping its server first if a crashed calibra left one
running, its standbys (PATH/calibra-pg-replica-K, or wherever --replica-path
put them), and any device test files a crashed run left in PATH/calibra-device;
and the socket directories (TMPDIR/calibra-sockets-UID/calibra-sock-*, a
directory only calibra's account can write to) and empty cgroups
(calibra-PID) of runs that were killed. A live run's are never
touched. Run directories are kept.`,
		Example: `  calibra clean --path /mnt/array`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runner.Clean(path, a.stderr)
		},
	}
	cmd.Flags().StringVar(&path, "path", ".", "directory on the storage under test")
	return cmd
}
